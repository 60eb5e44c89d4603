/**
 * The shapes both halves of the webhook capability share: the API (validation, records, history)
 * and the engine (followers, matching, delivery). Conditions here are already validated and
 * normalised (lower-case hex, nulls for unset optional fields) by lib/webhooks/schema.ts.
 */
import type { WebhookEventType } from "@/lib/db/generated/enums";

export type { WebhookEventType };

/** LOG: a contract address and 1-4 topics; null after topics[0] matches any value. */
export interface LogCondition {
  address: string;
  topics: (string | null)[];
}

/** BLOCK_PERIOD: one message every `period` blocks. */
export interface BlockPeriodCondition {
  period: number;
}

/** TRANSACTION (Aptos): by entry function, by event (type + emitting account), or both. */
export interface TransactionCondition {
  payloadFunction: string | null;
  eventType: string | null;
  eventAccountAddress: string | null;
  eventData: Record<string, unknown> | null;
}

export type WebhookCondition =
  | { eventType: "LOG"; condition: LogCondition }
  | { eventType: "BLOCK_PERIOD"; condition: BlockPeriodCondition }
  | { eventType: "TRANSACTION"; condition: TransactionCondition };
