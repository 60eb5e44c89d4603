import { Agent, request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { APTOS_ROUTES } from "@/lib/aptos/catalog";
import { COMETBFT_ENDPOINTS, CONSENSUS_ENDPOINTS } from "@/lib/consensus/catalog";
import { db } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { EVM_METHODS } from "@/lib/evm/methods";
import { createAdditionalKey } from "@/lib/keys/service";
import { services } from "@/lib/services";
import { changePlan, setOverage } from "@/lib/projects/plan";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { WEBHOOK_ROUTES } from "@/lib/webhooks/catalog";
import { REFUSALS_BEFORE_CLOSE } from "./router";

// The gateway's wall clock for plan periods: 22:00 UTC today, so the free plan's day resets in 2 hours.
const today = new Date();
const DAY = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
let clock = DAY + 22 * 3_600_000;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ now: () => clock });
}, 120_000);
afterAll(async () => gw.stop());

interface Answer {
  status: number;
  headers: Headers;
  json: unknown;
}

async function call(path: string, key: string, body?: unknown): Promise<Answer> {
  const res = await fetch(gw.url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-API-KEY": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as unknown) : undefined };
}

const rpcItem = (method: string, id: number | string = 1, params: unknown = []) => ({ jsonrpc: "2.0", id, method, params });
const SEARCH = { query: "tx.height > 0" };

/** One cheap successful call on each public interface, with its CU from the catalogs. */
const INTERFACES: Record<string, { cu: number; send: (key: string) => Promise<Answer> }> = {
  rpc: { cu: CONSENSUS_ENDPOINTS.tx_search.cu, send: (key) => call(`/rpc/babylon-testnet/tx_search?query=${encodeURIComponent(SEARCH.query)}`, key) },
  cometbft: { cu: COMETBFT_ENDPOINTS.health.cu, send: (key) => call("/cometbft/babylon-testnet", key, { jsonrpc: "2.0", id: 1, method: "health" }) },
  node: { cu: EVM_METHODS.eth_chainId!.cu, send: (key) => call("/node/ethereum-mainnet", key, rpcItem("eth_chainId")) },
  aptos: { cu: APTOS_ROUTES.ledger_info.cu, send: (key) => call("/aptos/testnet/v1", key) },
  v1: { cu: WEBHOOK_ROUTES.list.cu, send: (key) => call("/v1/polygon/amoy/webhooks", key) },
};

const limitsOf = (a: Answer) => ({
  limit: a.headers.get("x-ratelimit-limit"),
  remaining: Number(a.headers.get("x-ratelimit-remaining")),
  reset: a.headers.get("x-ratelimit-reset"),
});

/** Records `cu` already used today (the daily rollup the quota reads). */
async function seedUsage(projectId: string, cu: number, day = DAY) {
  const key = await db().apiKey.findFirstOrThrow({ where: { projectId } });
  await db().usageDay.create({
    data: { projectId, keyId: key.id, network: "ethereum-mainnet", api: "node", endpoint: "eth_chainId", day: new Date(day), cu: BigInt(cu), requests: 1 },
  });
}

async function userOf(projectId: string) {
  const p = await db().project.findUniqueOrThrow({ where: { id: projectId }, select: { owner: { select: { id: true, email: true } } } });
  return p.owner;
}

describe("rate-limit headers", () => {
  it("every interface's answer says the allowance, the CU left (less by each call's cost) and the seconds to the reset", async () => {
    const p = await createTestProject("Headers");
    let remaining = 1_000_000;
    for (const [name, i] of Object.entries(INTERFACES)) {
      const a = await i.send(p.apiKey);
      // Aptos Testnet's ledger is filled (and emptied) by the Aptos suite sharing the test database:
      // while it is empty the answer is a free 503.
      const served = name === "aptos" && a.status === 503 ? false : true;
      if (served) {
        expect(a.status, `${name}: ${JSON.stringify(a.json)}`).toBe(200);
        remaining -= i.cu;
      }
      expect(limitsOf(a), name).toEqual({ limit: "1000000", remaining, reset: "7200" });
      expect(a.headers.get("access-control-expose-headers"), name).toContain("X-RateLimit-Remaining");
    }
  });

  it("refused answers carry them too, and a JSON-RPC error costs nothing", async () => {
    const p = await createTestProject("Refused");
    const error = await call("/node/ethereum-mainnet", p.apiKey, rpcItem("eth_notAMethod"));
    expect(error.json).toMatchObject({ error: { code: -32601 } });
    expect(limitsOf(error)).toEqual({ limit: "1000000", remaining: 1_000_000, reset: "7200" });
    const bad = await call("/v1/polygon/amoy/webhooks?subscriptionId=nope", p.apiKey);
    expect(bad.status).toBe(400);
    expect(limitsOf(bad)).toEqual({ limit: "1000000", remaining: 1_000_000, reset: "7200" });
    const aptos = await call("/aptos/testnet/v1/transactions/by_version/not-a-number", p.apiKey);
    expect(aptos.status).toBe(400);
    expect(limitsOf(aptos)).toEqual({ limit: "1000000", remaining: 1_000_000, reset: "7200" });
  });

  it("so do refusals of a valid key by routing (no such endpoint or network, a wrong HTTP method) and by its allowlist; refusals of no key or an unknown key carry none", async () => {
    const p = await createTestProject("Routing refusals");
    const full = { limit: "1000000", remaining: 1_000_000, reset: "7200" };
    const refusals: Array<[string, Answer, number, string]> = [
      ["unknown network", await call("/rpc/babylon-foo/status", p.apiKey), 404, "NOT_SUPPORTED_CHAIN"],
      ["network of another interface", await call("/node/babylon-mainnet", p.apiKey, rpcItem("eth_chainId")), 404, "NOT_SUPPORTED_CHAIN"],
      ["wrong HTTP method", await call("/node/ethereum-mainnet", p.apiKey), 405, "METHOD_NOT_ALLOWED"],
      ["no such endpoint", await call("/aptos/testnet/v1/no/such/route", p.apiKey), 404, "WRONG_ENDPOINT"],
    ];
    for (const [what, a, status, code] of refusals) {
      expect(a.status, what).toBe(status);
      expect(a.json, what).toMatchObject({ code });
      expect(limitsOf(a), what).toEqual(full);
    }
    for (const a of [await call("/aptos/testnet/v1/no/such/route", "bg_unknownKeyOfNobody1234567890"), await call("/node/ethereum-mainnet", "")]) {
      expect(a.status).toBe(a.headers.get("allow") ? 405 : 404);
      expect(a.headers.get("x-ratelimit-limit")).toBeNull();
    }
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    await db().apiKey.update({ where: { id: key.id }, data: { allowedOrigins: ["https://app.example.com"] } });
    services().keyVerifier.forget(key.hash);
    const res = await fetch(`${gw.url}/node/ethereum-mainnet`, { method: "POST", headers: { "X-API-KEY": p.apiKey, Origin: "https://evil.example", "Content-Type": "application/json" }, body: JSON.stringify(rpcItem("eth_chainId")) });
    expect(res.status).toBe(403);
    expect(limitsOf({ status: res.status, headers: res.headers, json: await res.json() })).toEqual(full);
  });

  it("a plan without a fixed allowance (Enterprise) sends none", async () => {
    const p = await createTestProject("Unlimited", "ENTERPRISE");
    const a = await INTERFACES.node!.send(p.apiKey);
    expect(a.status).toBe(200);
    expect(a.headers.get("x-ratelimit-limit")).toBeNull();
  });
});

describe("the allowance", () => {
  it("a free project past its daily allowance gets 429 EXCEEDED_QUOTA_LIMIT on every interface, with Retry-After until the reset, and recovers at the reset", async () => {
    const p = await createTestProject("Used up");
    await seedUsage(p.projectId, 1_000_000);
    for (const [name, i] of Object.entries(INTERFACES)) {
      const a = await i.send(p.apiKey);
      expect(a.status, name).toBe(429);
      expect(a.json, name).toEqual({ code: "EXCEEDED_QUOTA_LIMIT", message: expect.stringContaining("1,000,000 CU daily allowance") });
      expect(a.headers.get("retry-after"), name).toBe("7200");
      expect(limitsOf(a), name).toEqual({ limit: "1000000", remaining: 0, reset: "7200" });
    }
    const saved = clock;
    try {
      clock = DAY + 86_400_000 + 1000; // 00:00:01 UTC the next day
      for (const [name, i] of Object.entries(INTERFACES)) {
        const a = await i.send(p.apiKey);
        // Aptos: served (200), or a free 503 while the shared test ledger is empty; never refused.
        expect(a.status, `${name}: ${JSON.stringify(a.json)}`).toBe(name === "aptos" && a.status === 503 ? 503 : 200);
        expect(limitsOf(a).reset, name).toBe("86399");
      }
    } finally {
      clock = saved;
    }
  });

  it("with overage on, a paid project past its allowance is served and metered; off again, it is refused", async () => {
    const p = await createTestProject("Overage", "STARTER_PLUS");
    const user = await userOf(p.projectId);
    await seedUsage(p.projectId, 100_000_000);
    const refused = await INTERFACES.node!.send(p.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: "EXCEEDED_QUOTA_LIMIT" });

    await setOverage(user, p.projectId, true);
    const served = await INTERFACES.node!.send(p.apiKey);
    expect(served.status).toBe(200);
    expect(served.json).toMatchObject({ result: expect.any(String) });
    expect(limitsOf(served)).toMatchObject({ limit: "100000000", remaining: 0 });
    await gw.meter.flush();
    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId, endpoint: "eth_chainId" } });
    expect(rows.reduce((s, r) => s + Number(r.cu), 0)).toBe(EVM_METHODS.eth_chainId!.cu);

    await setOverage(user, p.projectId, false);
    expect((await INTERFACES.node!.send(p.apiKey)).status).toBe(429);
  });

  it("overage does not apply to the free plan, even when set in the database", async () => {
    const p = await createTestProject("Free overage");
    await db().project.update({ where: { id: p.projectId }, data: { overage: true } });
    await seedUsage(p.projectId, 1_000_000);
    const a = await INTERFACES.node!.send(p.apiKey);
    expect(a.json).toMatchObject({ code: "EXCEEDED_QUOTA_LIMIT" });
    await expect(setOverage(await userOf(p.projectId), p.projectId, true)).rejects.toMatchObject({ code: "REJECTED", message: expect.stringContaining("paid plans") });
  });

  it("a plan change applies to the next call", async () => {
    const p = await createTestProject("Upgrade");
    await seedUsage(p.projectId, 1_000_000);
    expect((await INTERFACES.node!.send(p.apiKey)).status).toBe(429);
    await changePlan(await userOf(p.projectId), p.projectId, { plan: "DEVELOPER" as Plan });
    const a = await INTERFACES.node!.send(p.apiKey);
    expect(a.status).toBe(200);
    expect(limitsOf(a)).toMatchObject({ limit: "450000000" });
  });

  it("a downgrade that revokes a key: that key is refused at once, the kept one runs under the new plan", async () => {
    const p = await createTestProject("Downgrade", "DEVELOPER");
    const second = await createAdditionalKey(p.userId, p.projectId, "Second");
    expect((await INTERFACES.node!.send(second.apiKey)).status).toBe(200);
    await changePlan(await userOf(p.projectId), p.projectId, { plan: "FREE", revokeKeyIds: [second.id] });
    const revoked = await INTERFACES.node!.send(second.apiKey);
    expect(revoked.status).toBe(401);
    expect(revoked.json).toEqual({ code: "AUTHENTICATION_FAILED", message: "The API key has been revoked." });
    const kept = await INTERFACES.node!.send(p.apiKey);
    expect(kept.status).toBe(200);
    expect(limitsOf(kept)).toMatchObject({ limit: "1000000" });
  });
});

describe("429 TOO_MANY_REQUESTS", () => {
  // The CU-per-second buckets refill with the monotonic clock: frozen, nothing comes back meanwhile.
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ["performance"] });
  });
  // A minute between tests: buckets of earlier tests refill, among them the client's failed-key
  // bucket (calls with revoked keys above spent it), which every first lookup of a new key takes from.
  beforeEach(() => {
    vi.advanceTimersByTime(60_000);
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  /** A free project whose account's 300 CU of this second are spent (60 eth_chainId). */
  async function drained() {
    const p = await createTestProject("Drained");
    const burst = Array.from({ length: 60 }, (_, i) => rpcItem("eth_chainId", i));
    const spent = (await call("/node/ethereum-mainnet", p.apiKey, burst)).json as Array<{ result?: string }>;
    expect(spent.filter((i) => i.result)).toHaveLength(60);
    return p;
  }

  it("carries Retry-After and the allowance headers on every interface", async () => {
    const p = await drained();
    const remaining = 1_000_000 - 60 * EVM_METHODS.eth_chainId!.cu;
    for (const [name, i] of Object.entries(INTERFACES)) {
      const a = await i.send(p.apiKey);
      expect(a.status, `${name}: ${JSON.stringify(a.json)}`).toBe(429);
      expect(a.json, name).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("300 CU per second") });
      expect(a.headers.get("retry-after"), name).toBe("1");
      expect(limitsOf(a), name).toEqual({ limit: "1000000", remaining, reset: "7200" });
    }
  });

  it("a burst refused with Retry-After passes again once that time has gone by", async () => {
    const p = await drained();
    const refused = await INTERFACES.node!.send(p.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("300 CU per second") });
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBe(1);
    vi.advanceTimersByTime(wait * 1000);
    const again = await INTERFACES.node!.send(p.apiKey);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ result: expect.any(String) });
    expect(again.headers.get("retry-after")).toBeNull();
    // Every interface is served again (the Aptos test ledger may have no block yet: not a limit).
    for (const [name, i] of Object.entries(INTERFACES)) {
      const a = await i.send(p.apiKey);
      expect(a.status, `${name}: ${JSON.stringify(a.json)}`).not.toBe(429);
    }
  });

  it("a call dearer than the plan's CU per second runs on a full bucket, and the calls after it wait until the debt is paid back", async () => {
    const cu = EVM_METHODS.eth_getBlockReceipts!.cu;
    expect(cu).toBeGreaterThan(300);
    const p = await createTestProject("Dear call");
    const receipts = () => call("/node/ethereum-mainnet", p.apiKey, rpcItem("eth_getBlockReceipts", 1, ["latest"]));
    // The answer is the devnet's (or an upstream error): what matters is that it is not refused.
    expect((await receipts()).status).not.toBe(429);
    // 300 - 500 = -200 CU left: a second one needs a full bucket again, 500 CU (5/3 s) away.
    const refused = await receipts();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("2");
    // So does a cheap call, less long: 5 CU are 205 CU (0.68 s) away.
    const cheap = await INTERFACES.node!.send(p.apiKey);
    expect(cheap.status).toBe(429);
    expect(cheap.headers.get("retry-after")).toBe("1");
    vi.advanceTimersByTime(1000);
    expect((await INTERFACES.node!.send(p.apiKey)).status).toBe(200);
    expect((await receipts()).status).toBe(429);
    vi.advanceTimersByTime(1000);
    expect((await receipts()).status).not.toBe(429);
  });

  it("a connection that sends nothing but refused calls is closed: its 10th refusal in a row goes out with Connection: close; any other answer starts the count again", async () => {
    const p = await drained();
    const agent = new Agent({ connections: 1 });
    const send = async () => {
      const r = await request(`${gw.url}/node/ethereum-mainnet`, {
        method: "POST",
        dispatcher: agent,
        headers: { "x-api-key": p.apiKey, "content-type": "application/json" },
        body: JSON.stringify(rpcItem("eth_chainId")),
      });
      await r.body.dump();
      return `${r.statusCode} ${String(r.headers.connection)}`;
    };
    try {
      const answers: string[] = [];
      for (let i = 1; i < REFUSALS_BEFORE_CLOSE; i++) answers.push(await send());
      // Enough CU for one call: it runs, and the refusals after it count from zero.
      vi.advanceTimersByTime(Math.ceil((EVM_METHODS.eth_chainId!.cu * 1000) / 300));
      answers.push(await send());
      for (let i = 1; i <= REFUSALS_BEFORE_CLOSE; i++) answers.push(await send());
      const refused = "429 keep-alive";
      expect(answers).toEqual([...Array<string>(REFUSALS_BEFORE_CLOSE - 1).fill(refused), "200 keep-alive", ...Array<string>(REFUSALS_BEFORE_CLOSE - 1).fill(refused), "429 close"]);
    } finally {
      await agent.close();
    }
  });

  it("a JSON-RPC batch of which some items ran answers HTTP 200 with the refused items' -32005 and still Retry-After", async () => {
    const cases = [
      { path: "/node/ethereum-mainnet", item: (id: string) => rpcItem("eth_chainId", id), cu: EVM_METHODS.eth_chainId!.cu },
      { path: "/rpc/babylon-testnet", item: (id: string) => rpcItem("tx_search", id, SEARCH), cu: CONSENSUS_ENDPOINTS.tx_search.cu },
      { path: "/cometbft/babylon-testnet", item: (id: string) => rpcItem("health", id), cu: COMETBFT_ENDPOINTS.health.cu },
    ];
    for (const { path, item, cu } of cases) {
      const p = await createTestProject("Partly limited");
      // Calls of 5 CU that leave one item's cost of this second's 300 CU: one item runs, the next two are refused.
      const spend = (300 - cu) / EVM_METHODS.eth_chainId!.cu;
      await call("/node/ethereum-mainnet", p.apiKey, Array.from({ length: spend }, (_, i) => rpcItem("eth_chainId", i)));
      const a = await call(path, p.apiKey, [item("a"), item("b"), item("c")]);
      expect(a.status, path).toBe(200);
      const items = a.json as Array<{ id: string; result?: unknown; error?: { code: number; data: unknown } }>;
      expect(items.map((i) => ("result" in i ? "ran" : i.error?.code)), path).toEqual(["ran", -32005, -32005]);
      expect(items[1]!.error!.data, path).toEqual({ retryAfter: 1 });
      expect(a.headers.get("retry-after"), path).toBe("1");
    }
  });
});
