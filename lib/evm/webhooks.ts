/**
 * The EVM chain source: heads, blocks and logs over the network's nodes (lib/evm/backends.ts: the
 * configured upstreams, or the built-in anvil devnet), in the JSON-RPC methods every EVM node
 * serves (https://ethereum.org/en/developers/docs/apis/json-rpc/): eth_blockNumber,
 * eth_getBlockByNumber / eth_getBlockByHash (transaction hashes only) and eth_getLogs.
 *
 * Message shapes:
 * - LOG: { address (lower case), topics, data, block_number, transaction_hash, transaction_index,
 *   log_index, block_hash, block_timestamp (seconds), removed, type: "log" }; numbers are JSON
 *   integers, hashes and data 0x-prefixed lower-case hex.
 * - BLOCK_PERIOD: the block in snake case: hashes and byte strings as hex strings, quantities
 *   (difficulty, total_difficulty, gas_limit, gas_used, size, base_fee_per_gas, blob_gas_used,
 *   excess_blob_gas) as the node's hex quantities, block_number, block_timestamp, transaction_count,
 *   log_count and withdrawal_count as integers, transactions as the transaction hashes. A field the
 *   node does not send (a chain without withdrawals or blobs, a node that no longer reports
 *   totalDifficulty) is null, never made up; withdrawal_count is then 0.
 */
import { finalityDepthOf, type Network } from "@/lib/networks";
import { Buckets, type Filed } from "@/lib/webhooks/engine/matching";
import { ChainSourceError, type BlockMatch, type ChainBlockRef, type ChainSource, type MatchableSubscription, type Matcher, type RangeMatch } from "@/lib/webhooks/engine/source";
import type { LogCondition, WebhookEventType } from "@/lib/webhooks/types";
import { services } from "@/lib/services";
import { NoBackend } from "./backends";
import { UpstreamUnavailable, type EvmUpstream } from "./upstream";

/** A log as eth_getLogs answers it. */
export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  /** Sent by recent nodes (geth ≥ 1.14.? and anvil); the block's timestamp otherwise. */
  blockTimestamp?: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  removed?: boolean;
}

/** A block as eth_getBlockBy* answers it with transaction hashes only. */
interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  transactions: string[];
  withdrawals?: unknown[];
  [field: string]: unknown;
}

/** A LOG message, as delivered in `event.messages`. */
export interface LogMessage {
  address: string;
  topics: string[];
  data: string;
  block_number: number;
  transaction_hash: string;
  transaction_index: number;
  log_index: number;
  block_hash: string;
  block_timestamp: number;
  removed: boolean;
  type: "log";
}

/** The BLOCK_PERIOD message's fields, in order: [message field, node field, kind]. */
const BLOCK_FIELDS: ReadonlyArray<readonly [string, string, "hex" | "quantity"]> = [
  ["hash", "hash", "hex"],
  ["parent_hash", "parentHash", "hex"],
  ["sha3_uncles", "sha3Uncles", "hex"],
  ["miner", "miner", "hex"],
  ["state_root", "stateRoot", "hex"],
  ["transactions_root", "transactionsRoot", "hex"],
  ["receipts_root", "receiptsRoot", "hex"],
  ["logs_bloom", "logsBloom", "hex"],
  ["mix_hash", "mixHash", "hex"],
  ["nonce", "nonce", "hex"],
  ["extra_data", "extraData", "hex"],
  ["withdrawals_root", "withdrawalsRoot", "hex"],
  ["parent_beacon_block_root", "parentBeaconBlockRoot", "hex"],
  ["difficulty", "difficulty", "quantity"],
  ["total_difficulty", "totalDifficulty", "quantity"],
  ["gas_limit", "gasLimit", "quantity"],
  ["gas_used", "gasUsed", "quantity"],
  ["size", "size", "quantity"],
  ["base_fee_per_gas", "baseFeePerGas", "quantity"],
  ["blob_gas_used", "blobGasUsed", "quantity"],
  ["excess_blob_gas", "excessBlobGas", "quantity"],
];

const HEX = /^0x[0-9a-fA-F]*$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;
const ZERO_HASH = `0x${"0".repeat(64)}`;
/** Blocks and logs kept for reuse (a block's logs serve its LOG matches and its log_count). */
const CACHE_BLOCKS = 64;
/** Blocks per eth_getLogs of a range; halved down to one block when the node refuses a range. */
const RANGE_CHUNK = 2000n;

const hex = (n: bigint) => `0x${n.toString(16)}`;

function quantity(value: unknown, what: string): bigint {
  if (typeof value !== "string" || !QUANTITY.test(value)) throw new ChainSourceError(`${what} is not a hex quantity: ${JSON.stringify(value)}`);
  return BigInt(value);
}

function toInt(value: unknown, what: string): number {
  const n = quantity(value, what);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new ChainSourceError(`${what} ${n} is too large for a JSON integer`);
  return Number(n);
}

function blockRef(b: RpcBlock): ChainBlockRef {
  return {
    number: quantity(b.number, "block number"),
    hash: String(b.hash).toLowerCase(),
    parentHash: String(b.parentHash).toLowerCase(),
    timestamp: toInt(b.timestamp, "block timestamp"),
  };
}

/** The LOG message of a node's log, in a block of the given timestamp. */
export function logMessage(log: RpcLog, blockTimestamp: number): LogMessage {
  return {
    address: log.address.toLowerCase(),
    topics: log.topics.map((t) => t.toLowerCase()),
    data: log.data.toLowerCase(),
    block_number: toInt(log.blockNumber, "log blockNumber"),
    transaction_hash: log.transactionHash.toLowerCase(),
    transaction_index: toInt(log.transactionIndex, "log transactionIndex"),
    log_index: toInt(log.logIndex, "log logIndex"),
    block_hash: log.blockHash.toLowerCase(),
    block_timestamp: blockTimestamp,
    removed: log.removed === true,
    type: "log",
  };
}

/** The BLOCK_PERIOD message of a node's block that has `logCount` logs. */
export function blockPeriodMessageOf(b: RpcBlock, logCount: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, rpc, kind] of BLOCK_FIELDS) {
    const v = b[rpc];
    if (v === undefined || v === null) out[field] = null;
    else if (typeof v !== "string" || !(kind === "hex" ? HEX : QUANTITY).test(v)) throw new ChainSourceError(`block ${b.number}: ${rpc} is not hex: ${JSON.stringify(v)}`);
    else out[field] = v.toLowerCase();
  }
  out.block_number = toInt(b.number, "block number");
  out.block_timestamp = toInt(b.timestamp, "block timestamp");
  out.transaction_count = b.transactions.length;
  out.log_count = logCount;
  out.withdrawal_count = Array.isArray(b.withdrawals) ? b.withdrawals.length : 0;
  out.transactions = b.transactions.map((t) => (typeof t === "string" ? t : String((t as { hash?: unknown }).hash)).toLowerCase());
  return out;
}

interface IndexedSub extends Filed {
  /** topics[1..3] of the condition (null: any value). */
  rest: readonly (string | null)[];
}

const NO_TOPICS: readonly (string | null)[] = [];

/**
 * LOG matching indexed by (address, topic0): a log costs one map lookup plus a check of the few
 * subscriptions under its key, whatever the number of subscriptions; so does a subscription put
 * or removed.
 */
export class LogIndex {
  /** Under `${address}:${topic0}`. */
  private readonly subs = new Buckets<IndexedSub>();

  constructor(subscriptions: readonly MatchableSubscription[] = []) {
    for (const s of subscriptions) this.put(s);
  }

  /** Indexes a LOG subscription in place of the one of its id (another kind is only taken out). */
  put(s: MatchableSubscription): void {
    const c = s.eventType === "LOG" ? (s.condition as LogCondition) : null;
    const topic0 = c?.topics[0]?.toLowerCase();
    if (!c || !topic0) {
      this.subs.remove(s.id);
      return;
    }
    const rest = c.topics.length > 1 ? c.topics.slice(1).map((t) => t?.toLowerCase() ?? null) : NO_TOPICS;
    this.subs.add({ id: s.id, key: `${c.address.toLowerCase()}:${topic0}`, at: 0, rest });
  }

  remove(id: string): void {
    this.subs.remove(id);
  }

  /** How many (address, topic0) keys have subscriptions. */
  get size(): number {
    return this.subs.size;
  }

  /** The subscriptions' addresses and topics[0]: the filter of an eth_getLogs over a range. */
  rangeFilter(): { addresses: string[]; topic0s: string[] } {
    const addresses = new Set<string>();
    const topic0s = new Set<string>();
    for (const key of this.subs.keys()) {
      const colon = key.indexOf(":");
      addresses.add(key.slice(0, colon));
      topic0s.add(key.slice(colon + 1));
    }
    return { addresses: [...addresses], topic0s: [...topic0s] };
  }

  /**
   * The matches of a block's logs (in the node's order, which is chain order), one entry per
   * subscription in the order of its first match. A condition of n topics needs a log with at least
   * n topics (as eth_getLogs filters do); null matches any value.
   */
  match(logs: readonly RpcLog[], blockTimestamp: (log: RpcLog) => number): BlockMatch[] {
    const bySub = new Map<string, BlockMatch>();
    for (const log of logs) {
      const t0 = log.topics[0];
      if (t0 === undefined) continue;
      const candidates = this.subs.get(`${log.address.toLowerCase()}:${t0.toLowerCase()}`);
      if (!candidates) continue;
      let message: LogMessage | undefined;
      for (const c of candidates) {
        if (c.rest.length + 1 > log.topics.length) continue;
        let ok = true;
        for (let i = 0; i < c.rest.length; i++) {
          const want = c.rest[i];
          if (want !== null && want !== log.topics[i + 1]!.toLowerCase()) {
            ok = false;
            break;
          }
        }
        if (!ok) continue;
        message ??= logMessage(log, blockTimestamp(log));
        let entry = bySub.get(c.id);
        if (!entry) bySub.set(c.id, (entry = { subscriptionId: c.id, messages: [] }));
        entry.messages.push(message);
      }
    }
    return [...bySub.values()];
  }
}

/** A small map that forgets its oldest entries. */
class Recent<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
  /** The value under key, loading it when absent; a load that fails is not kept. */
  load<T>(this: Recent<Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
    let p = this.get(key);
    if (!p) {
      const loading = load();
      this.set(key, loading);
      loading.catch(() => {
        if (this.get(key) === loading) this.delete(key);
      });
      p = loading;
    }
    return p;
  }
}

export interface EvmSourceOptions {
  /** The nodes to ask; default the process's (lib/services.ts). */
  upstream?: () => Promise<EvmUpstream>;
}

export class EvmChainSource implements ChainSource {
  readonly finalityDepth: number;
  readonly reorgs = true;
  private readonly blocks = new Recent<Promise<RpcBlock>>(CACHE_BLOCKS);
  private readonly logs = new Recent<Promise<RpcLog[]>>(CACHE_BLOCKS);
  private readonly upstream: () => Promise<EvmUpstream>;
  private nextId = 1;

  constructor(
    readonly network: Network,
    opts: EvmSourceOptions = {},
  ) {
    this.finalityDepth = finalityDepthOf(network);
    this.upstream = opts.upstream ?? (() => services().evm.poolFor(network));
  }

  /** One JSON-RPC call; a JSON-RPC error, or no node to ask (none answering, none configured), becomes a ChainSourceError. */
  async rpc<T>(method: string, params: unknown[], signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    let answer: { result?: unknown; error?: { code?: number; message?: string } };
    try {
      const pool = await this.upstream();
      answer = (await pool.send(JSON.stringify({ jsonrpc: "2.0", id: this.nextId++, method, params }), { retryable: true, method })) as typeof answer;
    } catch (e) {
      if (e instanceof UpstreamUnavailable || e instanceof NoBackend) throw new ChainSourceError(`${method}: ${e.message}`, { cause: e });
      throw e;
    }
    signal.throwIfAborted();
    if (answer.error) throw new ChainSourceError(`${method} failed: ${answer.error.message ?? "error"} (${answer.error.code ?? "no code"})`);
    return answer.result as T;
  }

  async head(signal: AbortSignal): Promise<bigint | null> {
    return quantity(await this.rpc<string>("eth_blockNumber", [], signal), "eth_blockNumber");
  }

  async block(number: bigint, signal: AbortSignal): Promise<ChainBlockRef | null> {
    const b = await this.rpc<RpcBlock | null>("eth_getBlockByNumber", [hex(number), false], signal);
    if (!b) return null;
    if (typeof b.hash !== "string" || typeof b.parentHash !== "string" || !Array.isArray(b.transactions)) throw new ChainSourceError(`block ${number}: not a block`);
    const ref = blockRef(b);
    if (ref.number !== number) throw new ChainSourceError(`asked for block ${number}, the node answered block ${ref.number}`);
    this.blocks.set(ref.hash, Promise.resolve(b));
    return ref;
  }

  private rawBlock(hash: string, signal: AbortSignal): Promise<RpcBlock> {
    return this.blocks.load(hash, async () => {
      const b = await this.rpc<RpcBlock | null>("eth_getBlockByHash", [hash, false], signal);
      if (!b || !Array.isArray(b.transactions)) throw new ChainSourceError(`block ${hash} is not on the chain (any more)`);
      return b;
    });
  }

  /** Every log of a block, in chain order (by hash: the logs of exactly that block). */
  blockLogs(hash: string, signal: AbortSignal): Promise<RpcLog[]> {
    return this.logs.load(hash, async () => {
      const logs = await this.rpc<RpcLog[]>("eth_getLogs", [{ blockHash: hash }], signal);
      if (!Array.isArray(logs)) throw new ChainSourceError(`eth_getLogs of block ${hash}: not a list`);
      return logs;
    });
  }

  async blockPeriodMessage(block: ChainBlockRef, signal: AbortSignal): Promise<unknown> {
    const [b, logs] = await Promise.all([this.rawBlock(block.hash, signal), this.blockLogs(block.hash, signal)]);
    return blockPeriodMessageOf(b, logs.length);
  }

  matcher(subscriptions: readonly MatchableSubscription[]): Matcher {
    const index = new LogIndex(subscriptions);
    return {
      match: async (block, signal) => {
        if (index.size === 0) return [];
        const logs = await this.blockLogs(block.hash, signal);
        return index.match(logs, () => block.timestamp);
      },
      matchRange: (from, to, signal) => this.matchRange(index, from, to, signal),
      put: (s) => index.put(s),
      remove: (id) => index.remove(id),
    };
  }

  /** eth_getLogs over the range, filtered by the subscriptions' addresses and topic0s, grouped by block. */
  private async matchRange(index: LogIndex, from: bigint, to: bigint, signal: AbortSignal): Promise<RangeMatch[]> {
    if (index.size === 0 || from > to) return [];
    const { addresses, topic0s } = index.rangeFilter();
    const logs: RpcLog[] = [];
    const fetchRange = async (a: bigint, b: bigint): Promise<void> => {
      try {
        const got = await this.rpc<RpcLog[]>("eth_getLogs", [{ fromBlock: hex(a), toBlock: hex(b), address: addresses, topics: [topic0s] }], signal);
        if (!Array.isArray(got)) throw new ChainSourceError("eth_getLogs: not a list");
        logs.push(...got);
      } catch (e) {
        // Nodes cap the blocks or results of one eth_getLogs: ask for halves.
        if (!(e instanceof ChainSourceError) || a === b) throw e;
        const mid = a + (b - a) / 2n;
        await fetchRange(a, mid);
        await fetchRange(mid + 1n, b);
      }
    };
    for (let a = from; a <= to; a += RANGE_CHUNK) await fetchRange(a, a + RANGE_CHUNK - 1n < to ? a + RANGE_CHUNK - 1n : to);
    const byBlock = new Map<string, RpcLog[]>();
    for (const log of logs) {
      const key = log.blockHash.toLowerCase();
      let list = byBlock.get(key);
      if (!list) byBlock.set(key, (list = []));
      list.push(log);
    }
    const out: RangeMatch[] = [];
    for (const [hash, blockLogs] of byBlock) {
      const timestamp = blockLogs[0]!.blockTimestamp === undefined ? blockRef(await this.rawBlock(hash, signal)).timestamp : undefined;
      const matches = index.match(blockLogs, (l) => timestamp ?? toInt(l.blockTimestamp, "log blockTimestamp"));
      if (matches.length > 0) out.push({ number: quantity(blockLogs[0]!.blockNumber, "log blockNumber"), hash, matches });
    }
    return out.sort((x, y) => (x.number < y.number ? -1 : x.number > y.number ? 1 : 0));
  }

  async sample(eventType: WebhookEventType, signal: AbortSignal, condition?: unknown): Promise<unknown> {
    const head = await this.head(signal);
    const latest = head === null ? null : await this.block(head, signal);
    if (!latest) throw new ChainSourceError("the chain has no block yet");
    if (eventType === "BLOCK_PERIOD") return this.blockPeriodMessage(latest, signal);
    if (eventType !== "LOG") throw new ChainSourceError(`${eventType} is not an event of EVM networks`);
    const c = (condition as LogCondition | undefined) ?? null;
    if (c) {
      // The subscription's own latest match of the last 1,000 blocks, when there is one.
      const from = latest.number > 999n ? latest.number - 999n : 0n;
      const own = this.matcher([{ id: "sample", eventType: "LOG", condition: c }]);
      const found = await own.matchRange!(from, latest.number, signal).catch(() => []);
      const last = found.at(-1)?.matches[0]?.messages.at(-1);
      if (last) return last;
    }
    // Otherwise a log made up in the latest block, with the condition's address and topics
    // (wildcards as zero), or a Transfer of 0 by the zero address.
    const topics = c
      ? c.topics.map((t) => t ?? ZERO_HASH)
      : ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", ZERO_HASH, ZERO_HASH];
    return {
      address: c?.address.toLowerCase() ?? `0x${"0".repeat(40)}`,
      topics,
      data: ZERO_HASH,
      block_number: Number(latest.number),
      transaction_hash: ZERO_HASH,
      transaction_index: 0,
      log_index: 0,
      block_hash: latest.hash,
      block_timestamp: latest.timestamp,
      removed: false,
      type: "log",
    } satisfies LogMessage;
  }
}
