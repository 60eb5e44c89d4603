import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSENSUS_ENDPOINTS } from "@/lib/consensus/catalog";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { EVM_METHODS } from "@/lib/evm/methods";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { MASK, maskExcerpt, maskRequestLine, REQUEST_LOG_ROWS } from "./request-log";
import { requestDetailsApiResponse, requestsApiResponse, trafficApiResponse, type RequestDetails, type RequestRow, type TrafficSummary } from "./requests";

const CONSENSUS = "babylon-mainnet";
const EVM = "ethereum-mainnet";
const N = 5;

let gw: TestGateway;
let owner: Awaited<ReturnType<typeof createTestProject>>;
let stranger: Awaited<ReturnType<typeof createTestProject>>;

beforeAll(async () => {
  gw = await startTestGateway();
  owner = await createTestProject("Request log", "DEVELOPER");
  stranger = await createTestProject("Someone else's", "DEVELOPER");
}, 120_000);
afterAll(async () => gw.stop());

const rpcBody = (method: string, params: unknown[] = []) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const post = (path: string, body: string, key?: string) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...(key ? { "X-API-KEY": key } : {}) }, body }).then(async (r) => ({ status: r.status, body: await r.text() }));
const get = (path: string, key: string) => fetch(`${gw.url}${path}`, { headers: { "X-API-KEY": key } }).then(async (r) => ({ status: r.status, body: await r.text() }));

async function call<T>(fn: () => Promise<Response>): Promise<T> {
  const res = await fn();
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

function apiUrl(path: string, params: Record<string, string> = {}): URL {
  const url = new URL(`http://console.test/api/projects/${owner.projectId}/${path}`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

const list = (params: Record<string, string> = {}, who = owner) =>
  call<{ requests: RequestRow[] }>(() => requestsApiResponse(who.userId, who.projectId, apiUrl("requests", params))).then((r) => r.requests);
const details = (id: string, who = owner) => call<RequestDetails>(() => requestDetailsApiResponse(who.userId, who.projectId, id));
const traffic = (who = owner) => call<TrafficSummary>(() => trafficApiResponse(who.userId, who.projectId, apiUrl("traffic")));

async function refusal(fn: () => Promise<Response>): Promise<{ status: number; code: string; message: string }> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error("the request was not refused");
}

describe("request log", () => {
  beforeAll(async () => {
    for (let i = 0; i < N; i++) expect((await post(`/node/${EVM}`, rpcBody("eth_chainId"), owner.apiKey)).status).toBe(200);
    // The key in the path (partly percent-encoded, which the gateway decodes), and again inside the
    // params: stored masked in both.
    const escapedKey = `%62g%5F${owner.apiKey.slice(3, 6)}${[...owner.apiKey.slice(6)].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("")}`;
    expect((await post(`/node/${EVM}/${escapedKey}`, rpcBody("net_version", [owner.apiKey, { apiKey: "hunter2-secret", password: 1234567 }]))).status).toBe(200);
    // A JSON-RPC error, a consensus call, a consensus call refused with 400, a batch.
    expect(JSON.parse((await post(`/node/${EVM}`, rpcBody("eth_notAMethod"), owner.apiKey)).body)).toMatchObject({ error: { code: -32601 } });
    expect((await get(`/rpc/${CONSENSUS}/tx_search?query=${encodeURIComponent("tx.height > 0")}`, owner.apiKey)).status).toBe(200);
    expect(JSON.parse((await get(`/rpc/${CONSENSUS}/tx_search?query=${encodeURIComponent("tx.height >")}`, owner.apiKey)).body)).toMatchObject({ error: {} });
    const batch = `[${rpcBody("eth_chainId")},${rpcBody("net_version")}]`;
    expect((await post(`/node/${EVM}`, batch, owner.apiKey)).status).toBe(200);
    // Refused with a plain HTTP status after authentication.
    expect((await post(`/node/${EVM}`, " ".repeat(1024 * 1024 + 1), owner.apiKey)).status).toBe(413);
    await gw.requestLog.flush();
  }, 60_000);

  const TOTAL = N + 6;

  it("holds every request with its interface, network, method, status, latency, CU and key name, newest first", async () => {
    const rows = await list();
    expect(rows).toHaveLength(TOTAL);
    expect(rows.map((r) => r.method)).toEqual(["rejected", "batch", "tx_search", "tx_search", "unsupported", "net_version", ...Array<string>(N).fill("eth_chainId")]);
    const [tooLarge, batch, badSearch, search, rpcError, keyInPath, chainId] = rows;
    expect(chainId).toEqual({
      id: expect.stringMatching(/^\d+$/),
      requestId: expect.stringMatching(/^req_/),
      at: expect.any(String),
      interface: "node",
      network: EVM,
      method: "eth_chainId",
      calls: 1,
      status: 200,
      statusClass: "2xx",
      latencyMs: expect.any(Number),
      cu: EVM_METHODS.eth_chainId!.cu,
      keyId: expect.stringMatching(/^key_/),
      keyName: "Default key",
    });
    expect(Math.abs(Date.parse(chainId!.at) - Date.now())).toBeLessThan(120_000);
    expect(keyInPath).toMatchObject({ interface: "node", method: "net_version", status: 200, statusClass: "2xx", cu: EVM_METHODS.net_version!.cu });
    expect(rpcError).toMatchObject({ interface: "node", status: 200, statusClass: "rpc_error", cu: 0 });
    expect(search).toMatchObject({ interface: "rpc", network: CONSENSUS, method: "tx_search", status: 200, statusClass: "2xx", cu: CONSENSUS_ENDPOINTS.tx_search.cu });
    expect(badSearch).toMatchObject({ interface: "rpc", method: "tx_search", statusClass: "rpc_error", cu: 0 });
    expect(tooLarge).toMatchObject({ interface: "node", network: EVM, method: "rejected", status: 413, statusClass: "4xx", cu: 0 });
    expect(batch).toMatchObject({ interface: "node", method: "batch", calls: 2, status: 200, statusClass: "2xx", cu: EVM_METHODS.eth_chainId!.cu + EVM_METHODS.net_version!.cu });
  });

  it("shows params and result excerpts with every key masked", async () => {
    const rows = await list();
    const keyInPath = rows.find((r) => r.method === "net_version" && r.calls === 1)!;
    const d = await details(keyInPath.id);
    expect(d.path).toBe(`POST /node/${EVM}/bg_••••`);
    expect(JSON.parse(d.params)).toEqual({ jsonrpc: "2.0", id: 1, method: "net_version", params: ["bg_••••", { apiKey: "••••", password: "••••" }] });
    expect(JSON.parse(d.result)).toMatchObject({ jsonrpc: "2.0", id: 1, result: expect.any(String) });
    const tooLarge = await details(rows.find((r) => r.status === 413)!.id);
    expect(JSON.parse(tooLarge.result)).toEqual({ code: "CONTENTS_TOO_LARGE", message: expect.any(String) });
    expect(tooLarge.params).toBe("");
    for (const r of rows) {
      const all = JSON.stringify(await details(r.id));
      expect(all).not.toContain(owner.apiKey);
      expect(all).not.toContain(owner.apiKey.slice(3, 12));
      expect(all).not.toContain("hunter2");
      expect(all).not.toContain("1234567");
    }
  });

  it("filters by interface, network, status class and method", async () => {
    expect((await list({ interface: "rpc" })).map((r) => r.method)).toEqual(["tx_search", "tx_search"]);
    expect(await list({ interface: "aptos" })).toEqual([]);
    expect(await list({ network: EVM })).toHaveLength(TOTAL - 2);
    expect((await list({ status: "4xx" })).map((r) => r.status)).toEqual([413]);
    expect((await list({ status: "rpc_error" })).map((r) => r.method)).toEqual(["tx_search", "unsupported"]);
    expect(await list({ status: "failed" })).toHaveLength(3);
    expect(await list({ method: "eth_chainId", interface: "node" })).toHaveLength(N);
    const page = await list({ limit: "3" });
    expect(page).toHaveLength(3);
    const next = await list({ limit: "3", before: page[2]!.id });
    expect(next.map((r) => r.id)).toEqual((await list()).slice(3, 6).map((r) => r.id));
  });

  it("sums the last 5 minutes per interface from the same rows", async () => {
    const rows = await list();
    const t = await traffic();
    expect(t.complete).toBe(true);
    expect(t.total.requests).toBe(TOTAL);
    expect(t.total.failed).toBe(3);
    expect(t.interfaces.node.requests).toBe(TOTAL - 2);
    expect(t.interfaces.node.failed).toBe(2);
    expect(t.interfaces.rpc).toMatchObject({ requests: 2, failed: 1 });
    expect(t.interfaces.aptos).toEqual({ requests: 0, failed: 0, latency: { avg: null, median: null, min: null, max: null } });
    const latencies = rows.map((r) => r.latencyMs);
    expect(t.total.latency.min).toBeCloseTo(Math.min(...latencies), 1);
    expect(t.total.latency.max).toBeCloseTo(Math.max(...latencies), 1);
    expect(t.total.latency.avg!).toBeGreaterThanOrEqual(t.total.latency.min!);
    expect(t.total.latency.avg!).toBeLessThanOrEqual(t.total.latency.max!);
    expect(t.total.latency.median!).toBeGreaterThanOrEqual(t.total.latency.min!);
    const rpcLatencies = rows.filter((r) => r.interface === "rpc").map((r) => r.latencyMs);
    expect(t.interfaces.rpc.latency.max).toBeCloseTo(Math.max(...rpcLatencies), 1);
  });

  it("answers 404 for another user's project and 400 for bad filters", async () => {
    for (const fn of [
      () => requestsApiResponse(stranger.userId, owner.projectId, apiUrl("requests")),
      () => trafficApiResponse(stranger.userId, owner.projectId, apiUrl("traffic")),
      () => requestDetailsApiResponse(stranger.userId, owner.projectId, "1"),
    ]) {
      expect(await refusal(fn)).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
    }
    // A row of the owner's log is not found through the stranger's own project either.
    const id = (await list())[0]!.id;
    expect(await refusal(() => requestDetailsApiResponse(stranger.userId, stranger.projectId, id))).toMatchObject({ status: 404 });
    const bad: [Record<string, string>, RegExp][] = [
      [{ interface: "grpc" }, /^interface: use one of rpc, cometbft, node, aptos, v1/],
      [{ network: "nowhere-mainnet" }, /^network: unknown network/],
      [{ status: "3xx" }, /^status: use one of/],
      [{ method: "eth_call; DROP TABLE" }, /^method:/],
      [{ limit: "0" }, /^limit:/],
      [{ limit: "1001" }, /^limit:/],
      [{ limit: "ten" }, /^limit:/],
      [{ before: "x" }, /^before:/],
      [{ sort: "asc" }, /^Unknown parameter sort/],
    ];
    for (const [params, message] of bad) {
      const r = await refusal(() => requestsApiResponse(owner.userId, owner.projectId, apiUrl("requests", params)));
      expect(r, JSON.stringify(params)).toMatchObject({ status: 400, code: "INVALID_PARAMETER", message: expect.stringMatching(message) });
    }
    expect(await refusal(() => trafficApiResponse(owner.userId, owner.projectId, apiUrl("traffic", { window: "1h" })))).toMatchObject({ status: 400, code: "INVALID_PARAMETER" });
  });

  const count = (projectId: string) => db().$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM request_logs WHERE project_id = $1`, projectId).then((r) => r[0]!.n);
  /** `total` requests of the project, 50 at a time; request i has JSON-RPC id `from + i` and the key in its params. */
  async function send(who: typeof owner, total: number, from = 0) {
    for (let i = 0; i < total; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, total - i) }, (_, j) => post(`/node/${EVM}`, JSON.stringify({ jsonrpc: "2.0", id: from + i + j, method: "net_version", params: [who.apiKey] }), who.apiKey)));
    }
  }

  it("keeps the newest 1,000 rows of a project written over several flushes after the sweep", async () => {
    const busy = await createTestProject("Busy over several flushes", "ENTERPRISE");
    await send(busy, 600);
    await gw.requestLog.flush();
    await send(busy, 600, 600);
    await gw.requestLog.flush();
    expect(await count(busy.projectId)).toBe(1200);
    const newest = await list({ limit: "1000" }, busy);
    await gw.requestLog.sweep();
    expect(await count(busy.projectId)).toBe(REQUEST_LOG_ROWS);
    expect((await list({ limit: "1000" }, busy)).map((r) => r.id)).toEqual(newest.map((r) => r.id));
    // The owner's log is untouched by the sweep.
    expect(await list()).toHaveLength(TOTAL);
    const t = await traffic(busy);
    expect(t.total.requests).toBe(REQUEST_LOG_ROWS);
    expect(t.complete).toBe(false);
  }, 120_000);

  it("writes only the newest 1,000 requests of a project that sent more between two flushes, masked, and none older", async () => {
    const busy = await createTestProject("Busy between flushes", "ENTERPRISE");
    // Rows from an earlier flush: older than the newest 1,000 once the rest is sent.
    await send(busy, 30);
    await gw.requestLog.flush();
    await gw.requestLog.sweep();
    const extra = 40;
    await send(busy, REQUEST_LOG_ROWS + extra, 30);
    await gw.requestLog.flush();
    // Without a sweep: the flush itself leaves exactly the newest 1,000.
    expect(await count(busy.projectId)).toBe(REQUEST_LOG_ROWS);
    const rows = await list({ limit: "1000" }, busy);
    const ids: number[] = [];
    for (const r of [rows[0]!, rows[rows.length - 1]!, ...rows.filter((_, i) => i % 97 === 0)]) {
      const d = await details(r.id, busy);
      expect(d.params).not.toContain(busy.apiKey.slice(3, 12));
      expect(JSON.parse(d.params)).toMatchObject({ method: "net_version", params: ["bg_••••"] });
      ids.push((JSON.parse(d.params) as { id: number }).id);
    }
    // Sent 50 at a time: every request after the first 50 of the second run is kept, and the newest row is one of the last 50.
    expect(Math.min(...ids)).toBeGreaterThanOrEqual(30);
    expect(ids[0]).toBeGreaterThanOrEqual(30 + REQUEST_LOG_ROWS + extra - 50);
    // Recent traffic counts every request from the oldest row kept on.
    const t = await traffic(busy);
    expect(t.total.requests).toBe(REQUEST_LOG_ROWS);
    expect(t.total.failed).toBe(0);
    expect(t.complete).toBe(false);
    expect(t.coveredFrom).toBe(rows[rows.length - 1]!.at);
  }, 120_000);
});

describe("maskExcerpt", () => {
  it("masks keys, secret-named fields and parameters, and bearer tokens", () => {
    expect(maskExcerpt(`{"token":"abc","password":"p\\"w","x":"bg_7Hq2"}`)).toBe(`{"token":"••••","password":"••••","x":"bg_••••"}`);
    expect(maskExcerpt("GET /v1/x?api_key=zzz&b=1 Authorization: Bearer eyJhbGc.x")).toBe("GET /v1/x?api_key=•••• &b=1 Authorization: Bearer ••••".replace("•••• &", "••••&"));
  });

  it("masks secret-named fields whatever their value, and more names of secrets", () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      password: 123456,
      token: ["t1", { nested: "t2" }],
      secret: { v: "s", deeper: [1, "]}"] },
      private_key: "0xabc",
      privateKey: "0xdef",
      mnemonic: "word ".repeat(12),
      pwd: "p",
      passphrase: "pp",
      sessionToken: "st",
      authToken: null,
      apiKeyEnabled: true,
      params: ["0x1", "latest"],
    });
    const masked = JSON.parse(maskExcerpt(body)) as Record<string, unknown>;
    expect(masked).toEqual({
      jsonrpc: "2.0",
      password: MASK,
      token: MASK,
      secret: MASK,
      private_key: MASK,
      privateKey: MASK,
      mnemonic: MASK,
      pwd: MASK,
      passphrase: MASK,
      sessionToken: MASK,
      // Nothing secret in null or a boolean.
      authToken: null,
      apiKeyEnabled: true,
      params: ["0x1", "latest"],
    });
    // Pretty-printed, and cut inside a secret value: masked to the end.
    expect(maskExcerpt('{\n  "secret" : [\n    "abc", "de')).toBe(`{\n  "secret" : "${MASK}"`);
    expect(maskExcerpt('{"x":1,"token": 42}')).toBe(`{"x":1,"token": "${MASK}"}`);
  });

  it("masks keys written with escapes: percent-encoded in a URL, \\u-escaped in JSON", () => {
    const key = "bg_7Hq2xYz9AbCdEfGhJkLmNpQrStUvWx";
    const encoded = [...key].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join("");
    expect(maskRequestLine(`POST /node/ethereum-mainnet/${encoded}?x=bg%5F${key.slice(3)}&passwd=hunter2&a=%41`)).toBe(`POST /node/ethereum-mainnet/bg_${MASK}?x=bg_${MASK}&passwd=${MASK}&a=A`);
    // Escapes of other characters stay as they are.
    expect(maskRequestLine("GET /rpc/x/tx_search?query=%22tx.height%3D5%22")).toBe("GET /rpc/x/tx_search?query=%22tx.height%3D5%22");
    expect(maskExcerpt(`{"x":"bg\\u005f${key.slice(3)}"}`)).toBe(`{"x":"bg_${MASK}"}`);
  });

  it("cuts long text, masking a key cut at the boundary", () => {
    const text = "a".repeat(2040) + "bg_" + "9".repeat(33) + "b".repeat(3000);
    const out = maskExcerpt(text);
    expect(out.length).toBeLessThanOrEqual(2049);
    expect(out.endsWith("…")).toBe(true);
    expect(out).not.toContain("999");
  });
});
