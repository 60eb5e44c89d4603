/**
 * The webhook subscription API as plain functions: the public API (lib/webhooks/endpoint.ts) and
 * the console's routes (app/api/projects/[projectId]/webhooks) both call these. Every function is
 * scoped to one project and, from the public API, to the network of the path: a subscription of
 * another project or network answers 404 RESOURCE_NOT_FOUND and nothing changes.
 */
import { db, type Prisma } from "@/lib/db/client";
import type { WebhookSubscription } from "@/lib/db/generated/client";
import type { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { allowanceRefusal } from "@/lib/gateway/quota";
import { newId } from "@/lib/ids";
import { networkBySlug, type Network } from "@/lib/networks";
import { PLANS } from "@/lib/plans";
import { services } from "@/lib/services";
import type { UsageMeter } from "@/lib/usage/meter";
import { allowanceOf } from "@/lib/usage/query";
import { parseInput, SENTENCES } from "@/lib/validation";
import type { Transaction } from "@/lib/workers/cursor";
import { checkTerm, type LeaderTerm } from "@/lib/workers/leader-lock";
import { previewMatches, replayBlocks, resendMessage, sendTestMessage, type MessageBilling } from "./actions";
import { webhookUsageLabel } from "./catalog";
import { toRecord, type WebhookRecord } from "./record";
import {
  createWebhookSchema,
  historyQuerySchema,
  listWebhooksQuerySchema,
  MESSAGE_ID,
  networkPath,
  replaySchema,
  SUBSCRIPTION_ID,
  updateWebhookSchema,
  type CreateWebhookBody,
} from "./schema";
import { decryptSigningKey, generateSigningKey } from "./signing-key";
import type { WebhookCondition } from "./types";
import { checkWebhookUrl } from "./url-guard";

/** Delivery attempts (and finished messages) are kept this long. */
export const HISTORY_RETENTION_DAYS = 30;

/** Whose subscriptions a call may see: a project, and from the public API one network. */
export interface WebhookScope {
  projectId: string;
  /** Undefined: every network of the project (the console). */
  network?: Network;
}

export interface Page<T> {
  total: number;
  page: number;
  rpp: number;
  items: T[];
}

const where = (scope: WebhookScope) => ({ projectId: scope.projectId, ...(scope.network ? { network: scope.network.slug } : {}) });

function notFound(scope: WebhookScope, what: string): AppError {
  return new AppError("RESOURCE_NOT_FOUND", `No ${what} in this project${scope.network ? ` on ${networkPath(scope.network)}` : ""}.`);
}

async function findSubscription(scope: WebhookScope, id: string): Promise<WebhookSubscription> {
  const sub = SUBSCRIPTION_ID.test(id) ? await db().webhookSubscription.findFirst({ where: { id, ...where(scope) } }) : null;
  if (!sub) throw notFound(scope, SUBSCRIPTION_ID.test(id) ? `webhook subscription ${id}` : "such webhook subscription");
  return sub;
}

/** The record as the API answers it: with the signing key, for the project's own eyes. */
export function apiRecord(sub: WebhookSubscription): WebhookRecord {
  return toRecord(sub, { signingKey: decryptSigningKey(sub.signingKey) });
}

/**
 * The columns the engine matches on, derived from a condition. startBlock stays null: the engine
 * sets it to the chain head when it first sees the subscription (creation needs no chain access).
 */
function matchingColumns(c: WebhookCondition) {
  return {
    condition: c.condition as unknown as Prisma.InputJsonValue,
    logAddress: c.eventType === "LOG" ? c.condition.address : null,
    logTopic0: c.eventType === "LOG" ? c.condition.topics[0]! : null,
    period: c.eventType === "BLOCK_PERIOD" ? c.condition.period : null,
    startBlock: null,
  };
}

const conditionOf = (body: CreateWebhookBody): WebhookCondition => ({ eventType: body.eventType, condition: body.condition }) as WebhookCondition;

/** Creates a subscription: 201 with the record, signing key included. */
export async function createWebhook(projectId: string, network: Network, input: unknown): Promise<WebhookRecord> {
  const body = parseInput(createWebhookSchema(network), input, SENTENCES);
  await checkWebhookUrl(body.notification.webhookUrl);
  const key = generateSigningKey();
  const sub = await db().$transaction(async (tx) => {
    // The project row is locked so that concurrent creations count each other.
    const [project] = await tx.$queryRaw<{ plan: Plan }[]>`SELECT plan FROM projects WHERE id = ${projectId} FOR UPDATE`;
    if (!project) throw new AppError("RESOURCE_NOT_FOUND", "No such project.");
    const limits = PLANS[project.plan];
    const count = await tx.webhookSubscription.count({ where: { projectId } });
    if (count >= limits.maxWebhooks) {
      throw new AppError(
        "REJECTED",
        `The ${limits.label} plan allows ${limits.maxWebhooks.toLocaleString("en-US")} webhook subscriptions per project (all networks together), and this project has ${count}. Delete one or upgrade the plan.`,
      );
    }
    return tx.webhookSubscription.create({
      data: {
        id: newId("wh"),
        projectId,
        network: network.slug,
        eventType: body.eventType,
        description: body.description,
        webhookUrl: body.notification.webhookUrl,
        isInstant: body.isInstant,
        signingKey: key.ciphertext,
        ...matchingColumns(conditionOf(body)),
      },
    });
  });
  return toRecord(sub, { signingKey: key.signingKey });
}

async function listSubscriptions(scope: WebhookScope, input: unknown): Promise<Page<WebhookSubscription>> {
  const q = parseInput(listWebhooksQuerySchema, input, SENTENCES);
  if (q.subscriptionId) {
    const sub = await findSubscription(scope, q.subscriptionId);
    return { total: 1, page: q.page, rpp: q.rpp, items: q.page === 1 ? [sub] : [] };
  }
  const filter = where(scope);
  const [total, items] = await Promise.all([
    db().webhookSubscription.count({ where: filter }),
    db().webhookSubscription.findMany({ where: filter, orderBy: [{ createdAt: "desc" }, { id: "desc" }], skip: (q.page - 1) * q.rpp, take: q.rpp }),
  ]);
  return { total, page: q.page, rpp: q.rpp, items };
}

/** `{ total, page, rpp, items }`, newest first; with subscriptionId, that one (404 when not the caller's). */
export async function listWebhooks(scope: WebhookScope, input: unknown): Promise<Page<WebhookRecord>> {
  const listed = await listSubscriptions(scope, input);
  return { ...listed, items: listed.items.map(apiRecord) };
}

export async function getWebhook(scope: WebhookScope, id: string): Promise<WebhookRecord> {
  return apiRecord(await findSubscription(scope, id));
}

/**
 * Changes description, notification, isActive or condition. Turning a subscription on again clears
 * a deactivation by the service (its reason and failure streak); turning it on again or giving it a
 * new condition resets matching, which restarts from the chain head. The signing key never changes.
 */
export async function updateWebhook(scope: WebhookScope, id: string, input: unknown): Promise<WebhookRecord> {
  const sub = await findSubscription(scope, id);
  const body = parseInput(updateWebhookSchema(sub.eventType), input, SENTENCES);
  if (body.notification) await checkWebhookUrl(body.notification.webhookUrl);
  const data: Prisma.WebhookSubscriptionUpdateManyMutationInput = {};
  if (body.description !== undefined) data.description = body.description;
  if (body.notification) data.webhookUrl = body.notification.webhookUrl;
  if (body.isActive === false) data.isActive = false;
  // Matching restarts from the chain head too: blocks of the inactive time are not caught up.
  if (body.isActive === true && !sub.isActive) Object.assign(data, { isActive: true, deactivatedReason: null, deactivatedAt: null, failingSince: null, startBlock: null });
  if (body.condition) Object.assign(data, matchingColumns({ eventType: sub.eventType, condition: body.condition } as WebhookCondition));
  const updated = await db().webhookSubscription.updateManyAndReturn({ where: { id: sub.id, ...where(scope) }, data });
  if (updated.length === 0) throw notFound(scope, `webhook subscription ${id}`);
  return apiRecord(updated[0]!);
}

/** Deletes a subscription; its messages and delivery history go with it. */
export async function deleteWebhook(scope: WebhookScope, id: string): Promise<void> {
  const { count } = SUBSCRIPTION_ID.test(id) ? await db().webhookSubscription.deleteMany({ where: { id, ...where(scope) } }) : { count: 0 };
  if (count === 0) throw notFound(scope, SUBSCRIPTION_ID.test(id) ? `webhook subscription ${id}` : "such webhook subscription");
}

/** One delivery attempt as the history answers it. */
export interface HistoryItem {
  attemptId: string;
  subscriptionId: string;
  messageId: string;
  sequenceNumber: string;
  /** 1 for the first attempt of the message. */
  attempt: number;
  status: "SUCCESS" | "FAIL";
  attemptedAt: string;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  replayed: boolean;
  test: boolean;
  requestHeaders: unknown;
  responseBody: string | null;
  /** The delivered body, with withEventMessage=true. */
  eventMessage?: unknown;
}

/** Delivery attempts, newest first, filtered by subscription, status and time. */
export async function webhookHistory(scope: WebhookScope, input: unknown): Promise<Page<HistoryItem>> {
  const q = parseInput(historyQuerySchema, input, SENTENCES);
  if (q.subscriptionId) await findSubscription(scope, q.subscriptionId);
  const filter: Prisma.WebhookAttemptWhereInput = {
    projectId: scope.projectId,
    ...(q.subscriptionId ? { subscriptionId: q.subscriptionId } : {}),
    ...(scope.network ? { message: { subscription: { network: scope.network.slug } } } : {}),
    ...(q.status ? { success: q.status === "SUCCESS" } : {}),
    ...(q.startAt || q.endAt ? { startedAt: { ...(q.startAt ? { gte: q.startAt } : {}), ...(q.endAt ? { lte: q.endAt } : {}) } } : {}),
  };
  const [total, attempts] = await Promise.all([
    db().webhookAttempt.count({ where: filter }),
    db().webhookAttempt.findMany({
      where: filter,
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
      skip: (q.page - 1) * q.rpp,
      take: q.rpp,
      include: { message: { select: { sequenceNumber: true, replayed: true, test: true, payload: q.withEventMessage } } },
    }),
  ]);
  const items = attempts.map((a): HistoryItem => ({
    attemptId: a.id,
    subscriptionId: a.subscriptionId,
    messageId: a.messageId,
    sequenceNumber: String(a.message.sequenceNumber),
    attempt: a.attempt,
    status: a.success ? "SUCCESS" : "FAIL",
    attemptedAt: a.startedAt.toISOString(),
    httpStatus: a.httpStatus,
    durationMs: a.durationMs,
    error: a.error,
    replayed: a.message.replayed,
    test: a.message.test,
    requestHeaders: a.requestHeaders,
    responseBody: a.responseBody,
    ...(q.withEventMessage ? { eventMessage: a.message.payload } : {}),
  }));
  return { total, page: q.page, rpp: q.rpp, items };
}

/** Success counts of the last 24 hours, per subscription (the console's list). */
export async function recentDeliveryStats(projectId: string, subscriptionIds: string[], now = new Date()): Promise<Map<string, { attempts: number; successes: number }>> {
  const since = new Date(now.getTime() - 24 * 3600_000);
  const rows = await db().webhookAttempt.groupBy({
    by: ["subscriptionId", "success"],
    where: { projectId, subscriptionId: { in: subscriptionIds }, startedAt: { gte: since } },
    _count: { _all: true },
  });
  const stats = new Map(subscriptionIds.map((id) => [id, { attempts: 0, successes: 0 }]));
  for (const r of rows) {
    const s = stats.get(r.subscriptionId)!;
    s.attempts += r._count._all;
    if (r.success) s.successes += r._count._all;
  }
  return stats;
}

export async function testWebhook(scope: WebhookScope, id: string, billing: MessageBilling): Promise<{ messageId: string }> {
  const sub = await findSubscription(scope, id);
  return sendTestMessage(sub.id, billing);
}

export async function resendWebhookMessage(scope: WebhookScope, id: string, messageId: string, billing: MessageBilling): Promise<{ messageId: string }> {
  const sub = await findSubscription(scope, id);
  const message = MESSAGE_ID.test(messageId) ? await db().webhookMessage.findFirst({ where: { id: messageId, subscriptionId: sub.id }, select: { id: true } }) : null;
  if (!message) throw notFound(scope, MESSAGE_ID.test(messageId) ? `message ${messageId} of subscription ${sub.id}` : "such message");
  return resendMessage(sub.id, message.id, billing);
}

export async function replayWebhook(scope: WebhookScope, id: string, input: unknown, billing: MessageBilling): Promise<{ fromBlock: string; toBlock: string; messages: number }> {
  const sub = await findSubscription(scope, id);
  const { fromBlock, toBlock } = parseInput(replaySchema, input, SENTENCES);
  return replayBlocks(sub.id, fromBlock, toBlock, billing);
}

/**
 * What the console's test, resend and replay pay for the messages they queue (console calls cost
 * nothing themselves): checked against the allowance as the Usage page reads it, and metered per
 * subscription under the call's usage label, as deliveries are.
 */
export function consoleBilling(projectId: string, meter: UsageMeter = services().meter): MessageBilling {
  return {
    async check(cu) {
      const project = await db().project.findUnique({ where: { id: projectId }, select: { plan: true } });
      if (!project) throw new AppError("RESOURCE_NOT_FOUND", "No such project.");
      const now = Date.now();
      const allowance = await allowanceOf(projectId, project.plan, now);
      const refusal = allowance.overage ? undefined : allowanceRefusal(PLANS[project.plan], allowance.usedCu, now, cu);
      if (refusal) throw refusal;
    },
    charge(cu, { route, subscriptionId, network }) {
      meter.record({ projectId, keyId: "", subscriptionId, network, api: "v1", endpoint: webhookUsageLabel(route), status: "2xx", cu, error: false, latencyMs: 0 });
    },
  };
}

/** What a create body would have matched in the network's last 100 blocks; creates nothing. */
export async function previewWebhook(network: Network, input: unknown): Promise<{ fromBlock: string; toBlock: string; messages: unknown[] }> {
  const body = parseInput(createWebhookSchema(network), input, SENTENCES);
  return previewMatches(network, conditionOf(body));
}

/**
 * Deletes delivery attempts older than `olderThan`, and finished messages (delivered or failed)
 * older than that, `batch` rows per transaction so that none holds locks for long; as the
 * retention worker of `term` (lib/chains/retention.ts), when given. Answers how many rows went.
 */
export async function sweepWebhookHistory(olderThan: Date, opts: { batch?: number; term?: LeaderTerm } = {}): Promise<{ attempts: number; messages: number }> {
  const batch = opts.batch ?? 5000;
  const sweep = async (remove: (tx: Transaction) => Promise<number>) => {
    let total = 0;
    for (;;) {
      const n = await db().$transaction(async (tx) => {
        await checkTerm(tx, opts.term);
        return remove(tx);
      });
      total += n;
      if (n < batch) return total;
    }
  };
  const attempts = await sweep((tx) => tx.$executeRaw`DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE started_at < ${olderThan} LIMIT ${batch})`);
  const messages = await sweep(
    (tx) => tx.$executeRaw`DELETE FROM webhook_messages WHERE id IN (SELECT id FROM webhook_messages WHERE created_at < ${olderThan} AND status <> 'PENDING' LIMIT ${batch})`,
  );
  return { attempts, messages };
}

// ---------------------------------------------------------------------------------------------
// The console: every network of a project at once, networks named by slug.

/** A network that has webhooks, by its slug (`ethereum-mainnet`); a 400 naming `field` otherwise. */
export function webhookNetwork(slug: unknown, field = "network"): Network {
  const network = typeof slug === "string" ? networkBySlug(slug) : undefined;
  if (slug === undefined) throw new AppError("MISSING_REQUIRED_PARAMETER", `${field} is required: a network such as ethereum-mainnet.`);
  if (!network || network.eventTypes.length === 0) throw new AppError("INVALID_PARAMETER", `${field} must be a network with webhooks, such as ethereum-mainnet or aptos-testnet.`);
  return network;
}

export type ConsoleWebhook = WebhookRecord & { slug: string; deliveries24h: { attempts: number; successes: number } };

/** The console's list: every network (or `network`), with each subscription's deliveries of the last 24 hours. */
export async function listConsoleWebhooks(projectId: string, input: Record<string, string>): Promise<Page<ConsoleWebhook>> {
  const { network, ...query } = input;
  const scope = { projectId, network: network === undefined ? undefined : webhookNetwork(network) };
  const listed = await listSubscriptions(scope, query);
  const stats = await recentDeliveryStats(projectId, listed.items.map((s) => s.id));
  return { ...listed, items: listed.items.map((s) => ({ ...apiRecord(s), slug: s.network, deliveries24h: stats.get(s.id)! })) };
}
