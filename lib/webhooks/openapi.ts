/**
 * The OpenAPI 3.1 document of the webhook API, served at `/v1/openapi.json`. Request bodies and
 * query parameters are the very zod schemas the API validates with (lib/webhooks/schema.ts); the
 * paths and CU come from the catalog (lib/webhooks/catalog.ts). Built once per process.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { getEnv } from "@/lib/env";
import { NETWORK_DEFINITIONS } from "@/lib/network-definitions";
import { PLANS, type PlanLimits } from "@/lib/plans";
import { WEBHOOK_DELIVERY_CU, WEBHOOK_ROUTES, type WebhookRouteId } from "./catalog";
import { HISTORY_RETENTION_DAYS } from "./service";
import { INBOX_BODY_LIMIT } from "./inbox";
import { createWebhookSchema, historyQuerySchema, listWebhooksQuerySchema, replaySchema, updateWebhookSchema } from "./schema";

const webhookNetworks = NETWORK_DEFINITIONS.filter((n) => n.eventTypes.length > 0);

const errorSchema = z
  .object({ code: z.string().meta({ example: "INVALID_PARAMETER" }), message: z.string().meta({ example: "condition.topics[1] must be a topic: 0x followed by 64 hex digits." }) })
  .meta({ id: "Error", description: "Every failure: an error code and a message for the person who made the request." });

const logMessage = z
  .object({
    address: z.string().meta({ description: "Lower case." }),
    topics: z.array(z.string()),
    data: z.string().meta({ description: "Hex." }),
    block_number: z.number().int(),
    transaction_hash: z.string(),
    transaction_index: z.number().int(),
    log_index: z.number().int(),
    block_hash: z.string(),
    block_timestamp: z.number().int().meta({ description: "Unix seconds." }),
    removed: z.boolean().meta({ description: "true when a reorg dropped the block of a log delivered before (isInstant: true)." }),
    type: z.literal("log"),
  })
  .meta({ id: "LogMessage" });

const hexString = z.string().meta({ description: "Hex." });
const hexQuantity = z.string().meta({ description: "Hex quantity." });
const blockMessage = z
  .object({
    ...Object.fromEntries(
      ["parent_hash", "sha3_uncles", "miner", "state_root", "transactions_root", "receipts_root", "logs_bloom", "mix_hash", "nonce", "hash", "extra_data", "withdrawals_root", "parent_beacon_block_root"].map((k) => [k, hexString]),
    ),
    ...Object.fromEntries(["difficulty", "total_difficulty", "gas_limit", "gas_used", "size", "base_fee_per_gas", "blob_gas_used", "excess_blob_gas"].map((k) => [k, hexQuantity])),
    ...Object.fromEntries(["block_number", "block_timestamp", "transaction_count", "log_count", "withdrawal_count"].map((k) => [k, z.number().int()])),
    transactions: z.array(z.string()).meta({ description: "Transaction hashes." }),
  })
  .meta({ id: "BlockMessage" });

const recordSchema = z
  .object({
    subscriptionId: z.string().meta({ example: "wh_1BWnoEHXmBN7Rt2AyTzkiV" }),
    sequenceNumber: z.string().meta({ description: "Of the last message (0: none yet); in a delivery, of that message. Grows by one per message, never skips.", example: "0" }),
    description: z.string(),
    protocol: z.string().meta({ description: "Upper case for EVM networks (ETHEREUM), lower case for Aptos (aptos).", example: "ETHEREUM" }),
    network: z.string().meta({ example: "MAINNET" }),
    subscriptionType: z.literal("WEBHOOK"),
    notification: z.object({ webhookUrl: z.string() }),
    eventType: z.enum(["TRANSACTION", "LOG", "BLOCK_PERIOD"]),
    event: z
      .union([
        z.object({ targetAddress: z.string(), topics: z.array(z.string().nullable()), messages: z.array(logMessage) }),
        z.object({ period: z.number().int(), message: blockMessage.nullable() }),
        z.object({
          eventType: z.string().nullable(),
          eventAccountAddress: z.string().nullable(),
          payloadFunction: z.string().nullable(),
          eventData: z.record(z.string(), z.unknown()).nullable(),
          messages: z.array(z.record(z.string(), z.unknown())).meta({ description: "Aptos user transactions, as the Aptos REST API writes them." }),
        }),
      ])
      .meta({ description: "The condition echoed, plus the delivered content (empty in API answers)." }),
    isInstant: z.boolean(),
    isActive: z.boolean(),
    signingKey: z.string().meta({ description: "whsec_ + base64 of 32 random bytes: verifies the webhook-signature header (Standard Webhooks). Never changes." }),
    deactivatedReason: z.string().nullable().meta({ description: "Why the service turned the subscription off (the receiver answered 410, or failed for 5 days)." }),
    createdAt: z.string().meta({ description: "ISO 8601 UTC with milliseconds.", example: "2026-11-24T09:42:02.123Z" }),
    updatedAt: z.string().meta({ example: "2026-11-24T09:42:02.123Z" }),
  })
  .meta({ id: "WebhookSubscription" });

const page = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ total: z.number().int(), page: z.number().int(), rpp: z.number().int(), items: z.array(item) }).meta({ id });

const historyItem = z
  .object({
    attemptId: z.string(),
    subscriptionId: z.string(),
    messageId: z.string().meta({ description: "The webhook-id header: the same on every attempt of a message." }),
    sequenceNumber: z.string(),
    attempt: z.number().int().meta({ description: "1 for the first attempt of the message; 0 for a message of the chain written as failed, never sent, because the webhook already had the plan's most messages waiting (error says so: replay its block)." }),
    status: z.enum(["SUCCESS", "FAIL"]),
    attemptedAt: z.string(),
    httpStatus: z.number().int().nullable().meta({ description: "null when no answer came (timeout, connection refused)." }),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    replayed: z.boolean(),
    test: z.boolean(),
    requestHeaders: z.unknown(),
    responseBody: z.string().nullable().meta({ description: "The first bytes of the receiver's answer." }),
    eventMessage: z.unknown().optional().meta({ description: "The delivered body (withEventMessage=true)." }),
  })
  .meta({ id: "DeliveryAttempt" });

const result = z.object({ result: z.literal(true) });
const queued = z.object({ result: z.literal(true), messageId: z.string() });
const blockRange = z.object({ fromBlock: z.string(), toBlock: z.string() });

const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const failures = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      json(
        errorSchema,
        {
          400: "MISSING_REQUIRED_PARAMETER, INVALID_PARAMETER or WRONG_RANGE_PARAMETER, naming the field",
          401: "NO_AUTHENTICATION_FOUND or AUTHENTICATION_FAILED",
          404: "NOT_SUPPORTED_CHAIN (unknown network) or RESOURCE_NOT_FOUND (no such subscription in this project and network)",
          409: "REJECTED: the plan's webhook subscriptions are all in use",
          413: "CONTENTS_TOO_LARGE",
          429: "TOO_MANY_REQUESTS (Retry-After) or EXCEEDED_QUOTA_LIMIT",
          503: "UNAVAILABLE: the delivery engine is not running",
        }[s] ?? "Error",
      ),
    ]),
  );

const pathParams = z.object({
  protocol: z.enum([...new Set(webhookNetworks.map((n) => n.protocol))] as [string, ...string[]]).meta({ description: "Lower case.", example: "ethereum" }),
  network: z.enum([...new Set(webhookNetworks.map((n) => n.network))] as [string, ...string[]]).meta({ description: "Lower case.", example: "mainnet" }),
});
const subscriptionParam = { subscriptionId: z.string().meta({ example: "wh_1BWnoEHXmBN7Rt2AyTzkiV" }) };
const messageParam = { messageId: z.string().meta({ example: "msg_1BWnoEHXmBN7Rt2AyTzkiV" }) };

type Request = RouteConfig["request"];
const body = (schema: z.ZodType): NonNullable<Request>["body"] => ({ required: true, content: { "application/json": { schema } } });

const perPlan = (value: (p: PlanLimits) => string) =>
  Object.values(PLANS)
    .map((p) => `${p.label} ${value(p)}`)
    .join(", ");

/** The description of the routes that queue messages (the catalog's `queues`). */
const QUEUED_NOTE = `Plus ${WEBHOOK_DELIVERY_CU} CU per message queued, charged as it is queued (its delivery costs nothing more); 429 EXCEEDED_QUOTA_LIMIT when the allowance cannot pay them. 429 TOO_MANY_REQUESTS, nothing queued, when the webhook or its project would hold more messages waiting for delivery than the plan allows (per webhook / per project: ${perPlan((p) => `${p.maxPendingPerWebhook.toLocaleString("en-US")} / ${p.maxPendingPerProject.toLocaleString("en-US")}`)}); room frees as messages are delivered or fail.`;
const REPLAY_NOTE = `400 WRONG_RANGE_PARAMETER over the plan's blocks per replay (${perPlan((p) => p.maxReplayBlocks.toLocaleString("en-US"))}).`;

/** What each route takes and answers, beside the catalog's method, path and CU. */
const ROUTE_DOCS: Record<WebhookRouteId, { params?: z.ZodRawShape; request: Request; responses: RouteConfig["responses"] }> = {
  create: { request: { body: body(createWebhookSchema()) }, responses: { 201: json(recordSchema, "The subscription, with its signing key."), ...failures([400, 401, 404, 409, 413, 429]) } },
  list: { request: { query: listWebhooksQuerySchema }, responses: { 200: json(page(recordSchema, "WebhookSubscriptionPage"), "Newest first."), ...failures([400, 401, 404, 429]) } },
  get: { params: subscriptionParam, request: {}, responses: { 200: json(recordSchema, "The subscription."), ...failures([401, 404, 429]) } },
  update: {
    params: subscriptionParam, request: { body: body(updateWebhookSchema()) },
    responses: { 200: json(result, "Changed. A new condition matches from the next block; the signing key never changes."), ...failures([400, 401, 404, 413, 429]) },
  },
  delete: { params: subscriptionParam, request: {}, responses: { 200: json(result, "Deleted, with its messages and history."), ...failures([401, 404, 429]) } },
  history: {
    request: { query: historyQuerySchema },
    responses: { 200: json(page(historyItem, "DeliveryAttemptPage"), `Attempts of the last ${HISTORY_RETENTION_DAYS} days, newest first.`), ...failures([400, 401, 404, 429]) },
  },
  test: { params: subscriptionParam, request: {}, responses: { 200: json(queued, "A sample message is queued for delivery now."), ...failures([401, 404, 429, 503]) } },
  resend: { params: { ...subscriptionParam, ...messageParam }, request: {}, responses: { 200: json(queued, "The message is queued again."), ...failures([401, 404, 429, 503]) } },
  replay: {
    params: subscriptionParam, request: { body: body(replaySchema) },
    responses: { 200: json(blockRange.extend({ messages: z.number().int() }), "Matches queued for delivery, marked replayed: true."), ...failures([400, 401, 404, 429, 503]) },
  },
  preview: {
    request: { body: body(createWebhookSchema()) },
    responses: { 200: json(blockRange.extend({ messages: z.array(z.unknown()) }), "What the condition matched in the last 100 blocks."), ...failures([400, 401, 404, 429, 503]) },
  },
};

function buildDocument(publicUrl: string) {
  const registry = new OpenAPIRegistry();
  const apiKey = registry.registerComponent("securitySchemes", "ApiKey", { type: "apiKey", in: "header", name: "X-API-KEY" });
  for (const [id, route] of Object.entries(WEBHOOK_ROUTES) as [WebhookRouteId, (typeof WEBHOOK_ROUTES)[WebhookRouteId]][]) {
    const doc = ROUTE_DOCS[id];
    registry.registerPath({
      operationId: `webhooks_${id}`,
      method: route.method.toLowerCase() as RouteConfig["method"],
      path: `/v1/{protocol}/{network}${route.path}`,
      summary: route.summary,
      description: route.queues ? `${route.cu} CU. ${QUEUED_NOTE}${id === "replay" ? ` ${REPLAY_NOTE}` : ""}` : `${route.cu} CU.`,
      tags: ["Webhooks"],
      security: [{ [apiKey.name]: [] }],
      request: { ...doc.request, params: pathParams.extend(doc.params ?? {}) },
      responses: doc.responses,
    });
  }
  registry.registerPath({
    operationId: "inbox_receive",
    method: "post",
    path: "/v1/inbox/{token}",
    summary: "A test receiver: records method, headers, body and whether the Standard Webhooks signature verifies",
    description: `No API key: the token in the URL (from the console) is the secret. Any body up to ${INBOX_BODY_LIMIT / 1024} kB; 20 requests per second per inbox; an inbox keeps its last 100 requests for 24 hours.`,
    tags: ["Test inbox"],
    request: { params: z.object({ token: z.string() }), body: { content: { "*/*": { schema: z.string() } } } },
    responses: { 200: json(z.object({ result: z.literal(true), id: z.string() }), "Recorded."), ...failures([404, 413, 429]) },
  });
  registry.registerPath({
    operationId: "openapi",
    method: "get",
    path: "/v1/openapi.json",
    summary: "This document",
    tags: ["Meta"],
    responses: { 200: { description: "OpenAPI 3.1.", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } } },
  });
  registry.registerWebhook({
    method: "post",
    path: "delivery",
    summary: "A message, POSTed to notification.webhookUrl",
    description: `The subscription record with event.messages (LOG, TRANSACTION) or event.message (BLOCK_PERIOD) filled in, signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature) with the subscription's signingKey. ${WEBHOOK_DELIVERY_CU} CU per message of the chain delivered, once whatever the attempts (a test, resend or replay paid as it was queued).`,
    request: { body: body(recordSchema) },
    responses: { 200: { description: "Any 2xx answer is success." } },
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Blockgate webhook API",
      version: "1",
      description: "Chain events pushed to your URL: LOG (EVM contract logs), BLOCK_PERIOD (every n blocks) and TRANSACTION (Aptos). Errors answer { code, message }.",
    },
    servers: [{ url: publicUrl }],
  });
}

let cached: { publicUrl: string; json: string } | undefined;

/** The document as JSON text (built on first use). */
export function openApiJson(): string {
  const { PUBLIC_URL } = getEnv();
  if (cached?.publicUrl !== PUBLIC_URL) cached = { publicUrl: PUBLIC_URL, json: JSON.stringify(buildDocument(PUBLIC_URL)) };
  return cached.json;
}
