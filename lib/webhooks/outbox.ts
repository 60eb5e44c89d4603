/**
 * The outbox: messages waiting to be delivered. The engine (followers, replay, test, resend) writes
 * them here, inside the transaction that advances its cursor, so a message exists if and only if
 * the cursor moved past its block; delivery workers (lib/webhooks/delivery) claim due PENDING rows
 * with FOR UPDATE SKIP LOCKED. This is the only code that allocates sequence numbers: they grow by
 * one per message of a subscription and never skip (allocated in the same transaction as the rows).
 * Whatever makes messages due also announces it on MESSAGES_DUE_CHANNEL (delivered at commit), so
 * idle delivery workers start at once rather than at their next poll.
 *
 * The queue is bounded by plan (lib/plans.ts): messages waiting (PENDING) per subscription and per
 * project. Messages a user asks for (test, resend, replay) are refused as a whole past either bound
 * (429, nothing written); the chain's messages are never refused, but one past its subscription's
 * bound is written as FAIL at once, with an attempt-less entry (attempt 0) in the delivery history
 * that says so, so the user sees what was missed and can replay it.
 */
import type { RawClient } from "@/lib/db/client";
import type { WebhookSubscription } from "@/lib/db/generated/client";
import type { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { PLANS } from "@/lib/plans";
import { markSpan, SpanKind, tracingOn, type Attributes } from "@/lib/tracing";
import { type EventContent, toRecord } from "./record";

/** pg_notify channel: messages became due (the payload is empty). */
export const MESSAGES_DUE_CHANNEL = "blockgate_webhook_messages_due";

/** Wakes the delivery workers listening (lib/webhooks/delivery/worker.ts) when the transaction on `client` commits. */
export async function announceDue(client: RawClient): Promise<void> {
  await client.query({ name: "webhook-announce-due", text: "SELECT pg_notify($1, '')", values: [MESSAGES_DUE_CHANNEL] });
}

export interface NewMessage {
  subscriptionId: string;
  /** The block the message is about; null for a test message. */
  blockNumber: bigint | null;
  blockHash: string | null;
  /** What the record's `event` carries: `{ messages }` (LOG, TRANSACTION) or `{ message }` (BLOCK_PERIOD). */
  content: EventContent;
  replayed?: boolean;
  test?: boolean;
}

export interface QueuedMessage {
  id: string;
  subscriptionId: string;
  sequenceNumber: bigint;
  /** Written as FAIL rather than queued: its subscription was at its pending bound (chain messages only). */
  refused?: string;
}

export interface EnqueueOptions {
  /** Queue for an inactive subscription too (a test message its owner asked for). */
  evenIfInactive?: boolean;
  /**
   * The user asked for these (test, replay): all of one subscription, refused as a whole (429
   * TOO_MANY_REQUESTS) when they would take its or its project's pending messages past the plan's
   * bounds, and marked prepaid (their CU is charged as they are queued, not when delivered).
   */
  asked?: boolean;
}

const fmt = (n: number) => n.toLocaleString("en-US");

// One statement reserves every subscription's range of sequence numbers; the row locks it takes
// serialise writers. Answers what the records need (raw rows: int8 as text, timestamps as Date)
// and the project's plan (the queue's bounds).
const RESERVE = `UPDATE webhook_subscriptions AS s SET sequence = s.sequence + c.n
  FROM unnest($1::text[], $2::int[]) AS c(id, n), projects AS p
  WHERE s.id = c.id AND p.id = s.project_id AND (s.is_active OR $3::boolean)
  RETURNING s.id, s.project_id AS "projectId", s.network, s.event_type AS "eventType", s.description,
    s.webhook_url AS "webhookUrl", s.is_instant AS "isInstant", s.is_active AS "isActive", s.condition,
    s.sequence::text AS sequence, s.created_at AS "createdAt", s.updated_at AS "updatedAt", c.n AS reserved, p.plan`;

// Counted up to the bound at most: a count costs no more than the bound's index entries (the
// partial indexes of PENDING messages never attempted and of retries, by subscription, and of
// PENDING messages by project). A separate statement from the row locks it follows, so that (read
// committed) it sees every message committed before those locks were granted.
const PENDING_OF_SUBSCRIPTIONS = `SELECT c.id, least(c.bound,
    (SELECT count(*) FROM (SELECT 1 FROM webhook_messages m WHERE m.subscription_id = c.id AND m.status = 'PENDING' AND m.attempts = 0 LIMIT c.bound) x)
    + (SELECT count(*) FROM (SELECT 1 FROM webhook_messages m WHERE m.subscription_id = c.id AND m.status = 'PENDING' AND m.attempts > 0 LIMIT c.bound) y))::int AS pending
  FROM unnest($1::text[], $2::int[]) AS c(id, bound)`;

const PENDING_OF_PROJECT = `SELECT (SELECT count(*) FROM (SELECT 1 FROM webhook_messages m
    WHERE m.project_id = $1 AND m.status = 'PENDING' LIMIT $2) x)::int AS pending`;

/** Rows written per statement (one JSON parameter each). */
const INSERT_CHUNK = 1000;

// The rows as one JSON array, with no per-value escaping of a text array. Each body is a string
// holding its JSON text, cast to json (payload is a json column: the text is kept as given).
// json_to_recordset decodes every string of its input, a nested body's too, and chain data may
// hold \u0000 or an unpaired \ud800, which a json column keeps but PostgreSQL cannot decode to
// text (22P05, 22P02): as a JSON value, such a body failed its whole batch. A refused row is
// written FAIL with its attempt-less history entry (attempt 0) in the same statement.
const INSERT = `WITH r AS (
    SELECT * FROM json_to_recordset($1::json) AS r(id text, sub text, project text, seq bigint, block bigint, hash text, body text,
      replayed boolean, test boolean, prepaid boolean, refused text, attempt text, trace text)
  ), m AS (
    INSERT INTO webhook_messages (id, subscription_id, project_id, sequence_number, block_number, block_hash, payload, replayed, test, prepaid, status, next_attempt_at, trace_parent)
    SELECT r.id, r.sub, r.project, r.seq, r.block, r.hash, r.body::json, r.replayed, r.test, r.prepaid,
      (CASE WHEN r.refused IS NULL THEN 'PENDING' ELSE 'FAIL' END)::"WebhookMessageStatus", CASE WHEN r.refused IS NULL THEN now() END, r.trace
    FROM r
  )
  INSERT INTO webhook_attempts (id, message_id, subscription_id, project_id, attempt, started_at, duration_ms, success, error)
  SELECT r.attempt, r.id, r.sub, r.project, 0, now(), 0, false, r.refused FROM r WHERE r.refused IS NOT NULL`;

/** Why a chain message was written as failed rather than queued (its history entry's error). */
export function refusedReason(plan: Plan, blockNumber: bigint | null): string {
  const limits = PLANS[plan];
  const replay = blockNumber === null ? "send it again" : `replay block ${blockNumber}`;
  return `not queued: ${fmt(limits.maxPendingPerWebhook)} messages of this webhook were already waiting for delivery, the most the ${limits.label} plan keeps; ${replay} once the receiver catches up`;
}

/**
 * For messages the user asks for, in the transaction on `client`: takes the project's pending lock
 * (transaction-scoped, so concurrent requests of the project check one after the other) and then
 * the subscription's row (as a follower writing the chain's messages does), and answers its
 * project, plan and network; undefined when it is gone. Then refuseOverBounds counts what waits.
 */
export async function lockPending(client: RawClient, subscriptionId: string): Promise<{ projectId: string; plan: Plan; network: string } | undefined> {
  const { rows } = await client.query<{ projectId: string; plan: Plan; network: string }>({
    name: "webhook-pending-lock",
    text: `SELECT s.project_id AS "projectId", p.plan, s.network, pg_advisory_xact_lock(hashtextextended('webhook-pending:' || s.project_id, 0))
      FROM webhook_subscriptions s JOIN projects p ON p.id = s.project_id WHERE s.id = $1`,
    values: [subscriptionId],
  });
  if (rows.length === 0) return undefined;
  await client.query({ name: "webhook-pending-row", text: "SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR UPDATE", values: [subscriptionId] });
  return rows[0];
}

/**
 * 429 TOO_MANY_REQUESTS, naming the bound and the numbers, when `adding` more pending messages
 * would take the subscription or its project past the plan's bounds; call it holding lockPending.
 * `adding` "any": whether there is room for one more at all, before the work of finding how many
 * (no lock needed: the check that counts comes again, locked, when they are queued).
 */
export async function refuseOverBounds(client: Pick<RawClient, "query">, held: { subscriptionId: string; projectId: string; plan: Plan }, adding: number | "any"): Promise<void> {
  if (adding === 0) return;
  const more = adding === "any" ? 1 : adding;
  const limits = PLANS[held.plan];
  const {
    rows: [sub],
  } = await client.query<{ pending: number }>({ name: "webhook-pending-subscriptions", text: PENDING_OF_SUBSCRIPTIONS, values: [[held.subscriptionId], [limits.maxPendingPerWebhook]] });
  const refuse = (what: "webhook" | "project", pending: number, bound: number) => {
    const per = what === "webhook" ? "per webhook" : "per project (all its webhooks together)";
    const state =
      pending >= bound
        ? `already has ${fmt(pending)} messages waiting for delivery, the most the ${limits.label} plan keeps ${per}`
        : `has ${fmt(pending)} messages waiting for delivery, and the ${limits.label} plan keeps at most ${fmt(bound)} ${per}`;
    return new AppError(
      "TOO_MANY_REQUESTS",
      `This ${what} ${state}: ${adding === "any" ? "nothing more is queued" : adding === 1 ? "the message this would queue is refused" : `the ${fmt(adding)} messages this would queue are refused`}. Waiting messages make room as they are delivered or fail; try again then, or upgrade the plan.`,
    );
  };
  if (sub!.pending + more > limits.maxPendingPerWebhook) throw refuse("webhook", sub!.pending, limits.maxPendingPerWebhook);
  const {
    rows: [project],
  } = await client.query<{ pending: number }>({ name: "webhook-pending-project", text: PENDING_OF_PROJECT, values: [held.projectId, limits.maxPendingPerProject] });
  if (project!.pending + more > limits.maxPendingPerProject) throw refuse("project", project!.pending, limits.maxPendingPerProject);
}

/** What the span of a queued message says: `webhook.message_id` is what its delivery attempts' spans carry too. */
function enqueueAttributes(id: string, sequenceNumber: bigint, sub: WebhookSubscription, m: NewMessage, refused: string | undefined): Attributes {
  return {
    "webhook.message_id": id,
    "webhook.subscription_id": sub.id,
    "webhook.sequence_number": Number(sequenceNumber),
    "blockgate.project_id": sub.projectId,
    "blockgate.network": sub.network,
    ...(m.blockNumber === null ? {} : { "webhook.block_number": Number(m.blockNumber) }),
    ...(m.replayed ? { "webhook.replayed": true } : {}),
    ...(m.test ? { "webhook.test": true } : {}),
    // Written FAIL at once: the subscription was at its pending bound.
    ...(refused === undefined ? {} : { "webhook.refused": true }),
  };
}

/**
 * Writes messages for delivery now, in order, inside the caller's transaction on `client` (see
 * rawTransaction in lib/db/client.ts). Each body is the subscription record (without its signing
 * key) with the message's sequenceNumber and event content; replayed and test messages say so in
 * `replayed` / `test`. Subscriptions that are gone are skipped, and inactive ones unless
 * `evenIfInactive`. The plan's pending bounds apply as the module comment says.
 */
export async function enqueueMessages(client: RawClient, messages: readonly NewMessage[], opts: EnqueueOptions = {}): Promise<QueuedMessage[]> {
  if (messages.length === 0) return [];
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.subscriptionId, (counts.get(m.subscriptionId) ?? 0) + 1);
  const ids = [...counts.keys()];
  let held: Awaited<ReturnType<typeof lockPending>>;
  if (opts.asked) {
    if (ids.length !== 1) throw new Error("enqueueMessages: messages a user asks for are of one subscription");
    held = await lockPending(client, ids[0]!);
    if (!held) return [];
  }
  const { rows: subs } = await client.query<WebhookSubscription & { sequence: string; reserved: number; plan: Plan }>({
    name: "webhook-enqueue-reserve",
    text: RESERVE,
    values: [ids, ids.map((id) => counts.get(id)!), opts.evenIfInactive ?? false],
  });
  if (subs.length === 0) return [];
  /** Per subscription: its next sequence number, and how many more of its messages may wait. */
  const next = new Map<string, { sub: WebhookSubscription; plan: Plan; seq: bigint; room: number }>();
  for (const s of subs) next.set(s.id, { sub: s, plan: s.plan, seq: BigInt(s.sequence) - BigInt(s.reserved) + 1n, room: Infinity });
  if (held) await refuseOverBounds(client, { subscriptionId: ids[0]!, ...held }, messages.length);
  else {
    const bounds = subs.map((s) => PLANS[s.plan].maxPendingPerWebhook);
    const { rows } = await client.query<{ id: string; pending: number }>({ name: "webhook-pending-subscriptions", text: PENDING_OF_SUBSCRIPTIONS, values: [subs.map((s) => s.id), bounds] });
    for (const r of rows) next.get(r.id)!.room = PLANS[next.get(r.id)!.plan].maxPendingPerWebhook - r.pending;
  }
  const rows = [];
  const queued: QueuedMessage[] = [];
  let due = false;
  const traced = tracingOn();
  for (const m of messages) {
    const at = next.get(m.subscriptionId);
    if (!at) continue;
    const sequenceNumber = at.seq++;
    const id = newId("msg");
    const refused = at.room-- > 0 ? undefined : refusedReason(at.plan, m.blockNumber);
    due ||= refused === undefined;
    const body = {
      ...toRecord(at.sub, { sequenceNumber, content: m.content }),
      ...(m.replayed ? { replayed: true } : {}),
      ...(m.test ? { test: true } : {}),
    };
    rows.push({
      id,
      sub: m.subscriptionId,
      project: at.sub.projectId,
      seq: String(sequenceNumber),
      block: m.blockNumber === null ? null : String(m.blockNumber),
      hash: m.blockHash,
      body: JSON.stringify(body),
      replayed: m.replayed ?? false,
      test: m.test ?? false,
      prepaid: opts.asked ?? false,
      refused: refused ?? null,
      attempt: refused === undefined ? null : newId("att"),
      trace: traced ? markSpan("webhook.enqueue", SpanKind.PRODUCER, enqueueAttributes(id, sequenceNumber, at.sub, m, refused)) : null,
    });
    queued.push({ id, subscriptionId: m.subscriptionId, sequenceNumber, ...(refused === undefined ? {} : { refused }) });
  }
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await client.query({ name: "webhook-enqueue-insert", text: INSERT, values: [JSON.stringify(rows.slice(i, i + INSERT_CHUNK))] });
  }
  if (due) await announceDue(client);
  return queued;
}
