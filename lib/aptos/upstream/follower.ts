import { componentLogger, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import { startWorker, type Failure, type WorkerHandle } from "@/lib/workers/worker";
import { ConversionError, splitBlocks, toIngestBlock, toIngestTx } from "../ingest";
import { aptosCursor, aptosHead, APTOS_INDEX_KIND, deleteAptosIndex, storeAptosBlocks, type AptosCursor } from "../store";
import type { IngestBlock, IngestTx } from "../types";
import { type AptosNodeClient, AptosNodeError, AptosUpstreamUnavailable, aptosUpstreamClient } from "./client";

/** Transactions asked for at once: the fullnode's largest page. */
export const PAGE_SIZE = 100;
/** How often the node is asked for its ledger once the index has caught up. */
export const POLL_MS = 1000;
/** When the index is empty and no start height is configured: this many blocks below the node's head. */
export const DEFAULT_LOOKBACK = 100n;
/** Pages read in one step while looking for the end of a block (a block of 10,000 transactions). */
const MAX_PAGES_PER_STEP = 100;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const PROGRESS_LOG_MS = 30_000;

/** The node serves something this network must not store (another chain, a gap, a pruned start). */
class RefusedError extends Error {
  override name = "RefusedError";
}

/** The node's ledger ends before where the index continues (a node behind the others): wait for it. */
class BehindError extends Error {
  override name = "BehindError";
}

export interface AptosFollowerOptions {
  databaseUrl: string;
  /** First block height to store when the index is empty; default: the node's latest minus 100. */
  startHeight?: bigint;
  /** Overrides for tests (the logger receives the follower's lines and its worker's). */
  client?: AptosNodeClient;
  pollMs?: number;
  backoff?: { baseMs?: number; maxMs?: number };
  logger?: Logger;
}

interface Position {
  /** The stored cursor (what the next write expects to replace). */
  cursor: AptosCursor | null;
  nextHeight: bigint;
  nextVersion: bigint;
  epoch: bigint;
  nodeLedger: bigint;
  lastProgressLog: number;
}

const reason = (e: unknown) => (e instanceof AptosNodeError ? `HTTP ${e.status} ${e.errorCode}: ${e.message}` : e instanceof Error ? e.message : String(e));

/** Fullnodes refuse a start past their ledger with 400 invalid_input ("Given start value (…) is higher than the current ledger version"). */
const pastTheLedger = (e: unknown) => e instanceof AptosNodeError && e.status === 400 && e.errorCode === "invalid_input" && /higher than the current ledger version/i.test(e.message);

/**
 * Follows an Aptos network's upstream fullnodes into the index: pages of 100 transactions from
 * where the cursor stands (`GET /v1/transactions?start=&limit=100`), grouped into whole blocks,
 * stored with the cursor in one transaction; then each new block as the ledger grows (`GET /v1`
 * polled every second). One process follows a network: the leader of its index writer. Node
 * failures, a node behind the others ("start past the ledger") and malformed answers are retried
 * with exponential backoff, logged once per streak; database and lock failures start over from
 * the stored cursor under a fresh lock.
 */
export function startAptosFollower(network: Network, opts: AptosFollowerOptions): WorkerHandle {
  const slug = network.slug;
  const client = opts.client ?? aptosUpstreamClient(network);
  const chainId = Number(network.chainId);
  const pollMs = opts.pollMs ?? POLL_MS;
  const log = opts.logger ?? componentLogger("aptos", { network: slug });

  const checkChain = (id: number) => {
    if (id !== chainId) throw new RefusedError(`the node serves chain id ${id}, not ${chainId}: check ${network.upstreamVariable}`);
  };

  /** Where to continue: the stored cursor, or for an empty index the configured (or default) start block. */
  const resume = async (nodeHeight: bigint, oldestHeight: bigint, signal: AbortSignal): Promise<Omit<Position, "nodeLedger" | "lastProgressLog">> => {
    let cursor = await aptosCursor(slug).read();
    if (cursor && (cursor.source === "devnet" || cursor.chainId === Number(network.devnetChainId))) {
      log.info(`removing the devnet blocks (chain id ${cursor.chainId}) stored before the upstream was configured`);
      await deleteAptosIndex(slug);
      cursor = null;
    }
    if (cursor && cursor.chainId !== chainId) throw new RefusedError(`the index holds blocks of chain id ${cursor.chainId}, not ${chainId}`);
    if (cursor) {
      const next = { height: BigInt(cursor.nextHeight), version: BigInt(cursor.nextVersion) };
      if (next.height <= nodeHeight) {
        // The node numbers blocks as the index does: its block at the next height starts at the next version.
        const block = await client.blockByHeight(next.height, signal);
        if (block.first_version !== next.version.toString()) {
          throw new RefusedError(`the node's block ${next.height} starts at version ${block.first_version}, the index continues at version ${next.version}`);
        }
      }
      const head = await aptosHead(slug);
      return { cursor, nextHeight: next.height, nextVersion: next.version, epoch: head?.latest.epoch ?? 0n };
    }
    let start = opts.startHeight ?? (nodeHeight > DEFAULT_LOOKBACK ? nodeHeight - DEFAULT_LOOKBACK : 0n);
    if (start < oldestHeight) {
      if (opts.startHeight !== undefined) log.warn(`start height ${start} is below the node's oldest block ${oldestHeight}: starting there`);
      start = oldestHeight;
    }
    if (start > nodeHeight) {
      log.warn(`start height ${start} is above the node's latest block ${nodeHeight}: starting there`);
      start = nodeHeight;
    }
    const block = await client.blockByHeight(start, signal);
    if (block.block_height !== start.toString()) throw new ConversionError(`asked for block ${start}, got block ${block.block_height}`);
    return { cursor: null, nextHeight: start, nextVersion: BigInt(block.first_version), epoch: 0n };
  };

  /** Transactions from `p.nextVersion` until at least one block is whole (or the node's head). */
  const readBlocks = async (p: Position, signal: AbortSignal): Promise<IngestTx[][]> => {
    const txs: IngestTx[] = [];
    for (let page = 0; page < MAX_PAGES_PER_STEP; page++) {
      const from = p.nextVersion + BigInt(txs.length);
      let raw: unknown[];
      try {
        raw = await client.transactions(from, PAGE_SIZE, signal);
      } catch (e) {
        if (pastTheLedger(e)) throw new BehindError(`the node's ledger ends before version ${from} (${reason(e)})`);
        if (e instanceof AptosNodeError && e.errorCode === "version_pruned") throw new RefusedError(`the node has pruned version ${from}: point ${network.upstreamVariable} at a node that keeps it`);
        throw e;
      }
      if (raw.length === 0) throw new BehindError(`the node returned no transactions from version ${from}`);
      raw.forEach((r, i) => {
        const t = toIngestTx(r);
        if (t.version !== from + BigInt(i)) throw new ConversionError(`asked for versions from ${from}, got version ${t.version} at position ${i}`);
        txs.push(t);
      });
      const last = txs.at(-1)!.version;
      if (last > p.nodeLedger) p.nodeLedger = last;
      // A short page ends at the node's ledger version, which always closes a block.
      const atHead = raw.length < PAGE_SIZE || last >= p.nodeLedger;
      const { blocks } = splitBlocks(txs, atHead);
      if (blocks.length > 0) return blocks;
    }
    throw new ConversionError(`no block ends within ${MAX_PAGES_PER_STEP * PAGE_SIZE} transactions from version ${p.nextVersion}`);
  };

  const classify = (e: unknown): Failure => {
    const fromNode = e instanceof AptosUpstreamUnavailable || e instanceof AptosNodeError || e instanceof ConversionError || e instanceof RefusedError || e instanceof BehindError;
    const what = e instanceof RefusedError ? "not ingesting" : e instanceof BehindError ? "waiting for the node" : fromNode ? "upstream failed" : "ingestion failed";
    return { what, reason: reason(e), keepState: fromNode, level: fromNode && !(e instanceof RefusedError) ? "warn" : "error" };
  };

  return startWorker<Position>({
    kind: APTOS_INDEX_KIND,
    key: slug,
    leader: { databaseUrl: opts.databaseUrl },
    logger: opts.logger,
    backoff: { baseMs: opts.backoff?.baseMs ?? FIRST_RETRY_MS, maxMs: opts.backoff?.maxMs ?? MAX_RETRY_MS },
    classify,
    position: (p) => `continuing at block ${p.nextHeight} (version ${p.nextVersion})`,
    async init({ signal }) {
      const info = await client.ledgerInfo(signal);
      checkChain(info.chain_id);
      const start = await resume(BigInt(info.block_height), BigInt(info.oldest_block_height), signal);
      log.info(`following ${client.labels.join(", ")} from block ${start.nextHeight}, version ${start.nextVersion} (node at block ${info.block_height}, version ${info.ledger_version})`);
      return { ...start, nodeLedger: BigInt(info.ledger_version), lastProgressLog: Date.now() };
    },
    async step(p, { signal }) {
      if (p.nextVersion > p.nodeLedger) {
        const info = await client.ledgerInfo(signal);
        checkChain(info.chain_id);
        p.nodeLedger = BigInt(info.ledger_version);
        if (p.nextVersion > p.nodeLedger) return pollMs;
      }
      const groups = await readBlocks(p, signal);
      const blocks: IngestBlock[] = [];
      let epoch = p.epoch;
      groups.forEach((txs, i) => {
        const block = toIngestBlock(p.nextHeight + BigInt(i), txs, epoch);
        epoch = block.epoch;
        blocks.push(block);
      });
      const last = blocks.at(-1)!;
      const next: AptosCursor = { source: "upstream", chainId, nextHeight: (last.height + 1n).toString(), nextVersion: (last.lastVersion + 1n).toString() };
      await storeAptosBlocks(slug, blocks, { next, expected: p.cursor });
      p.cursor = next;
      p.nextHeight = last.height + 1n;
      p.nextVersion = last.lastVersion + 1n;
      p.epoch = epoch;
      if (Date.now() - p.lastProgressLog >= PROGRESS_LOG_MS) {
        log.info(`stored up to block ${last.height}, version ${last.lastVersion} (node at version ${p.nodeLedger})`);
        p.lastProgressLog = Date.now();
      }
      return p.nextVersion > p.nodeLedger ? pollMs : 0;
    },
  });
}
