/**
 * The webhook API catalog: every route with its method, path and CU cost, read by the mount
 * (lib/webhooks/endpoint.ts), the metering, the OpenAPI document and the docs. Paths are relative
 * to `/v1/{protocol}/{network}`. No imports: the console reads it in the browser too.
 */

export type WebhookRouteId = "create" | "list" | "get" | "update" | "delete" | "history" | "test" | "resend" | "replay" | "preview";

export interface WebhookRoute {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** OpenAPI template under /v1/{protocol}/{network}. */
  path: string;
  summary: string;
  /** Charged for a successful call; failed calls cost 0 CU. */
  cu: number;
  /** It queues messages the user asks for: WEBHOOK_DELIVERY_CU each on top, charged as they are queued. */
  queues?: true;
}

export const WEBHOOK_ROUTES: Record<WebhookRouteId, WebhookRoute> = {
  create: { method: "POST", path: "/webhooks", summary: "Create a webhook subscription", cu: 50 },
  list: { method: "GET", path: "/webhooks", summary: "List the project's subscriptions on this network (or one, with subscriptionId)", cu: 10 },
  get: { method: "GET", path: "/webhooks/{subscriptionId}", summary: "Read one subscription", cu: 10 },
  update: { method: "PATCH", path: "/webhooks/{subscriptionId}", summary: "Change description, notification, isActive or condition", cu: 25 },
  delete: { method: "DELETE", path: "/webhooks/{subscriptionId}", summary: "Delete a subscription with its messages and history", cu: 10 },
  history: { method: "GET", path: "/webhooks/history", summary: "Delivery attempts of the last 30 days, newest first", cu: 20 },
  test: { method: "POST", path: "/webhooks/{subscriptionId}/test", summary: "Send a sample message of the subscription's kind now", cu: 25, queues: true },
  resend: { method: "POST", path: "/webhooks/{subscriptionId}/messages/{messageId}/resend", summary: "Deliver a message again", cu: 25, queues: true },
  replay: { method: "POST", path: "/webhooks/{subscriptionId}/replay", summary: "Match past blocks again and deliver what matches (at most the plan's blocks per replay)", cu: 200, queues: true },
  preview: { method: "POST", path: "/webhooks/preview", summary: "What a would-be subscription matches in the last 100 blocks; creates nothing", cu: 100 },
};

/**
 * Each message: one of the chain's is charged once delivered (a 2xx from the receiver), whatever
 * the number of attempts; one the user asks for (test, resend, replay) as it is queued, and not
 * again when delivered.
 */
export const WEBHOOK_DELIVERY_CU = 10;

/** The usage label of a route (`webhooks.create`) and of deliveries. */
export const webhookUsageLabel = (route: WebhookRouteId | "delivery") => `webhooks.${route}`;
