/**
 * The outbox: messages waiting to be delivered. The engine (followers, replay, test, resend) writes
 * them here, inside the transaction that advances its cursor, so a message exists if and only if
 * the cursor moved past its block; delivery workers (lib/webhooks/delivery) claim due PENDING rows
 * with FOR UPDATE SKIP LOCKED. This is the only code that allocates sequence numbers: they grow by
 * one per message of a subscription and never skip (allocated in the same transaction as the rows).
 * Whatever makes messages due also announces it on MESSAGES_DUE_CHANNEL (delivered at commit), so
 * idle delivery workers start at once rather than at their next poll.
 */
import type { RawClient } from "@/lib/db/client";
import type { WebhookSubscription } from "@/lib/db/generated/client";
import { newId } from "@/lib/ids";
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
}

// One statement reserves every subscription's range of sequence numbers; the row locks it takes
// serialise writers. Answers what the records need (raw rows: int8 as text, timestamps as Date).
const RESERVE = `UPDATE webhook_subscriptions AS s SET sequence = s.sequence + c.n
  FROM unnest($1::text[], $2::int[]) AS c(id, n)
  WHERE s.id = c.id AND (s.is_active OR $3::boolean)
  RETURNING s.id, s.project_id AS "projectId", s.network, s.event_type AS "eventType", s.description,
    s.webhook_url AS "webhookUrl", s.is_instant AS "isInstant", s.is_active AS "isActive", s.condition,
    s.sequence::text AS sequence, s.created_at AS "createdAt", s.updated_at AS "updatedAt", c.n AS reserved`;

// The rows as one JSON array, with no per-value escaping of a text array. Each body is a string
// holding its JSON text, cast to json (payload is a json column: the text is kept as given).
// json_to_recordset decodes every string of its input, a nested body's too, and chain data may
// hold \u0000 or an unpaired \ud800, which a json column keeps but PostgreSQL cannot decode to
// text (22P05, 22P02): as a JSON value, such a body failed its whole batch.
const INSERT = `INSERT INTO webhook_messages (id, subscription_id, project_id, sequence_number, block_number, block_hash, payload, replayed, test, next_attempt_at)
  SELECT r.id, r.sub, r.project, r.seq, r.block, r.hash, r.body::json, r.replayed, r.test, now()
  FROM json_to_recordset($1::json) AS r(id text, sub text, project text, seq bigint, block bigint, hash text, body text, replayed boolean, test boolean)`;

/**
 * Writes messages for delivery now, in order, inside the caller's transaction on `client` (see
 * rawTransaction in lib/db/client.ts). Each body is the subscription record (without its signing
 * key) with the message's sequenceNumber and event content; replayed and test messages say so in
 * `replayed` / `test`. Subscriptions that are gone are skipped, and inactive ones unless
 * `evenIfInactive` (a test or resend the user asked for).
 */
export async function enqueueMessages(client: RawClient, messages: readonly NewMessage[], opts: { evenIfInactive?: boolean } = {}): Promise<QueuedMessage[]> {
  if (messages.length === 0) return [];
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.subscriptionId, (counts.get(m.subscriptionId) ?? 0) + 1);
  const ids = [...counts.keys()];
  const n = ids.map((id) => counts.get(id)!);
  const { rows: subs } = await client.query<WebhookSubscription & { sequence: string; reserved: number }>({
    name: "webhook-enqueue-reserve",
    text: RESERVE,
    values: [ids, n, opts.evenIfInactive ?? false],
  });
  const next = new Map<string, { sub: WebhookSubscription; seq: bigint }>();
  for (const s of subs) next.set(s.id, { sub: s, seq: BigInt(s.sequence) - BigInt(s.reserved) + 1n });
  const rows = [];
  const queued: QueuedMessage[] = [];
  for (const m of messages) {
    const at = next.get(m.subscriptionId);
    if (!at) continue;
    const sequenceNumber = at.seq++;
    const id = newId("msg");
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
    });
    queued.push({ id, subscriptionId: m.subscriptionId, sequenceNumber });
  }
  if (rows.length > 0) {
    await client.query({ name: "webhook-enqueue-insert", text: INSERT, values: [JSON.stringify(rows)] });
    await announceDue(client);
  }
  return queued;
}
