import { BehindError, followUpstream, RefusedError, type FollowedChain, type NodeHead, type UpstreamFollowerOptions } from "@/lib/chains/upstream-follower";
import { componentLogger, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { WorkerHandle } from "@/lib/workers/worker";
import { ConversionError, splitBlocks, toIngestBlock, toIngestTx } from "../ingest";
import { aptosCursor, aptosHead, APTOS_INDEX_KIND, deleteAptosIndex, storeAptosBlocks, type AptosCursor } from "../store";
import type { IngestBlock, IngestTx } from "../types";
import { type AptosNodeClient, AptosNodeError, AptosUpstreamUnavailable, aptosUpstreamClient } from "./client";

export { DEFAULT_LOOKBACK, POLL_MS } from "@/lib/chains/upstream-follower";

/** Transactions asked for at once: the fullnode's largest page. */
export const PAGE_SIZE = 100;
/** Pages read in one step while looking for the end of a block (a block of 10,000 transactions). */
const MAX_PAGES_PER_STEP = 100;

export interface AptosFollowerOptions extends UpstreamFollowerOptions {
  /** Overrides for tests (the logger receives the follower's lines and its worker's). */
  client?: AptosNodeClient;
}

/** The node's ledger: its block heights, and the newest version it has (which a page of transactions may show moved on). */
interface Ledger extends NodeHead {
  version: bigint;
}

interface Position {
  /** The stored cursor (what the next write expects to replace). */
  cursor: AptosCursor | null;
  nextHeight: bigint;
  nextVersion: bigint;
  epoch: bigint;
  /** The time of the block before `nextHeight` (seconds since the epoch), once this follower stored it. */
  time?: number;
}

const reason = (e: unknown) => (e instanceof AptosNodeError ? `HTTP ${e.status} ${e.errorCode}: ${e.message}` : e instanceof Error ? e.message : String(e));

/** Fullnodes refuse a start past their ledger with 400 invalid_input ("Given start value (…) is higher than the current ledger version"). */
const pastTheLedger = (e: unknown) => e instanceof AptosNodeError && e.status === 400 && e.errorCode === "invalid_input" && /higher than the current ledger version/i.test(e.message);

/** Transactions from `at.nextVersion` until at least one block is whole (or the node's head). */
async function readBlocks(network: Network, client: AptosNodeClient, at: Position, ledger: Ledger, signal: AbortSignal): Promise<IngestTx[][]> {
  const txs: IngestTx[] = [];
  for (let page = 0; page < MAX_PAGES_PER_STEP; page++) {
    const from = at.nextVersion + BigInt(txs.length);
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
    if (last > ledger.version) ledger.version = last;
    // A short page ends at the node's ledger version, which always closes a block.
    const atHead = raw.length < PAGE_SIZE || last >= ledger.version;
    const { blocks } = splitBlocks(txs, atHead);
    if (blocks.length > 0) return blocks;
  }
  throw new ConversionError(`no block ends within ${MAX_PAGES_PER_STEP * PAGE_SIZE} transactions from version ${at.nextVersion}`);
}

/** An Aptos fullnode's ledger and the index, as the upstream follower (lib/chains/upstream-follower.ts) reads and writes them. */
function aptosChain(network: Network, client: AptosNodeClient, log: Logger): FollowedChain<Ledger, Position> {
  const slug = network.slug;
  const chainId = Number(network.chainId);

  /** The cursor continues at the node's numbering: its block at the next height starts at the next version. */
  const resumeAt = async (cursor: AptosCursor, ledger: Ledger, signal: AbortSignal): Promise<Position> => {
    const next = { height: BigInt(cursor.nextHeight), version: BigInt(cursor.nextVersion) };
    if (next.height <= ledger.latest) {
      const block = await client.blockByHeight(next.height, signal);
      if (block.first_version !== next.version.toString()) {
        throw new RefusedError(`the node's block ${next.height} starts at version ${block.first_version}, the index continues at version ${next.version}`);
      }
    }
    const head = await aptosHead(slug);
    return { cursor, nextHeight: next.height, nextVersion: next.version, epoch: head?.latest.epoch ?? 0n };
  };

  return {
    kind: APTOS_INDEX_KIND,
    chainName: (id) => `chain id ${id}`,
    labels: () => client.labels,
    async head(signal) {
      const info = await client.ledgerInfo(signal);
      return { chainId: info.chain_id, oldest: BigInt(info.oldest_block_height), latest: BigInt(info.block_height), version: BigInt(info.ledger_version) };
    },
    async stored() {
      const cursor = await aptosCursor(slug).read();
      if (!cursor) return null;
      return { chainId: cursor.chainId, devnet: cursor.source === "devnet" || cursor.chainId === Number(network.devnetChainId), resume: (ledger, signal) => resumeAt(cursor, ledger, signal) };
    },
    deleteIndex: (term) => deleteAptosIndex(slug, term),
    async startAt(height, ledger, signal) {
      let start = height;
      if (start > ledger.latest) {
        log.warn(`start height ${start} is above the node's latest block ${ledger.latest}: starting there`);
        start = ledger.latest;
      }
      const block = await client.blockByHeight(start, signal);
      if (block.block_height !== start.toString()) throw new ConversionError(`asked for block ${start}, got block ${block.block_height}`);
      return { cursor: null, nextHeight: start, nextVersion: BigInt(block.first_version), epoch: 0n };
    },
    caughtUp: (at, ledger) => at.nextVersion > ledger.version,
    async ingest(at, ledger, { signal, term }) {
      const groups = await readBlocks(network, client, at, ledger, signal);
      const blocks: IngestBlock[] = [];
      let epoch = at.epoch;
      groups.forEach((txs, i) => {
        const block = toIngestBlock(at.nextHeight + BigInt(i), txs, epoch);
        epoch = block.epoch;
        blocks.push(block);
      });
      const last = blocks.at(-1)!;
      const next: AptosCursor = { source: "upstream", chainId, nextHeight: (last.height + 1n).toString(), nextVersion: (last.lastVersion + 1n).toString() };
      await storeAptosBlocks(slug, blocks, { next, expected: at.cursor, term });
      Object.assign(at, { cursor: next, nextHeight: last.height + 1n, nextVersion: last.lastVersion + 1n, epoch, time: Number(last.timestamp) / 1e6 });
    },
    from: (at) => `block ${at.nextHeight}, version ${at.nextVersion}`,
    nodeAt: (ledger) => `block ${ledger.latest}, version ${ledger.version}`,
    progress: (at, ledger) => `stored up to block ${at.nextHeight - 1n}, version ${at.nextVersion - 1n} (node at version ${ledger.version})`,
    position: (at) => `continuing at block ${at.nextHeight} (version ${at.nextVersion})`,
    indexed: (at) => ({ height: at.nextHeight - 1n, time: at.time }),
    fromNode: (e) => e instanceof AptosUpstreamUnavailable || e instanceof AptosNodeError || e instanceof ConversionError,
    reason: (e) => (e instanceof AptosNodeError ? reason(e) : undefined),
  };
}

/**
 * Follows an Aptos network's upstream fullnodes into the index (lib/chains/upstream-follower.ts):
 * pages of 100 transactions from where the cursor stands (`GET /v1/transactions?start=&limit=100`),
 * grouped into whole blocks, stored with the cursor in one transaction; then each new block as
 * the ledger grows (`GET /v1` polled every second). A node behind the others ("start past the
 * ledger") is waited for.
 */
export function startAptosFollower(network: Network, opts: AptosFollowerOptions): WorkerHandle {
  const log = opts.logger ?? componentLogger("aptos", { network: network.slug });
  return followUpstream(network, aptosChain(network, opts.client ?? aptosUpstreamClient(network), log), opts, log);
}
