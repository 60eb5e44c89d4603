/**
 * Test inboxes: receivers built into the service, so a webhook works end to end before its owner
 * has a server. `POST /v1/inbox/<token>` (no API key: the token is the secret) records the request's
 * method, headers and body (its bytes, whatever they are), and whether its Standard Webhooks
 * signature verifies with the signing key of the subscription that sent it. Bounded: 10 inboxes per
 * project, each lasting 24 hours and keeping its last 100 requests of at most 256 kB, at most 20
 * requests per second each.
 */
import { isUtf8 } from "node:buffer";
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { sha256Hex } from "@/lib/crypto";
import { db } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { SharedBuckets } from "@/lib/limits/shared";
import { retryAfterSeconds, type BucketLimit } from "@/lib/rate-limit";
import { sharedLimits } from "@/lib/services";
import { MESSAGE_ID } from "./schema";
import { decryptSigningKey } from "./signing-key";
import { verifyStandardSignature } from "./signing";

export const INBOX_TTL_MS = 24 * 3600_000;
export const INBOXES_PER_PROJECT = 10;
export const INBOX_KEPT_REQUESTS = 100;
export const INBOX_BODY_LIMIT = 256 * 1024;
/** Per inbox: 20 at once, then 20 per second. */
export const INBOX_RATE: BucketLimit = { burst: 20, refillMs: 50 };

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
// Held with the other web processes through the shared limits.
const buckets = sharedLimits("inbox-rate", (shared) => new SharedBuckets("inbox", INBOX_RATE, shared));

export interface InboxSummary {
  id: string;
  /** The first characters of the token, to tell inboxes apart (the URL is shown once). */
  tokenStart: string;
  createdAt: string;
  expiresAt: string;
  requests: number;
}

export const inboxUrl = (token: string) => `${getEnv().PUBLIC_URL}/v1/inbox/${token}`;

/** A new inbox; its URL (holding the token) is answered only here. */
export async function createInbox(projectId: string, now = new Date()): Promise<InboxSummary & { url: string }> {
  const token = randomBytes(24).toString("base64url");
  const inbox = await db().$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`;
    await tx.webhookInbox.deleteMany({ where: { projectId, expiresAt: { lte: now } } });
    if ((await tx.webhookInbox.count({ where: { projectId } })) >= INBOXES_PER_PROJECT) {
      throw new AppError("REJECTED", `A project keeps at most ${INBOXES_PER_PROJECT} test inboxes at a time. Delete one, or wait: each lasts 24 hours.`);
    }
    return tx.webhookInbox.create({
      data: { id: newId("inb"), projectId, tokenHash: sha256Hex(token), tokenStart: token.slice(0, 6), createdAt: now, expiresAt: new Date(now.getTime() + INBOX_TTL_MS) },
    });
  });
  return { id: inbox.id, tokenStart: inbox.tokenStart, createdAt: inbox.createdAt.toISOString(), expiresAt: inbox.expiresAt.toISOString(), requests: 0, url: inboxUrl(token) };
}

export async function listInboxes(projectId: string, now = new Date()): Promise<InboxSummary[]> {
  const inboxes = await db().webhookInbox.findMany({
    where: { projectId, expiresAt: { gt: now } },
    orderBy: { createdAt: "desc" },
    include: { _count: { select: { requests: true } } },
  });
  return inboxes.map((i) => ({ id: i.id, tokenStart: i.tokenStart, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString(), requests: i._count.requests }));
}

export async function deleteInbox(projectId: string, inboxId: string): Promise<void> {
  const { count } = await db().webhookInbox.deleteMany({ where: { id: inboxId, projectId } });
  if (count === 0) throw new AppError("RESOURCE_NOT_FOUND", "No such test inbox in this project.");
}

export interface InboxRequest {
  id: string;
  receivedAt: string;
  method: string;
  headers: Record<string, string>;
  /** The body as received: its text when its bytes are UTF-8 (NUL included), else its bytes in base64. */
  body: string;
  bodyEncoding: "utf8" | "base64";
  /** null: not a message of this project's subscriptions (no or unknown webhook-id). */
  signatureValid: boolean | null;
}

/** What an inbox received, newest first (its last 100 requests). */
export async function listInboxRequests(projectId: string, inboxId: string): Promise<{ items: InboxRequest[] }> {
  const inbox = await db().webhookInbox.findFirst({ where: { id: inboxId, projectId }, select: { id: true } });
  if (!inbox) throw new AppError("RESOURCE_NOT_FOUND", "No such test inbox in this project.");
  const rows = await db().webhookInboxRequest.findMany({ where: { inboxId }, orderBy: [{ receivedAt: "desc" }, { id: "desc" }], take: INBOX_KEPT_REQUESTS });
  return {
    items: rows.map((r) => ({
      id: r.id,
      receivedAt: r.receivedAt.toISOString(),
      method: r.method,
      headers: r.headers as Record<string, string>,
      ...bodyOf(Buffer.from(r.body)),
      signatureValid: r.signatureValid,
    })),
  };
}

/** A body as answered: its text when it is UTF-8, else its bytes in base64. */
function bodyOf(bytes: Buffer): Pick<InboxRequest, "body" | "bodyEncoding"> {
  return isUtf8(bytes) ? { body: bytes.toString("utf8"), bodyEncoding: "utf8" } : { body: bytes.toString("base64"), bodyEncoding: "base64" };
}

/** Headers as recorded: one string per name; cookies (a browser's, never a webhook's) are left out. */
function recordedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name === "cookie") continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * Whether the request carries a valid Standard Webhooks signature by the subscription of the
 * project that owns the message named in webhook-id (timestamp within 5 minutes, as receivers
 * check it); null when webhook-id names no message of the project.
 */
async function signatureValid(projectId: string, headers: Record<string, string>, body: Buffer): Promise<boolean | null> {
  const messageId = headers["webhook-id"];
  if (messageId === undefined || !MESSAGE_ID.test(messageId)) return null;
  const message = await db().webhookMessage.findFirst({ where: { id: messageId, projectId }, select: { subscription: { select: { signingKey: true } } } });
  if (!message) return null;
  return verifyStandardSignature(decryptSigningKey(message.subscription.signingKey), headers, body);
}

const unknownInbox = () => new AppError("RESOURCE_NOT_FOUND", "No such test inbox: it may have expired (inboxes last 24 hours).");

/** Records one request to `/v1/inbox/<token>`; answers its id. */
export async function recordInboxRequest(token: string, request: { method: string; headers: IncomingHttpHeaders; body: Buffer }, now = new Date()): Promise<{ id: string }> {
  if (!TOKEN.test(token)) throw unknownInbox();
  const tokenHash = sha256Hex(token);
  // Limited before the lookup, so that a flood costs no database work.
  const wait = await buckets().consume(tokenHash);
  if (wait > 0) {
    const seconds = retryAfterSeconds(wait);
    throw new AppError("TOO_MANY_REQUESTS", `This test inbox accepts ${1000 / INBOX_RATE.refillMs} requests per second. Retry after ${seconds} s.`, { "Retry-After": String(seconds) });
  }
  const inbox = await db().webhookInbox.findUnique({ where: { tokenHash }, select: { id: true, projectId: true, expiresAt: true } });
  if (!inbox || inbox.expiresAt <= now) throw unknownInbox();
  const headers = recordedHeaders(request.headers);
  const valid = await signatureValid(inbox.projectId, headers, request.body);
  const id = newId("req");
  await db().$transaction([
    db().webhookInboxRequest.create({
      data: { id, inboxId: inbox.id, receivedAt: now, method: request.method, headers, body: new Uint8Array(request.body), signatureValid: valid },
    }),
    db().$executeRaw`DELETE FROM webhook_inbox_requests WHERE inbox_id = ${inbox.id} AND id NOT IN (
      SELECT id FROM webhook_inbox_requests WHERE inbox_id = ${inbox.id} ORDER BY received_at DESC, id DESC LIMIT ${INBOX_KEPT_REQUESTS})`,
  ]);
  return { id };
}

/** Deletes expired inboxes with what they received; for a periodic worker. */
export async function sweepExpiredInboxes(now = new Date()): Promise<number> {
  const { count } = await db().webhookInbox.deleteMany({ where: { expiresAt: { lte: now } } });
  return count;
}
