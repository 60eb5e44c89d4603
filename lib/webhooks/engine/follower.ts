/**
 * Webhook followers: one per network with active subscriptions, turning its blocks into queued
 * messages (lib/webhooks/outbox.ts). One process in a cluster follows a network: the holder of the
 * advisory lock ("webhook-follower", network). Two streams share a follower:
 *
 * - instant (isInstant true) follows the head. It remembers the blocks it saw
 *   (webhook_chain_blocks); when a block no longer links to them, it walks back to the common
 *   ancestor and, for each dropped block, queues that block's LOG messages again with
 *   `removed: true`, then follows the new chain.
 * - final (isInstant false) trails the head by the network's finality depth (finalityDepthOf).
 *
 * Each stream has a cursor in worker_cursors (the next block and the hash of the one before). The
 * messages of a batch of blocks and the cursor's move are one transaction: after a crash the
 * follower resumes at the first block whose messages were not committed, with nothing lost and
 * nothing queued twice. Those transactions also check the follower's leader term first
 * (lib/workers/leader-lock.ts): a follower stopped mid-transaction holds its cursor's row, and the
 * process that takes over ends such a transaction instead of waiting on it for good.
 *
 * Per block: LOG subscriptions match through the family's indexed matcher, BLOCK_PERIOD fires on
 * the first block after startBlock and then every `period` blocks, and each subscription gets at
 * most one message per block (all its matches, in chain order). A subscription without startBlock
 * (new, or its condition changed) gets the chain head at first sight: it matches only later
 * blocks. After a long stop a stream catches up at most CATCH_UP_LIMIT blocks and skips older ones
 * (logged; replay covers them).
 *
 * A follower reads its network's subscriptions all at once when it starts (and when it starts over
 * after a failure); then, when the head moves and at least every second, only those changed or
 * deleted since its last read, each applied to the matchers on its own (refreshSubscriptions): with
 * a million subscriptions, a read that finds nothing costs what it costs with ten.
 */
import { z } from "zod";
import { db, rawPool, rawTransaction, type RawClient } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { countEnqueued, followerProgress, forgetFollower } from "@/lib/metrics";
import { networkBySlug, type Network } from "@/lib/networks";
import { withSpan } from "@/lib/tracing";
import { CursorConflictError, workerCursor, type WorkerCursor } from "@/lib/workers/cursor";
import { checkTerm, type LeaderTerm } from "@/lib/workers/leader-lock";
import { startWorker, type Failure, type WorkerHandle } from "@/lib/workers/worker";
import { enqueueMessages, type NewMessage } from "../outbox";
import type { WebhookEventType } from "../types";
import { periodFires } from "./matching";
import { chainSourceFor, hasChainSource } from "./registry";
import { ChainSourceError, type ChainBlockRef, type ChainSource, type Matcher } from "./source";

export const FOLLOWER_KIND = "webhook-follower";
/** The follower label of the webhook followers' metrics. */
const METRICS_FOLLOWER = "webhooks";
/** Blocks fetched, matched and committed together. */
export const BATCH_BLOCKS = 20;
/** At most this many blocks are caught up after a stop; older ones are skipped (replay them). */
export const CATCH_UP_LIMIT = 10_000n;
/** Blocks remembered for reorganisations: a deeper one is followed without `removed` messages for what lies below. */
export const CHAIN_BLOCKS_KEPT = 256n;
/** How often the engine looks for networks that gained or lost their active subscriptions. */
export const ENGINE_POLL_MS = 3000;

const cursorSchema = z.object({ next: z.string().regex(/^\d+$/), hash: z.string().nullable() });
type CursorValue = z.infer<typeof cursorSchema>;

type StreamName = "instant" | "final";

/** A BLOCK_PERIOD subscription as its stream fires it. */
interface PeriodSubscription {
  startBlock: bigint;
  period: number;
}

/** What a stream matches blocks with: no more of the subscriptions is kept. */
interface StreamSubscriptions {
  instant: boolean;
  /** Start blocks of the subscriptions in the matcher (LOG, TRANSACTION). */
  startOf: Map<string, bigint>;
  matcher: Matcher;
  periodSubs: Map<string, PeriodSubscription>;
}

/** A subscription as read now; `live` (active, with a start block): matched, else only forgotten. */
interface SubscriptionRow {
  id: string;
  eventType: WebhookEventType | null;
  condition: unknown;
  isInstant: boolean | null;
  period: number | null;
  startBlock: string | null;
  live: boolean;
}

/** A read of the subscriptions: its snapshot (pg_current_snapshot) and the snapshot's xmin. */
interface SubscriptionsRead {
  snapshot: string;
  xmin: string;
}

interface Stream extends StreamSubscriptions {
  name: StreamName;
  cursor: WorkerCursor<CursorValue>;
  /** The cursor as stored (null: none yet). */
  at: CursorValue | null;
  /** Set when the next block is to be taken without checking that it links to `at.hash`. */
  unlinked: boolean;
  /** The time (seconds since the epoch) of the last block whose messages this stream queued here. */
  blockTime?: number;
}

interface FollowerState {
  streams: Stream[];
  /** The follower's leader term (undefined when driven without a lock, as tests do). */
  term: LeaderTerm | undefined;
  /** The last read of the subscriptions (null: none yet: the next reads them all). */
  read: SubscriptionsRead | null;
  lastProgressLog: number;
  /** The head when the subscriptions were last looked at, and when (performance.now()). */
  checkedHead: bigint | null;
  checkedAt: number;
}

/**
 * The subscriptions are read for changes when the head moves, and at least this often: a poll that
 * finds the same head costs the node one call and the database one UPDATE that finds nothing to do.
 */
const SUBSCRIPTIONS_CHECK_MS = 1000;

export interface FollowerOptions {
  databaseUrl: string;
  /** Default: chainSourceFor(network). */
  source?: ChainSource;
  pollMs?: number;
  logger?: Logger;
}

/** Cursor of one stream of a network's follower. */
export function followerCursor(network: string, stream: StreamName): WorkerCursor<CursorValue> {
  return workerCursor(FOLLOWER_KIND, `${network}:${stream}`, cursorSchema);
}

/** Subscriptions seen for the first time (or with a new condition) start at the chain head. */
export async function assignStartBlocks(network: string, head: bigint): Promise<void> {
  // Raw SQL: updated_at is the user's last change, not the engine's. Through node-postgres, as it
  // runs at every poll: Prisma's per-call work is the larger cost of a statement that changes
  // nothing. The partial index webhook_subscriptions_unstarted_idx holds just these rows.
  await rawPool().query({
    name: "webhook-assign-start-blocks",
    text: "UPDATE webhook_subscriptions SET start_block = $1 WHERE network = $2 AND start_block IS NULL AND is_active",
    values: [head.toString(), network],
  });
}

const SUBSCRIPTION_COLUMNS = `id, event_type AS "eventType", condition, is_instant AS "isInstant", period, start_block::text AS "startBlock"`;
/** Subscriptions read from the full read's cursor at once. */
const READ_BATCH = 10_000;

// The subscriptions, and the ids of deleted ones, changed by transactions the last read's snapshot
// ($3, of xmin $2) did not see. change_xid is set by triggers (migration
// 20261127174607_webhook_subscription_changes); a transaction's number is taken before it commits,
// so the snapshot, not the highest number read, tells what was seen. Through the indexes on
// (network, change_xid): rows of transactions since $2 only. One row (nulls) when nothing changed,
// for the snapshot of this read.
const CHANGES = `SELECT now.snapshot, c.* FROM (SELECT pg_current_snapshot()::text AS snapshot) now LEFT JOIN (
    SELECT ${SUBSCRIPTION_COLUMNS}, is_active AND start_block IS NOT NULL AS live, false AS deleted FROM webhook_subscriptions
    WHERE network = $1 AND change_xid >= $2::bigint AND NOT pg_visible_in_snapshot(change_xid::text::xid8, $3::pg_snapshot)
    UNION ALL
    SELECT id, NULL, NULL, NULL, NULL, NULL, false, true FROM webhook_subscription_deletions
    WHERE network = $1 AND change_xid >= $2::bigint AND NOT pg_visible_in_snapshot(change_xid::text::xid8, $3::pg_snapshot)
  ) c ON true`;

const readOf = (snapshot: string): SubscriptionsRead => ({ snapshot, xmin: snapshot.slice(0, snapshot.indexOf(":")) });

/** Takes a subscription out of the streams, then puts it in its own as it is now when live. */
function apply(streams: readonly StreamSubscriptions[], row: SubscriptionRow): void {
  for (const s of streams) {
    s.startOf.delete(row.id);
    s.periodSubs.delete(row.id);
    s.matcher.remove(row.id);
  }
  if (!row.live) return;
  const stream = streams.find((s) => s.instant === row.isInstant)!;
  const startBlock = BigInt(row.startBlock!);
  if (row.eventType === "BLOCK_PERIOD") {
    if (row.period !== null) stream.periodSubs.set(row.id, { startBlock, period: row.period });
    return;
  }
  stream.startOf.set(row.id, startBlock);
  stream.matcher.put({ id: row.id, eventType: row.eventType!, condition: row.condition });
}

/**
 * Every live subscription of the network, read into new matchers in batches (a cursor, in one
 * snapshot) and then swapped in: the first read of a follower, after a start or a failure.
 */
async function readAllSubscriptions(network: string, source: ChainSource, streams: Stream[]): Promise<SubscriptionsRead> {
  const fresh: StreamSubscriptions[] = streams.map((s) => ({ instant: s.instant, startOf: new Map(), matcher: source.matcher([]), periodSubs: new Map() }));
  const read = await rawTransaction(async (client) => {
    await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const { rows } = await client.query<{ snapshot: string }>("SELECT pg_current_snapshot()::text AS snapshot");
    await client.query(
      `DECLARE webhook_subscriptions_read NO SCROLL CURSOR FOR SELECT ${SUBSCRIPTION_COLUMNS}, true AS live FROM webhook_subscriptions
       WHERE network = $1 AND is_active AND start_block IS NOT NULL`,
      [network],
    );
    for (;;) {
      const batch = await client.query<SubscriptionRow>(`FETCH ${READ_BATCH} FROM webhook_subscriptions_read`);
      for (const row of batch.rows) apply(fresh, row);
      if (batch.rows.length < READ_BATCH) break;
    }
    return readOf(rows[0]!.snapshot);
  });
  streams.forEach((s, i) => Object.assign(s, { startOf: fresh[i]!.startOf, matcher: fresh[i]!.matcher, periodSubs: fresh[i]!.periodSubs }));
  return read;
}

/**
 * Deletions of the network that every later read will have seen (their transactions ended before
 * this read's snapshot) are no longer needed. Only by the network's leader (its term checked): a
 * follower that lost the lock without knowing it must not remove what its successor has not read.
 */
async function forgetDeletions(network: string, read: SubscriptionsRead, term: LeaderTerm | undefined): Promise<void> {
  await rawTransaction(async (client) => {
    await checkTerm(client, term);
    await client.query({ name: "webhook-forget-deletions", text: "DELETE FROM webhook_subscription_deletions WHERE network = $1 AND change_xid < $2::bigint", values: [network, read.xmin] });
  });
}

/**
 * Brings the streams' matchers and BLOCK_PERIOD lists up to date with the subscriptions: all of
 * them at the first read, then only those changed (or deleted) since the last read, each applied
 * on its own. A read that finds nothing changed costs a few index entries, whatever the number of
 * subscriptions.
 */
export async function refreshSubscriptions(network: string, source: ChainSource, state: FollowerState): Promise<void> {
  if (state.read === null) {
    state.read = await readAllSubscriptions(network, source, state.streams);
    await forgetDeletions(network, state.read, state.term);
    return;
  }
  // Not a named statement: a generic plan would not know how few rows are past $2.
  const { rows } = await rawPool().query<{ snapshot: string; deleted: boolean | null } & SubscriptionRow>(CHANGES, [network, state.read.xmin, state.read.snapshot]);
  let deleted = false;
  for (const row of rows) {
    if (row.id === null) continue;
    apply(state.streams, row);
    deleted ||= row.deleted === true;
  }
  state.read = readOf(rows[0]!.snapshot);
  if (deleted) await forgetDeletions(network, state.read, state.term);
}

/** Remembers the blocks the instant stream delivered, and forgets those too deep to matter. */
async function rememberBlocks(client: RawClient, network: string, blocks: readonly ChainBlockRef[]): Promise<void> {
  if (blocks.length === 0) return;
  await client.query({
    name: "webhook-remember-blocks",
    text: `INSERT INTO webhook_chain_blocks (network, number, hash, parent_hash, time)
      SELECT $1, x.n::bigint, x.h, x.p, to_timestamp(x.t)
      FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[]) AS x(n, h, p, t)
      ON CONFLICT (network, number) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time`,
    values: [network, blocks.map((b) => b.number.toString()), blocks.map((b) => b.hash), blocks.map((b) => b.parentHash), blocks.map((b) => b.timestamp)],
  });
  const last = blocks.at(-1)!.number;
  await client.query({
    name: "webhook-forget-blocks",
    text: "DELETE FROM webhook_chain_blocks WHERE network = $1 AND (number <= $2::bigint OR number > $3::bigint)",
    values: [network, String(last - CHAIN_BLOCKS_KEPT), String(last)],
  });
}

/** The messages one block gives a stream's subscriptions: LOG (or TRANSACTION) matches first, then BLOCK_PERIOD. */
async function blockMessages(source: ChainSource, stream: Stream, block: ChainBlockRef, signal: AbortSignal): Promise<NewMessage[]> {
  const out: NewMessage[] = [];
  const at = { blockNumber: block.number, blockHash: block.hash };
  if (stream.startOf.size > 0) {
    for (const m of await stream.matcher.match(block, signal)) {
      const start = stream.startOf.get(m.subscriptionId);
      if (start === undefined || block.number <= start) continue;
      out.push({ subscriptionId: m.subscriptionId, ...at, content: { messages: m.messages } });
    }
  }
  const firing: string[] = [];
  for (const [id, s] of stream.periodSubs) if (block.number > s.startBlock && periodFires(block.number, s.startBlock, s.period)) firing.push(id);
  if (firing.length > 0) {
    const message = await source.blockPeriodMessage(block, signal);
    for (const id of firing) out.push({ subscriptionId: id, ...at, content: { message } });
  }
  return out;
}

/** blockMessages in a span of the block's own, saying how many messages it gave. */
function blockMessagesInSpan(source: ChainSource, stream: Stream, block: ChainBlockRef, signal: AbortSignal): Promise<NewMessage[]> {
  return withSpan("webhook.block", { "webhook.block_number": Number(block.number), "webhook.block_hash": block.hash }, async (span) => {
    const messages = await blockMessages(source, stream, block, signal);
    span.setAttribute("webhook.message_count", messages.length);
    return messages;
  });
}

/**
 * The instant stream's block `at.next - 1` is gone: walks back over the remembered blocks to the
 * one the chain still has, queues `removed: true` copies of the dropped blocks' LOG messages and
 * moves the cursor back to just after the common ancestor, in one transaction.
 */
async function undoReorg(network: Network, source: ChainSource, stream: Stream, term: LeaderTerm | undefined, signal: AbortSignal, log: Logger): Promise<void> {
  const at = stream.at!;
  const tip = BigInt(at.next) - 1n;
  const remembered = await db().$queryRaw<{ number: bigint; hash: string }[]>`
    SELECT number, hash FROM webhook_chain_blocks WHERE network = ${network.slug} AND number <= ${tip} ORDER BY number DESC LIMIT ${Number(CHAIN_BLOCKS_KEPT)}`;
  const dropped: { number: bigint; hash: string }[] = [];
  let ancestor: { number: bigint; hash: string } | undefined;
  for (const row of remembered) {
    const now = await source.block(row.number, signal);
    if (now?.hash === row.hash) {
      ancestor = row;
      break;
    }
    dropped.push(row);
  }
  dropped.reverse();
  const removals: NewMessage[] = [];
  for (const block of dropped) {
    const rows = await db().$queryRaw<{ subscriptionId: string; payload: { event?: { messages?: unknown[] } } }[]>`
      SELECT DISTINCT ON (m.subscription_id) m.subscription_id AS "subscriptionId", m.payload
      FROM webhook_messages m JOIN webhook_subscriptions s ON s.id = m.subscription_id
      WHERE s.network = ${network.slug} AND s.event_type = 'LOG' AND s.is_instant
        AND m.block_number = ${block.number} AND m.block_hash = ${block.hash} AND NOT m.test AND NOT m.replayed
        AND (m.payload #>> '{event,messages,0,removed}') = 'false'
      ORDER BY m.subscription_id, m.sequence_number DESC`;
    for (const r of rows) {
      const messages = (r.payload.event?.messages ?? []).map((m) => ({ ...(m as Record<string, unknown>), removed: true }));
      if (messages.length > 0) removals.push({ subscriptionId: r.subscriptionId, blockNumber: block.number, blockHash: block.hash, content: { messages } });
    }
  }
  const value: CursorValue = ancestor
    ? { next: String(ancestor.number + 1n), hash: ancestor.hash }
    : { next: String(dropped[0]?.number ?? tip + 1n), hash: null };
  const queued = await rawTransaction(async (client) => {
    await checkTerm(client, term);
    const written = await enqueueMessages(client, removals);
    await client.query("DELETE FROM webhook_chain_blocks WHERE network = $1 AND number >= $2::bigint", [network.slug, value.next]);
    await stream.cursor.write(client, value, { expected: at });
    return written;
  });
  countEnqueued(network.slug, "chain", queued);
  stream.at = value;
  stream.unlinked = !ancestor;
  const range = dropped.length > 0 ? `blocks ${dropped[0]!.number}..${dropped.at(-1)!.number}` : "no remembered block";
  if (ancestor) log.info(`reorganisation: ${range} replaced after block ${ancestor.number}; queued ${removals.length} message(s) with removed: true`);
  else log.warn(`reorganisation deeper than the ${remembered.length} remembered blocks: ${range} replaced; queued ${removals.length} message(s) with removed: true, following the new chain from block ${value.next}`);
}

/**
 * A stream's next block is missing: when the chain has forgotten it (retention removed it while
 * the stream was stopped or behind), the stream goes on from the oldest block kept, as after a
 * long stop; otherwise the block is not there yet and is waited for. Answers whether it moved.
 */
async function skipForgotten(source: ChainSource, stream: Stream, next: bigint, term: LeaderTerm | undefined, signal: AbortSignal, log: Logger): Promise<boolean> {
  const oldest = await source.oldest?.(signal);
  if (oldest === undefined || oldest === null || oldest <= next || !stream.at) return false;
  log.warn(`${stream.name} stream is at block ${next}, below the oldest block the chain keeps: skipping blocks ${next}..${oldest - 1n} (removed by retention)`);
  const value: CursorValue = { next: String(oldest), hash: stream.at.hash };
  await rawTransaction(async (client) => {
    await checkTerm(client, term);
    await stream.cursor.write(client, value, { expected: stream.at });
  });
  stream.at = value;
  stream.unlinked = true;
  return true;
}

/**
 * Moves a stream towards `target`: one batch of blocks (or the undoing of a reorganisation).
 * Answers whether there is more to do right away.
 */
async function advance(network: Network, source: ChainSource, stream: Stream, target: bigint, term: LeaderTerm | undefined, signal: AbortSignal, log: Logger): Promise<boolean> {
  const slug = network.slug;
  const canReorg = stream.instant && source.reorgs;
  if (!stream.at) {
    // First run: start after the current block; subscriptions start at the head anyway.
    const block = await source.block(target, signal);
    if (!block) return false;
    const value = { next: String(target + 1n), hash: block.hash };
    await rawTransaction(async (client) => {
      await checkTerm(client, term);
      if (canReorg) await rememberBlocks(client, slug, [block]);
      await stream.cursor.write(client, value, { expected: null });
    });
    stream.at = value;
    log.info(`${stream.name} stream starts after block ${target}`);
    return false;
  }
  let next = BigInt(stream.at.next);
  let linkTo = stream.unlinked ? null : stream.at.hash;
  if (next > target) {
    // Nothing new; but the block delivered last may have been replaced (or the chain got shorter).
    if (canReorg && linkTo !== null) {
      const last = await source.block(next - 1n, signal);
      if (last?.hash !== linkTo) {
        await undoReorg(network, source, stream, term, signal, log);
        return true;
      }
    }
    return false;
  }
  if (target - next + 1n > CATCH_UP_LIMIT) {
    const from = target - CATCH_UP_LIMIT + 1n;
    log.warn(`${stream.name} stream is ${target - next + 1n} blocks behind the chain: skipping blocks ${next}..${from - 1n} (at most ${CATCH_UP_LIMIT} are caught up after a stop; replay covers older blocks)`);
    next = from;
    linkTo = null;
  }
  // A span for the blocks taken (not for the polls that find none).
  return withSpan("webhook.follow", { "blockgate.network": slug, "webhook.stream": stream.name, "webhook.block_from": Number(next), "webhook.head": Number(target) }, async (span) => {
    const last = next + BigInt(BATCH_BLOCKS) - 1n < target ? next + BigInt(BATCH_BLOCKS) - 1n : target;
    const heights: bigint[] = [];
    for (let h = next; h <= last; h++) heights.push(h);
    const fetched = await Promise.all(heights.map((h) => source.block(h, signal)));
    const blocks: ChainBlockRef[] = [];
    let prev = linkTo;
    for (const b of fetched) {
      if (!b || (prev !== null && b.parentHash !== prev)) break;
      blocks.push(b);
      prev = b.hash;
    }
    if (blocks.length === 0) {
      const first = fetched[0];
      if (!first) return skipForgotten(source, stream, next, term, signal, log);
      if (linkTo === null) return false;
      if (canReorg) {
        await undoReorg(network, source, stream, term, signal, log);
        return true;
      }
      log.warn(`block ${first.number} does not follow block ${next - 1n} that the ${stream.name} stream delivered (${linkTo}): the chain changed deeper than the finality depth (${source.finalityDepth}); following the new chain`);
      stream.unlinked = true;
      return true;
    }
    const messages = (await Promise.all(blocks.map((b) => blockMessagesInSpan(source, stream, b, signal)))).flat();
    span.setAttributes({ "webhook.block_to": Number(blocks.at(-1)!.number), "webhook.message_count": messages.length });
    const tip = blocks.at(-1)!;
    const value: CursorValue = { next: String(tip.number + 1n), hash: tip.hash };
    signal.throwIfAborted();
    const queued = await rawTransaction(async (client) => {
      await checkTerm(client, term);
      const written = await enqueueMessages(client, messages);
      if (canReorg) await rememberBlocks(client, slug, blocks);
      await stream.cursor.write(client, value, { expected: stream.at });
      return written;
    });
    countEnqueued(slug, "chain", queued);
    stream.at = value;
    stream.unlinked = false;
    stream.blockTime = tip.timestamp;
    return tip.number < target;
  });
}

function classify(e: unknown): Failure {
  if (e instanceof ChainSourceError) return { what: "chain source failed", reason: errorMessage(e), keepState: true, level: "warn" };
  if (e instanceof CursorConflictError) return { what: "another follower moved the cursor", level: "warn" };
  return { what: "webhook follower failed" };
}

/** One step of a follower, for the worker loop and for tests that drive it block by block. */
export interface NetworkFollower {
  init(signal: AbortSignal, term?: LeaderTerm): Promise<FollowerState>;
  step(state: FollowerState, signal: AbortSignal): Promise<boolean>;
}

export function networkFollower(network: Network, opts: { source?: ChainSource; logger?: Logger } = {}): NetworkFollower {
  const source = opts.source ?? chainSourceFor(network);
  const log = opts.logger ?? componentLogger("webhooks", { network: network.slug });
  return {
    async init(_signal, term) {
      const streams: Stream[] = [];
      for (const name of ["instant", "final"] as const) {
        const cursor = followerCursor(network.slug, name);
        streams.push({ name, instant: name === "instant", cursor, at: await cursor.read(), unlinked: false, startOf: new Map(), matcher: source.matcher([]), periodSubs: new Map() });
      }
      return { streams, term, read: null, lastProgressLog: Date.now(), checkedHead: null, checkedAt: 0 };
    },
    async step(state, signal) {
      const head = await source.head(signal);
      if (head === null) return false;
      // New subscriptions start at the head the engine sees now, at every poll (so a block mined
      // right after a subscription is created is its first); the matchers follow before the next block.
      await assignStartBlocks(network.slug, head);
      if (head !== state.checkedHead || performance.now() - state.checkedAt >= SUBSCRIPTIONS_CHECK_MS) {
        await refreshSubscriptions(network.slug, source, state);
        state.checkedHead = head;
        state.checkedAt = performance.now();
      }
      let more = false;
      for (const stream of state.streams) {
        const target = stream.instant ? head : head - BigInt(source.finalityDepth);
        if (target < 0n) continue;
        if (await advance(network, source, stream, target, state.term, signal, log)) more = true;
      }
      followerProgress(
        METRICS_FOLLOWER,
        network.slug,
        head,
        state.streams.flatMap((s) => (s.at ? [{ stream: s.name, block: BigInt(s.at.next) - 1n, target: s.instant ? head : head - BigInt(source.finalityDepth), blockTime: s.blockTime }] : [])),
      );
      if (Date.now() - state.lastProgressLog > 60_000) {
        state.lastProgressLog = Date.now();
        log.debug(`at ${state.streams.map((s) => `${s.name} ${s.at?.next ?? "-"}`).join(", ")} (head ${head})`);
      }
      return more;
    },
  };
}

/** Follows one network under its leader lock until stopped. */
export function startNetworkFollower(network: Network, opts: FollowerOptions): WorkerHandle {
  const log = opts.logger ?? componentLogger("webhooks", { network: network.slug });
  const follower = networkFollower(network, { source: opts.source, logger: log });
  const pollMs = opts.pollMs ?? getEnv().WEBHOOK_FOLLOWER_POLL_MS;
  return startWorker<FollowerState>({
    kind: FOLLOWER_KIND,
    key: network.slug,
    leader: { databaseUrl: opts.databaseUrl },
    logger: log,
    classify,
    position: (s) => s.streams.map((st) => `${st.name} at block ${st.at?.next ?? "-"}`).join(", "),
    leave: () => forgetFollower(METRICS_FOLLOWER, network.slug),
    init: ({ signal, term }) => follower.init(signal, term),
    step: async (state, { signal }) => ((await follower.step(state, signal)) ? 0 : pollMs),
  });
}

export interface EngineOptions {
  databaseUrl: string;
  /** Which networks this process follows (see lib/runtime.ts); default all. */
  include?: (network: Network) => boolean;
  pollMs?: number;
  followerPollMs?: number;
  logger?: Logger;
}

export interface WebhookEngine {
  /** Networks followed by this process right now (as leader or waiting for the lock). */
  followed(): string[];
  stop(): Promise<void>;
}

// One index probe per network (a loose index scan over the indexes that start with network), not
// a visit of every active subscription: every worker process runs this every ENGINE_POLL_MS.
const NETWORKS = `WITH RECURSIVE followed AS (
    (SELECT network FROM webhook_subscriptions WHERE is_active ORDER BY network LIMIT 1)
    UNION ALL
    SELECT (SELECT s.network FROM webhook_subscriptions s WHERE s.is_active AND s.network > f.network ORDER BY s.network LIMIT 1)
    FROM followed f WHERE f.network IS NOT NULL
  ) SELECT network FROM followed WHERE network IS NOT NULL`;

/** The networks with active subscriptions, in order. */
export async function networksWithSubscriptions(): Promise<string[]> {
  const { rows } = await rawPool().query<{ network: string }>({ name: "webhook-networks", text: NETWORKS });
  return rows.map((r) => r.network);
}

/**
 * Starts and stops followers as networks gain and lose active subscriptions (looked up every
 * ENGINE_POLL_MS). Networks whose family has no chain source yet are left alone.
 */
export function startWebhookEngine(opts: EngineOptions): WebhookEngine {
  const log = opts.logger ?? componentLogger("webhooks");
  const followers = new Map<string, WorkerHandle>();
  const include = opts.include ?? (() => true);
  const worker = startWorker<null>({
    kind: "webhook-engine",
    key: "networks",
    logger: log,
    classify: () => ({ what: "looking up networks with webhooks failed", level: "warn" }),
    init: () => Promise.resolve(null),
    async step() {
      const wanted = new Set<string>();
      for (const slug of await networksWithSubscriptions()) {
        const network = networkBySlug(slug);
        if (network && include(network) && hasChainSource(network)) wanted.add(slug);
      }
      for (const [slug, handle] of followers) {
        if (wanted.has(slug)) continue;
        followers.delete(slug);
        await handle.stop();
        log.info({ network: slug }, "no active webhook subscription left: stopped following");
      }
      for (const slug of wanted) {
        if (followers.has(slug)) continue;
        const network = networkBySlug(slug)!;
        log.info({ network: slug }, "following for webhooks");
        followers.set(slug, startNetworkFollower(network, { databaseUrl: opts.databaseUrl, pollMs: opts.followerPollMs, logger: log.child({ network: slug }) }));
      }
      return opts.pollMs ?? ENGINE_POLL_MS;
    },
  });
  let stopped: Promise<void> | undefined;
  return {
    followed: () => [...followers.keys()],
    stop() {
      stopped ??= (async () => {
        await worker.stop();
        await Promise.all([...followers.values()].map((f) => f.stop()));
        followers.clear();
      })();
      return stopped;
    },
  };
}
