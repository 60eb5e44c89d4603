import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSENSUS_ENDPOINTS } from "@/lib/consensus/catalog";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { EVM_METHODS } from "@/lib/evm/methods";
import { WEBHOOK_ROUTES } from "@/lib/webhooks/catalog";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { usageApiResponse } from "./api";
import type { UsageReport } from "./query";

// Consensus searches need no indexed data (an empty index answers them); the EVM methods used are
// answered from the network catalog, so no node is needed either; the webhook API reads the
// project's (empty) subscriptions and delivery history.
const CONSENSUS = "babylon-mainnet";
const EVM = "ethereum-mainnet";
const N = 7;

let gw: TestGateway;
let owner: Awaited<ReturnType<typeof createTestProject>>;
let stranger: Awaited<ReturnType<typeof createTestProject>>;

beforeAll(async () => {
  gw = await startTestGateway();
  owner = await createTestProject("Usage", "DEVELOPER");
  stranger = await createTestProject("Someone else's");
}, 120_000);
afterAll(async () => gw.stop());

const get = (path: string) => fetch(`${gw.url}${path}`, { headers: { "X-API-KEY": owner.apiKey } }).then((r) => r.text());
const rpc = (method: string) =>
  fetch(`${gw.url}/node/${EVM}`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": owner.apiKey }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method }) }).then((r) => r.json());

function usageUrl(params: Record<string, string>): URL {
  const url = new URL(`http://console.test/api/projects/${owner.projectId}/usage`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

async function report(params: Record<string, string>): Promise<UsageReport> {
  const res = await usageApiResponse(owner.userId, owner.projectId, usageUrl(params));
  expect(res.status).toBe(200);
  return (await res.json()) as UsageReport;
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

/** Per group: total CU, requests and errors over the report's steps. */
function totals(r: UsageReport): Record<string, { cu: number; requests: number; errors: number }> {
  return Object.fromEntries(r.groups.map((g) => [g.key, { cu: sum(g.cu), requests: sum(g.requests), errors: sum(g.errors) }]));
}

async function refusal(params: Record<string, string>, userId = owner.userId, projectId = owner.projectId): Promise<{ status: number; code: string; message: string }> {
  try {
    await usageApiResponse(userId, projectId, usageUrl(params));
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error("the request was not refused");
}

const TX_SEARCH = CONSENSUS_ENDPOINTS.tx_search.cu;
const BLOCK_SEARCH = CONSENSUS_ENDPOINTS.block_search.cu;
const CHAIN_ID = EVM_METHODS.eth_chainId!.cu;
const NET_VERSION = EVM_METHODS.net_version!.cu;
const WEBHOOK_LIST = WEBHOOK_ROUTES.list.cu;
const WEBHOOK_HISTORY = WEBHOOK_ROUTES.history.cu;
/** CU of one round of successful calls. */
const ROUND = TX_SEARCH + BLOCK_SEARCH + CHAIN_ID + NET_VERSION + WEBHOOK_LIST + WEBHOOK_HISTORY;

describe("usage data", () => {
  const range = () => ({ from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() });

  beforeAll(async () => {
    // Paced under the Developer plan's 600 CU/s, so no call is refused by the rate limit.
    const started = performance.now();
    for (let i = 0; i < N; i++) {
      const due = started + (i * ROUND * 1000) / 400;
      if (performance.now() < due) await new Promise((r) => setTimeout(r, due - performance.now()));
      await get(`/rpc/${CONSENSUS}/tx_search?query=${encodeURIComponent("tx.height > 0")}`);
      await get(`/rpc/${CONSENSUS}/block_search?query=${encodeURIComponent("block.height > 0")}`);
      expect(await rpc("eth_chainId")).toMatchObject({ result: expect.any(String) });
      expect(await rpc("net_version")).toMatchObject({ result: expect.any(String) });
      expect(JSON.parse(await get("/v1/ethereum/mainnet/webhooks"))).toMatchObject({ items: [] });
      expect(JSON.parse(await get("/v1/ethereum/mainnet/webhooks/history"))).toMatchObject({ items: [], total: 0 });
    }
    // Failures: a query that does not parse, unknown method names (all folded into one label).
    await get(`/rpc/${CONSENSUS}/tx_search?query=${encodeURIComponent("tx.height >")}`);
    expect(await rpc("eth_notAMethod")).toMatchObject({ error: { code: -32601 } });
    expect(await rpc("made_up_by_the_caller")).toMatchObject({ error: { code: -32601 } });
    await gw.meter.flush();
  }, 60_000);

  it("stores each call's catalog CU per API, endpoint and status class, with a latency histogram per row", async () => {
    const rows = await db().usageBucket.findMany({ where: { projectId: owner.projectId } });
    const byCall: Record<string, { cu: number; requests: number; errors: number }> = {};
    for (const r of rows) {
      const k = `${r.api} ${r.endpoint} ${r.status}`;
      const t = (byCall[k] ??= { cu: 0, requests: 0, errors: 0 });
      t.cu += Number(r.cu);
      t.requests += r.requests;
      t.errors += r.errors;
      // Every request is in exactly one latency bucket.
      expect(sum(r.latencyHist)).toBe(r.requests);
    }
    expect(byCall).toEqual({
      "rpc tx_search 2xx": { cu: N * TX_SEARCH, requests: N, errors: 0 },
      "rpc tx_search rpc_error": { cu: 0, requests: 1, errors: 1 },
      "rpc block_search 2xx": { cu: N * BLOCK_SEARCH, requests: N, errors: 0 },
      "node eth_chainId 2xx": { cu: N * CHAIN_ID, requests: N, errors: 0 },
      "node net_version 2xx": { cu: N * NET_VERSION, requests: N, errors: 0 },
      "node unsupported rpc_error": { cu: 0, requests: 2, errors: 2 },
      "v1 webhooks.list 2xx": { cu: N * WEBHOOK_LIST, requests: N, errors: 0 },
      "v1 webhooks.history 2xx": { cu: N * WEBHOOK_HISTORY, requests: N, errors: 0 },
    });
    expect(new Set(rows.map((r) => r.network))).toEqual(new Set([CONSENSUS, EVM]));
  });

  it("keeps the hour and day rollups equal to the minutes", async () => {
    const minutes = await db().usageBucket.aggregate({ where: { projectId: owner.projectId }, _sum: { cu: true, requests: true, errors: true } });
    const hours = await db().usageHour.aggregate({ where: { projectId: owner.projectId }, _sum: { cu: true, requests: true, errors: true } });
    const days = await db().usageDay.aggregate({ where: { projectId: owner.projectId }, _sum: { cu: true, requests: true, errors: true } });
    const expected = { cu: N * ROUND, requests: 6 * N + 3, errors: 3 };
    for (const s of [minutes._sum, hours._sum, days._sum]) expect({ cu: Number(s.cu), requests: Number(s.requests), errors: Number(s.errors) }).toEqual(expected);
    const hist = await db().usageHour.findMany({ where: { projectId: owner.projectId } });
    for (const h of hist) expect(sum(h.latencyHist)).toBe(h.requests);
  });

  it("answers the series per method, endpoint, network, status and key, from minutes, hours and days alike", async () => {
    const byMethod = {
      "rpc:tx_search": { cu: N * TX_SEARCH, requests: N + 1, errors: 1 },
      "rpc:block_search": { cu: N * BLOCK_SEARCH, requests: N, errors: 0 },
      "node:eth_chainId": { cu: N * CHAIN_ID, requests: N, errors: 0 },
      "node:net_version": { cu: N * NET_VERSION, requests: N, errors: 0 },
      "node:unsupported": { cu: 0, requests: 2, errors: 2 },
      "v1:webhooks.list": { cu: N * WEBHOOK_LIST, requests: N, errors: 0 },
      "v1:webhooks.history": { cu: N * WEBHOOK_HISTORY, requests: N, errors: 0 },
    };
    const twoDays = { from: new Date(Date.now() - 2 * 86_400_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    for (const params of [{ ...range(), step: "1m" }, { ...range(), step: "1h" }, { ...twoDays, step: "1d" }]) {
      const r = await report({ ...params, groupBy: "method" });
      expect(totals(r)).toEqual(byMethod);
      // Every group has one value per step, zeros included.
      for (const g of r.groups) expect([g.cu.length, g.requests.length, g.errors.length, g.p50.length]).toEqual([r.times.length, r.times.length, r.times.length, r.times.length]);
      expect(r.groups.find((g) => g.key === "node:eth_chainId")?.label).toBe("eth_chainId (node)");
    }

    const byApi = await report({ ...range(), groupBy: "endpoint" });
    expect(totals(byApi)).toEqual({
      rpc: { cu: N * (TX_SEARCH + BLOCK_SEARCH), requests: 2 * N + 1, errors: 1 },
      node: { cu: N * (CHAIN_ID + NET_VERSION), requests: 2 * N + 2, errors: 2 },
      v1: { cu: N * (WEBHOOK_LIST + WEBHOOK_HISTORY), requests: 2 * N, errors: 0 },
    });
    // Most CU first.
    const labels: Array<[number, string]> = [
      [TX_SEARCH + BLOCK_SEARCH, "Consensus RPC (/rpc)"],
      [CHAIN_ID + NET_VERSION, "EVM JSON-RPC (/node)"],
      [WEBHOOK_LIST + WEBHOOK_HISTORY, "Webhook API (/v1)"],
    ];
    expect(byApi.groups.map((g) => g.label)).toEqual(labels.sort((a, b) => b[0] - a[0]).map(([, l]) => l));

    const byNetwork = await report({ ...range(), groupBy: "network" });
    expect(Object.keys(totals(byNetwork)).sort()).toEqual([CONSENSUS, EVM]);

    const byStatus = await report({ ...range(), groupBy: "status" });
    expect(totals(byStatus)).toEqual({
      "2xx": { cu: N * ROUND, requests: 6 * N, errors: 0 },
      rpc_error: { cu: 0, requests: 3, errors: 3 },
    });

    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: owner.projectId } });
    const byKey = await report({ ...range(), groupBy: "key" });
    expect(byKey.groups.map((g) => [g.key, g.label])).toEqual([[key.id, `${key.name} (${key.start}…)`]]);
    expect(byKey.sums).toEqual({ cu: N * ROUND, requests: 6 * N + 3, errors: 3 });

    // Latency quantiles where there were requests, null where there were none.
    const busy = byKey.total.requests.findIndex((n) => n > 0);
    expect(byKey.total.p50[busy]).toEqual(expect.any(Number));
    expect(byKey.total.p99[busy]!).toBeGreaterThanOrEqual(byKey.total.p50[busy]!);
    const idle = byKey.total.requests.findIndex((n) => n === 0);
    expect(byKey.total.p50[idle]).toBeNull();

    // The plan period's use, as the quota check reads it.
    expect(byKey.allowance).toMatchObject({ plan: "DEVELOPER", period: "month", allowanceCu: 450_000_000, usedCu: byKey.sums.cu });
    expect(new Date(byKey.allowance.resetsAt).getUTCDate()).toBe(1);
  });

  it("gives the same numbers as CSV", async () => {
    const params = { ...range(), step: "1m", groupBy: "method" };
    const json = await report(params);
    const res = await usageApiResponse(owner.userId, owner.projectId, usageUrl({ ...params, format: "csv" }));
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="usage-prj_.+-method\.csv"$/);
    const [header, ...lines] = (await res.text()).trimEnd().split("\n");
    expect(header).toBe("time,group,label,cu,requests,errors,p50_ms,p95_ms,p99_ms");
    const rows = lines.map((l) => l.split(","));
    // One row per step and group, then one per step for all groups.
    expect(rows).toHaveLength(json.times.length * (json.groups.length + 1));
    for (const g of [...json.groups.map((g) => ({ key: g.key, s: g })), { key: "all", s: json.total }]) {
      const mine = rows.filter((r) => r[1] === g.key);
      expect(mine.map((r) => r[0])).toEqual(json.times);
      expect(mine.map((r) => Number(r[3]))).toEqual(g.s.cu);
      expect(mine.map((r) => Number(r[4]))).toEqual(g.s.requests);
      expect(mine.map((r) => Number(r[5]))).toEqual(g.s.errors);
      expect(mine.map((r) => (r[6] === "" ? null : Number(r[6])))).toEqual(g.s.p50);
    }
    // The catalog's CU of every call made, in the CSV's totals.
    expect(sum(rows.filter((r) => r[1] === "all").map((r) => Number(r[3])))).toBe(N * ROUND);
    expect(sum(rows.filter((r) => r[1] === "v1:webhooks.list").map((r) => Number(r[3])))).toBe(N * WEBHOOK_LIST);
  });

  it("answers another user's project 404, as one that does not exist", async () => {
    expect(await refusal(range(), stranger.userId, owner.projectId)).toEqual({ status: 404, code: "RESOURCE_NOT_FOUND", message: "No such project." });
    expect(await refusal(range(), owner.userId, "prj_doesNotExist")).toEqual({ status: 404, code: "RESOURCE_NOT_FOUND", message: "No such project." });
  });

  it("refuses bad parameters with 400 naming them", async () => {
    const now = Date.now();
    expect(await refusal({ from: "yesterday" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: expect.stringContaining('from: "yesterday" is not a date') });
    expect(await refusal({ to: "2026-13-45" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: expect.stringContaining("to: ") });
    // Times PostgreSQL cannot take (before year 1) or of no use here (before 1970, after 9999): 400, not a database error.
    for (const [from, to] of [["-000100-01-01T00:00:00Z", "-000099-01-01T00:00:00Z"], ["1969-01-01", "1970-01-02"], ["0", "+275760-09-13T00:00:00Z"]]) {
      expect(await refusal({ from: from!, to: to!, step: "1d" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: expect.stringContaining("is not a date") });
    }
    expect(await refusal({ from: new Date(now).toISOString(), to: new Date(now - 60_000).toISOString() })).toEqual({ status: 400, code: "WRONG_RANGE_PARAMETER", message: "from must be earlier than to." });
    expect(await refusal({ from: new Date(now - 2 * 86_400_000).toISOString(), to: new Date(now).toISOString(), step: "1m" })).toEqual({
      status: 400,
      code: "WRONG_RANGE_PARAMETER",
      message: expect.stringContaining("at most 1500 are answered"),
    });
    expect(await refusal({ step: "2m" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "step: use one of 1m, 5m, 15m, 1h, 6h, 1d" });
    expect(await refusal({ groupBy: "planet" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "groupBy: use one of endpoint, method, network, key, status" });
    expect(await refusal({ format: "xml" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "format: use json or csv" });
    expect(await refusal({ colour: "red" })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "Unknown parameter colour: use from, to, step, groupBy, format" });
    const twice = new URL(usageUrl({}));
    twice.searchParams.append("step", "1m");
    twice.searchParams.append("step", "1h");
    await expect(usageApiResponse(owner.userId, owner.projectId, twice)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: "step is given more than once: give it once." });
  });
});
