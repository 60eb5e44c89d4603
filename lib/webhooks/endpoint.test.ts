// The webhook subscription API end to end: the public gateway on a free port, real PostgreSQL,
// requests with fetch as a user's curl would send them.
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import { newId } from "@/lib/ids";
import { PLANS } from "@/lib/plans";
import { startHttpServer } from "@/lib/server";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { freePort } from "@/lib/testing/ports";
import { WEBHOOK_ROUTES } from "./catalog";
import { webhookMount } from "./endpoint";
import { decryptSigningKey } from "./signing-key";
import { sweepWebhookHistory } from "./service";

let gw: TestGateway;
type Project = Awaited<ReturnType<typeof createTestProject>>;
let owner: Project;
let stranger: Project;

const ETH = "/v1/ethereum/mainnet/webhooks";
const APTOS = "/v1/aptos/mainnet/webhooks";
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const PADDED = "0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Json = Record<string, unknown>;

async function call(method: string, path: string, opts: { key?: string | null; body?: unknown } = {}) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (opts.key !== null) headers["X-API-KEY"] = opts.key ?? owner.apiKey;
  const res = await fetch(gw.url + path, { method, headers, body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: (text ? JSON.parse(text) : undefined) as Json };
}

const logBody = (over: Json = {}) => ({
  eventType: "LOG",
  description: "Token transfers",
  notification: { webhookUrl: "https://receiver.example/hooks" },
  isInstant: false,
  condition: { address: TOKEN, topics: [TRANSFER, null, PADDED] },
  ...over,
});
const periodBody = (over: Json = {}) => ({ eventType: "BLOCK_PERIOD", description: "Every 10 blocks", notification: { webhookUrl: "http://127.0.0.1:9/hook" }, condition: { period: 10 }, ...over });

async function create(path: string, body: unknown, key?: string) {
  const r = await call("POST", path, { body, key });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

/** Each call answers 400 with the code and a message containing the text. */
async function expectRefusals(cases: Array<{ method: string; path: string; body?: unknown; key?: string; code: string; message: string }>) {
  for (const c of cases) {
    const what = `${c.method} ${c.path} ${JSON.stringify(c.body) ?? ""}`;
    const r = await call(c.method, c.path, { body: c.body, key: c.key });
    expect(r.status, what).toBe(400);
    expect(r.json.code, what).toBe(c.code);
    expect(r.json.message, what).toContain(c.message);
  }
}

async function usage(projectId: string) {
  await gw.meter.flush();
  return db().usageBucket.findMany({ where: { projectId }, orderBy: [{ endpoint: "asc" }, { status: "asc" }] });
}

/** A delivered message with attempts, written as the engine writes them. */
async function delivered(sub: { id: string; projectId: string }, sequence: bigint, attempts: Array<{ at: Date; success: boolean; status: number | null }>) {
  const messageId = newId("msg");
  await db().webhookMessage.create({
    data: { id: messageId, subscriptionId: sub.id, projectId: sub.projectId, sequenceNumber: sequence, payload: { sequenceNumber: String(sequence) }, status: attempts.at(-1)?.success ? "SUCCESS" : "FAIL", attempts: attempts.length, createdAt: attempts[0]?.at },
  });
  for (const [i, a] of attempts.entries()) {
    await db().webhookAttempt.create({
      data: { id: newId("att"), messageId, subscriptionId: sub.id, projectId: sub.projectId, attempt: i + 1, startedAt: a.at, durationMs: 12 + i, httpStatus: a.status, success: a.success, error: a.success ? null : "HTTP 500", responseBody: a.success ? "ok" : "boom", requestHeaders: { "webhook-id": messageId } },
    });
  }
  return messageId;
}

beforeAll(async () => {
  gw = await startTestGateway();
  owner = await createTestProject("Owner", "ENTERPRISE");
  stranger = await createTestProject("Stranger", "ENTERPRISE");
});
afterAll(async () => gw.stop());

describe("create", () => {
  it("answers 201 with the record, field by field, and stores the signing key encrypted", async () => {
    const before = Date.now();
    const rec = await create(ETH, logBody());
    expect(Object.keys(rec).sort()).toEqual(
      ["subscriptionId", "sequenceNumber", "description", "protocol", "network", "subscriptionType", "notification", "eventType", "event", "isInstant", "isActive", "signingKey", "deactivatedReason", "createdAt", "updatedAt"].sort(),
    );
    expect(rec.subscriptionId).toMatch(/^wh_[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(rec.sequenceNumber).toBe("0");
    expect(rec.description).toBe("Token transfers");
    expect(rec.protocol).toBe("ETHEREUM");
    expect(rec.network).toBe("MAINNET");
    expect(rec.subscriptionType).toBe("WEBHOOK");
    expect(rec.notification).toEqual({ webhookUrl: "https://receiver.example/hooks" });
    expect(rec.eventType).toBe("LOG");
    expect(rec.event).toEqual({ targetAddress: TOKEN.toLowerCase(), topics: [TRANSFER, null, PADDED], messages: [] });
    expect(rec.isInstant).toBe(false);
    expect(rec.isActive).toBe(true);
    expect(rec.deactivatedReason).toBeNull();
    expect(rec.createdAt).toMatch(ISO_MS);
    expect(rec.updatedAt).toMatch(ISO_MS);
    expect(Date.parse(rec.createdAt as string)).toBeGreaterThanOrEqual(before - 1000);
    const key = rec.signingKey as string;
    expect(key).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(key.slice("whsec_".length), "base64").length).toBeGreaterThanOrEqual(24);

    const row = await db().webhookSubscription.findUniqueOrThrow({ where: { id: rec.subscriptionId as string } });
    expect(row.signingKey).not.toContain(key.slice(6));
    expect(decryptSigningKey(row.signingKey)).toBe(key);
    expect(row).toMatchObject({ projectId: owner.projectId, network: "ethereum-mainnet", logAddress: TOKEN.toLowerCase(), logTopic0: TRANSFER, period: null, startBlock: null, isInstant: false });
  });

  it("spells Aptos records in lower case; BLOCK_PERIOD echoes the period with no message yet; isInstant defaults to false", async () => {
    const rec = await create(APTOS, periodBody({ isInstant: undefined }));
    expect(rec).toMatchObject({ protocol: "aptos", network: "mainnet", eventType: "BLOCK_PERIOD", event: { period: 10, message: null }, isInstant: false });
    const row = await db().webhookSubscription.findUniqueOrThrow({ where: { id: rec.subscriptionId as string } });
    expect(row.period).toBe(10);
    const instant = await create("/v1/base/sepolia/webhooks", periodBody({ isInstant: true }));
    expect(instant).toMatchObject({ protocol: "BASE", network: "SEPOLIA", isInstant: true });
  });

  it("answers TRANSACTION with payloadFunction null when unset, and names normalised", async () => {
    const rec = await create(APTOS, {
      eventType: "TRANSACTION",
      description: "Deposits",
      notification: { webhookUrl: "https://receiver.example/aptos" },
      condition: { eventType: "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>", eventAccountAddress: "0x00000000000000000000000000000000000000000000000000000000000000AB", eventData: { amount: "100" } },
    });
    expect(rec.event).toEqual({
      eventType: "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>",
      eventAccountAddress: "0x00000000000000000000000000000000000000000000000000000000000000ab",
      payloadFunction: null,
      eventData: { amount: "100" },
      messages: [],
    });
    const fn = await create(APTOS, { eventType: "TRANSACTION", description: "Transfers", notification: { webhookUrl: "https://r.example/" }, condition: { payloadFunction: "0x1::aptos_account::transfer" } });
    expect(fn.event).toMatchObject({ payloadFunction: "0x1::aptos_account::transfer", eventType: null, eventAccountAddress: null, eventData: null });
  });

  // Each bad request: what is sent, the status, the code, and text the message must contain.
  const bad: Array<[string, string, unknown, number, string, string]> = [
    ["no eventType", ETH, { ...logBody(), eventType: undefined }, 400, "MISSING_REQUIRED_PARAMETER", "eventType is required: one of TRANSACTION, LOG, BLOCK_PERIOD"],
    ["unknown eventType", ETH, logBody({ eventType: "BLOCK" }), 400, "INVALID_PARAMETER", "eventType must be one of TRANSACTION, LOG, BLOCK_PERIOD"],
    ["TRANSACTION on EVM", ETH, { ...logBody(), eventType: "TRANSACTION", condition: { payloadFunction: "0x1::a::b" } }, 400, "INVALID_PARAMETER", "eventType TRANSACTION is not supported on ethereum/mainnet; TRANSACTION webhooks are supported on the Aptos networks: aptos/mainnet, aptos/testnet"],
    ["LOG on Aptos", APTOS, logBody(), 400, "INVALID_PARAMETER", "eventType LOG is not supported on aptos/mainnet; LOG webhooks are supported on the EVM networks: ethereum/mainnet"],
    ["no description", ETH, logBody({ description: undefined }), 400, "MISSING_REQUIRED_PARAMETER", "description is required"],
    ["blank description", ETH, logBody({ description: "   " }), 400, "INVALID_PARAMETER", "description must not be empty"],
    ["long description", ETH, logBody({ description: "x".repeat(256) }), 400, "INVALID_PARAMETER", "description must be at most 255 characters"],
    ["description not a string", ETH, logBody({ description: 5 }), 400, "INVALID_PARAMETER", "description must be a string"],
    ["no notification", ETH, logBody({ notification: undefined }), 400, "MISSING_REQUIRED_PARAMETER", "notification is required"],
    ["no webhookUrl", ETH, logBody({ notification: {} }), 400, "MISSING_REQUIRED_PARAMETER", "notification.webhookUrl is required"],
    ["relative URL", ETH, logBody({ notification: { webhookUrl: "/hooks" } }), 400, "INVALID_PARAMETER", "notification.webhookUrl must be an absolute http:// or https:// URL"],
    ["ftp URL", ETH, logBody({ notification: { webhookUrl: "ftp://x.example/a" } }), 400, "INVALID_PARAMETER", "notification.webhookUrl must be an absolute http:// or https:// URL"],
    ["long URL", ETH, logBody({ notification: { webhookUrl: `https://x.example/${"a".repeat(2040)}` } }), 400, "INVALID_PARAMETER", "notification.webhookUrl must be at most 2048 characters"],
    ["isInstant not boolean", ETH, logBody({ isInstant: "false" }), 400, "INVALID_PARAMETER", "isInstant must be true or false"],
    ["no condition", ETH, logBody({ condition: undefined }), 400, "MISSING_REQUIRED_PARAMETER", "condition is required"],
    ["short address", ETH, logBody({ condition: { address: "0x1234", topics: [TRANSFER] } }), 400, "INVALID_PARAMETER", "condition.address must be a contract address: 0x followed by 40 hex digits"],
    ["bad checksum", ETH, logBody({ condition: { address: "0x5FbDB2315678afecb367f032d93F642f64180aA3", topics: [TRANSFER] } }), 400, "INVALID_PARAMETER", "condition.address mixes upper and lower case but is not a valid EIP-55 checksum"],
    ["no topics", ETH, logBody({ condition: { address: TOKEN } }), 400, "MISSING_REQUIRED_PARAMETER", "condition.topics is required"],
    ["empty topics", ETH, logBody({ condition: { address: TOKEN, topics: [] } }), 400, "INVALID_PARAMETER", "condition.topics must hold at least one topic"],
    ["five topics", ETH, logBody({ condition: { address: TOKEN, topics: [TRANSFER, null, null, null, null] } }), 400, "INVALID_PARAMETER", "condition.topics must hold at most 4 topics"],
    ["short topic", ETH, logBody({ condition: { address: TOKEN, topics: [TRANSFER, "0x1234"] } }), 400, "INVALID_PARAMETER", "condition.topics[1] must be a topic: 0x followed by 64 hex digits"],
    ["topic a number", ETH, logBody({ condition: { address: TOKEN, topics: [TRANSFER, null, 7] } }), 400, "INVALID_PARAMETER", "condition.topics[2] must be a topic"],
    ["null topic0", ETH, logBody({ condition: { address: TOKEN, topics: [null, PADDED] } }), 400, "INVALID_PARAMETER", "condition.topics[0] must be the Keccak-256 hash of the event signature; only topics[1] to topics[3] may be null"],
    ["no period", ETH, periodBody({ condition: {} }), 400, "MISSING_REQUIRED_PARAMETER", "condition.period is required"],
    ["period 0", ETH, periodBody({ condition: { period: 0 } }), 400, "INVALID_PARAMETER", "condition.period must be a whole number of blocks from 1 to 1,000,000"],
    ["period too big", ETH, periodBody({ condition: { period: 1_000_001 } }), 400, "INVALID_PARAMETER", "condition.period must be a whole number of blocks from 1 to 1,000,000"],
    ["period fraction", ETH, periodBody({ condition: { period: 2.5 } }), 400, "INVALID_PARAMETER", "condition.period must be a whole number"],
    ["period string", ETH, periodBody({ condition: { period: "10" } }), 400, "INVALID_PARAMETER", "condition.period must be a whole number"],
    ["TRANSACTION empty", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: {} }, 400, "MISSING_REQUIRED_PARAMETER", "condition.payloadFunction is required unless eventType and eventAccountAddress are both set"],
    ["eventType without account", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { eventType: "0x1::coin::CoinDeposit" } }, 400, "MISSING_REQUIRED_PARAMETER", "condition.eventAccountAddress is required when eventType is set"],
    ["account without eventType", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { payloadFunction: "0x1::a::b", eventAccountAddress: "0x0" } }, 400, "MISSING_REQUIRED_PARAMETER", "condition.eventType is required when eventAccountAddress is set"],
    ["bad payloadFunction", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { payloadFunction: "0x1::transfer" } }, 400, "INVALID_PARAMETER", "condition.payloadFunction must name an entry function as address::module::function"],
    ["bad event type", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { eventType: "0x1::coin::CoinStore<", eventAccountAddress: "0x1" } }, 400, "INVALID_PARAMETER", "condition.eventType must name an event struct as address::module::Struct"],
    ["bad account", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "alice" } }, 400, "INVALID_PARAMETER", "condition.eventAccountAddress must be an account address: 0x followed by 1 to 64 hex digits"],
    ["eventData an array", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0", eventData: [1] } }, 400, "INVALID_PARAMETER", "condition.eventData must be a JSON object"],
    ["eventData 4 deep", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0", eventData: { a: { b: { c: { d: 1 } } } } } }, 400, "INVALID_PARAMETER", "condition.eventData may nest at most 3 levels deep"],
    ["eventData without event", APTOS, { eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { payloadFunction: "0x1::a::b", eventData: { a: 1 } } }, 400, "MISSING_REQUIRED_PARAMETER", "condition.eventType is required when eventData is set"],
    ["unknown top-level field", ETH, logBody({ color: "red" }), 400, "INVALID_PARAMETER", "color is not a known field: remove it"],
    ["unknown condition field", ETH, logBody({ condition: { address: TOKEN, topics: [TRANSFER], fromBlock: 1 } }), 400, "INVALID_PARAMETER", "condition.fromBlock is not a known field"],
    ["a JSON array", ETH, [logBody()], 400, "INVALID_PARAMETER", "The request body must be a JSON object"],
    ["not JSON", ETH, "{eventType: LOG", 400, "INVALID_PARAMETER", "The request body is not valid JSON"],
    ["empty body", ETH, "", 400, "INVALID_PARAMETER", "The request body is empty"],
  ];
  it.each(bad)("refuses %s", async (_name, path, body, status, code, message) => {
    const before = await db().webhookSubscription.count({ where: { projectId: owner.projectId } });
    const r = await call("POST", path, { body });
    expect(r.status).toBe(status);
    expect(r.json.code).toBe(code);
    expect(r.json.message).toContain(message);
    expect(await db().webhookSubscription.count({ where: { projectId: owner.projectId } })).toBe(before);
  });

  it("answers unknown networks 404 NOT_SUPPORTED_CHAIN, other paths WRONG_ENDPOINT, wrong methods 405, no key 401", async () => {
    for (const path of ["/v1/ethereum/nope/webhooks", "/v1/babylon/mainnet/webhooks", "/v1/ETHEREUM/MAINNET/webhooks"]) {
      const r = await call("GET", path);
      expect(r.status, path).toBe(404);
      expect(r.json.code, path).toBe("NOT_SUPPORTED_CHAIN");
    }
    for (const path of ["/v1/ethereum/mainnet/hooks", "/v1/ethereum/mainnet/webhooks/wh_x/nothing", "/v1/ethereum"]) {
      const r = await call("GET", path);
      expect(r.status, path).toBe(404);
      expect(r.json.code, path).toBe("WRONG_ENDPOINT");
    }
    const put = await call("PUT", ETH, { body: logBody() });
    expect(put.status).toBe(405);
    expect(put.json.code).toBe("METHOD_NOT_ALLOWED");
    expect(put.headers.get("allow")).toBe("GET, POST");
    expect((await call("POST", `${ETH}/history`, { body: {} })).json.code).toBe("METHOD_NOT_ALLOWED");
    const anonymous = await call("POST", ETH, { body: logBody(), key: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.code).toBe("NO_AUTHENTICATION_FOUND");
  });

  it("refuses a body over 64 kB with 413", async () => {
    const r = await call("POST", ETH, { body: logBody({ description: "x".repeat(70_000) }) });
    expect(r.status).toBe(413);
    expect(r.json.code).toBe("CONTENTS_TOO_LARGE");
  });

  it("refuses private and plain-http receivers when the server is configured for production", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE_URLS = "off";
    process.env.WEBHOOK_HTTPS_ONLY = "on";
    resetEnv();
    try {
      const http = await call("POST", ETH, { body: logBody({ notification: { webhookUrl: "http://receiver.example/hooks" } }) });
      expect(http.status).toBe(400);
      expect(http.json).toEqual({ code: "INVALID_PARAMETER", message: "notification.webhookUrl must be an https:// URL on this server." });
      for (const url of ["https://127.0.0.1:8443/h", "https://localhost/h", "https://10.1.2.3/h", "https://[::1]/h", "https://169.254.169.254/latest"]) {
        const r = await call("POST", ETH, { body: logBody({ notification: { webhookUrl: url } }) });
        expect(r.status, url).toBe(400);
        expect(r.json.message, url).toMatch(/^notification\.webhookUrl resolves to .*, an? [\w -]+ address, which webhooks may not reach on this server \(set WEBHOOK_ALLOW_PRIVATE_URLS=on/);
      }
      const sub = await create(ETH, logBody({ notification: { webhookUrl: "https://93.184.215.14/hooks" } }));
      const patch = await call("PATCH", `${ETH}/${String(sub.subscriptionId)}`, { body: { notification: { webhookUrl: "https://192.168.1.1/" } } });
      expect(patch.status).toBe(400);
      expect(patch.json.message).toContain("notification.webhookUrl resolves to 192.168.1.1, a private address");
    } finally {
      delete process.env.WEBHOOK_ALLOW_PRIVATE_URLS;
      delete process.env.WEBHOOK_HTTPS_ONLY;
      resetEnv();
    }
  });
});

describe("text PostgreSQL cannot store", () => {
  const transaction = (eventData: unknown) => ({ eventType: "TRANSACTION", description: "t", notification: { webhookUrl: "https://r.example/" }, condition: { eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0", eventData } });
  const NUL = "must not contain the NUL character (U+0000).";

  it("is refused with 400 naming the field or key, on create, preview and update, and nothing changes", async () => {
    const rec = await create(ETH, periodBody());
    const before = await db().webhookSubscription.count({ where: { projectId: owner.projectId } });
    const one = `${ETH}/${String(rec.subscriptionId)}`;
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", ETH, periodBody({ description: "a\u0000b" }), `description: ${NUL}`],
      ["POST", ETH, periodBody({ notification: { webhookUrl: "http://a.test/\u0000x" } }), `notification.webhookUrl: ${NUL}`],
      // Accepted before, and stored as "a\uFFFDb".
      ["POST", ETH, periodBody({ description: "a\ud800b" }), "description: must not contain an unpaired surrogate (\\ud800)."],
      ["POST", APTOS, transaction({ a: "\u0000" }), `condition.eventData.a: ${NUL}`],
      ["POST", APTOS, transaction({ "\u0000": "a" }), `condition.eventData: the key "\\u0000" ${NUL}`],
      ["POST", APTOS, transaction({ a: "\ud800" }), "condition.eventData.a: must not contain an unpaired surrogate (\\ud800)."],
      ["POST", `${APTOS}/preview`, transaction({ a: { b: ["\udfff"] } }), "condition.eventData.a.b[0]: must not contain an unpaired surrogate (\\udfff)."],
      ["PATCH", one, { description: "a\u0000b" }, `description: ${NUL}`],
      ["PATCH", one, { notification: { webhookUrl: "https://r.example/\udc00" } }, "notification.webhookUrl: must not contain an unpaired surrogate (\\udc00)."],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await call(method, path, { body });
      expect([r.status, r.json], `${method} ${path} ${JSON.stringify(body)}`).toEqual([400, { code: "INVALID_PARAMETER", message }]);
    }
    expect(await db().webhookSubscription.count({ where: { projectId: owner.projectId } })).toBe(before);
    expect((await call("GET", one)).json).toMatchObject({ description: "Every 10 blocks", notification: { webhookUrl: "http://127.0.0.1:9/hook" } });
  });

  it("refuses a body whose bytes are not UTF-8 with 400 naming the offset, instead of storing U+FFFD", async () => {
    const before = await db().webhookSubscription.count({ where: { projectId: owner.projectId } });
    // "café" in Latin-1: é is the single byte e9.
    const prefix = '{"eventType":"BLOCK_PERIOD","description":"caf';
    const bytes = Buffer.concat([Buffer.from(prefix), Buffer.from([0xe9]), Buffer.from('","notification":{"webhookUrl":"https://r.example/"},"condition":{"period":5}}')]);
    const res = await fetch(gw.url + ETH, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": owner.apiKey }, body: new Uint8Array(bytes) });
    expect([res.status, await res.json()]).toEqual([400, { code: "INVALID_PARAMETER", message: `The request body is not valid UTF-8 (byte offset ${prefix.length}).` }]);
    expect(await db().webhookSubscription.count({ where: { projectId: owner.projectId } })).toBe(before);
  });
});

describe("private receivers by the local default (a run nobody else reaches)", () => {
  const post = (url: string, key: string, headers: Record<string, string> = {}) =>
    fetch(url + ETH, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": key, ...headers }, body: JSON.stringify(periodBody()) });

  it("are refused from the first request that came through a reverse proxy on, whichever header says so, and the log says it once", async () => {
    const p = await createTestProject("Behind a proxy", "ENTERPRISE");
    try {
      for (const [header, value] of [
        ["X-Forwarded-For", "203.0.113.7"],
        ["Forwarded", "for=203.0.113.7;proto=https"],
        ["X-Forwarded-Host", "nodes.example.com"],
        ["X-Real-IP", "203.0.113.7"],
        ["Via", "1.1 nginx"],
      ] as const) {
        resetEnv();
        const { logger, lines } = captureLogs();
        const server = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter: gw.meter, logger });
        try {
          expect((await post(server.url, p.apiKey)).status, header).toBe(201);
          // The proxied request itself is judged after the change.
          const proxied = await post(server.url, p.apiKey, { [header]: value });
          expect(proxied.status, header).toBe(400);
          expect(await proxied.json(), header).toEqual({
            code: "INVALID_PARAMETER",
            message: "notification.webhookUrl resolves to 127.0.0.1, a loopback address, which webhooks may not reach on this server (set WEBHOOK_ALLOW_PRIVATE_URLS=on on the server to allow receivers on private networks).",
          });
          expect((await post(server.url, p.apiKey)).status, header).toBe(400);
          await post(server.url, p.apiKey, { [header]: value });
          const warnings = lines.filter((l) => l.level === "warn");
          expect(warnings.map((l) => l.msg), header).toEqual([
            `a request came through a reverse proxy (it carried ${header.toLowerCase()}): webhook URLs may no longer reach private or loopback addresses, which the local default allowed; set WEBHOOK_ALLOW_PRIVATE_URLS=on or off to choose`,
          ]);
        } finally {
          await server.close();
        }
      }
    } finally {
      resetEnv();
      await db().webhookSubscription.deleteMany({ where: { projectId: p.projectId } });
    }
  });

  it("stay allowed through a proxy when WEBHOOK_ALLOW_PRIVATE_URLS=on is set", async () => {
    const p = await createTestProject("Proxy, private allowed", "ENTERPRISE");
    process.env.WEBHOOK_ALLOW_PRIVATE_URLS = "on";
    resetEnv();
    const server = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter: gw.meter });
    try {
      expect((await post(server.url, p.apiKey, { "X-Forwarded-For": "203.0.113.7" })).status).toBe(201);
      expect((await post(server.url, p.apiKey)).status).toBe(201);
    } finally {
      await server.close();
      delete process.env.WEBHOOK_ALLOW_PRIVATE_URLS;
      resetEnv();
    }
  });
});

describe("list and get", () => {
  it("pages the project's subscriptions on the path's network, newest first", async () => {
    const p = await createTestProject("Lister", "ENTERPRISE");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create("/v1/polygon/amoy/webhooks", periodBody({ description: `n${i}` }), p.apiKey)).subscriptionId as string);
    await create("/v1/polygon/mainnet/webhooks", periodBody(), p.apiKey);
    const newestFirst = [...ids].reverse();

    const first = await call("GET", "/v1/polygon/amoy/webhooks?rpp=2", { key: p.apiKey });
    expect(first.status).toBe(200);
    expect(Object.keys(first.json)).toEqual(["total", "page", "rpp", "items"]);
    expect(first.json).toMatchObject({ total: 5, page: 1, rpp: 2 });
    expect((first.json.items as Json[]).map((r) => r.subscriptionId)).toEqual(newestFirst.slice(0, 2));
    const third = await call("GET", "/v1/polygon/amoy/webhooks?rpp=2&page=3", { key: p.apiKey });
    expect((third.json.items as Json[]).map((r) => r.subscriptionId)).toEqual(newestFirst.slice(4));
    const past = await call("GET", "/v1/polygon/amoy/webhooks?rpp=2&page=4", { key: p.apiKey });
    expect(past.json).toEqual({ total: 5, page: 4, rpp: 2, items: [] });
    const all = await call("GET", "/v1/polygon/amoy/webhooks", { key: p.apiKey });
    expect(all.json).toMatchObject({ total: 5, page: 1, rpp: 10 });
    const item = (all.json.items as Json[])[0]!;
    expect(item).toMatchObject({ protocol: "POLYGON", network: "AMOY", isActive: true, signingKey: expect.stringMatching(/^whsec_/) });

    const one = await call("GET", `/v1/polygon/amoy/webhooks?subscriptionId=${ids[2]}`, { key: p.apiKey });
    expect(one.json).toMatchObject({ total: 1, page: 1, rpp: 10 });
    expect((one.json.items as Json[])[0]!.subscriptionId).toBe(ids[2]);
    const get = await call("GET", `/v1/polygon/amoy/webhooks/${ids[2]}`, { key: p.apiKey });
    expect(get.json).toEqual((one.json.items as Json[])[0]);
    // Another network's path does not see it.
    const elsewhere = await call("GET", `/v1/polygon/mainnet/webhooks?subscriptionId=${ids[2]}`, { key: p.apiKey });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.json.code).toBe("RESOURCE_NOT_FOUND");
  });

  it("refuses bad query parameters naming them", async () => {
    const cases: Array<[string, string, string]> = [
      ["rpp=0", "INVALID_PARAMETER", "rpp must be a whole number from 1 to 100"],
      ["rpp=101", "INVALID_PARAMETER", "rpp must be a whole number from 1 to 100"],
      ["page=0", "INVALID_PARAMETER", "page must be a whole number from 1"],
      ["page=x", "INVALID_PARAMETER", "page must be a whole number from 1"],
      ["page=1&page=2", "INVALID_PARAMETER", "page is given more than once"],
      ["subscriptionId=12", "INVALID_PARAMETER", "subscriptionId must be a subscription id"],
      ["sort=asc", "INVALID_PARAMETER", "sort is not a known field"],
    ];
    await expectRefusals(cases.map(([query, code, message]) => ({ method: "GET", path: `${ETH}?${query}`, code, message })));
  });
});

describe("update and delete", () => {
  it("changes description, notification and condition; the signing key stays; a new condition resets matching", async () => {
    const rec = await create(ETH, logBody());
    const id = rec.subscriptionId as string;
    await db().webhookSubscription.update({ where: { id }, data: { startBlock: 1234n } });
    const other = "0x" + "ab".repeat(32);
    const r = await call("PATCH", `${ETH}/${id}`, {
      body: { description: "Renamed", notification: { webhookUrl: "https://new.example/h" }, condition: { address: "0x" + "11".repeat(20), topics: [other] } },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ result: true });
    const got = (await call("GET", `${ETH}/${id}`)).json;
    expect(got).toMatchObject({ description: "Renamed", notification: { webhookUrl: "https://new.example/h" }, event: { targetAddress: "0x" + "11".repeat(20), topics: [other], messages: [] } });
    expect(got.signingKey).toBe(rec.signingKey);
    expect(got.createdAt).toBe(rec.createdAt);
    expect(Date.parse(got.updatedAt as string)).toBeGreaterThan(Date.parse(rec.updatedAt as string));
    const row = await db().webhookSubscription.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ logAddress: "0x" + "11".repeat(20), logTopic0: other, startBlock: null });
  });

  it("turns a subscription off, and on again clearing the service's deactivation", async () => {
    const id = (await create(ETH, logBody())).subscriptionId as string;
    expect((await call("PATCH", `${ETH}/${id}`, { body: { isActive: true } })).json).toEqual({ result: true });
    expect((await call("PATCH", `${ETH}/${id}`, { body: { isActive: false } })).status).toBe(200);
    expect((await call("GET", `${ETH}/${id}`)).json.isActive).toBe(false);
    await db().webhookSubscription.update({ where: { id }, data: { deactivatedReason: "The receiver answered 410 Gone.", deactivatedAt: new Date(), failingSince: new Date() } });
    expect((await call("GET", `${ETH}/${id}`)).json.deactivatedReason).toBe("The receiver answered 410 Gone.");
    expect((await call("PATCH", `${ETH}/${id}`, { body: { isActive: true } })).status).toBe(200);
    const row = await db().webhookSubscription.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ isActive: true, deactivatedReason: null, deactivatedAt: null, failingSince: null });
  });

  it("refuses bad updates naming the field, and changes nothing", async () => {
    const id = (await create(ETH, logBody())).subscriptionId as string;
    const before = await db().webhookSubscription.findUniqueOrThrow({ where: { id } });
    const cases: Array<[unknown, string, string]> = [
      [{}, "INVALID_PARAMETER", "The request body must change something: give description, notification, isActive or condition"],
      [{ isActive: "no" }, "INVALID_PARAMETER", "isActive must be true or false"],
      [{ condition: { period: 5 } }, "MISSING_REQUIRED_PARAMETER", "condition.address is required"],
      [{ eventType: "BLOCK_PERIOD" }, "INVALID_PARAMETER", "eventType is not a known field"],
      [{ isInstant: true }, "INVALID_PARAMETER", "isInstant is not a known field"],
      [{ description: "" }, "INVALID_PARAMETER", "description must not be empty"],
      [{ notification: { webhookUrl: "mailto:a@b.c" } }, "INVALID_PARAMETER", "notification.webhookUrl must be an absolute http:// or https:// URL"],
    ];
    await expectRefusals(cases.map(([body, code, message]) => ({ method: "PATCH", path: `${ETH}/${id}`, body, code, message })));
    expect(await db().webhookSubscription.findUniqueOrThrow({ where: { id } })).toEqual(before);
  });

  it("deletes a subscription with its messages and delivery attempts", async () => {
    const id = (await create(ETH, logBody())).subscriptionId as string;
    await delivered({ id, projectId: owner.projectId }, 1n, [{ at: new Date(), success: false, status: 500 }, { at: new Date(), success: true, status: 200 }]);
    const r = await call("DELETE", `${ETH}/${id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ result: true });
    expect(await db().webhookMessage.count({ where: { subscriptionId: id } })).toBe(0);
    expect(await db().webhookAttempt.count({ where: { subscriptionId: id } })).toBe(0);
    const again = await call("DELETE", `${ETH}/${id}`);
    expect(again.status).toBe(404);
    expect(again.json.code).toBe("RESOURCE_NOT_FOUND");
    expect((await call("GET", `${ETH}/${id}`)).status).toBe(404);
  });
});

describe("another project's subscription", () => {
  it("is invisible and untouchable: 404 on every operation, and nothing changes", async () => {
    const rec = await create(ETH, logBody());
    const id = rec.subscriptionId as string;
    const messageId = await delivered({ id, projectId: owner.projectId }, 1n, [{ at: new Date(), success: true, status: 200 }]);
    const before = await db().webhookSubscription.findUniqueOrThrow({ where: { id } });
    const key = stranger.apiKey;
    const attempts: Array<[string, string, unknown]> = [
      ["GET", `${ETH}/${id}`, undefined],
      ["GET", `${ETH}?subscriptionId=${id}`, undefined],
      ["PATCH", `${ETH}/${id}`, { isActive: false, description: "mine now" }],
      ["DELETE", `${ETH}/${id}`, undefined],
      ["GET", `${ETH}/history?subscriptionId=${id}`, undefined],
      ["POST", `${ETH}/${id}/test`, undefined],
      ["POST", `${ETH}/${id}/replay`, { fromBlock: 1, toBlock: 2 }],
      ["POST", `${ETH}/${id}/messages/${messageId}/resend`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const r = await call(method, path, { key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json, `${method} ${path}`).toEqual({ code: "RESOURCE_NOT_FOUND", message: `No webhook subscription ${id} in this project on ethereum/mainnet.` });
    }
    expect((await call("GET", ETH, { key })).json.items).not.toContainEqual(expect.objectContaining({ subscriptionId: id }));
    expect((await call("GET", `${ETH}/history`, { key })).json).toMatchObject({ total: 0, items: [] });
    expect(await db().webhookSubscription.findUniqueOrThrow({ where: { id } })).toEqual(before);
    expect(await db().webhookMessage.count({ where: { subscriptionId: id } })).toBe(1);
  });

  it("answers a malformed id or a message of another subscription 404", async () => {
    const a = (await create(ETH, logBody())).subscriptionId as string;
    const b = (await create(ETH, logBody())).subscriptionId as string;
    const messageOfB = await delivered({ id: b, projectId: owner.projectId }, 1n, [{ at: new Date(), success: false, status: 500 }]);
    const r = await call("POST", `${ETH}/${a}/messages/${messageOfB}/resend`);
    expect(r.status).toBe(404);
    expect(r.json.message).toBe(`No message ${messageOfB} of subscription ${a} in this project on ethereum/mainnet.`);
    for (const path of [`${ETH}/wh_nope`, `${ETH}/${"x".repeat(500)}`]) {
      const bad = await call("GET", path);
      expect(bad.status).toBe(404);
      expect(bad.json).toEqual({ code: "RESOURCE_NOT_FOUND", message: "No such webhook subscription in this project on ethereum/mainnet." });
    }
  });
});

describe("plan limit", () => {
  it("allows the plan's number of subscriptions per project, across networks, then answers 409 REJECTED", async () => {
    const p = await createTestProject("Free", "FREE");
    const limit = PLANS.FREE.maxWebhooks;
    await Promise.all(Array.from({ length: limit }, (_, i) => call("POST", i % 2 ? ETH : APTOS, { key: p.apiKey, body: periodBody() })));
    expect(await db().webhookSubscription.count({ where: { projectId: p.projectId } })).toBe(limit);
    const over = await call("POST", "/v1/base/mainnet/webhooks", { key: p.apiKey, body: periodBody() });
    expect(over.status).toBe(409);
    expect(over.json).toEqual({
      code: "REJECTED",
      message: `The Starter (free) plan allows ${limit} webhook subscriptions per project (all networks together), and this project has ${limit}. Delete one or upgrade the plan.`,
    });
    expect(await db().webhookSubscription.count({ where: { projectId: p.projectId } })).toBe(limit);
  });

  it("counts concurrent creations against each other", async () => {
    const p = await createTestProject("Race", "FREE");
    const limit = PLANS.FREE.maxWebhooks;
    for (let i = 0; i < limit - 2; i++) await db().webhookSubscription.create({ data: { id: newId("wh"), projectId: p.projectId, network: "ethereum-mainnet", eventType: "BLOCK_PERIOD", description: "d", webhookUrl: "https://r.example/", condition: { period: 1 }, period: 1, signingKey: "v1.x.y.z" } });
    const answers = await Promise.all(Array.from({ length: 4 }, () => call("POST", ETH, { key: p.apiKey, body: periodBody() })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 409, 409]);
    expect(await db().webhookSubscription.count({ where: { projectId: p.projectId } })).toBe(limit);
  });
});

describe("history", () => {
  let p: Project;
  let sub: string;
  let otherSub: string;
  const t = (iso: string) => new Date(iso);

  beforeAll(async () => {
    p = await createTestProject("History", "ENTERPRISE");
    sub = (await create(ETH, logBody(), p.apiKey)).subscriptionId as string;
    otherSub = (await create(ETH, periodBody(), p.apiKey)).subscriptionId as string;
    const onArbitrum = (await create("/v1/arbitrum/mainnet/webhooks", periodBody(), p.apiKey)).subscriptionId as string;
    await delivered({ id: sub, projectId: p.projectId }, 1n, [
      { at: t("2026-03-01T10:00:00.000Z"), success: false, status: 500 },
      { at: t("2026-03-01T10:00:05.000Z"), success: false, status: null },
      { at: t("2026-03-01T10:05:05.000Z"), success: true, status: 200 },
    ]);
    await delivered({ id: sub, projectId: p.projectId }, 2n, [{ at: t("2026-03-02T00:00:00.000Z"), success: true, status: 204 }]);
    await delivered({ id: otherSub, projectId: p.projectId }, 1n, [{ at: t("2026-03-03T00:00:00.000Z"), success: false, status: 410 }]);
    await delivered({ id: onArbitrum, projectId: p.projectId }, 1n, [{ at: t("2026-03-04T00:00:00.000Z"), success: true, status: 200 }]);
  });

  const history = async (query: string) => {
    const r = await call("GET", `${ETH}/history${query}`, { key: p.apiKey });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json as { total: number; page: number; rpp: number; items: Json[] };
  };

  it("lists every attempt of the network's subscriptions, newest first, field by field", async () => {
    const h = await history("");
    expect(h).toMatchObject({ total: 5, page: 1, rpp: 10 });
    expect(h.items.map((i) => i.attemptedAt)).toEqual(["2026-03-03T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-01T10:05:05.000Z", "2026-03-01T10:00:05.000Z", "2026-03-01T10:00:00.000Z"]);
    const retry = h.items[3]!;
    expect(retry).toEqual({
      attemptId: expect.stringMatching(/^att_/),
      subscriptionId: sub,
      messageId: expect.stringMatching(/^msg_/),
      sequenceNumber: "1",
      attempt: 2,
      status: "FAIL",
      attemptedAt: "2026-03-01T10:00:05.000Z",
      httpStatus: null,
      durationMs: 13,
      error: "HTTP 500",
      replayed: false,
      test: false,
      requestHeaders: { "webhook-id": retry.messageId },
      responseBody: "boom",
    });
    expect(h.items[2]).toMatchObject({ attempt: 3, status: "SUCCESS", httpStatus: 200, messageId: retry.messageId });
  });

  it("filters by subscription, status and time, pages, and adds the message on request", async () => {
    expect((await history(`?subscriptionId=${sub}`)).total).toBe(4);
    expect((await history(`?subscriptionId=${otherSub}`)).items.map((i) => i.httpStatus)).toEqual([410]);
    expect((await history("?status=SUCCESS")).items.map((i) => i.httpStatus)).toEqual([204, 200]);
    expect((await history("?status=FAIL")).total).toBe(3);
    expect((await history("?startAt=2026-03-01T10:00:05Z&endAt=2026-03-02T00:00:00Z")).items.map((i) => i.attemptedAt)).toEqual([
      "2026-03-02T00:00:00.000Z",
      "2026-03-01T10:05:05.000Z",
      "2026-03-01T10:00:05.000Z",
    ]);
    expect((await history(`?startAt=${Date.parse("2026-03-02T00:00:00Z")}`)).total).toBe(2);
    expect((await history("?endAt=2026-03-01")).total).toBe(0);
    expect((await history("?startAt=2026-03-01T12:00:01%2B02:00&endAt=2026-03-01T11:10:00%2B01:00")).items.map((i) => i.attemptedAt)).toEqual(["2026-03-01T10:05:05.000Z", "2026-03-01T10:00:05.000Z"]);
    const page2 = await history("?rpp=2&page=2");
    expect(page2).toMatchObject({ total: 5, page: 2, rpp: 2 });
    expect(page2.items.map((i) => i.attemptedAt)).toEqual(["2026-03-01T10:05:05.000Z", "2026-03-01T10:00:05.000Z"]);
    expect((await history("?rpp=1")).items[0]).not.toHaveProperty("eventMessage");
    expect((await history("?rpp=1&withEventMessage=true")).items[0]!.eventMessage).toEqual({ sequenceNumber: "1" });
  });

  it("refuses bad filters naming them", async () => {
    const cases: Array<[string, string, string]> = [
      ["status=OK", "INVALID_PARAMETER", "status must be SUCCESS or FAIL"],
      ["startAt=yesterday", "INVALID_PARAMETER", "startAt must be an ISO 8601 time with a time zone"],
      ["endAt=2026-03-01T10:00:00", "INVALID_PARAMETER", "endAt must be an ISO 8601 time with a time zone"],
      ["startAt=2026-03-02&endAt=2026-03-01", "WRONG_RANGE_PARAMETER", "startAt must not be after endAt"],
      ["rpp=500", "INVALID_PARAMETER", "rpp must be a whole number from 1 to 100"],
      ["withEventMessage=yes", "INVALID_PARAMETER", "withEventMessage must be true or false"],
    ];
    await expectRefusals(cases.map(([query, code, message]) => ({ method: "GET", path: `${ETH}/history?${query}`, key: p.apiKey, code, message })));
  });

  it("forgets attempts and finished messages after the retention period", async () => {
    const q = await createTestProject("Sweep", "DEVELOPER");
    const id = (await create(ETH, logBody(), q.apiKey)).subscriptionId as string;
    const old = new Date(Date.now() - 31 * 24 * 3600_000);
    const oldMessage = await delivered({ id, projectId: q.projectId }, 1n, [{ at: old, success: true, status: 200 }]);
    const recent = await delivered({ id, projectId: q.projectId }, 2n, [{ at: new Date(), success: true, status: 200 }]);
    const pending = newId("msg");
    await db().webhookMessage.create({ data: { id: pending, subscriptionId: id, projectId: q.projectId, sequenceNumber: 3n, payload: {}, createdAt: old, nextAttemptAt: new Date() } });
    const swept = await sweepWebhookHistory(new Date(Date.now() - 30 * 24 * 3600_000));
    expect(swept.attempts).toBeGreaterThanOrEqual(1);
    const left = await db().webhookMessage.findMany({ where: { subscriptionId: id }, select: { id: true } });
    expect(left.map((m) => m.id).sort()).toEqual([recent, pending].sort());
    expect(await db().webhookAttempt.count({ where: { messageId: oldMessage } })).toBe(0);
    expect((await call("GET", `${ETH}/history`, { key: q.apiKey })).json.total).toBe(1);
  });
});

describe("engine actions", () => {
  it("check the subscription and their input before asking the engine", async () => {
    const id = (await create(ETH, logBody())).subscriptionId as string;
    const cases: Array<[string, unknown, string, string]> = [
      [`${ETH}/${id}/replay`, { fromBlock: 10, toBlock: 5 }, "WRONG_RANGE_PARAMETER", "toBlock must not be below fromBlock"],
      [`${ETH}/${id}/replay`, { fromBlock: 1, toBlock: 10_001 }, "WRONG_RANGE_PARAMETER", "toBlock must be within 10,000 blocks of fromBlock"],
      [`${ETH}/${id}/replay`, { fromBlock: 1 }, "MISSING_REQUIRED_PARAMETER", "toBlock is required"],
      [`${ETH}/${id}/replay`, { fromBlock: -1, toBlock: 5 }, "INVALID_PARAMETER", "fromBlock must be a block number"],
      [`${ETH}/${id}/replay`, { fromBlock: 1, toBlock: 2, all: true }, "INVALID_PARAMETER", "all is not a known field"],
      [`${ETH}/preview`, logBody({ condition: { address: TOKEN, topics: ["0x12"] } }), "INVALID_PARAMETER", "condition.topics[0] must be a topic"],
      [`${APTOS}/preview`, logBody(), "INVALID_PARAMETER", "eventType LOG is not supported on aptos/mainnet"],
    ];
    await expectRefusals(cases.map(([path, body, code, message]) => ({ method: "POST", path, body, code, message })));
    const resend = await call("POST", `${ETH}/${id}/messages/msg_nope/resend`);
    expect(resend.json).toEqual({ code: "RESOURCE_NOT_FOUND", message: "No such message in this project on ethereum/mainnet." });
  });
});

describe("metering", () => {
  it("charges each call its CU from the catalog; failed calls cost nothing", async () => {
    const p = await createTestProject("Meter", "DEVELOPER");
    const id = (await create(ETH, logBody(), p.apiKey)).subscriptionId as string;
    await call("GET", ETH, { key: p.apiKey });
    await call("GET", `${ETH}/${id}`, { key: p.apiKey });
    await call("PATCH", `${ETH}/${id}`, { key: p.apiKey, body: { description: "x" } });
    await call("GET", `${ETH}/history`, { key: p.apiKey });
    await call("POST", ETH, { key: p.apiKey, body: logBody({ description: "" }) });
    await call("DELETE", `${ETH}/${id}`, { key: p.apiKey });
    const rows = (await usage(p.projectId)).map((r) => ({ endpoint: r.endpoint, status: r.status, network: r.network, cu: Number(r.cu), requests: r.requests, errors: r.errors }));
    expect(rows).toEqual([
      { endpoint: "webhooks.create", status: "2xx", network: "ethereum-mainnet", cu: WEBHOOK_ROUTES.create.cu, requests: 1, errors: 0 },
      { endpoint: "webhooks.create", status: "4xx", network: "ethereum-mainnet", cu: 0, requests: 1, errors: 1 },
      { endpoint: "webhooks.delete", status: "2xx", network: "ethereum-mainnet", cu: WEBHOOK_ROUTES.delete.cu, requests: 1, errors: 0 },
      { endpoint: "webhooks.get", status: "2xx", network: "ethereum-mainnet", cu: WEBHOOK_ROUTES.get.cu, requests: 1, errors: 0 },
      { endpoint: "webhooks.history", status: "2xx", network: "ethereum-mainnet", cu: WEBHOOK_ROUTES.history.cu, requests: 1, errors: 0 },
      { endpoint: "webhooks.list", status: "2xx", network: "ethereum-mainnet", cu: WEBHOOK_ROUTES.list.cu, requests: 1, errors: 0 },
      { endpoint: "webhooks.update", status: "2xx", network: "ethereum-mainnet", cu: WEBHOOK_ROUTES.update.cu, requests: 1, errors: 0 },
    ]);
  });
});

describe("OpenAPI document", () => {
  it("is served without a key, is valid OpenAPI 3.1, and describes every route of the mount", async () => {
    const res = await fetch(`${gw.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { description?: string }>>; webhooks: Record<string, unknown>; servers: { url: string }[] };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers[0]!.url).toMatch(/^http:\/\/localhost:\d+$/);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    // The validator does catch a broken document.
    expect((await new Validator().validate({ ...doc, paths: { "/x": { get: { responses: "none" } } } })).valid).toBe(false);

    for (const route of Object.values(WEBHOOK_ROUTES)) {
      const path = `/v1/{protocol}/{network}${route.path}`;
      expect(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${path}`).toBeDefined();
      expect(doc.paths[path]![route.method.toLowerCase()]!.description).toMatch(route.queues ? new RegExp(`^${route.cu} CU\\. Plus 10 CU per message queued`) : new RegExp(`^${route.cu} CU\\.$`));
      // ... and the mount serves exactly that method there.
      const segments = path.split("/").slice(2).map((s) => ({ "{protocol}": "ethereum", "{network}": "mainnet", "{subscriptionId}": "wh_1", "{messageId}": "msg_1" })[s] ?? s);
      const match = webhookMount.match(segments);
      expect(match && "endpoint" in match ? match.endpoint.methods : [], path).toContain(route.method);
    }
    expect(doc.paths["/v1/inbox/{token}"]?.post).toBeDefined();
    expect(doc.paths["/v1/openapi.json"]?.get).toBeDefined();
    expect(doc.webhooks.delivery).toBeDefined();
    // Every path the document lists is one the mount answers.
    expect(Object.keys(doc.paths).length).toBe(new Set(Object.values(WEBHOOK_ROUTES).map((r) => r.path)).size + 2);
  });
});
