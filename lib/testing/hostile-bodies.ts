/**
 * Request bodies for the property tests of the text boundary (lib/text.ts): a valid JSON body with
 * one string, key or other value replaced by text PostgreSQL cannot store (NUL, an unpaired
 * surrogate), or by bytes that are not UTF-8; each with what the 400 that refuses it must say.
 * Shared by the public API's test (vitest) and the console's (Playwright).
 */
import fc from "fast-check";
import { fieldPath as joined } from "@/lib/validation";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Step = string | number;

export interface HostileBody {
  bytes: Uint8Array<ArrayBuffer>;
  /** What was replaced, for failure messages. */
  what: string;
  /** Whether a refusal's message is the one this body must get. */
  refusalNames(message: string): boolean;
}

/** The paths of every key and every scalar of a value. */
function slots(value: Json, path: Step[] = []): Array<{ path: Step[]; key: boolean }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => slots(v, [...path, i]));
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => [{ path: [...path, k], key: true }, ...slots(v, [...path, k])]);
  }
  return [{ path, key: false }];
}

/** `a.b[1]`, as refusals name a field. */
const fieldPath = (path: Step[]) => joined(path) || "The request body";

/** A copy of `value` with the key or the value at `path` replaced by `text`. */
function replaced(value: Json, path: Step[], key: boolean, text: string): Json {
  if (path.length === 0) return text;
  const [step, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === step ? replaced(v, rest, key, text) : v));
  const object = value as Record<string, Json>;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(object)) {
    if (k !== step) out[k] = v;
    else if (key && rest.length === 0) out[text] = v;
    else out[k] = replaced(v, rest, key, text);
  }
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const PROBLEM = String.raw`must not contain (?:the NUL character \(U\+0000\)|an unpaired surrogate \(\\ud[89a-f][0-9a-f]{2}\))\.$`;

/** Text around the bad part: plain and non-ASCII characters that JSON writes as they are. */
const around = fc.string({ unit: fc.constantFrom("a", "Z", "0", " ", "é", "€", "😀"), maxLength: 6 });
const unstorable = fc.tuple(
  around,
  fc.oneof(
    fc.constant("\u0000"),
    fc.integer({ min: 0xd800, max: 0xdbff }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0xdc00, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  ),
  around,
);
/** Byte sequences no UTF-8 decoder accepts (lone bytes, overlong forms, surrogates, past U+10FFFF, cut short). */
const notUtf8 = fc.constantFrom([0xff], [0xfe], [0x80], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]);

// Stands for the replaced text in the JSON before its bytes are put in.
const MARK = "§MARK§";

/** `body` with one key or value (chosen by the generator) replaced by hostile text or bytes. */
export function hostileBody(body: Json): fc.Arbitrary<HostileBody> {
  const places = slots(body);
  return fc.tuple(fc.constantFrom(...places), fc.oneof(unstorable.map((t) => ({ text: t.join("") })), fc.tuple(around, notUtf8, around).map(([a, bad, b]) => ({ bytes: [a, bad, b] as const })))).map(([place, bad]) => {
    const field = place.key ? place.path.slice(0, -1) : place.path;
    const what = `${place.key ? "the key of" : "the value at"} ${fieldPath(place.path)}`;
    if ("text" in bad) {
      const pattern = place.key ? new RegExp(`^${escape(fieldPath(field))}: the key ".*" ${PROBLEM}`, "s") : new RegExp(`^${escape(fieldPath(field))}: ${PROBLEM}`);
      return { bytes: new TextEncoder().encode(JSON.stringify(replaced(body, place.path, place.key, bad.text))), what: `${what} (${JSON.stringify(bad.text)})`, refusalNames: (m: string) => pattern.test(m) };
    }
    const [before, invalid, after] = bad.bytes;
    const json = Buffer.from(JSON.stringify(replaced(body, place.path, place.key, MARK)));
    const at = json.indexOf(MARK);
    const head = Buffer.concat([json.subarray(0, at), Buffer.from(before)]);
    const bytes = Buffer.concat([head, Buffer.from(invalid), Buffer.from(after), json.subarray(at + Buffer.byteLength(MARK))]);
    const message = `The request body is not valid UTF-8 (byte offset ${head.length}).`;
    return { bytes: new Uint8Array(bytes), what: `${what} (bytes ${Buffer.from(invalid).toString("hex")})`, refusalNames: (m: string) => m === message };
  });
}

/** What the console's valid bodies refer to: a signed-in user's project, key and webhook. */
export interface ConsoleIds {
  projectId: string;
  keyId: string;
  subscriptionId: string;
  /** next-auth's CSRF token of the session. */
  csrfToken: string;
}

export interface ConsoleJsonRoute {
  /** The route's folder under app/, as Next.js names it. */
  route: string;
  method: "POST" | "PUT" | "PATCH";
  url(ids: ConsoleIds): string;
  /** A body the route takes. */
  body(ids: ConsoleIds): Json;
}

const at = (template: string) => (ids: ConsoleIds) => template.replace(/\[(\w+)\]/g, (_, name: keyof ConsoleIds) => ids[name]);
const webhook = { eventType: "LOG", description: "Transfers", notification: { webhookUrl: "https://receiver.example/hooks" }, condition: { address: "0x5fbdb2315678afecb367f032d93f642f64180aa3", topics: ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", null] } };
const route = (route: string, method: ConsoleJsonRoute["method"], body: (ids: ConsoleIds) => Json, url = at(route.slice("app".length))): ConsoleJsonRoute => ({ route, method, url, body });

/** Every console route that reads a JSON body (lib/text.routes.test.ts checks the list against app/api). */
export const CONSOLE_JSON_ROUTES: readonly ConsoleJsonRoute[] = [
  route("app/api/sign-up", "POST", () => ({ email: "someone@example.com", password: "a long enough password" })),
  route("app/api/auth/[...nextauth]", "POST", (ids) => ({ csrfToken: ids.csrfToken, email: "someone@example.com", password: "a long enough password", json: "true" }), () => "/api/auth/callback/credentials"),
  route("app/api/onboarding", "POST", () => ({ name: "Ada", organization: "Analytical", useCase: "wallet" })),
  route("app/api/projects", "POST", () => ({ name: "Another project" })),
  route("app/api/projects/[projectId]", "PATCH", () => ({ name: "Renamed" })),
  route("app/api/projects/[projectId]/plan", "POST", (ids) => ({ plan: "FREE", revokeKeyIds: [ids.keyId] })),
  route("app/api/projects/[projectId]/plan/overage", "PUT", () => ({ overage: true })),
  route("app/api/projects/[projectId]/keys/[keyId]", "PATCH", () => ({ name: "Renamed key" })),
  route("app/api/projects/[projectId]/keys/[keyId]/allowlist", "PUT", () => ({ origins: ["https://app.example"], ips: ["203.0.113.0/24"] })),
  route("app/api/projects/[projectId]/webhooks", "POST", () => ({ network: "ethereum-mainnet", ...webhook })),
  route("app/api/projects/[projectId]/webhooks/preview", "POST", () => ({ network: "ethereum-mainnet", ...webhook })),
  route("app/api/projects/[projectId]/webhooks/[subscriptionId]", "PATCH", () => ({ description: "Renamed", notification: { webhookUrl: "https://receiver.example/other" }, isActive: false })),
  route("app/api/projects/[projectId]/webhooks/[subscriptionId]/replay", "POST", () => ({ fromBlock: 0, toBlock: "5" })),
];
