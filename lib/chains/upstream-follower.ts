/**
 * What every family's upstream follower does, on lib/workers/worker.ts: follow a network's
 * upstream nodes into the family's own index from where the index stops (or, when it is empty, from
 * the configured start height or a little below the node's head), then each new block as the node
 * commits it. One process follows a network: the leader of its index writer (others wait and take
 * over). The node's failures, refusals and a node behind the others are retried with backoff
 * under the same lock, logged once per streak; database and lock failures start over from the
 * stored position under a fresh lock. The family says how its node and its index are read.
 */
import { errorMessage, type Logger } from "@/lib/log";
import { followerProgress, forgetFollower } from "@/lib/metrics";
import type { Network } from "@/lib/networks";
import type { LeaderTerm } from "@/lib/workers/leader-lock";
import { startWorker, type Failure, type WorkerContext, type WorkerHandle } from "@/lib/workers/worker";

/** How often the node is asked for its head once the index has caught up. */
export const POLL_MS = 1000;
/** When the index is empty and no start height is configured: this many blocks below the node's head. */
export const DEFAULT_LOOKBACK = 100n;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const PROGRESS_LOG_MS = 30_000;
/** The follower label of the index followers' metrics (their stream: `upstream`). */
const METRICS_FOLLOWER = "index";

/** The node serves something this network must not store (another chain, a gap, a pruned start). */
export class RefusedError extends Error {
  override name = "RefusedError";
}

/** The node's ledger ends before where the index continues (a node behind the others): wait for it. */
export class BehindError extends Error {
  override name = "BehindError";
}

/** The node's chain, as the follower reads it. */
export interface NodeHead {
  chainId: string | number;
  /** The oldest and the newest block the node has. */
  oldest: bigint;
  latest: bigint;
}

/** What the index holds: its chain, whether the built-in devnet made it, and how the follower continues after it. */
export interface StoredChain<H, P> {
  chainId: string | number;
  devnet: boolean;
  resume(node: H, signal: AbortSignal): Promise<P>;
}

/** How a family's node and index are read and written. `P` is where the follower stands, `H` what the node said of its chain. */
export interface FollowedChain<H extends NodeHead, P> {
  /** The index writer's lock (shared with the family's devnet producer). */
  kind: string;
  /** A chain id in words: "chain bbn-1", "chain id 1". */
  chainName(id: string | number): string;
  /** The nodes, by origin only (safe to log). */
  labels(): string[];
  head(signal: AbortSignal): Promise<H>;
  stored(): Promise<StoredChain<H, P> | null>;
  /** Removes every block of the network from the index (the store checks `term`, lib/workers/leader-lock.ts). */
  deleteIndex(term: LeaderTerm | undefined): Promise<void>;
  /** Where an empty index starts: at `height`, at or above the node's oldest block. */
  startAt(height: bigint, node: H, signal: AbortSignal): Promise<P>;
  /** Whether the follower has read everything the node had (when it last said). */
  caughtUp(at: P, node: H): boolean;
  /** Reads the next blocks after `at` and stores them (checking `ctx.term`), moving `at` (and `node`, when the answers show it grew). */
  ingest(at: P, node: H, ctx: WorkerContext): Promise<void>;
  /** Log lines: "following … from <from> (node at <nodeAt>)", the progress line, the position after recovering. */
  from(at: P): string;
  nodeAt(node: H): string;
  progress(at: P, node: H): string;
  position(at: P): string;
  /** The newest block the index holds, for the metrics: its height, and its time (seconds since the epoch) once this follower stored it. */
  indexed(at: P): { height: bigint; time?: number };
  /** Failures of the node or of what it sent (retried under the same lock), besides RefusedError and BehindError. */
  fromNode(e: unknown): boolean;
  /** The error in words, when the family's errors say more than their message. */
  reason?(e: unknown): string | undefined;
}

export interface UpstreamFollowerOptions {
  databaseUrl: string;
  /** First block height to store when the index is empty; default: the node's latest minus DEFAULT_LOOKBACK. */
  startHeight?: bigint;
  pollMs?: number;
  backoff?: { baseMs?: number; maxMs?: number };
  /** The worker's logger (its own when omitted). */
  logger?: Logger;
}

interface State<H, P> {
  at: P;
  node: H;
  lastProgressLog: number;
}

/** Follows `network`'s upstream into the index as `chain` reads and writes it; `log` takes the follower's lines. */
export function followUpstream<H extends NodeHead, P>(network: Network, chain: FollowedChain<H, P>, opts: UpstreamFollowerOptions, log: Logger): WorkerHandle {
  const chainId = String(network.chainId);
  const pollMs = opts.pollMs ?? POLL_MS;

  const head = async (signal: AbortSignal) => {
    const node = await chain.head(signal);
    if (String(node.chainId) !== chainId) throw new RefusedError(`the node serves ${chain.chainName(node.chainId)}, not ${chainId}: check ${network.upstreamVariable}`);
    return node;
  };

  /** Where to continue: after what the index holds, or for an empty index the configured (or default) start block. */
  const resume = async (node: H, { signal, term }: WorkerContext): Promise<P> => {
    let stored = await chain.stored();
    if (stored?.devnet) {
      log.info(`removing the devnet blocks (${chain.chainName(stored.chainId)}) stored before the upstream was configured`);
      await chain.deleteIndex(term);
      stored = null;
    }
    if (stored && String(stored.chainId) !== chainId) throw new RefusedError(`the index holds blocks of ${chain.chainName(stored.chainId)}, not ${chainId}`);
    if (stored) return stored.resume(node, signal);
    let start = opts.startHeight ?? node.latest - DEFAULT_LOOKBACK;
    if (start < node.oldest) {
      if (opts.startHeight !== undefined) log.warn(`start height ${start} is below the node's oldest block ${node.oldest}: starting there`);
      start = node.oldest;
    }
    return chain.startAt(start, node, signal);
  };

  const classify = (e: unknown): Failure => {
    const fromNode = chain.fromNode(e) || e instanceof RefusedError || e instanceof BehindError;
    const what = e instanceof RefusedError ? "not ingesting" : e instanceof BehindError ? "waiting for the node" : fromNode ? "upstream failed" : "ingestion failed";
    // A node's failure leaves the position good; database or lock trouble starts over from the stored position under a fresh lock.
    return { what, reason: chain.reason?.(e) ?? errorMessage(e), keepState: fromNode, level: fromNode && !(e instanceof RefusedError) ? "warn" : "error" };
  };

  const report = (s: State<H, P>) => {
    const { height, time } = chain.indexed(s.at);
    followerProgress(METRICS_FOLLOWER, network.slug, s.node.latest, [{ stream: "upstream", block: height, target: s.node.latest, blockTime: time }]);
  };

  return startWorker<State<H, P>>({
    kind: chain.kind,
    key: network.slug,
    leader: { databaseUrl: opts.databaseUrl },
    logger: opts.logger,
    backoff: { baseMs: opts.backoff?.baseMs ?? FIRST_RETRY_MS, maxMs: opts.backoff?.maxMs ?? MAX_RETRY_MS },
    classify,
    position: (s) => chain.position(s.at),
    leave: () => forgetFollower(METRICS_FOLLOWER, network.slug),
    async init(ctx) {
      const node = await head(ctx.signal);
      const at = await resume(node, ctx);
      log.info(`following ${chain.labels().join(", ")} from ${chain.from(at)} (node at ${chain.nodeAt(node)})`);
      const state = { at, node, lastProgressLog: Date.now() };
      report(state);
      return state;
    },
    async step(s, ctx) {
      if (chain.caughtUp(s.at, s.node)) {
        s.node = await head(ctx.signal);
        report(s);
        if (chain.caughtUp(s.at, s.node)) return pollMs;
      }
      await chain.ingest(s.at, s.node, ctx);
      report(s);
      if (Date.now() - s.lastProgressLog >= PROGRESS_LOG_MS) {
        log.info(chain.progress(s.at, s.node));
        s.lastProgressLog = Date.now();
      }
      return chain.caughtUp(s.at, s.node) ? pollMs : 0;
    },
  });
}
