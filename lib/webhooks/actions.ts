/**
 * What the webhook API asks of the engine. The engine (lib/webhooks/engine) implements these; the
 * API (lib/webhooks/endpoint.ts and the console routes) calls them after checking that the
 * subscription belongs to the caller's project.
 */
import { AppError } from "@/lib/errors";
import type { Network } from "@/lib/networks";
import type { WebhookCondition } from "./types";

/** Queues a sample message of the subscription's kind for delivery now; answers its message id. */
export async function sendTestMessage(subscriptionId: string): Promise<{ messageId: string }> {
  void subscriptionId;
  throw new AppError("UNAVAILABLE", "Webhook delivery is not running yet.");
}

/** Queues another delivery of a message (any status), with a fresh attempt count. */
export async function resendMessage(subscriptionId: string, messageId: string): Promise<{ messageId: string }> {
  void subscriptionId;
  void messageId;
  throw new AppError("UNAVAILABLE", "Webhook delivery is not running yet.");
}

/** Matches blocks fromBlock..toBlock (≤ 10,000) again and queues what matches, marked replayed. */
export async function replayBlocks(subscriptionId: string, fromBlock: bigint, toBlock: bigint): Promise<{ fromBlock: string; toBlock: string; messages: number }> {
  void subscriptionId;
  void fromBlock;
  void toBlock;
  throw new AppError("UNAVAILABLE", "Webhook replay is not running yet.");
}

/** What a would-be subscription would have matched in the network's last 100 blocks. */
export async function previewMatches(network: Network, condition: WebhookCondition): Promise<{ fromBlock: string; toBlock: string; messages: unknown[] }> {
  void network;
  void condition;
  throw new AppError("UNAVAILABLE", "Webhook preview is not running yet.");
}
