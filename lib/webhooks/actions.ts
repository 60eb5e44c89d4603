/**
 * What the webhook API asks of the engine: "Send test", resend, replay and preview. The API
 * (lib/webhooks/endpoint.ts and the console routes) calls these after checking that the
 * subscription belongs to the caller's project. They reach the chain through its chain source
 * (lib/webhooks/engine/registry.ts), whatever the family, and queue messages through the outbox,
 * within the plan's bounds (lib/webhooks/outbox.ts). Each message they queue costs
 * WEBHOOK_DELIVERY_CU, checked against the allowance before anything is queued and charged once
 * it is (MessageBilling); its delivery, however many attempts it takes, costs nothing more.
 */
import { db, rawPool, rawTransaction } from "@/lib/db/client";
import type { WebhookSubscription } from "@/lib/db/generated/client";
import type { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { errorMessage } from "@/lib/log";
import { countEnqueued } from "@/lib/metrics";
import { networkBySlug, type Network } from "@/lib/networks";
import { PLANS } from "@/lib/plans";
import { WEBHOOK_DELIVERY_CU } from "./catalog";
import { mapLimit, matchRange, periodFires } from "./engine/matching";
import { chainSourceFor } from "./engine/registry";
import { ChainSourceError, type ChainSource } from "./engine/source";
import { announceDue, enqueueMessages, lockPending, refuseOverBounds, type NewMessage } from "./outbox";
import type { EventContent } from "./record";
import type { WebhookCondition } from "./types";

/** Blocks a preview looks at: the last 100. */
export const PREVIEW_BLOCKS = 100n;
/** Messages a preview answers at most (the first ones, in chain order). */
export const PREVIEW_MAX_MESSAGES = 1000;
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

/**
 * How the messages a user asks for are paid: the public API's implementation checks the key's
 * project and adds their CU to the call's (lib/webhooks/endpoint.ts), the console's reads the
 * allowance and meters them per subscription (lib/webhooks/service.ts consoleBilling).
 */
export interface MessageBilling {
  /** Throws EXCEEDED_QUOTA_LIMIT when the project's allowance cannot pay `cu` more (unless overage applies). */
  check(cu: number): Promise<void>;
  /** Records the CU of messages just queued. */
  charge(cu: number, queued: { route: "test" | "resend" | "replay"; subscriptionId: string; network: string }): void;
}

async function subscription(id: string): Promise<{ sub: WebhookSubscription; network: Network; plan: Plan }> {
  const found = await db().webhookSubscription.findUnique({ where: { id }, include: { project: { select: { plan: true } } } });
  if (!found) throw new AppError("RESOURCE_NOT_FOUND", `No webhook subscription ${id}.`);
  const { project, ...sub } = found;
  const network = networkBySlug(sub.network);
  if (!network) throw new AppError("UNAVAILABLE", `The network ${sub.network} of subscription ${id} is not served by this deployment.`);
  return { sub, network, plan: project.plan };
}

const contentOf = (eventType: string, items: unknown[]): EventContent => (eventType === "BLOCK_PERIOD" ? { message: items[0] ?? null } : { messages: items });

/**
 * Queues a sample message of the subscription's kind for delivery now, marked `test: true`, even
 * when the subscription is inactive; answers its message id. The sample comes from the chain as it
 * is now (the latest block; for LOG the subscription's latest match of the last 1,000 blocks, or a
 * made-up log with its address and topics). It takes the next sequenceNumber like any message.
 */
export async function sendTestMessage(subscriptionId: string, billing: MessageBilling): Promise<{ messageId: string }> {
  const { sub, network } = await subscription(subscriptionId);
  const sample = await withChain(network, (source, signal) => source.sample(sub.eventType, signal, sub.condition));
  await billing.check(WEBHOOK_DELIVERY_CU);
  const written = await rawTransaction((client) =>
    enqueueMessages(client, [{ subscriptionId: sub.id, blockNumber: null, blockHash: null, content: contentOf(sub.eventType, [sample]), test: true }], { evenIfInactive: true, asked: true }),
  );
  countEnqueued(sub.network, "asked", written);
  const [queued] = written;
  if (!queued) throw new AppError("RESOURCE_NOT_FOUND", `No webhook subscription ${subscriptionId}.`);
  billing.charge(WEBHOOK_DELIVERY_CU, { route: "test", subscriptionId: sub.id, network: sub.network });
  return { messageId: queued.id };
}

/**
 * Queues another delivery of a message, whatever its status: the same row (same message id, so the
 * same webhook-id header and body: receivers that deduplicate by webhook-id see it as the message
 * they may already have) goes back to PENDING, due now, with a fresh attempt count. Its earlier
 * attempts stay in the history. A message still waiting adds nothing to the queue's bounds.
 */
export async function resendMessage(subscriptionId: string, messageId: string, billing: MessageBilling): Promise<{ messageId: string }> {
  await billing.check(WEBHOOK_DELIVERY_CU);
  const network = await rawTransaction(async (client) => {
    const held = await lockPending(client, subscriptionId);
    if (!held) return undefined;
    const { rows } = await client.query<{ status: string }>("SELECT status FROM webhook_messages WHERE id = $1 AND subscription_id = $2", [messageId, subscriptionId]);
    if (!rows[0]) return undefined;
    await refuseOverBounds(client, { subscriptionId, ...held }, rows[0].status === "PENDING" ? 0 : 1);
    await client.query("UPDATE webhook_messages SET status = 'PENDING', attempts = 0, next_attempt_at = now(), prepaid = true WHERE id = $1", [messageId]);
    await announceDue(client);
    return held.network;
  });
  if (network === undefined) throw new AppError("RESOURCE_NOT_FOUND", `No message ${messageId} of subscription ${subscriptionId}.`);
  // Queued again: counted as a message the user asked for.
  countEnqueued(network, "asked", [{}]);
  billing.charge(WEBHOOK_DELIVERY_CU, { route: "resend", subscriptionId, network });
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
 * Matches blocks fromBlock..toBlock (at most the plan's maxReplayBlocks, ≤ 10,000 as the API's
 * schema checks) of the chain as it is now and queues one message per matching block, marked
 * `replayed: true`, in chain order, all or none (the queue's bounds). BLOCK_PERIOD keeps the
 * subscription's phase (blocks startBlock + 1 + k·period). Refused for an inactive subscription
 * (nothing would be delivered) and for blocks above the chain's head.
 */
export async function replayBlocks(subscriptionId: string, fromBlock: bigint, toBlock: bigint, billing: MessageBilling): Promise<{ fromBlock: string; toBlock: string; messages: number }> {
  const { sub, network, plan } = await subscription(subscriptionId);
  const limits = PLANS[plan];
  const blocks = toBlock - fromBlock + 1n;
  if (blocks > BigInt(limits.maxReplayBlocks)) {
    throw new AppError(
      "WRONG_RANGE_PARAMETER",
      `fromBlock..toBlock covers ${blocks.toLocaleString("en-US")} blocks, and the ${limits.label} plan replays at most ${limits.maxReplayBlocks.toLocaleString("en-US")} blocks per call: split the range, or upgrade the plan.`,
    );
  }
  if (!sub.isActive) throw new AppError("REJECTED", "This subscription is inactive: activate it (isActive: true) before replaying blocks.");
  // A queue already at its bound refuses before the chain is asked for anything.
  await refuseOverBounds(rawPool(), { subscriptionId: sub.id, projectId: sub.projectId, plan }, "any");
  const condition = { eventType: sub.eventType, condition: sub.condition } as unknown as WebhookCondition;
  const found = await withChain(network, async (source, signal) => {
    const head = await chainHead(source, signal);
    if (toBlock > head) throw new AppError("WRONG_RANGE_PARAMETER", `toBlock must not be above the chain's latest block ${head}.`);
    return matchBlocks(source, condition, { from: fromBlock, to: toBlock, startBlock: sub.startBlock ?? fromBlock - 1n }, signal);
  });
  const messages: NewMessage[] = found.map((b) => ({ subscriptionId: sub.id, blockNumber: b.number, blockHash: b.hash, content: contentOf(sub.eventType, b.items), replayed: true }));
  if (messages.length > 0) await billing.check(messages.length * WEBHOOK_DELIVERY_CU);
  const written = await rawTransaction((client) => enqueueMessages(client, messages, { asked: true }));
  countEnqueued(sub.network, "asked", written);
  const queued = written.length;
  if (queued > 0) billing.charge(queued * WEBHOOK_DELIVERY_CU, { route: "replay", subscriptionId: sub.id, network: sub.network });
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
