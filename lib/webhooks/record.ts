import type { WebhookSubscription } from "@/lib/db/generated/client";
import { networkBySlug, recordNames } from "@/lib/networks";
import type { BlockPeriodCondition, LogCondition, TransactionCondition } from "./types";

/**
 * A subscription as the API answers it and as every delivered message wraps its event:
 * `{ subscriptionId, sequenceNumber, description, protocol, network, subscriptionType,
 * notification, eventType, event, isInstant, isActive, createdAt, updatedAt }` (+ signingKey in API
 * answers only, never in deliveries: the receiver already holds it).
 *
 * `event` is the condition echoed plus what was delivered: LOG `{ targetAddress, topics, messages }`,
 * TRANSACTION `{ eventType, eventAccountAddress, payloadFunction, eventData, messages }`,
 * BLOCK_PERIOD `{ period, message }` (message null in API answers).
 */
export interface WebhookRecord {
  subscriptionId: string;
  sequenceNumber: string;
  description: string;
  protocol: string;
  network: string;
  subscriptionType: "WEBHOOK";
  notification: { webhookUrl: string };
  eventType: string;
  event: Record<string, unknown>;
  isInstant: boolean;
  isActive: boolean;
  signingKey?: string;
  deactivatedReason?: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a record's `event` carries besides the condition: the delivered content. */
export type EventContent = { messages: unknown[] } | { message: unknown };

function eventOf(sub: WebhookSubscription, content: EventContent | undefined): Record<string, unknown> {
  switch (sub.eventType) {
    case "LOG": {
      const c = sub.condition as unknown as LogCondition;
      return { targetAddress: c.address, topics: c.topics, messages: [], ...content };
    }
    case "BLOCK_PERIOD": {
      const c = sub.condition as unknown as BlockPeriodCondition;
      return { period: c.period, message: null, ...content };
    }
    case "TRANSACTION": {
      const c = sub.condition as unknown as TransactionCondition;
      return {
        eventType: c.eventType,
        eventAccountAddress: c.eventAccountAddress,
        payloadFunction: c.payloadFunction,
        eventData: c.eventData,
        messages: [],
        ...content,
      };
    }
  }
}

export function toRecord(
  sub: WebhookSubscription,
  opts: { signingKey?: string; sequenceNumber?: bigint; content?: EventContent } = {},
): WebhookRecord {
  const network = networkBySlug(sub.network);
  const names = network ? recordNames(network) : { protocol: sub.network, network: sub.network };
  return {
    subscriptionId: sub.id,
    sequenceNumber: String(opts.sequenceNumber ?? sub.sequence),
    description: sub.description,
    ...names,
    subscriptionType: "WEBHOOK",
    notification: { webhookUrl: sub.webhookUrl },
    eventType: sub.eventType,
    event: eventOf(sub, opts.content),
    isInstant: sub.isInstant,
    isActive: sub.isActive,
    ...(opts.signingKey === undefined ? {} : { signingKey: opts.signingKey, deactivatedReason: sub.deactivatedReason }),
    createdAt: sub.createdAt.toISOString(),
    updatedAt: sub.updatedAt.toISOString(),
  };
}
