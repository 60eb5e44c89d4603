/**
 * How webhook messages are signed, and how a signature is checked: the one module the delivery
 * workers (signing), the test inboxes (checking) and the docs follow.
 *
 * Standard Webhooks (https://www.standardwebhooks.com, the scheme the npm `standardwebhooks` and
 * `svix` libraries verify):
 * - the key is the bytes the subscription's signing key encodes: `whsec_<base64>` → base64-decode
 *   the part after `whsec_` (32 bytes for the keys Blockgate generates);
 * - `webhook-signature: v1,<base64 of HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>`,
 *   a space-separated list when there is more than one (key rotation);
 * - `webhook-timestamp` is unix seconds; receivers refuse one more than 5 minutes away from their clock.
 *
 * `x-signature`, for receivers written for services that sign the body alone: the lower-case hex of
 * HMAC-SHA256 over the raw body bytes, keyed with the same decoded key bytes (not the `whsec_…`
 * text). It carries no timestamp, so it does not protect against replays; prefer webhook-signature.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { SIGNING_KEY_PREFIX } from "./signing-key";

/** Receivers refuse a webhook-timestamp further than this from their clock (the specification's 5 minutes). */
export const SIGNATURE_TOLERANCE_S = 5 * 60;

/** The HMAC key a `whsec_…` signing key stands for: base64-decoded, the prefix removed. */
export function signingKeyBytes(signingKey: string): Buffer {
  const encoded = signingKey.startsWith(SIGNING_KEY_PREFIX) ? signingKey.slice(SIGNING_KEY_PREFIX.length) : signingKey;
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.length === 0) throw new Error("the signing key is empty");
  return bytes;
}

const asBuffer = (body: string | Buffer) => (typeof body === "string" ? Buffer.from(body, "utf8") : body);

/** `v1,<base64>`: the webhook-signature value of one message attempt. */
export function standardSignature(key: Buffer, messageId: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac("sha256", key).update(`${messageId}.${timestamp}.`).update(asBuffer(body)).digest("base64");
  return `v1,${mac}`;
}

/** The x-signature value: hex HMAC-SHA256 of the raw body. */
export function bodySignature(key: Buffer, body: string | Buffer): string {
  return createHmac("sha256", key).update(asBuffer(body)).digest("hex");
}

/** The signature headers of one attempt (timestamp: now, in unix seconds). */
export function signatureHeaders(signingKey: string, messageId: string, body: string | Buffer, now = new Date()): Record<string, string> {
  const key = signingKeyBytes(signingKey);
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": standardSignature(key, messageId, timestamp, body),
    "x-signature": bodySignature(key, body),
  };
}

function equalStrings(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether a request carries a valid Standard Webhooks signature: webhook-id, webhook-timestamp
 * within SIGNATURE_TOLERANCE_S of `now`, and at least one `v1,` entry of webhook-signature that
 * matches (compared in constant time). Headers by lower-case name.
 */
export function verifyStandardSignature(signingKey: string, headers: Record<string, string | undefined>, body: string | Buffer, now = new Date()): boolean {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  const seconds = Number(timestamp);
  if (Math.abs(now.getTime() / 1000 - seconds) > SIGNATURE_TOLERANCE_S) return false;
  const expected = standardSignature(signingKeyBytes(signingKey), id, seconds, body);
  let valid = false;
  // Every entry is compared, so the time taken does not say which one matched.
  for (const entry of signatures.split(" ")) if (equalStrings(entry, expected)) valid = true;
  return valid;
}
