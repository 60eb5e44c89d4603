/** The console's webhook API as the browser sees it: shapes (dates as ISO strings), paths and query keys. */
import { NETWORK_DEFINITIONS, type EventType, type NetworkDefinition } from "@/lib/network-definitions";
import type { InboxRequest, InboxSummary } from "@/lib/webhooks/inbox";
import type { ConsoleWebhook, HistoryItem, Page } from "@/lib/webhooks/service";

export type { ConsoleWebhook, EventType, HistoryItem, InboxRequest, InboxSummary, Page };

export const webhooksPath = (projectId: string) => `/api/projects/${encodeURIComponent(projectId)}/webhooks`;
export const webhookPath = (projectId: string, id: string) => `${webhooksPath(projectId)}/${encodeURIComponent(id)}`;
/** The console page of a webhook. */
export const webhookPage = (projectId: string, id: string) => `/projects/${encodeURIComponent(projectId)}/webhooks/${encodeURIComponent(id)}`;
export const inboxesPath = (projectId: string) => `${webhooksPath(projectId)}/inboxes`;

export const webhooksQueryKey = (projectId: string) => ["webhooks", projectId] as const;
/** Pages of the list (every network). */
export const webhooksListQueryKey = (projectId: string) => ["webhooks", projectId, "list"] as const;
export const webhookQueryKey = (projectId: string, id: string) => ["webhooks", projectId, "one", id] as const;
export const historyQueryKey = (projectId: string, id: string) => ["webhooks", projectId, "history", id] as const;
export const inboxesQueryKey = (projectId: string) => ["webhook-inboxes", projectId] as const;

/** The networks that have webhooks, in catalog order. */
export const WEBHOOK_NETWORKS: readonly NetworkDefinition[] = NETWORK_DEFINITIONS.filter((n) => n.eventTypes.length > 0);

export const networksFor = (eventType: EventType) => WEBHOOK_NETWORKS.filter((n) => n.eventTypes.includes(eventType));

export function networkName(slug: string): string {
  return NETWORK_DEFINITIONS.find((n) => n.slug === slug)?.displayName ?? slug;
}

export const EVENT_TYPE_INFO: Record<EventType, { label: string; summary: string }> = {
  LOG: { label: "Contract log", summary: "Logs a contract emits, matched by address and topics (EVM)." },
  BLOCK_PERIOD: { label: "Block period", summary: "One message every N blocks (every network)." },
  TRANSACTION: { label: "Transaction", summary: "Transactions by entry function or event (Aptos)." },
};

/** A record's status in words: active, paused by its owner, or deactivated by the service. */
export function webhookStatus(w: Pick<ConsoleWebhook, "isActive" | "deactivatedReason">): { label: string; tone: "success" | "neutral" | "danger"; reason?: string } {
  if (w.isActive) return { label: "Active", tone: "success" };
  if (w.deactivatedReason) return { label: "Deactivated", tone: "danger", reason: w.deactivatedReason };
  return { label: "Inactive", tone: "neutral" };
}

/** "97% (33 of 34)" or null when nothing was attempted. */
export function successRate(d: { attempts: number; successes: number }): string | null {
  if (d.attempts === 0) return null;
  return `${Math.floor((d.successes / d.attempts) * 100)}% (${d.successes} of ${d.attempts})`;
}
