import { setTimeout as delay } from "node:timers/promises";
import { IndexWriterLock } from "../index-lock";
import { db } from "@/lib/db/client";
import type { Network } from "@/lib/networks";
import { RpcError } from "@/lib/jsonrpc/errors";
import { insertBlocks } from "../store";
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
const LOCK_RETRY_MS = 5000;
const PROGRESS_LOG_MS = 30_000;

/** The node serves something we must not store under this network (another chain, a broken link). */
class RefusedError extends Error {
  override name = "RefusedError";
}

export interface FollowerOptions {
  databaseUrl: string;
  /** First height to ingest when the index is empty; default: the node's latest height minus 100. */
  startHeight?: bigint;
  log: (message: string) => void;
  /** Overrides for tests. */
  client?: CometClient;
  pollMs?: number;
}

export interface FollowerHandle {
  stop(): Promise<void>;
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
 * each new block as the node commits it. One process follows a network: the one holding its
 * PostgreSQL advisory lock (others wait and take over if it stops). Node failures are retried
 * with exponential backoff and logged once per streak.
 */
export function startUpstreamFollower(network: Network, opts: FollowerOptions): FollowerHandle {
  const slug = network.slug;
  const client = opts.client ?? upstreamClient(network);
  const chainId = String(network.chainId);
  const pollMs = opts.pollMs ?? POLL_MS;
  const log = (m: string) => opts.log(`[consensus] ${slug}: ${m}`);
  const abort = new AbortController();
  const signal = abort.signal;
  let stopped = false;
  const lock = new IndexWriterLock(opts.databaseUrl, slug);
  const sleep = (ms: number) => delay(ms, undefined, { signal }).catch(() => undefined);

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
      log(`removing the devnet blocks (chain ${head.chainId}) stored before the upstream was configured`);
      await deleteNetworkIndex(slug);
      head = null;
    }
    if (head && head.chainId !== chainId) throw new RefusedError(`the index holds blocks of chain ${head.chainId}, not ${chainId}`);
    if (head) return { next: head.height + 1n, prevHash: head.hash };
    const latest = BigInt(status.sync_info.latest_block_height);
    const earliest = BigInt(status.sync_info.earliest_block_height);
    let start = opts.startHeight ?? latest - DEFAULT_LOOKBACK;
    if (start < earliest) {
      if (opts.startHeight !== undefined) log(`start height ${start} is below the node's earliest block ${earliest}: starting there`);
      start = earliest;
    }
    return { next: start < 1n ? 1n : start, prevHash: undefined };
  };

  const fetchBlock = async (height: bigint): Promise<IngestBlock> => {
    const [block, results] = await Promise.all([client.block(height, signal), client.blockResults(height, signal)]);
    if (block.block.header.height !== height.toString()) throw new ConversionError(`asked for block ${height}, got ${block.block.header.height}`);
    return toIngestBlock(block, results, { warn: log });
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

  const loop = async () => {
    let next: bigint | undefined;
    let prevHash: string | undefined;
    let nodeLatest = 0n;
    let failures = 0;
    let lastProgressLog = 0;
    let waitingLogged = false;
    const recovered = (at: bigint) => {
      if (failures > 0) log(`recovered after ${failures} failed attempt${failures === 1 ? "" : "s"}; continuing at height ${at}`);
      failures = 0;
    };
    while (!stopped) {
      try {
        if (lock.isLost) next = undefined;
        if (next === undefined) {
          if (!(await lock.tryAcquire())) {
            if (!waitingLogged) log("another process writes this network's index; waiting to take over");
            waitingLogged = true;
            await sleep(LOCK_RETRY_MS);
            continue;
          }
          waitingLogged = false;
          const status = await client.status(signal);
          checkChain(status);
          nodeLatest = BigInt(status.sync_info.latest_block_height);
          ({ next, prevHash } = await resume(status));
          log(`following ${client.labels.join(", ")} from height ${next} (node at ${nodeLatest})`);
          lastProgressLog = Date.now();
        }
        if (next > nodeLatest) {
          const status = await client.status(signal);
          checkChain(status);
          nodeLatest = BigInt(status.sync_info.latest_block_height);
        }
        if (next > nodeLatest) {
          recovered(next);
          await sleep(pollMs);
          continue;
        }
        const last = next + BigInt(BATCH_SIZE) - 1n < nodeLatest ? next + BigInt(BATCH_SIZE) - 1n : nodeLatest;
        const heights: bigint[] = [];
        for (let h = next; h <= last; h++) heights.push(h);
        const blocks = await Promise.all(heights.map(fetchBlock));
        checkLinks(blocks, prevHash);
        await insertBlocks(slug, blocks);
        next = last + 1n;
        prevHash = blocks.at(-1)?.result.block_id.hash;
        recovered(next);
        if (Date.now() - lastProgressLog >= PROGRESS_LOG_MS) {
          log(`ingested up to height ${last} (node at ${nodeLatest})`);
          lastProgressLog = Date.now();
        }
      } catch (e) {
        if (stopped) break;
        failures++;
        const fromNode = e instanceof UpstreamUnavailableError || e instanceof RpcError || e instanceof ConversionError || e instanceof RefusedError;
        const what = e instanceof RefusedError ? "not ingesting" : fromNode ? "upstream failed" : "ingestion failed";
        if (failures === 1) log(`${what}, retrying with backoff (up to ${MAX_RETRY_MS / 1000} s): ${reason(e)}`);
        if (!fromNode) {
          // Database or lock trouble: start over from the stored head under a fresh lock.
          next = undefined;
          await lock.release();
        }
        await sleep(Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 10)));
      }
    }
  };

  const running = loop();
  return {
    async stop() {
      stopped = true;
      abort.abort();
      await running.catch(() => undefined);
      await lock.release();
    },
  };
}
