/**
 * The webhook API's input, as zod schemas shared by the public API (lib/webhooks/service.ts), the
 * console's forms and the OpenAPI document (lib/webhooks/openapi.ts). Messages are written to
 * follow the field's path (`condition.topics[1] must be …`), which lib/validation.ts puts in front.
 * No server-only imports: the console's form runs this file in the browser.
 */
import { isAddress } from "viem";
import { z } from "zod";
import { clientFamily } from "@/lib/chains/client";
import { NETWORK_DEFINITIONS, type EventType, type NetworkDefinition } from "@/lib/network-definitions";
import { PLANS } from "@/lib/plans";
import { parseTime, TIME_FORMS } from "@/lib/time";
import { normalizeMoveAddress, normalizeMoveFunction, normalizeMoveStructType } from "./move-names";

export const EVENT_TYPES = ["TRANSACTION", "LOG", "BLOCK_PERIOD"] as const satisfies readonly EventType[];
export const DESCRIPTION_MAX = 255;
export const WEBHOOK_URL_MAX = 2048;
export const PERIOD_MAX = 1_000_000;
export const TOPICS_MAX = 4;
export const EVENT_DATA_MAX_DEPTH = 3;
/** eventData as JSON text, in bytes: a filter, not a document. */
export const EVENT_DATA_MAX_BYTES = 4096;
export const RPP_DEFAULT = 10;
export const RPP_MAX = 100;
/** The most any plan replays per call: the schema's bound; the project's plan's is checked with the plan (lib/webhooks/actions.ts). */
export const REPLAY_MAX_BLOCKS = Math.max(...Object.values(PLANS).map((p) => p.maxReplayBlocks));

const ID_BODY = "[1-9A-HJ-NP-Za-km-z]{22}";
export const SUBSCRIPTION_ID = new RegExp(`^wh_${ID_BODY}$`);
export const MESSAGE_ID = new RegExp(`^msg_${ID_BODY}$`);

/** The message for a field that is absent, else `problem`. */
const orMissing =
  (problem: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? "is required" : problem;

// ---------------------------------------------------------------------------------------------
// Fields common to every kind

const description = z
  .string({ error: orMissing("must be a string") })
  .trim()
  .min(1, "must not be empty")
  .max(DESCRIPTION_MAX, `must be at most ${DESCRIPTION_MAX} characters`)
  .meta({ description: `A label for the subscription, 1 to ${DESCRIPTION_MAX} characters.`, example: "USDC transfers to our treasury" });

/** The format of a webhook URL; where it may point is checked on the server (lib/webhooks/url-guard.ts). */
export function isHttpUrl(value: string): boolean {
  if (value.trim() !== value || /\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const webhookUrl = z
  .string({ error: orMissing("must be a string") })
  .max(WEBHOOK_URL_MAX, `must be at most ${WEBHOOK_URL_MAX} characters`)
  .refine(isHttpUrl, "must be an absolute http:// or https:// URL, such as https://example.com/hooks")
  .meta({ description: `The URL that receives the events: absolute http(s), at most ${WEBHOOK_URL_MAX} characters.`, example: "https://example.com/hooks/blockgate" });

const notification = z
  .strictObject({ webhookUrl }, { error: orMissing('must be an object: { "webhookUrl": "https://…" }') })
  .meta({ description: "Where to deliver." });

const isInstant = z
  .boolean({ error: "must be true or false" })
  .default(false)
  .meta({ description: "true: deliver as soon as a block is seen (a reorg may later send LOG messages again with removed: true); false (default): deliver once the block is final." });

// ---------------------------------------------------------------------------------------------
// Conditions

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOPIC = /^0x[0-9a-fA-F]{64}$/;

/** A mixed-case address must carry a valid EIP-55 checksum; all-lower or all-upper carries none. */
function checksumHolds(address: string): boolean {
  const hex = address.slice(2);
  return hex === hex.toLowerCase() || hex === hex.toUpperCase() || isAddress(address, { strict: true });
}

const topic = z
  .string({ error: "must be a topic: 0x followed by 64 hex digits, or null to match any value" })
  .regex(TOPIC, "must be a topic: 0x followed by 64 hex digits (32 bytes; an address is left-padded with zeros), or null to match any value")
  .transform((t) => t.toLowerCase())
  .nullable();

export const logConditionSchema = z
  .strictObject(
    {
      address: z
        .string({ error: orMissing("must be a contract address: 0x followed by 40 hex digits") })
        .regex(ADDRESS, "must be a contract address: 0x followed by 40 hex digits (20 bytes)")
        .refine(checksumHolds, "mixes upper and lower case but is not a valid EIP-55 checksum address: check it for a typo, or write it in lower case")
        .transform((a) => a.toLowerCase())
        .meta({ description: "The contract that emits the logs.", example: "0x5fbdb2315678afecb367f032d93f642f64180aa3" }),
      topics: z
        .array(topic, { error: orMissing(`must be an array of 1 to ${TOPICS_MAX} topics`) })
        .min(1, "must hold at least one topic: topics[0], the Keccak-256 hash of the event signature")
        .max(TOPICS_MAX, `must hold at most ${TOPICS_MAX} topics`)
        .superRefine((topics, ctx) => {
          if (topics[0] === null) ctx.addIssue({ code: "custom", path: [0], message: "must be the Keccak-256 hash of the event signature; only topics[1] to topics[3] may be null" });
        })
        .meta({
          description:
            "topics[0]: Keccak-256 of the event signature in canonical form (Transfer(address,address,uint256)); topics[1..3]: values of the indexed parameters, 32 bytes each (null: any value).",
          example: ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", null, "0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266"],
        }),
    },
    { error: orMissing("must be an object") },
  )
  .meta({ id: "LogCondition", description: "LOG: logs of one contract whose topics match." });

export const blockPeriodConditionSchema = z
  .strictObject(
    {
      period: z
        .number({ error: orMissing(`must be a whole number of blocks from 1 to ${PERIOD_MAX.toLocaleString("en-US")}`) })
        .int(`must be a whole number of blocks from 1 to ${PERIOD_MAX.toLocaleString("en-US")}`)
        .min(1, `must be a whole number of blocks from 1 to ${PERIOD_MAX.toLocaleString("en-US")}`)
        .max(PERIOD_MAX, `must be a whole number of blocks from 1 to ${PERIOD_MAX.toLocaleString("en-US")}`)
        .meta({ description: "Blocks between messages: 1 sends every block.", example: 10 }),
    },
    { error: orMissing("must be an object") },
  )
  .meta({ id: "BlockPeriodCondition", description: "BLOCK_PERIOD: one message on the first block after creation, then every `period` blocks." });

/** How deep a JSON value nests: a scalar is 0, `{ "a": 1 }` is 1. */
function depth(value: unknown, limit: number): number {
  if (value === null || typeof value !== "object") return 0;
  if (limit <= 0) return 1;
  let deepest = 0;
  for (const v of Object.values(value)) deepest = Math.max(deepest, depth(v, limit - 1));
  return 1 + deepest;
}

const moveText = (max: number, normalize: (s: string) => string | null, problem: string) =>
  z
    .string({ error: `must be a string: ${problem}` })
    .max(max, `must be at most ${max} characters`)
    .refine((s) => normalize(s) !== null, problem)
    .transform((s) => normalize(s)!);

const eventData = z
  .record(z.string(), z.unknown(), { error: "must be a JSON object of event fields to match" })
  .superRefine((data, ctx) => {
    if (Object.keys(data).length === 0) ctx.addIssue({ code: "custom", message: "must name at least one field (leave it out to deliver every event)" });
    else if (depth(data, EVENT_DATA_MAX_DEPTH + 1) > EVENT_DATA_MAX_DEPTH) ctx.addIssue({ code: "custom", message: `may nest at most ${EVENT_DATA_MAX_DEPTH} levels deep` });
    else if (new TextEncoder().encode(JSON.stringify(data)).length > EVENT_DATA_MAX_BYTES) ctx.addIssue({ code: "custom", message: `must be at most ${EVENT_DATA_MAX_BYTES} bytes as JSON` });
  })
  .meta({ description: `Only events whose data (a JSON object) has these keys with exactly these values; up to ${EVENT_DATA_MAX_DEPTH} levels deep.`, example: { amount: "100000000" } });

const isSet = (v: unknown) => v !== undefined && v !== null;

export const transactionConditionSchema = z
  .strictObject(
    {
      payloadFunction: moveText(512, normalizeMoveFunction, "must name an entry function as address::module::function, such as 0x1::aptos_account::transfer")
        .nullable()
        .optional()
        .meta({ description: "Entry function to match: address::module::function.", example: "0x1::aptos_account::transfer" }),
      eventType: moveText(1024, normalizeMoveStructType, "must name an event struct as address::module::Struct, with optional type arguments, such as 0x1::coin::CoinDeposit")
        .nullable()
        .optional()
        .meta({ description: "Event struct to match: address::module::Struct, with optional type arguments.", example: "0x1::fungible_asset::Deposit" }),
      eventAccountAddress: moveText(66, normalizeMoveAddress, "must be an account address: 0x followed by 1 to 64 hex digits (0x0 for module events)")
        .nullable()
        .optional()
        .meta({ description: "The account that emits the events; 0x0 for module events.", example: "0x0" }),
      eventData: eventData.nullable().optional(),
    },
    { error: orMissing("must be an object") },
  )
  .superRefine((c, ctx) => {
    const fn = isSet(c.payloadFunction);
    const type = isSet(c.eventType);
    const account = isSet(c.eventAccountAddress);
    if (!fn && !type && !account) {
      ctx.addIssue({ code: "custom", path: ["payloadFunction"], message: "is required unless eventType and eventAccountAddress are both set" });
    } else if (type !== account) {
      const [missing, present] = type ? ["eventAccountAddress", "eventType"] : ["eventType", "eventAccountAddress"];
      ctx.addIssue({ code: "custom", path: [missing], message: `is required when ${present} is set: an event is named by its type and the account that emits it` });
    } else if (isSet(c.eventData) && !type) {
      ctx.addIssue({ code: "custom", path: ["eventType"], message: "is required when eventData is set: eventData filters the data of that event" });
    }
  })
  .transform((c) => ({
    payloadFunction: c.payloadFunction ?? null,
    eventType: c.eventType ?? null,
    eventAccountAddress: c.eventAccountAddress ?? null,
    eventData: c.eventData ?? null,
  }))
  .meta({
    id: "TransactionCondition",
    description:
      "TRANSACTION (Aptos): by entry function, by event (eventType with eventAccountAddress), or both. Without payloadFunction both event fields are required; with it, both or neither.",
  });

// ---------------------------------------------------------------------------------------------
// Bodies

const common = { description, notification, isInstant };

export const createLogWebhookSchema = z
  .strictObject({ eventType: z.literal("LOG"), ...common, condition: logConditionSchema })
  .meta({ id: "CreateLogWebhook", description: "Create a LOG webhook (EVM networks)." });
export const createBlockPeriodWebhookSchema = z
  .strictObject({ eventType: z.literal("BLOCK_PERIOD"), ...common, condition: blockPeriodConditionSchema })
  .meta({ id: "CreateBlockPeriodWebhook", description: "Create a BLOCK_PERIOD webhook (every network)." });
export const createTransactionWebhookSchema = z
  .strictObject({ eventType: z.literal("TRANSACTION"), ...common, condition: transactionConditionSchema })
  .meta({ id: "CreateTransactionWebhook", description: "Create a TRANSACTION webhook (Aptos networks)." });

const CREATE_BODIES = { LOG: createLogWebhookSchema, BLOCK_PERIOD: createBlockPeriodWebhookSchema, TRANSACTION: createTransactionWebhookSchema } as const;
const CONDITIONS = { LOG: logConditionSchema, BLOCK_PERIOD: blockPeriodConditionSchema, TRANSACTION: transactionConditionSchema } as const;

/** Where the API is served for a network: `ethereum/mainnet`. */
export const networkPath = (n: Pick<NetworkDefinition, "protocol" | "network">) => `${n.protocol}/${n.network}`;

/** Where an event type is supported, in words. */
export function supportedNetworks(eventType: EventType): string {
  const list = NETWORK_DEFINITIONS.filter((n) => n.eventTypes.includes(eventType));
  const families = [...new Set(list.map((n) => clientFamily(n.family)?.label ?? n.family))];
  return `${eventType} webhooks are supported on the ${families.join(" and ")} networks: ${list.map(networkPath).join(", ")}`;
}

function eventTypeProblem(body: unknown, network: WebhookNetwork | undefined): string {
  const value = typeof body === "object" && body !== null ? (body as Record<string, unknown>).eventType : undefined;
  const known = `one of ${EVENT_TYPES.join(", ")}`;
  if (value === undefined) return `is required: ${known}`;
  if (!EVENT_TYPES.includes(value as EventType)) return `must be ${known}`;
  return `${String(value)} is not supported on ${network ? networkPath(network) : "this network"}; ${supportedNetworks(value as EventType)}`;
}

export type WebhookNetwork = Pick<NetworkDefinition, "protocol" | "network" | "eventTypes">;

/**
 * The create (and preview) body: one shape per eventType, and for a given network only the kinds
 * it supports (anything else names where that kind is supported).
 */
export function createWebhookSchema(network?: WebhookNetwork) {
  const kinds = EVENT_TYPES.filter((k) => !network || network.eventTypes.includes(k));
  const options = kinds.map((k) => CREATE_BODIES[k]) as unknown as [typeof createLogWebhookSchema, typeof createBlockPeriodWebhookSchema, typeof createTransactionWebhookSchema];
  return z.discriminatedUnion("eventType", options, {
    error: (issue) => (issue.code === "invalid_union" ? eventTypeProblem(issue.input, network) : "must be a JSON object"),
  });
}

export type CreateWebhookInput = z.input<ReturnType<typeof createWebhookSchema>>;
export type CreateWebhookBody = z.output<ReturnType<typeof createWebhookSchema>>;

/** PATCH: any of description, notification, isActive and condition (of the subscription's kind). */
export function updateWebhookSchema(eventType?: EventType) {
  const condition = eventType ? CONDITIONS[eventType] : z.union([logConditionSchema, blockPeriodConditionSchema, transactionConditionSchema]);
  return z
    .strictObject(
      {
        description: description.optional(),
        notification: notification.optional(),
        isActive: z.boolean({ error: "must be true or false" }).optional().meta({ description: "false pauses deliveries; true resumes them (and clears a deactivation by the service)." }),
        condition: condition.optional().meta({ description: "A new condition of the subscription's eventType; matching restarts from the next block." }),
      },
      { error: "must be a JSON object" },
    )
    .refine((b) => Object.values(b).some((v) => v !== undefined), "must change something: give description, notification, isActive or condition");
}

export type UpdateWebhookBody = z.output<ReturnType<typeof updateWebhookSchema>>;

// ---------------------------------------------------------------------------------------------
// Query parameters (strings, as the URL carries them)

const wholeNumber = (min: number, max: number) => {
  const problem = `must be a whole number from ${min} to ${max.toLocaleString("en-US")}`;
  return z
    .string({ error: problem })
    .regex(/^\d{1,10}$/, problem)
    .transform(Number)
    .refine((n) => n >= min && n <= max, problem);
};

const subscriptionIdParam = z
  .string({ error: "must be a subscription id (wh_…)" })
  .regex(SUBSCRIPTION_ID, "must be a subscription id (wh_ followed by 22 characters)")
  .meta({ description: "A subscription id.", example: "wh_1BWnoEHXmBN7Rt2AyTzkiV" });

const paging = {
  page: wholeNumber(1, 1_000_000).default(1).meta({ description: "Page number, from 1.", example: "1" }),
  rpp: wholeNumber(1, RPP_MAX).default(RPP_DEFAULT).meta({ description: `Results per page, 1 to ${RPP_MAX} (default ${RPP_DEFAULT}).`, example: "10" }),
};

export const listWebhooksQuerySchema = z.strictObject({ subscriptionId: subscriptionIdParam.optional(), ...paging });
export type ListWebhooksQuery = z.output<typeof listWebhooksQuerySchema>;

const TIME_PROBLEM = `must be ${TIME_FORMS}`;

const timeParam = z
  .string({ error: TIME_PROBLEM })
  .refine((s) => parseTime(s) !== null, TIME_PROBLEM)
  .transform((s) => parseTime(s)!)
  .meta({ description: "ISO 8601 time with a time zone, a date (UTC), or unix milliseconds.", example: "2026-01-02T15:04:05Z" });

export const historyQuerySchema = z
  .strictObject({
    subscriptionId: subscriptionIdParam.optional(),
    ...paging,
    status: z.enum(["SUCCESS", "FAIL"], { error: "must be SUCCESS or FAIL" }).optional().meta({ description: "Only successful (2xx) or failed attempts." }),
    startAt: timeParam.optional(),
    endAt: timeParam.optional(),
    withEventMessage: z
      .enum(["true", "false"], { error: "must be true or false" })
      .transform((v) => v === "true")
      .default(false)
      .meta({ description: "Include the delivered body of each attempt's message." }),
  })
  .superRefine((q, ctx) => {
    // Refinements run even when a field failed: compare only what parsed.
    if (q.startAt instanceof Date && q.endAt instanceof Date && q.startAt > q.endAt) {
      ctx.addIssue({ code: "custom", path: ["startAt"], message: "must not be after endAt", params: { code: "WRONG_RANGE_PARAMETER" } });
    }
  });
export type HistoryQuery = z.output<typeof historyQuerySchema>;

// ---------------------------------------------------------------------------------------------
// Replay

const BLOCK_NUMBER_PROBLEM = "must be a block number: a whole number from 0";
const blockNumber = z
  .union([z.number().int(BLOCK_NUMBER_PROBLEM).min(0, BLOCK_NUMBER_PROBLEM).max(Number.MAX_SAFE_INTEGER, BLOCK_NUMBER_PROBLEM), z.string().regex(/^\d{1,20}$/, BLOCK_NUMBER_PROBLEM)], {
    error: orMissing(BLOCK_NUMBER_PROBLEM),
  })
  .transform((v) => BigInt(v))
  .meta({ description: "A block number (a JSON number or a decimal string).", example: 1000 });

export const replaySchema = z
  .strictObject({ fromBlock: blockNumber, toBlock: blockNumber }, { error: "must be a JSON object" })
  .superRefine((r, ctx) => {
    if (typeof r.fromBlock !== "bigint" || typeof r.toBlock !== "bigint") return;
    if (r.fromBlock > r.toBlock) {
      ctx.addIssue({ code: "custom", path: ["toBlock"], message: "must not be below fromBlock", params: { code: "WRONG_RANGE_PARAMETER" } });
    } else if (r.toBlock - r.fromBlock + 1n > BigInt(REPLAY_MAX_BLOCKS)) {
      ctx.addIssue({
        code: "custom",
        path: ["toBlock"],
        message: `must be within ${REPLAY_MAX_BLOCKS.toLocaleString("en-US")} blocks of fromBlock (a replay covers at most ${REPLAY_MAX_BLOCKS.toLocaleString("en-US")} blocks)`,
        params: { code: "WRONG_RANGE_PARAMETER" },
      });
    }
  })
  .meta({
    id: "ReplayRequest",
    description: `Blocks fromBlock to toBlock (inclusive): at most the plan's blocks per replay (${Object.values(PLANS)
      .map((p) => `${p.label} ${p.maxReplayBlocks.toLocaleString("en-US")}`)
      .join(", ")}).`,
  });
export type ReplayBody = z.output<typeof replaySchema>;
