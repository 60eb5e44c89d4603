import { db } from "@/lib/db/client";
import { componentLogger, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import { startWorker, type Failure, type WorkerHandle } from "@/lib/workers/worker";
import { RpcError } from "@/lib/jsonrpc/errors";
import { INDEX_WRITER_KIND, insertBlocks } from "../store";
import type { IngestBlock } from "../types";
import { UpstreamUnavailableError, upstreamClient, type CometClient } from "./client";
import type { CometStatus } from "./comet";
import { ConversionError, toIngestBlock } from "./convert";

/** Heights fetched (block + block_results each) and stored together. */
export const BATCH_SIZE = 8;
/** How often the node is asked for a new block once the index is at its head. */
export const POLL_MS = 1000;
/** When the index is empty and no start height is configured: this many blocks below the node's head. */
export const DEFAULT_LOOKBACK = 100n;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const PROGRESS_LOG_MS = 30_000;

/** The node serves something we must not store under this network (another chain, a broken link). */
class RefusedError extends Error {
  override name = "RefusedError";
}

export interface FollowerOptions {
  databaseUrl: string;
  /** First height to ingest when the index is empty; default: the node's latest height minus 100. */
  startHeight?: bigint;
  /** Overrides for tests (the logger receives the follower's lines and its worker's). */
  client?: CometClient;
  pollMs?: number;
  logger?: Logger;
}

export type FollowerHandle = WorkerHandle;

/** Where the follower stands: the next height to ingest, and the hash it must link to. */
interface Position {
  next: bigint;
  prevHash: string | undefined;
  nodeLatest: bigint;
  lastProgressLog: number;
}

/** Removes every stored block, tx and attribute of a network. */
export async function deleteNetworkIndex(network: string): Promise<void> {
  const tables = ["consensus_tx_attrs", "consensus_block_attrs", "consensus_attr_keys", "consensus_attr_values", "consensus_txs", "consensus_blocks"];
  await db().$transaction(tables.map((table) => db().$executeRawUnsafe(`DELETE FROM ${table} WHERE network = $1`, network)));
}

async function storedHead(network: string): Promise<{ height: bigint; hash: string; chainId: string } | null> {
  const rows = await db().$queryRawUnsafe<Array<{ height: bigint; hash: string; chain_id: string }>>(
    "SELECT height, hash, body->'block'->'header'->>'chain_id' AS chain_id FROM consensus_blocks WHERE network = $1 ORDER BY height DESC LIMIT 1",
    network,
  );
  const row = rows[0];
  return row ? { height: row.height, hash: row.hash, chainId: row.chain_id } : null;
}

const reason = (e: unknown) => (e instanceof RpcError ? `${e.message}: ${e.data}` : e instanceof Error ? e.message : String(e));

/**
 * Follows a consensus network's upstream node into our index: block and block_results of every
 * height, in order, from where the index stops (or from `startHeight` when it is empty), then
 * each new block as the node commits it. One process follows a network: the leader of its index
 * writer (others wait and take over if it stops). Node failures are retried with exponential
 * backoff and logged once per streak; database and lock failures start over from the stored
 * head under a fresh lock.
 */
export function startUpstreamFollower(network: Network, opts: FollowerOptions): FollowerHandle {
  const slug = network.slug;
  const client = opts.client ?? upstreamClient(network);
  const chainId = String(network.chainId);
  const pollMs = opts.pollMs ?? POLL_MS;
  const log = opts.logger ?? componentLogger("consensus", { network: slug });

  const checkChain = (status: CometStatus) => {
    if (status.node_info.network !== chainId) {
      throw new RefusedError(`the node serves chain ${status.node_info.network}, not ${chainId}: check ${network.upstreamVariable}`);
    }
  };

  /** Where to continue: after the stored head, or where the configuration says for an empty index. */
  const resume = async (status: CometStatus): Promise<{ next: bigint; prevHash: string | undefined }> => {
    let head = await storedHead(slug);
    if (head && head.chainId === String(network.devnetChainId)) {
      // Blocks the built-in devnet made before an upstream was configured: not this chain's.
      log.info(`removing the devnet blocks (chain ${head.chainId}) stored before the upstream was configured`);
      await deleteNetworkIndex(slug);
      head = null;
    }
    if (head && head.chainId !== chainId) throw new RefusedError(`the index holds blocks of chain ${head.chainId}, not ${chainId}`);
    if (head) return { next: head.height + 1n, prevHash: head.hash };
    const latest = BigInt(status.sync_info.latest_block_height);
    const earliest = BigInt(status.sync_info.earliest_block_height);
    let start = opts.startHeight ?? latest - DEFAULT_LOOKBACK;
    if (start < earliest) {
      if (opts.startHeight !== undefined) log.warn(`start height ${start} is below the node's earliest block ${earliest}: starting there`);
      start = earliest;
    }
    return { next: start < 1n ? 1n : start, prevHash: undefined };
  };

  const fetchBlock = async (height: bigint, signal: AbortSignal): Promise<IngestBlock> => {
    const { block, results, raw } = await client.blockWithResults(height, signal);
    if (block.block.header.height !== height.toString()) throw new ConversionError(`asked for block ${height}, got ${block.block.header.height}`);
    return toIngestBlock(block, results, { warn: (m) => log.warn(m), raw });
  };

  /** Refuses a batch that is not the continuation of what is stored. */
  const checkLinks = (blocks: IngestBlock[], prevHash: string | undefined) => {
    let prev = prevHash;
    for (const b of blocks) {
      const header = b.result.block.header;
      if (header.chain_id !== chainId) throw new RefusedError(`block ${b.height} is of chain ${header.chain_id}, not ${chainId}`);
      if (prev !== undefined && header.last_block_id.hash !== prev) {
        throw new RefusedError(`block ${b.height} does not follow the stored block ${b.height - 1n} (its last_block_id is ${header.last_block_id.hash}, ours ${prev})`);
      }
      prev = b.result.block_id.hash;
    }
  };

  const classify = (e: unknown): Failure => {
    const fromNode = e instanceof UpstreamUnavailableError || e instanceof RpcError || e instanceof ConversionError || e instanceof RefusedError;
    const what = e instanceof RefusedError ? "not ingesting" : fromNode ? "upstream failed" : "ingestion failed";
    // A node's failure leaves the position good; database or lock trouble starts over from the stored head under a fresh lock.
    return { what, reason: reason(e), keepState: fromNode, level: fromNode && !(e instanceof RefusedError) ? "warn" : "error" };
  };

  return startWorker<Position>({
    kind: INDEX_WRITER_KIND,
    key: slug,
    leader: { databaseUrl: opts.databaseUrl },
    logger: opts.logger,
    backoff: { baseMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS },
    classify,
    position: (p) => `continuing at height ${p.next}`,
    async init({ signal }) {
      const status = await client.status(signal);
      checkChain(status);
      const nodeLatest = BigInt(status.sync_info.latest_block_height);
      const { next, prevHash } = await resume(status);
      log.info(`following ${client.labels.join(", ")} from height ${next} (node at ${nodeLatest})`);
      return { next, prevHash, nodeLatest, lastProgressLog: Date.now() };
    },
    async step(p, { signal }) {
      if (p.next > p.nodeLatest) {
        const status = await client.status(signal);
        checkChain(status);
        p.nodeLatest = BigInt(status.sync_info.latest_block_height);
      }
      if (p.next > p.nodeLatest) return pollMs;
      const last = p.next + BigInt(BATCH_SIZE) - 1n < p.nodeLatest ? p.next + BigInt(BATCH_SIZE) - 1n : p.nodeLatest;
      const heights: bigint[] = [];
      for (let h = p.next; h <= last; h++) heights.push(h);
      const blocks = await Promise.all(heights.map((h) => fetchBlock(h, signal)));
      checkLinks(blocks, p.prevHash);
      await insertBlocks(slug, blocks);
      p.next = last + 1n;
      p.prevHash = blocks.at(-1)?.result.block_id.hash;
      if (Date.now() - p.lastProgressLog >= PROGRESS_LOG_MS) {
        log.info(`ingested up to height ${last} (node at ${p.nodeLatest})`);
        p.lastProgressLog = Date.now();
      }
      return 0;
    },
  });
}
