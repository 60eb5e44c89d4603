/**
 * The outbox: messages waiting to be delivered. The engine (followers, replay, test, resend) writes
 * them here, inside the transaction that advances its cursor, so a message exists if and only if
 * the cursor moved past its block; delivery workers (lib/webhooks/delivery) claim due PENDING rows
 * with FOR UPDATE SKIP LOCKED. This is the only code that allocates sequence numbers: they grow by
 * one per message of a subscription and never skip (allocated in the same transaction as the rows).
 * Whatever makes messages due also announces it on MESSAGES_DUE_CHANNEL (delivered at commit), so
 * idle delivery workers start at once rather than at their next poll.
 */
import type { Prisma } from "@/lib/db/client";
import type { WebhookSubscription } from "@/lib/db/generated/client";
import { newId } from "@/lib/ids";
import type { Transaction } from "@/lib/workers/cursor";
import { type EventContent, toRecord } from "./record";

/** pg_notify channel: messages became due (the payload is empty). */
export const MESSAGES_DUE_CHANNEL = "blockgate_webhook_messages_due";

/** Wakes the delivery workers listening (lib/webhooks/delivery/worker.ts) when `tx` commits. */
export async function announceDue(tx: Pick<Transaction, "$executeRaw">): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${MESSAGES_DUE_CHANNEL}, '')`;
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

/**
 * Writes messages for delivery now, in order. Each body is the subscription record (without its
 * signing key) with the message's sequenceNumber and event content; replayed and test messages say
 * so in `replayed` / `test`. Subscriptions that are gone are skipped, and inactive ones unless
 * `evenIfInactive` (a test or resend the user asked for).
 */
export async function enqueueMessages(tx: Transaction, messages: readonly NewMessage[], opts: { evenIfInactive?: boolean } = {}): Promise<QueuedMessage[]> {
  if (messages.length === 0) return [];
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.subscriptionId, (counts.get(m.subscriptionId) ?? 0) + 1);
  const ids = [...counts.keys()];
  const n = ids.map((id) => counts.get(id)!);
  // One statement reserves every subscription's range; the row locks it takes serialise writers.
  const subs = await tx.$queryRaw<WebhookSubscription[]>`
    UPDATE webhook_subscriptions AS s SET sequence = s.sequence + c.n
    FROM unnest(${ids}::text[], ${n}::int[]) AS c(id, n)
    WHERE s.id = c.id AND (s.is_active OR ${opts.evenIfInactive ?? false})
    RETURNING s.id, s.project_id AS "projectId", s.network, s.event_type AS "eventType", s.description,
      s.webhook_url AS "webhookUrl", s.is_instant AS "isInstant", s.is_active AS "isActive", s.condition,
      s.sequence, s.created_at AS "createdAt", s.updated_at AS "updatedAt", c.n AS reserved`;
  const next = new Map<string, { sub: WebhookSubscription; seq: bigint }>();
  for (const s of subs as (WebhookSubscription & { reserved: number })[]) {
    next.set(s.id, { sub: s, seq: BigInt(s.sequence) - BigInt(s.reserved) + 1n });
  }
  const now = new Date();
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
      subscriptionId: m.subscriptionId,
      projectId: at.sub.projectId,
      sequenceNumber,
      blockNumber: m.blockNumber,
      blockHash: m.blockHash,
      payload: body as unknown as Prisma.InputJsonValue,
      replayed: m.replayed ?? false,
      test: m.test ?? false,
      nextAttemptAt: now,
    });
    queued.push({ id, subscriptionId: m.subscriptionId, sequenceNumber });
  }
  if (rows.length > 0) {
    await tx.webhookMessage.createMany({ data: rows });
    await announceDue(tx);
  }
  return queued;
}
