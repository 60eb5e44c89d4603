/**
 * Aptos (aptos/mainnet, aptos/testnet) as a webhook chain source, over the index lib/aptos keeps
 * (filled by the devnet producer or the upstream follower).
 *
 * Aptos is final at commit: a stored block never changes, so finalityDepth is 0, there are no
 * reorganisations, and isInstant makes no difference on these networks.
 *
 * TRANSACTION: a subscription matches a user transaction (successful or failed) that calls its
 * entry function (payloadFunction), or that emits its event (eventType as written, type arguments
 * included, from eventAccountAddress; `0x0` for module events) with data matching eventData
 * (every key of the filter present with an equal value, nested objects key by key), or, when both
 * are set, that calls the function and emits such an event. The message is the transaction as the
 * fullnode's REST API answers it, without its write-set `changes`; a block's matches of one
 * subscription are delivered together, in version order.
 *
 * BLOCK_PERIOD: the block as `GET /v1/blocks/by_height/<height>` answers it, with `transactions`
 * holding the hashes of all its transactions (lib/aptos/source.ts, blockPeriodMessage).
 *
 * Matching costs about the size of a block, not the number of subscriptions: the matcher indexes
 * its subscriptions once by payload function and by (event type, event account), and within an
 * event by the value of one top-level eventData field. Names are compared in AIP-40 form
 * (https://github.com/aptos-foundation/AIPs/blob/main/aips/aip-40.md) on both sides, since the
 * fullnode may write an address with its leading zeros stripped.
 */
import { AppError } from "@/lib/errors";
import type { Network } from "@/lib/networks";
import { Buckets, type Filed } from "@/lib/webhooks/engine/matching";
import { ChainSourceError, type BlockMatch, type ChainBlockRef, type ChainSource, type MatchableSubscription, type Matcher } from "@/lib/webhooks/engine/source";
import { normalizeMoveFunction, normalizeMoveStructType } from "@/lib/webhooks/move-names";
import { supportedNetworks } from "@/lib/webhooks/schema";
import type { TransactionCondition, WebhookEventType } from "@/lib/webhooks/types";
import { ZERO_HASH } from "./ingest";
import { aptosHead } from "./store";
import {
  aptosBlocks,
  aptosHeadHeight,
  aptosLatestUserTransaction,
  aptosUserTransactions,
  blockPeriodMessage,
  eventDataMatches,
  standardAddress,
  type AptosBlockMessage,
  type AptosBlockSummary,
  type AptosTransactionMessage,
} from "./source";

/** Blocks read in one query when a block is not cached: following, replay and preview read ahead. */
const WINDOW = 32;
/** Blocks (with their user transactions, once matched) kept in memory per network. */
const CACHE_BLOCKS = 96;
/**
 * How long a cached block is trusted. Stored blocks never change, but an operator may replace a
 * network's whole index (a devnet replaced by an upstream's chain): then the cache ages out.
 */
const CACHE_TTL_MS = 60_000;

interface CachedBlock {
  summary: AptosBlockSummary;
  ref: ChainBlockRef;
  at: number;
  /** The block's user transactions, in version order, once loaded. */
  txs?: AptosTransactionMessage[];
}

const toRef = (b: AptosBlockSummary, parentHash: string): ChainBlockRef => ({
  number: b.height,
  hash: b.hash,
  parentHash,
  timestamp: Number(b.timestamp / 1_000_000n),
});

/** The index's blocks, read a window at a time and kept for a while (one per network). */
class BlockCache {
  private readonly entries = new Map<bigint, CachedBlock>();

  constructor(private readonly slug: string) {}

  private cached(height: bigint): CachedBlock | undefined {
    const c = this.entries.get(height);
    if (c && Date.now() - c.at < CACHE_TTL_MS) return c;
    if (c) this.entries.delete(height);
    return undefined;
  }

  private put(height: bigint, c: CachedBlock): void {
    this.entries.delete(height);
    this.entries.set(height, c);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= CACHE_BLOCKS) break;
      this.entries.delete(oldest);
    }
  }

  /** Blocks from..to (at most WINDOW) in one query, with the one before for the first parent hash. */
  async load(from: bigint, to: bigint): Promise<CachedBlock[]> {
    const last = to < from + BigInt(WINDOW) - 1n ? to : from + BigInt(WINDOW) - 1n;
    const rows = await aptosBlocks(this.slug, from > 0n ? from - 1n : 0n, last);
    const hashes = new Map(rows.map((r) => [r.height, r.hash]));
    const at = Date.now();
    const loaded: CachedBlock[] = [];
    for (const s of rows) {
      if (s.height < from) continue;
      // The block before the oldest stored one is pruned: its hash is no longer known.
      const c: CachedBlock = { summary: s, ref: toRef(s, hashes.get(s.height - 1n) ?? ZERO_HASH), at };
      this.put(s.height, c);
      loaded.push(c);
    }
    return loaded;
  }

  async block(height: bigint): Promise<CachedBlock | null> {
    const c = this.cached(height);
    if (c) return c;
    await this.load(height, height + BigInt(WINDOW) - 1n);
    return this.cached(height) ?? null;
  }

  /** The stored block a ref names; an error when the index no longer holds it. */
  async exact(ref: ChainBlockRef): Promise<CachedBlock> {
    let c = this.cached(ref.number);
    if (!c || c.ref.hash !== ref.hash) {
      this.entries.delete(ref.number);
      c = (await this.block(ref.number)) ?? undefined;
    }
    if (!c) throw new ChainSourceError(`block ${ref.number} of ${this.slug} is not in the index (pruned, or the index was replaced)`);
    if (c.ref.hash !== ref.hash) throw new ChainSourceError(`block ${ref.number} of ${this.slug} is now ${c.ref.hash}, not ${ref.hash}: the index was replaced`);
    return c;
  }

  /**
   * The user transactions of a block. Loaded for the cached blocks that follow it too (up to
   * WINDOW, in one query), so a replay or a follower catching up reads a range, not block by block.
   */
  async userTransactions(ref: ChainBlockRef): Promise<AptosTransactionMessage[]> {
    const c = await this.exact(ref);
    if (c.txs) return c.txs;
    const run: CachedBlock[] = [c];
    for (let h = ref.number + 1n; run.length < WINDOW; h++) {
      const next = this.cached(h);
      if (!next || next.txs) break;
      run.push(next);
    }
    const last = run.at(-1)!.summary.height;
    const rows = await aptosUserTransactions(this.slug, ref.number, last);
    // Read after the transactions: a block still stored now had all of them when they were read
    // (a pruning removes a block with its transactions in one database transaction).
    const still = new Map((await aptosBlocks(this.slug, ref.number, last)).map((b) => [b.height, b.hash]));
    const byHeight = new Map<bigint, AptosTransactionMessage[]>();
    for (const r of rows) {
      const list = byHeight.get(r.blockHeight);
      if (list) list.push(r.message);
      else byHeight.set(r.blockHeight, [r.message]);
    }
    for (const b of run) {
      if (still.get(b.summary.height) === b.ref.hash) b.txs = byHeight.get(b.summary.height) ?? [];
      else this.entries.delete(b.summary.height);
    }
    if (!c.txs) throw new ChainSourceError(`block ${ref.number} of ${this.slug} is no longer in the index (pruned, or the index was replaced)`);
    return c.txs;
  }
}

// ---------------------------------------------------------------------------------------------
// Matching

/** Canonical (AIP-40) forms of the names the chain writes, remembered: a chain repeats few names. */
function remembered(normalize: (text: string) => string | null): (text: string) => string {
  const seen = new Map<string, string>();
  return (text) => {
    let canonical = seen.get(text);
    if (canonical === undefined) {
      canonical = normalize(text) ?? text;
      if (seen.size >= 10_000) seen.clear();
      seen.set(text, canonical);
    }
    return canonical;
  };
}
const canonicalFunction = remembered(normalizeMoveFunction);
const canonicalType = remembered(normalizeMoveStructType);
const canonicalAddress = remembered(standardAddress);

const eventKey = (type: string, account: string) => `${type}\n${account}`;

interface TxSubscription extends Filed {
  /** When it was put: matches come out in this order. */
  order: number;
  fn: string | null;
  data: Record<string, unknown> | null;
  /** Filed by an eventData field: its event's key and the field. */
  event?: string;
  field?: string;
}

const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

function conditionOf(raw: unknown): TransactionCondition {
  const c = (raw ?? {}) as Record<string, unknown>;
  const data = c.eventData;
  return {
    payloadFunction: text(c.payloadFunction),
    eventType: text(c.eventType),
    eventAccountAddress: text(c.eventAccountAddress),
    eventData: data !== null && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : null,
  };
}

/** The key of an event's subscriptions filed by one top-level eventData field's value. */
const fieldKey = (event: string, field: string, value: unknown) => `${event}\n${field}\n${JSON.stringify(value)}`;

/**
 * TRANSACTION matching for a set of subscriptions, indexed once and then changed one at a time:
 * with payloadFunction alone, the calls of it; with an event (type and account) alone, the
 * transactions emitting it with matching data; with both, the calls of the function that emit the
 * event.
 */
export class AptosTransactionMatcher {
  private readonly byFunction = new Buckets<TxSubscription>();
  /** By event key: those without an eventData field compared as a whole value. */
  private readonly byEvent = new Buckets<TxSubscription>();
  /** By fieldKey: the others, filed by the first such field. */
  private readonly byField = new Buckets<TxSubscription>();
  /** Per event key, the fields its subscriptions in byField are filed by, and how many each. */
  private readonly fieldsOf = new Map<string, Map<string, number>>();
  private puts = 0;

  constructor(subscriptions: readonly MatchableSubscription[] = []) {
    for (const s of subscriptions) this.put(s);
  }

  /** Indexes a TRANSACTION subscription in place of the one of its id (another kind is only taken out). */
  put(s: MatchableSubscription): void {
    this.remove(s.id);
    if (s.eventType !== "TRANSACTION") return;
    const order = this.puts++;
    const c = conditionOf(s.condition);
    const fn = c.payloadFunction === null ? null : canonicalFunction(c.payloadFunction);
    const account = c.eventAccountAddress === null ? null : standardAddress(c.eventAccountAddress);
    if (c.eventType === null || account === null) {
      // No event to look for: by function alone (eventData filters only an event).
      if (fn !== null) this.byFunction.add({ id: s.id, key: fn, at: 0, order, fn, data: null });
      return;
    }
    const event = eventKey(canonicalType(c.eventType), account);
    // Filed by the first top-level field compared as a whole value (not a nested object).
    const field = Object.entries(c.eventData ?? {}).find(([, v]) => v === null || typeof v !== "object" || Array.isArray(v));
    if (!field) {
      this.byEvent.add({ id: s.id, key: event, at: 0, order, fn, data: c.eventData });
      return;
    }
    this.byField.add({ id: s.id, key: fieldKey(event, field[0], field[1]), at: 0, order, fn, data: c.eventData, event, field: field[0] });
    let fields = this.fieldsOf.get(event);
    if (!fields) this.fieldsOf.set(event, (fields = new Map()));
    fields.set(field[0], (fields.get(field[0]) ?? 0) + 1);
  }

  remove(id: string): void {
    this.byFunction.remove(id);
    this.byEvent.remove(id);
    const filed = this.byField.remove(id);
    if (!filed) return;
    const fields = this.fieldsOf.get(filed.event!)!;
    const left = fields.get(filed.field!)! - 1;
    if (left > 0) fields.set(filed.field!, left);
    else fields.delete(filed.field!);
    if (fields.size === 0) this.fieldsOf.delete(filed.event!);
  }

  /** Matches of these user transactions (one block's, in version order): one entry per subscription that matched. */
  matchTransactions(txs: readonly AptosTransactionMessage[]): BlockMatch[] {
    const found = new Map<TxSubscription, AptosTransactionMessage[]>();
    for (const tx of txs) {
      const matched = new Set<TxSubscription>();
      const payload = tx.payload as { type?: unknown; function?: unknown } | null;
      const rawFn = payload?.type === "entry_function_payload" ? text(payload.function) : null;
      const fn = rawFn === null ? null : canonicalFunction(rawFn);
      if (fn !== null) for (const s of this.byFunction.get(fn) ?? []) matched.add(s);
      if (this.byEvent.size > 0 || this.fieldsOf.size > 0) {
        for (const e of Array.isArray(tx.events) ? tx.events : []) {
          const type = text(e?.type);
          const account = text(e?.guid?.account_address);
          if (type === null || account === null) continue;
          const event = eventKey(canonicalType(type), canonicalAddress(account));
          const candidates: (readonly TxSubscription[])[] = [];
          const any = this.byEvent.get(event);
          if (any) candidates.push(any);
          const fields = this.fieldsOf.get(event);
          if (fields && e.data !== null && typeof e.data === "object" && !Array.isArray(e.data)) {
            const data = e.data as Record<string, unknown>;
            for (const field of fields.keys()) {
              if (!Object.hasOwn(data, field)) continue;
              const list = this.byField.get(fieldKey(event, field, data[field]));
              if (list) candidates.push(list);
            }
          }
          for (const list of candidates) {
            for (const s of list) {
              if (matched.has(s) || (s.fn !== null && s.fn !== fn)) continue;
              if (s.data === null || eventDataMatches(s.data, e.data)) matched.add(s);
            }
          }
        }
      }
      for (const s of matched) {
        const list = found.get(s);
        if (list) list.push(tx);
        else found.set(s, [tx]);
      }
    }
    return [...found.entries()].sort(([a], [b]) => a.order - b.order).map(([s, messages]) => ({ subscriptionId: s.id, messages }));
  }
}

// ---------------------------------------------------------------------------------------------
// Samples for "Send test" before the chain has any

const SAMPLE_ADDRESS = `0x${"3a".repeat(32)}`;
const SAMPLE_TIMESTAMP_US = "1735689600000000";

export const SAMPLE_TRANSACTION: AptosTransactionMessage = {
  version: "1000",
  hash: `0x${"5e".repeat(32)}`,
  state_change_hash: `0x${"c1".repeat(32)}`,
  event_root_hash: `0x${"e2".repeat(32)}`,
  state_checkpoint_hash: null,
  gas_used: "11",
  success: true,
  vm_status: "Executed successfully",
  accumulator_root_hash: `0x${"a7".repeat(32)}`,
  sender: SAMPLE_ADDRESS,
  sequence_number: "0",
  max_gas_amount: "200000",
  gas_unit_price: "100",
  expiration_timestamp_secs: "1735690200",
  payload: {
    function: "0x1::aptos_account::transfer",
    type_arguments: [],
    arguments: [`0x${"4b".repeat(32)}`, "100000000"],
    type: "entry_function_payload",
  },
  signature: { public_key: `0x${"9d".repeat(32)}`, signature: `0x${"6f".repeat(64)}`, type: "ed25519_signature" },
  events: [
    { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::fungible_asset::Withdraw", data: { amount: "100000000", store: `0x${"d0".repeat(32)}` } },
    { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::fungible_asset::Deposit", data: { amount: "100000000", store: `0x${"d1".repeat(32)}` } },
    {
      guid: { creation_number: "0", account_address: "0x0" },
      sequence_number: "0",
      type: "0x1::transaction_fee::FeeStatement",
      data: { execution_gas_units: "8", io_gas_units: "3", storage_fee_octas: "0", storage_fee_refund_octas: "0", total_charge_gas_units: "11" },
    },
  ],
  timestamp: SAMPLE_TIMESTAMP_US,
  type: "user_transaction",
};

export const SAMPLE_BLOCK: AptosBlockMessage = {
  block_height: "500",
  block_hash: `0x${"b4".repeat(32)}`,
  block_timestamp: SAMPLE_TIMESTAMP_US,
  first_version: "999",
  last_version: "1001",
  transactions: [`0x${"b5".repeat(32)}`, SAMPLE_TRANSACTION.hash, `0x${"b6".repeat(32)}`],
};

// ---------------------------------------------------------------------------------------------
// The chain source

class AptosChainSource implements ChainSource {
  readonly finalityDepth = 0;
  readonly reorgs = false;
  private readonly cache: BlockCache;

  constructor(readonly network: Network) {
    this.cache = new BlockCache(network.slug);
  }

  head(signal: AbortSignal): Promise<bigint | null> {
    signal.throwIfAborted();
    return aptosHeadHeight(this.network.slug);
  }

  async block(number: bigint, signal: AbortSignal): Promise<ChainBlockRef | null> {
    signal.throwIfAborted();
    return (await this.cache.block(number))?.ref ?? null;
  }

  async oldest(signal: AbortSignal): Promise<bigint | null> {
    signal.throwIfAborted();
    return (await aptosHead(this.network.slug))?.earliest.height ?? null;
  }

  /** Blocks from..to that the index holds, in height order, read WINDOW at a time. */
  async blocks(from: bigint, to: bigint, signal: AbortSignal): Promise<ChainBlockRef[]> {
    const refs: ChainBlockRef[] = [];
    for (let at = from; at <= to; at += BigInt(WINDOW)) {
      signal.throwIfAborted();
      refs.push(...(await this.cache.load(at, to)).map((c) => c.ref));
    }
    return refs;
  }

  async blockPeriodMessage(block: ChainBlockRef, signal: AbortSignal): Promise<AptosBlockMessage> {
    signal.throwIfAborted();
    return blockPeriodMessage((await this.cache.exact(block)).summary);
  }

  matcher(subscriptions: readonly MatchableSubscription[]): Matcher {
    const index = new AptosTransactionMatcher(subscriptions);
    const cache = this.cache;
    return {
      async match(block, signal) {
        signal.throwIfAborted();
        const txs = await cache.userTransactions(block);
        signal.throwIfAborted();
        return index.matchTransactions(txs);
      },
      put: (s) => index.put(s),
      remove: (id) => index.remove(id),
    };
  }

  async sample(eventType: WebhookEventType, signal: AbortSignal): Promise<unknown> {
    signal.throwIfAborted();
    if (eventType === "TRANSACTION") return (await aptosLatestUserTransaction(this.network.slug)) ?? SAMPLE_TRANSACTION;
    if (eventType === "BLOCK_PERIOD") {
      const head = await aptosHeadHeight(this.network.slug);
      const block = head === null ? null : await this.cache.block(head);
      return block ? blockPeriodMessage(block.summary) : SAMPLE_BLOCK;
    }
    throw new AppError("INVALID_PARAMETER", `${eventType} is not supported on ${this.network.slug}; ${supportedNetworks(eventType)}`);
  }
}

const sources = new Map<string, AptosChainSource>();

/**
 * The chain source of an Aptos network (family "move"): one per network slug, so that its
 * follower, replays and previews share the block cache.
 */
export function aptosChainSource(network: Network): ChainSource & { blocks(from: bigint, to: bigint, signal: AbortSignal): Promise<ChainBlockRef[]> } {
  if (network.family !== "move") throw new Error(`${network.slug} is not an Aptos network`);
  let source = sources.get(network.slug);
  if (!source) sources.set(network.slug, (source = new AptosChainSource(network)));
  return source;
}
