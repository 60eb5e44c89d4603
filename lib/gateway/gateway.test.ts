import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db/client";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { resetKey } from "@/lib/keys/service";
import { createProject } from "@/lib/projects/service";
import { services } from "@/lib/services";
import { networkBySlug } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

let gw: TestGateway;
let project: Awaited<ReturnType<typeof createTestProject>>;

const rpc = (id: unknown = 1, method = "eth_chainId") => JSON.stringify({ jsonrpc: "2.0", id, method, params: [] });

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(gw.url + path, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** Sends bytes that fetch refuses to send (control characters in headers). */
function rawRequest(head: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(gw.url);
    const socket = connect(Number(url.port), url.hostname, () => socket.write(head));
    let data = "";
    socket.on("data", (d) => (data += d.toString("latin1")));
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1]);
      resolve({ status, body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
    socket.on("error", reject);
  });
}

async function usageRows(projectId: string) {
  await gw.meter.flush();
  return db().usageBucket.findMany({ where: { projectId } });
}

beforeAll(async () => {
  gw = await startTestGateway();
  project = await createTestProject();
});
afterAll(async () => gw.stop());

describe("authentication", () => {
  it("answers a request with no key with 401 NO_AUTHENTICATION_FOUND", async () => {
    const r = await post("/node/ethereum-mainnet", rpc());
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ code: "NO_AUTHENTICATION_FOUND", message: expect.stringContaining("X-API-KEY") });
  });

  it("answers an unknown key with 401 AUTHENTICATION_FAILED", async () => {
    const r = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": "bg_" + "1".repeat(33) });
    expect(r.status).toBe(401);
    expect(r.json?.code).toBe("AUTHENTICATION_FAILED");
  });

  it("refuses a key given both in the header and in the path", async () => {
    const r = await post(`/node/ethereum-mainnet/${project.apiKey}`, rpc(), { "X-API-KEY": project.apiKey });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ code: "AUTHENTICATION_FAILED", message: expect.stringContaining("not both") });
  });

  it("refuses a 10 KB key header without touching anything", async () => {
    const r = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": "bg_" + "a".repeat(10 * 1024) });
    expect(r.status).toBe(401);
    expect(r.json?.code).toBe("AUTHENTICATION_FAILED");
  });

  it("refuses keys with SQL or control characters", async () => {
    for (const key of ["bg_' OR 1=1 --", "'; DROP TABLE api_keys; --", `${project.apiKey}'`]) {
      const r = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": key });
      expect(r.status).toBe(401);
      expect(r.json?.code).toBe("AUTHENTICATION_FAILED");
    }
    const body = rpc();
    const raw = await rawRequest(
      `POST /node/ethereum-mainnet HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nX-API-KEY: bg_\u0001\u0007abc\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    // Node's parser may reject the header itself (400) before our code runs; either way it is not served.
    expect([400, 401]).toContain(raw.status);
    const pathKey = await post(`/node/ethereum-mainnet/${encodeURIComponent("bg_%00' OR '1'='1")}`, rpc());
    expect(pathKey.status).toBe(401);
    expect(await db().apiKey.count({ where: { projectId: project.projectId } })).toBe(1);
  });

  it("stops accepting a key the moment it is reset", async () => {
    const p = await createTestProject();
    const ok = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": p.apiKey });
    expect(ok.status).toBe(200);
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const fresh = await resetKey(p.projectId, key.id);
    const old = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": p.apiKey });
    expect(old.status).toBe(401);
    expect(old.json?.code).toBe("AUTHENTICATION_FAILED");
    const next = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": fresh });
    expect(next.status).toBe(200);
  });

  it("looks a new key up once for 20 concurrent requests, then answers it from the cache", async () => {
    const p = await createTestProject();
    const before = services().keyVerifier.lookups;
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => post("/node/ethereum-mainnet", rpc(i), { "X-API-KEY": p.apiKey })));
    expect(first.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(services().keyVerifier.lookups - before).toBe(1);
    for (let i = 0; i < 3; i++) expect((await post(`/node/ethereum-mainnet/${p.apiKey}`, rpc(i))).status).toBe(200);
    expect(services().keyVerifier.lookups - before).toBe(1);
  });

  it("remembers that a key does not exist: repeated requests with it make one lookup", async () => {
    const unknown = generateKeyMaterial().secret;
    const before = services().keyVerifier.lookups;
    const answers = await Promise.all(Array.from({ length: 10 }, () => post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": unknown })));
    answers.push(await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": unknown }));
    for (const r of answers) expect(r.json).toEqual({ code: "AUTHENTICATION_FAILED", message: "The API key is invalid or has been reset." });
    expect(services().keyVerifier.lookups - before).toBe(1);
  });
});

describe("routing", () => {
  it("answers an unknown network with 404 NOT_SUPPORTED_CHAIN", async () => {
    for (const slug of ["ethereum-nope", "babylon-mainnet", "aptos-mainnet"]) {
      const r = await post(`/node/${slug}`, rpc(), { "X-API-KEY": project.apiKey });
      expect(r.status).toBe(404);
      expect(r.json?.code).toBe("NOT_SUPPORTED_CHAIN");
    }
  });

  it("answers an unknown path with 404 WRONG_ENDPOINT", async () => {
    for (const path of ["/node", "/node/ethereum-mainnet/a/b", "/rpc/babylon-mainnet/nope", "/v1/ethereum/mainnet/nothing"]) {
      const r = await post(path, rpc(), { "X-API-KEY": project.apiKey });
      expect(r.status, path).toBe(404);
      expect(r.json?.code, path).toBe("WRONG_ENDPOINT");
    }
  });

  it("answers a wrong method with 405 and the allowed methods", async () => {
    const res = await fetch(gw.url + "/node/ethereum-mainnet", { headers: { "X-API-KEY": project.apiKey } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.json()).toEqual({ code: "METHOD_NOT_ALLOWED", message: expect.stringContaining("POST") });
  });

  it("adds a request id and CORS headers, and answers preflight", async () => {
    const r = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": project.apiKey });
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const pre = await fetch(gw.url + "/node/ethereum-mainnet", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-api-key, content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-headers")).toContain("X-API-KEY");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
  });

  it("refuses a body over 1 MB with 413 and a URL over 8 KB with 414", async () => {
    const big = await post("/node/ethereum-mainnet", JSON.stringify({ pad: "x".repeat(1024 * 1024) }), { "X-API-KEY": project.apiKey });
    expect(big.status).toBe(413);
    expect(big.json?.code).toBe("CONTENTS_TOO_LARGE");
    const long = await post(`/node/ethereum-mainnet?${"q".repeat(9000)}`, rpc(), { "X-API-KEY": project.apiKey });
    expect(long.status).toBe(414);
    expect(long.json?.code).toBe("TOO_LONG_URI");
  });

  it("leaves non-API paths to the console", async () => {
    const res = await fetch(gw.url + "/nodes");
    expect(res.status).toBe(404); // no Next.js in this server; the gateway did not claim the path
    expect(res.headers.get("x-request-id")).toBeNull();
  });
});

describe("node endpoint through the gateway", () => {
  it("answers eth_chainId with the devnet chain id in header and path form, echoing ids", async () => {
    const net = networkBySlug("ethereum-sepolia")!;
    expect(net.source.kind).toBe("devnet");
    const expected = "0x" + Number(net.devnetChainId).toString(16);
    const header = await post("/node/ethereum-sepolia", rpc("abc"), { "X-API-KEY": project.apiKey });
    expect(header.json).toEqual({ jsonrpc: "2.0", id: "abc", result: expected });
    const path = await post(`/node/ethereum-sepolia/${project.apiKey}`, rpc(7));
    expect(path.json).toEqual({ jsonrpc: "2.0", id: 7, result: expected });
    expect(expected).not.toBe("0xaa36a7"); // never the real Sepolia id
  });

  it("answers 64 concurrent requests (written together at the end of a loop turn) each with its own id, body and request id", async () => {
    const ids = Array.from({ length: 64 }, (_, i) => `call-${i}`);
    // Enterprise: 64 calls at once are more than the free plan's 300 CU per second.
    const unlimited = await createTestProject("Concurrency", "ENTERPRISE");
    const answers = await Promise.all(ids.map((id) => post("/node/ethereum-mainnet", rpc(id), { "X-API-KEY": unlimited.apiKey })));
    expect(answers.map((a) => (a.json as { id: string }).id)).toEqual(ids);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(Number(a.headers.get("content-length"))).toBe(Buffer.byteLength(a.text));
    }
    expect(new Set(answers.map((a) => a.headers.get("x-request-id"))).size).toBe(64);
  });

  it("answers JSON-RPC errors for bad bodies", async () => {
    const h = { "X-API-KEY": project.apiKey };
    expect((await post("/node/ethereum-mainnet", "{not json", h)).json).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.any(String) } });
    expect(((await post("/node/ethereum-mainnet", "[]", h)).json as { error: { code: number } }).error.code).toBe(-32600);
    expect(((await post("/node/ethereum-mainnet", '{"id":1}', h)).json as { error: { code: number } }).error.code).toBe(-32600);
    const refused = (await post("/node/ethereum-mainnet", rpc(2, "anvil_setBalance"), h)).json as { id: number; error: { code: number; message: string } };
    expect(refused.id).toBe(2);
    expect(refused.error.code).toBe(-32601);
    expect(refused.error.message).toContain("not available");
  });
});

describe("metering", () => {
  it("records N times the cost in per-minute buckets after N requests, errors free", async () => {
    const p = await createTestProject();
    const n = 25;
    await Promise.all(Array.from({ length: n }, (_, i) => post("/node/ethereum-mainnet", rpc(i), { "X-API-KEY": p.apiKey })));
    await post("/node/ethereum-mainnet", rpc(99, "admin_peers"), { "X-API-KEY": p.apiKey });
    const rows = await usageRows(p.projectId);
    const chainId = rows.filter((r) => r.endpoint === "eth_chainId");
    expect(chainId.reduce((s, r) => s + r.requests, 0)).toBe(n);
    expect(chainId.reduce((s, r) => s + Number(r.cu), 0)).toBe(n * 5);
    expect(chainId.every((r) => r.network === "ethereum-mainnet" && r.minute.getUTCSeconds() === 0)).toBe(true);
    const refused = rows.find((r) => r.endpoint === "unsupported"); // refused names share one label
    expect(refused).toMatchObject({ requests: 1, errors: 1 });
    expect(Number(refused?.cu)).toBe(0);
  });

  it("records nothing for requests that fail authentication", async () => {
    const before = await db().usageBucket.count();
    await post("/node/ethereum-mainnet", rpc());
    await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": "bg_" + "2".repeat(33) });
    await gw.meter.flush();
    expect(await db().usageBucket.count()).toBe(before);
  });
});

describe("plan limits", () => {
  it("refuses with 429 EXCEEDED_QUOTA_LIMIT once the free plan's daily allowance is used", async () => {
    const p = await createTestProject();
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const now = new Date();
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    // The quota check reads the daily rollup.
    await db().usageDay.create({
      data: { projectId: p.projectId, keyId: key.id, network: "ethereum-mainnet", api: "node", endpoint: "eth_chainId", day, cu: 1_000_000n, requests: 200_000 },
    });
    const r = await post("/node/ethereum-mainnet", rpc(), { "X-API-KEY": p.apiKey });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ code: "EXCEEDED_QUOTA_LIMIT", message: expect.stringContaining("1,000,000 CU daily allowance") });
  });

  it("limits throughput to the plan's CU per second with TOO_MANY_REQUESTS and Retry-After", async () => {
    const p = await createTestProject();
    // Free plan: 300 CU/s, eth_chainId costs 5: a burst of 100 cannot all pass.
    const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" })));
    const r = await post("/node/ethereum-mainnet", batch, { "X-API-KEY": p.apiKey });
    const items = r.json as unknown as Array<{ result?: string; error?: { code: number; message: string } }>;
    const passed = items.filter((i) => i.result).length;
    expect(passed).toBeGreaterThanOrEqual(60);
    expect(passed).toBeLessThan(100);
    expect(items.find((i) => i.error)?.error).toEqual({ code: -32005, message: expect.stringContaining("300 CU per second"), data: { retryAfter: 1 } });
  });

  it("shares the free plan's CU per second across an account's free projects; a paid project has its own", async () => {
    const first = await createTestProject();
    const second = await createProject(first.userId, "Second free project");
    const paid = await createProject(first.userId, "Paid project");
    await db().project.update({ where: { id: paid.projectId }, data: { plan: "DEVELOPER" } });
    // The buckets refill with the monotonic clock: frozen, so the time the requests take (a key
    // lookup can take longer than the 17 ms that refill one 5 CU call) gives nothing back.
    vi.useFakeTimers({ toFake: ["performance"] });
    // A minute on: the client's failed-key bucket refills (the unknown keys of earlier tests spent
    // it, and each new key's first lookup takes from it), or these keys' lookups could be refused.
    vi.advanceTimersByTime(60_000);
    try {
      // 60 × 5 CU = the free plan's whole second: the first project takes it all.
      const burst = JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" })));
      const spent = (await post("/node/ethereum-mainnet", burst, { "X-API-KEY": first.apiKey })).json as unknown as Array<{ result?: string }>;
      expect(spent.filter((i) => i.result)).toHaveLength(60);
      // The account's other free project finds the bucket empty...
      const refused = await post("/node/ethereum-mainnet", burst, { "X-API-KEY": second.apiKey });
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("shared by all free projects of an account") });
      // ...while its paid project (600 CU/s of its own) is not affected.
      const paidItems = (await post("/node/ethereum-mainnet", burst, { "X-API-KEY": paid.apiKey })).json as unknown as Array<{ result?: string }>;
      expect(paidItems.every((i) => i.result)).toBe(true);
      // A free project of another account has its own 300 CU/s.
      const other = await createTestProject();
      expect((await post("/node/ethereum-mainnet", burst, { "X-API-KEY": other.apiKey })).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });
});
