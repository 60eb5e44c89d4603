/**
 * What the webhook API asks of the engine: "Send test", resend, replay and preview. The API
 * (lib/webhooks/endpoint.ts and the console routes) calls these after checking that the
 * subscription belongs to the caller's project. They reach the chain through its chain source
 * (lib/webhooks/engine/registry.ts), whatever the family, and queue messages through the outbox.
 */
import { db, rawTransaction } from "@/lib/db/client";
import type { WebhookSubscription } from "@/lib/db/generated/client";
import { AppError } from "@/lib/errors";
import { errorMessage } from "@/lib/log";
import { networkBySlug, type Network } from "@/lib/networks";
import { mapLimit, matchRange, periodFires } from "./engine/matching";
import { chainSourceFor } from "./engine/registry";
import { ChainSourceError, type ChainSource } from "./engine/source";
import { announceDue, enqueueMessages, type NewMessage } from "./outbox";
import type { EventContent } from "./record";
import type { WebhookCondition } from "./types";

/** Blocks a preview looks at: the last 100. */
export const PREVIEW_BLOCKS = 100n;
/** Messages a preview answers at most (the first ones, in chain order). */
export const PREVIEW_MAX_MESSAGES = 1000;
/** Messages written per transaction by a replay. */
const REPLAY_CHUNK = 1000;
/** Blocks fetched at once by a BLOCK_PERIOD replay or preview. */
const PARALLEL_BLOCKS = 8;
/** Time allowed to a request's chain queries. */
const CHAIN_TIMEOUT_MS = 60_000;

/** A 503 that says the chain cannot be reached now, for failures of the chain's nodes. */
async function withChain<T>(network: Network, work: (source: ChainSource, signal: AbortSignal) => Promise<T>): Promise<T> {
  const source = chainSourceFor(network);
  try {
    return await work(source, AbortSignal.timeout(CHAIN_TIMEOUT_MS));
  } catch (e) {
    if (e instanceof ChainSourceError || (e instanceof Error && e.name === "TimeoutError")) {
      throw new AppError("UNAVAILABLE", `The ${network.displayName} chain cannot be reached right now (${errorMessage(e)}); try again later.`);
    }
    throw e;
  }
}

async function subscription(id: string): Promise<{ sub: WebhookSubscription; network: Network }> {
  const sub = await db().webhookSubscription.findUnique({ where: { id } });
  if (!sub) throw new AppError("RESOURCE_NOT_FOUND", `No webhook subscription ${id}.`);
  const network = networkBySlug(sub.network);
  if (!network) throw new AppError("UNAVAILABLE", `The network ${sub.network} of subscription ${id} is not served by this deployment.`);
  return { sub, network };
}

const contentOf = (eventType: string, items: unknown[]): EventContent => (eventType === "BLOCK_PERIOD" ? { message: items[0] ?? null } : { messages: items });

/**
 * Queues a sample message of the subscription's kind for delivery now, marked `test: true`, even
 * when the subscription is inactive; answers its message id. The sample comes from the chain as it
 * is now (the latest block; for LOG the subscription's latest match of the last 1,000 blocks, or a
 * made-up log with its address and topics). It takes the next sequenceNumber like any message.
 */
export async function sendTestMessage(subscriptionId: string): Promise<{ messageId: string }> {
  const { sub, network } = await subscription(subscriptionId);
  const sample = await withChain(network, (source, signal) => source.sample(sub.eventType, signal, sub.condition));
  const [queued] = await rawTransaction((client) =>
    enqueueMessages(client, [{ subscriptionId: sub.id, blockNumber: null, blockHash: null, content: contentOf(sub.eventType, [sample]), test: true }], { evenIfInactive: true }),
  );
  if (!queued) throw new AppError("RESOURCE_NOT_FOUND", `No webhook subscription ${subscriptionId}.`);
  return { messageId: queued.id };
}

/**
 * Queues another delivery of a message, whatever its status: the same row (same message id, so the
 * same webhook-id header and body: receivers that deduplicate by webhook-id see it as the message
 * they may already have) goes back to PENDING, due now, with a fresh attempt count. Its earlier
 * attempts stay in the history.
 */
export async function resendMessage(subscriptionId: string, messageId: string): Promise<{ messageId: string }> {
  const count = await rawTransaction(async (client) => {
    const { rowCount } = await client.query("UPDATE webhook_messages SET status = 'PENDING', attempts = 0, next_attempt_at = now() WHERE id = $1 AND subscription_id = $2", [
      messageId,
      subscriptionId,
    ]);
    if (rowCount) await announceDue(client);
    return rowCount ?? 0;
  });
  if (count === 0) throw new AppError("RESOURCE_NOT_FOUND", `No message ${messageId} of subscription ${subscriptionId}.`);
  return { messageId };
}

/** The messages `condition` gives blocks from..to of the chain as it is now, by block, in chain order. */
async function matchBlocks(
  source: ChainSource,
  condition: WebhookCondition,
  opts: { from: bigint; to: bigint; startBlock: bigint; maxBlocks?: number },
  signal: AbortSignal,
): Promise<{ number: bigint; hash: string; items: unknown[] }[]> {
  if (condition.eventType === "BLOCK_PERIOD") {
    const heights: bigint[] = [];
    for (let h = opts.from; h <= opts.to && (opts.maxBlocks === undefined || heights.length < opts.maxBlocks); h++) {
      if (periodFires(h, opts.startBlock, condition.condition.period)) heights.push(h);
    }
    const blocks = await mapLimit(heights, PARALLEL_BLOCKS, async (h) => {
      const block = await source.block(h, signal);
      return block ? { number: block.number, hash: block.hash, items: [await source.blockPeriodMessage(block, signal)] } : undefined;
    });
    return blocks.filter((b) => b !== undefined);
  }
  const matcher = source.matcher([{ id: "match", eventType: condition.eventType, condition: condition.condition }]);
  const found = await matchRange(source, matcher, opts.from, opts.to, signal);
  return found.map((f) => ({ number: f.number, hash: f.hash, items: f.matches.flatMap((m) => m.messages) }));
}

async function chainHead(source: ChainSource, signal: AbortSignal): Promise<bigint> {
  const head = await source.head(signal);
  if (head === null) throw new AppError("UNAVAILABLE", `The ${source.network.displayName} chain has no block yet.`);
  return head;
}

/**
 * Matches blocks fromBlock..toBlock (≤ 10,000, checked by the API's schema) of the chain as it is
 * now and queues one message per matching block, marked `replayed: true`, in chain order.
 * BLOCK_PERIOD keeps the subscription's phase (blocks startBlock + 1 + k·period). Refused for an
 * inactive subscription (nothing would be delivered) and for blocks above the chain's head.
 */
export async function replayBlocks(subscriptionId: string, fromBlock: bigint, toBlock: bigint): Promise<{ fromBlock: string; toBlock: string; messages: number }> {
  const { sub, network } = await subscription(subscriptionId);
  if (!sub.isActive) throw new AppError("REJECTED", "This subscription is inactive: activate it (isActive: true) before replaying blocks.");
  const condition = { eventType: sub.eventType, condition: sub.condition } as unknown as WebhookCondition;
  const found = await withChain(network, async (source, signal) => {
    const head = await chainHead(source, signal);
    if (toBlock > head) throw new AppError("WRONG_RANGE_PARAMETER", `toBlock must not be above the chain's latest block ${head}.`);
    return matchBlocks(source, condition, { from: fromBlock, to: toBlock, startBlock: sub.startBlock ?? fromBlock - 1n }, signal);
  });
  const messages: NewMessage[] = found.map((b) => ({ subscriptionId: sub.id, blockNumber: b.number, blockHash: b.hash, content: contentOf(sub.eventType, b.items), replayed: true }));
  let queued = 0;
  for (let i = 0; i < messages.length; i += REPLAY_CHUNK) {
    const chunk = messages.slice(i, i + REPLAY_CHUNK);
    queued += (await rawTransaction((client) => enqueueMessages(client, chunk))).length;
  }
  return { fromBlock: String(fromBlock), toBlock: String(toBlock), messages: queued };
}

/**
 * What a would-be subscription would have matched in the network's last 100 blocks, creating
 * nothing: the `messages` items (LOG: every matching log; BLOCK_PERIOD: the blocks it would have
 * fired on, counting from the first of those blocks), in chain order, at most 1,000.
 */
export async function previewMatches(network: Network, condition: WebhookCondition): Promise<{ fromBlock: string; toBlock: string; messages: unknown[] }> {
  return withChain(network, async (source, signal) => {
    const head = await chainHead(source, signal);
    const from = head >= PREVIEW_BLOCKS ? head - PREVIEW_BLOCKS + 1n : 0n;
    const found = await matchBlocks(source, condition, { from, to: head, startBlock: from - 1n, maxBlocks: PREVIEW_MAX_MESSAGES }, signal);
    return { fromBlock: String(from), toBlock: String(head), messages: found.flatMap((b) => b.items).slice(0, PREVIEW_MAX_MESSAGES) };
  });
}
