/**
 * The webhook forms (builder and edit) validate with the API's own zod schemas
 * (lib/webhooks/schema.ts): the form keeps text as typed, toCondition() turns it into the body the
 * API takes, and the shared schema judges that body, so the browser and the server give the same
 * messages for the same field.
 */
import { zodResolver } from "@hookform/resolvers/zod";
import type { FieldErrors, FieldValues, Resolver } from "react-hook-form";
import type { z } from "zod";
import { ApiError } from "@/components/api-client";
import type { EventType } from "@/lib/network-definitions";
import { createWebhookSchema, updateWebhookSchema, type CreateWebhookBody, type UpdateWebhookBody } from "@/lib/webhooks/schema";
import { WEBHOOK_NETWORKS } from "./types";

/** A condition as typed: every field a string; empty means unset. */
export interface ConditionText {
  address: string;
  topics: [string, string, string, string];
  period: string;
  payloadFunction: string;
  eventType: string;
  eventAccountAddress: string;
  /** JSON text. */
  eventData: string;
}

export interface WebhookFormValues extends FieldValues {
  eventType: EventType;
  network: string;
  description: string;
  notification: { webhookUrl: string };
  isInstant: boolean;
  isActive: boolean;
  condition: ConditionText;
}

export const EMPTY_CONDITION: ConditionText = {
  address: "",
  topics: ["", "", "", ""],
  period: "",
  payloadFunction: "",
  eventType: "",
  eventAccountAddress: "",
  eventData: "",
};

/** A condition from a record's `event` (the condition echoed), as text for the edit form. */
export function conditionText(eventType: string, event: Record<string, unknown>): ConditionText {
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const topics = Array.isArray(event.topics) ? event.topics : [];
  return {
    ...EMPTY_CONDITION,
    ...(eventType === "LOG" ? { address: text(event.targetAddress), topics: [0, 1, 2, 3].map((i) => text(topics[i])) as ConditionText["topics"] } : {}),
    ...(eventType === "BLOCK_PERIOD" ? { period: typeof event.period === "number" ? String(event.period) : "" } : {}),
    ...(eventType === "TRANSACTION"
      ? {
          payloadFunction: text(event.payloadFunction),
          eventType: text(event.eventType),
          eventAccountAddress: text(event.eventAccountAddress),
          eventData: event.eventData ? JSON.stringify(event.eventData, null, 2) : "",
        }
      : {}),
  };
}

type JsonProblem = { message: string } | null;

/** The condition the API takes, from the text; and a JSON syntax problem in eventData if any. */
export function toCondition(eventType: EventType, c: ConditionText): { condition: unknown; jsonProblem: JsonProblem } {
  const optional = (s: string) => (s.trim() === "" ? null : s.trim());
  switch (eventType) {
    case "LOG": {
      const topics = c.topics.map(optional);
      while (topics.length > 1 && topics[topics.length - 1] === null) topics.pop();
      return { condition: { address: c.address.trim(), topics }, jsonProblem: null };
    }
    case "BLOCK_PERIOD":
      return { condition: { period: c.period.trim() === "" ? undefined : Number(c.period.trim()) }, jsonProblem: null };
    case "TRANSACTION": {
      let eventData: unknown = null;
      let jsonProblem: JsonProblem = null;
      if (c.eventData.trim() !== "") {
        try {
          eventData = JSON.parse(c.eventData);
        } catch (e) {
          eventData = c.eventData;
          jsonProblem = { message: `Is not valid JSON: ${e instanceof Error ? e.message : "check the syntax"}` };
        }
      }
      return {
        condition: { payloadFunction: optional(c.payloadFunction), eventType: optional(c.eventType), eventAccountAddress: optional(c.eventAccountAddress), eventData },
        jsonProblem,
      };
    }
  }
}

/** "must be …" → "Must be …": the schema's messages follow a field name; inline they stand alone. */
function capitalized<T>(errors: T): T {
  if (Array.isArray(errors)) return errors.map(capitalized) as T;
  if (errors === null || typeof errors !== "object") return errors;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(errors)) {
    if (k === "ref") out[k] = v;
    else if (k === "message" && typeof v === "string") out[k] = v.charAt(0).toUpperCase() + v.slice(1);
    else out[k] = capitalized(v);
  }
  return out as T;
}

function withJsonProblem<T extends FieldValues>(errors: FieldErrors<T>, jsonProblem: JsonProblem): FieldErrors<T> {
  if (!jsonProblem) return errors;
  const condition = (errors.condition ?? {}) as Record<string, unknown>;
  return { ...errors, condition: { ...condition, eventData: { type: "json", message: jsonProblem.message } } } as FieldErrors<T>;
}

async function judge<Out>(schema: z.ZodType<Out>, body: unknown, jsonProblem: JsonProblem, options: Parameters<Resolver<WebhookFormValues>>[2]) {
  const resolve = zodResolver(schema as never) as unknown as Resolver<FieldValues, unknown, Out>;
  const result = await resolve(body as FieldValues, undefined, options as never);
  const errors = withJsonProblem(capitalized(result.errors), jsonProblem);
  return Object.keys(errors).length > 0 ? { values: {}, errors } : { values: result.values as Out, errors: {} };
}

/** The create body of the form's values (network apart: the console's route takes it beside). */
export function createBody(v: WebhookFormValues): { body: unknown; jsonProblem: JsonProblem } {
  const { condition, jsonProblem } = toCondition(v.eventType, v.condition);
  return { body: { eventType: v.eventType, description: v.description, notification: { webhookUrl: v.notification.webhookUrl.trim() }, isInstant: v.isInstant, condition }, jsonProblem };
}

/** The builder's resolver: the create schema of the chosen network. */
export const createResolver: Resolver<WebhookFormValues, unknown, CreateWebhookBody> = async (values, _context, options) => {
  const network = WEBHOOK_NETWORKS.find((n) => n.slug === values.network);
  if (!network) return { values: {}, errors: { network: { type: "required", message: "Choose a network" } } };
  const { body, jsonProblem } = createBody(values);
  return judge(createWebhookSchema(network), body, jsonProblem, options) as ReturnType<Resolver<WebhookFormValues, unknown, CreateWebhookBody>>;
};

/** The changes between the edit form and the record it started from; only those are sent. */
export function updateBody(v: WebhookFormValues, initial: WebhookFormValues): { body: Record<string, unknown>; jsonProblem: JsonProblem } {
  const body: Record<string, unknown> = {};
  if (v.description !== initial.description) body.description = v.description;
  if (v.notification.webhookUrl.trim() !== initial.notification.webhookUrl) body.notification = { webhookUrl: v.notification.webhookUrl.trim() };
  if (v.isActive !== initial.isActive) body.isActive = v.isActive;
  const now = toCondition(v.eventType, v.condition);
  const before = toCondition(v.eventType, initial.condition);
  if (JSON.stringify(now.condition) !== JSON.stringify(before.condition)) body.condition = now.condition;
  return { body, jsonProblem: now.jsonProblem };
}

/** The edit form's resolver: the update schema of the subscription's kind, on what changed. */
export function updateResolver(initial: WebhookFormValues): Resolver<WebhookFormValues, unknown, UpdateWebhookBody> {
  return async (values, _context, options) => {
    const { body, jsonProblem } = updateBody(values, initial);
    if (Object.keys(body).length === 0 && !jsonProblem) return { values: {}, errors: { root: { type: "unchanged", message: "Nothing changed: edit a field first." } } };
    return judge(updateWebhookSchema(values.eventType), body, jsonProblem, options) as ReturnType<Resolver<WebhookFormValues, unknown, UpdateWebhookBody>>;
  };
}

/** API messages start with the field's path ("condition.topics[1] must be …."). */
const FIELD_MESSAGE = /^(description|notification\.webhookUrl|condition\.[A-Za-z]+(?:\[\d\])?) (.+?)\.?$/s;

/** The form field a 400 answer of the API names, with its message as the form shows it; else null. */
export function serverFieldError(e: unknown): { name: string; message: string } | null {
  if (!(e instanceof ApiError) || e.status !== 400) return null;
  const m = FIELD_MESSAGE.exec(e.message);
  if (!m) return null;
  return { name: m[1]!.replace(/\[(\d)\]/, ".$1"), message: m[2]!.charAt(0).toUpperCase() + m[2]!.slice(1) };
}
