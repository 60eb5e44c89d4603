/**
 * The events a CometBFT 0.38 node publishes for each committed block, in its order (state/execution.go
 * fireEvents, types/event_bus.go, https://docs.cometbft.com/v0.38/rpc/#/Websocket/subscribe), built
 * from what the index stores: NewBlock, NewBlockHeader, NewBlockEvents, then one Tx per transaction,
 * each with its data in the node's JSON (`{ type: "tendermint/event/<Name>", value }`) and its
 * `events` map of composite keys (`<event type>.<attribute key>` → values, plus `tm.event`, and
 * `tx.hash`, `tx.height` for a Tx). NewBlock and NewBlockEvents both carry the block's events under
 * their composite keys, so a query of those keys without `tm.event` matches both, as on a node.
 *
 * https://github.com/cometbft/cometbft/blob/v0.38.17/state/execution.go
 * https://github.com/cometbft/cometbft/blob/v0.38.17/types/event_bus.go
 * https://github.com/cometbft/cometbft/blob/v0.38.17/types/events.go
 *
 * BlockFeed follows the blocks as they are stored, in any process (store.ts notifies
 * BLOCKS_STORED_CHANNEL in the storing transaction), and hands each block's events to the
 * listeners of its network, block after block in height order.
 */
import { rawPool } from "@/lib/db/client";
import { listen, type Listening } from "@/lib/db/listen";
import { componentLogger, errorMessage } from "@/lib/log";
import type { Network } from "@/lib/networks";
import { BLOCKS_STORED_CHANNEL } from "../store";
import { nativeIsOurs, txEventResultJson, type NativeBlock, type StoredEvent, type StoredExecResult } from "../native";
import { nativeBlockResults, nativeBlocks, nativeExecResults } from "../store";

export type EventName = "NewBlock" | "NewBlockHeader" | "NewBlockEvents" | "Tx";

export interface FeedEvent {
  name: EventName;
  height: bigint;
  /** The composite keys and their values, as the subscription queries see them. */
  events: Record<string, string[]>;
  /** `{"type":…,"value":…}` as JSON text, and the events map as JSON text: built once, sent to every subscriber. */
  dataJson: string;
  eventsJson: string;
}

/** Most heights loaded for one notification (a bulk load's batch is smaller). */
const MAX_HEIGHTS = 1000;

/** The composite keys of ABCI events: types and keys that are empty are left out, as the node does. */
function compositeKeys(events: readonly StoredEvent[] | null | undefined, into: Record<string, string[]> = {}): Record<string, string[]> {
  for (const e of events ?? []) {
    if (!e.type) continue;
    for (const a of e.attributes ?? []) {
      if (!a.key) continue;
      (into[`${e.type}.${a.key}`] ??= []).push(a.value ?? "");
    }
  }
  return into;
}

function add(map: Record<string, string[]>, key: string, value: string): Record<string, string[]> {
  (map[key] ??= []).push(value);
  return map;
}

interface BlockResults {
  txs_results: unknown[] | null;
  finalize_block_events: StoredEvent[] | null;
  validator_updates: unknown[] | null;
  consensus_param_updates: unknown;
  /** base64 ([]byte). */
  app_hash: string | null;
}

/** ABCI's ResponseFinalizeBlock as the node's JSON writes it (fields with `omitempty` left out when empty). */
function finalizeBlock(r: BlockResults): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (r.finalize_block_events && r.finalize_block_events.length > 0) out.events = r.finalize_block_events;
  if (r.txs_results && r.txs_results.length > 0) out.tx_results = r.txs_results;
  out.validator_updates = r.validator_updates ?? null;
  if (r.consensus_param_updates != null) out.consensus_param_updates = r.consensus_param_updates;
  if (r.app_hash) out.app_hash = r.app_hash;
  return out;
}

const event = (name: EventName, height: bigint, events: Record<string, string[]>, value: unknown): FeedEvent => ({
  name,
  height,
  events,
  dataJson: JSON.stringify({ type: `tendermint/event/${name}`, value }),
  eventsJson: JSON.stringify(events),
});

/** The events of the stored blocks from `first` to `last`, block by block. */
export async function loadBlockEvents(network: Network, first: bigint, last: bigint): Promise<FeedEvent[][]> {
  const heights: bigint[] = [];
  for (let h = first; h <= last; h++) heights.push(h);
  const ours = nativeIsOurs(network);
  const blocks = await nativeBlocks(network.slug, heights);
  const txRows = await rawPool().query<{ height: string; tx_index: number; hash: string; raw: Buffer }>(
    "SELECT height, tx_index, hash, raw FROM consensus_txs WHERE network = $1 AND height BETWEEN $2 AND $3 ORDER BY height, tx_index",
    [network.slug, first.toString(), last.toString()],
  );
  const execs = await nativeExecResults(
    network.slug,
    txRows.rows.map((t) => ({ height: BigInt(t.height), index: t.tx_index })),
    ours,
  );
  const out: FeedEvent[][] = [];
  for (const height of heights) {
    const raw = blocks.get(height);
    if (!raw) continue;
    const native = JSON.parse(raw.text) as NativeBlock;
    const resultsText = await nativeBlockResults(network.slug, height, ours);
    const results = JSON.parse(resultsText ?? "{}") as BlockResults;
    const blockKeys = (name: EventName) => add(compositeKeys(results.finalize_block_events), "tm.event", name);
    const list: FeedEvent[] = [
      event("NewBlock", height, blockKeys("NewBlock"), {
        block: native.block,
        block_id: native.block_id,
        result_finalize_block: finalizeBlock(results),
      }),
      event("NewBlockHeader", height, { "tm.event": ["NewBlockHeader"] }, { header: native.block.header }),
      // EventDataNewBlockEvents: int64s as strings (the encoder writes every int64 so and does not read
      // num_txs's `,string` option), the events as block_results writes them (the same []abci.Event).
      event("NewBlockEvents", height, blockKeys("NewBlockEvents"), {
        height: height.toString(),
        events: results.finalize_block_events ?? null,
        num_txs: String(native.block.data.txs.length),
      }),
    ];
    for (const t of txRows.rows) {
      if (BigInt(t.height) !== height) continue;
      const exec = JSON.parse(execs.get(`${height}/${t.tx_index}`)?.text ?? "{}") as StoredExecResult;
      const keys = compositeKeys(exec.events);
      add(keys, "tm.event", "Tx");
      add(keys, "tx.hash", t.hash.toUpperCase());
      add(keys, "tx.height", height.toString());
      // abci.TxResult: `index` is omitted when 0, as the node's JSON does (omitempty).
      const txResult: Record<string, unknown> = { height: height.toString() };
      if (t.tx_index !== 0) txResult.index = t.tx_index;
      txResult.tx = t.raw.toString("base64");
      // Not addressable in the event's interface value: written by its struct tags (native.ts ABCI RESULTS).
      txResult.result = txEventResultJson(exec);
      list.push(event("Tx", height, keys, { TxResult: txResult }));
    }
    out.push(list);
  }
  return out;
}

export type BlockListener = (events: FeedEvent[]) => void;

/**
 * Follows BLOCKS_STORED_CHANNEL on its own connection while anyone listens: started by the first
 * listener, stopped with the last. Blocks stored while the connection is away are not replayed
 * (a subscription is a live stream, as on a node).
 */
export class BlockFeed {
  /** By network slug (what the notifications name). */
  private readonly listeners = new Map<string, { network: Network; set: Set<BlockListener> }>();
  private listening: Listening | undefined;
  /** Per network: the loads in order, so blocks reach listeners in height order. */
  private readonly queues = new Map<string, Promise<void>>();
  private readonly log = componentLogger("cometbft-ws");

  constructor(private readonly databaseUrl: () => string) {}

  /** Adds a listener; resolves once notifications are being received (rejects when the database cannot be reached). */
  async add(network: Network, listener: BlockListener): Promise<void> {
    let entry = this.listeners.get(network.slug);
    if (!entry) this.listeners.set(network.slug, (entry = { network, set: new Set() }));
    entry.set.add(listener);
    const listening = (this.listening ??= listen({
      connectionString: this.databaseUrl,
      channel: BLOCKS_STORED_CHANNEL,
      name: "cometbft events",
      retryFirst: false,
      onNotification: (payload) => this.stored(payload),
      onLost: (e, wasUp) => {
        if (wasUp) this.log.warn({ err: errorMessage(e) }, "the block notifications connection was lost; reconnecting (blocks stored meanwhile are not sent)");
      },
    }));
    try {
      await listening.ready;
    } catch (e) {
      if (this.listening === listening) this.listening = undefined;
      this.remove(network, listener);
      throw e;
    }
  }

  remove(network: Network, listener: BlockListener): void {
    const entry = this.listeners.get(network.slug);
    entry?.set.delete(listener);
    if (entry?.set.size === 0) this.listeners.delete(network.slug);
    if (this.listeners.size === 0) this.stop();
  }

  stop(): void {
    void this.listening?.stop();
    this.listening = undefined;
  }

  private stored(payload: string): void {
    const [slug, firstText, lastText] = payload.split("\t");
    const entry = slug === undefined ? undefined : this.listeners.get(slug);
    if (!slug || !entry || !firstText || !lastText) return;
    let first = BigInt(firstText);
    const last = BigInt(lastText);
    if (last - first >= BigInt(MAX_HEIGHTS)) first = last - BigInt(MAX_HEIGHTS) + 1n;
    const previous = this.queues.get(slug) ?? Promise.resolve();
    const next = previous
      .then(() => (this.listeners.has(slug) ? loadBlockEvents(entry.network, first, last) : []))
      .then((blocks) => {
        for (const events of blocks) for (const l of [...(this.listeners.get(slug)?.set ?? [])]) l(events);
      })
      .catch((e: unknown) => this.log.error({ err: e, network: slug }, "could not load stored blocks for their subscribers"));
    this.queues.set(slug, next);
    void next.then(() => {
      if (this.queues.get(slug) === next) this.queues.delete(slug);
    });
  }
}
