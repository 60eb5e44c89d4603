import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { joinCluster, type ClusterMembership } from "@/lib/cluster/members";
import { db } from "@/lib/db/client";
import { limitsMode, setLimitsMode } from "@/lib/health";
import { EVM_METHODS } from "@/lib/evm/methods";
import { RateLimiter } from "@/lib/gateway/limits";
import { FAILED_AUTH_LIMIT } from "@/lib/gateway/router";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { QuotaTracker } from "@/lib/gateway/quota";
import { PLANS } from "@/lib/plans";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { startRedis, type TestRedis } from "@/lib/testing/redis";
import { HELD_BACK_SHARE, SharedLimits, SLOW_REPORT_MS } from "./shared";

// Two web processes of one cluster, in this test process: each gateway has its own limiter,
// allowance and membership, and both share one real redis-server.
let redis: TestRedis;
const gateways: Array<{ gw: TestGateway; limits: SharedLimits; member?: ClusterMembership; logs: string[] }> = [];

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < 2; i++) {
    const { logger, messages } = captureLogs();
    const entry: (typeof gateways)[number] = { gw: undefined!, limits: undefined!, logs: messages };
    entry.limits = new SharedLimits({ redisUrl: redis.url, webProcesses: () => entry.member?.webProcesses() ?? 1, onMode: i === 0 ? setLimitsMode : undefined, logger, probeMs: 100, commandTimeoutMs: 2_000 });
    // Commands get 2 s, not 500 ms: on a machine loaded by other suites a stalled event loop would
    // otherwise time one out now and then, and a moment in local mode divides the limits.
    // Behind one trusted proxy: each X-Forwarded-For address is its own client.
    entry.gw = await startTestGateway({ limiter: new RateLimiter(entry.limits), allowance: new QuotaTracker(Date.now, entry.limits), limits: entry.limits, trustedProxyHops: 1 });
    gateways.push(entry);
  }
  for (const g of gateways) g.member = await joinCluster({ role: "web" });
  for (const g of gateways) await g.member!.beat();
  await vi.waitFor(() => expect(gateways.map((g) => g.limits.mode)).toEqual(["shared", "shared"]), { timeout: 5_000 });
}, 120_000);

afterAll(async () => {
  for (const g of gateways) {
    await g.member?.stop();
    await g.limits.stop();
    await g.gw.stop();
  }
  await redis?.stop();
});

const CHAIN_ID_CU = EVM_METHODS.eth_chainId!.cu;
const BATCH = 10;

/** A batch of BATCH eth_chainId calls: the CU of those served, those refused for the rate, and the answer's time. */
async function batch(gw: TestGateway, key: string): Promise<{ servedCu: number; refused: number; retryAfter: string | null; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${gw.url}/node/ethereum-mainnet`, {
    method: "POST",
    headers: { "X-API-KEY": key, "Content-Type": "application/json" },
    body: JSON.stringify(Array.from({ length: BATCH }, (_, id) => ({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] }))),
  });
  const retryAfter = res.headers.get("retry-after");
  const ms = performance.now() - started;
  // Every item refused for the rate: the whole request is (429 TOO_MANY_REQUESTS).
  if (res.status === 429) {
    expect(await res.json()).toMatchObject({ code: "TOO_MANY_REQUESTS" });
    return { servedCu: 0, refused: BATCH, retryAfter, ms };
  }
  const items = (await res.json()) as Array<{ result?: unknown; error?: { code: number } }>;
  expect(res.status).toBe(200);
  return {
    servedCu: items.filter((i) => "result" in i).length * CHAIN_ID_CU,
    refused: items.filter((i) => i.error?.code === -32005).length,
    retryAfter,
    ms,
  };
}

/** Sends `cuPerSecond` of batches for `seconds`, alternating between `targets`; what was served, over how long. */
async function load(targets: TestGateway[], key: string, cuPerSecond: number, seconds: number) {
  const interval = (BATCH * CHAIN_ID_CU * 1000) / cuPerSecond;
  const answers: Array<Promise<Awaited<ReturnType<typeof batch>>>> = [];
  const started = performance.now();
  for (let i = 0; performance.now() - started < seconds * 1000; i++) {
    const due = started + i * interval;
    if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
    answers.push(batch(targets[i % targets.length]!, key));
  }
  const all = await Promise.all(answers);
  return { all, servedCu: all.reduce((n, a) => n + a.servedCu, 0), seconds: (performance.now() - started) / 1000 };
}

/** A request with a made-up key from `address`: its status (401: looked up; 429: refused before the lookup) and Retry-After. */
async function madeUpKey(gw: TestGateway, address: string): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${gw.url}/node/ethereum-mainnet`, {
    method: "POST",
    headers: { "X-API-KEY": generateKeyMaterial().secret, "Content-Type": "application/json", "X-Forwarded-For": address },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  await res.body?.cancel();
  return { status: res.status, retryAfter: res.headers.get("retry-after") };
}

describe("limits shared through Redis", () => {
  it("two gateways hold a project to its plan's CU per second together: at twice the rate, served CU stay within the rate plus one burst", async () => {
    const p = await createTestProject("Shared rate", "DEVELOPER");
    const rate = PLANS.DEVELOPER.cuPerSecond!;
    const run = await load(
      gateways.map((g) => g.gw),
      p.apiKey,
      2 * rate,
      4,
    );
    expect(run.servedCu).toBeLessThanOrEqual(1.05 * rate * run.seconds + rate);
    // Held to the shared rate, not starved below it.
    expect(run.servedCu).toBeGreaterThanOrEqual(0.8 * rate * run.seconds);
    const refused = run.all.find((a) => a.refused > 0);
    expect(refused?.retryAfter).toBe("1");
  });

  it("two gateways share a project's allowance: once it is used up through one, the other refuses after at most one call more", async () => {
    const p = await createTestProject("Shared allowance");
    const allowance = PLANS.FREE.allowanceCu!;
    const left = 10 * CHAIN_ID_CU;
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const now = new Date();
    await db().usageDay.create({
      data: { projectId: p.projectId, keyId: key.id, network: "ethereum-mainnet", api: "node", endpoint: "eth_chainId", day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())), cu: BigInt(allowance - left), requests: 1 },
    });
    const call = async (gw: TestGateway) => {
      const res = await fetch(`${gw.url}/node/ethereum-mainnet`, { method: "POST", headers: { "X-API-KEY": p.apiKey, "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
      await res.body?.cancel();
      return res.status;
    };
    const [a, b] = gateways.map((g) => g.gw) as [TestGateway, TestGateway];
    let served = 0;
    expect(await call(b)).toBe(200);
    served++;
    for (let status = await call(a); status === 200; status = await call(a)) served++;
    // B last read the count in Redis as A began. A client of B calling some time later is served
    // once more at most: B reads the count again, in the background, once it is a quarter second old.
    const later = async () => {
      await new Promise((r) => setTimeout(r, 300));
      return call(b);
    };
    for (let status = await later(); status === 200; status = await later()) served++;
    // Each gateway alone would serve the 10 calls left: 20 together.
    expect(served).toBeLessThanOrEqual(12);
    expect(served).toBeGreaterThanOrEqual(10);
  });

  it("two gateways hold a client address to one burst of failed key lookups together, not one each", async () => {
    const answers = [];
    for (let i = 0; i < 2 * FAILED_AUTH_LIMIT.burst; i++) answers.push(await madeUpKey(gateways[i % 2]!.gw, "198.51.100.61"));
    const lookedUp = answers.filter((a) => a.status === 401).length;
    // Each gateway learns what the other took within moments: a lookup or two more at most.
    expect(lookedUp).toBeGreaterThanOrEqual(FAILED_AUTH_LIMIT.burst);
    expect(lookedUp).toBeLessThanOrEqual(FAILED_AUTH_LIMIT.burst + 2);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBe(answers.length - lookedUp);
    expect(Number(refused.at(-1)?.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it("while Redis is frozen, requests are answered at once, each gateway enforces its share (limits: local), and shared limits come back by themselves", async () => {
    const p = await createTestProject("Redis frozen", "DEVELOPER");
    const rate = PLANS.DEVELOPER.cuPerSecond!;
    const logged = gateways.map((g) => g.logs.length);
    redis.freeze();
    try {
      // Answered without waiting on Redis, before and after the limits notice it is gone.
      for (let i = 0; i < 3; i++) expect((await batch(gateways[0]!.gw, p.apiKey)).ms).toBeLessThan(1_000);
      await expect.poll(() => gateways.map((g) => g.limits.mode), { timeout: 5_000 }).toEqual(["local", "local"]);
      expect(limitsMode()).toBe("local");
      // Said once, however many calls and probes fail meanwhile.
      gateways.forEach((g, i) => expect(g.logs.slice(logged[i])).toEqual([expect.stringMatching(/^limits: local \(Redis unreachable: Command timed out\)/)]));

      const other = await createTestProject("Redis frozen, load", "DEVELOPER");
      const processes = gateways[0]!.member!.webProcesses();
      expect(processes).toBeGreaterThanOrEqual(2);
      expect(gateways[0]!.limits.share()).toBe(processes);
      const run = await load([gateways[0]!.gw], other.apiKey, rate, 2);
      const share = rate / processes;
      expect(run.servedCu).toBeLessThanOrEqual(1.05 * share * run.seconds + share);
      expect(run.all.every((a) => a.ms < 1_000)).toBe(true);

      // Failed key lookups per address: this gateway's share of the burst.
      const lookups = [];
      for (let i = 0; i < FAILED_AUTH_LIMIT.burst; i++) lookups.push((await madeUpKey(gateways[0]!.gw, "198.51.100.62")).status);
      expect(lookups.filter((s) => s === 401)).toHaveLength(Math.floor(FAILED_AUTH_LIMIT.burst / processes));
    } finally {
      redis.thaw();
    }
    await expect.poll(() => gateways.map((g) => g.limits.mode), { timeout: 5_000 }).toEqual(["shared", "shared"]);
    expect(limitsMode()).toBe("shared");
    gateways.forEach((g, i) => expect(g.logs.slice(logged[i])).toEqual([expect.stringMatching(/^limits: local/), "limits: shared"]));
    expect(gateways[0]!.limits.share()).toBe(1);
    expect((await batch(gateways[1]!.gw, p.apiKey)).servedCu).toBe(BATCH * CHAIN_ID_CU);
  });
});

describe("reports to Redis", () => {
  it("a key far from its rate is reported in bulk within SLOW_REPORT_MS; once a process holds back its share of HELD_BACK_SHARE, at once", async () => {
    const limits = gateways[0]!.limits;
    const limiter = new RateLimiter(limits);
    const who = { projectId: `reports-${Date.now()}`, ownerId: "owner", plan: "BUSINESS" as const };
    const rate = PLANS.BUSINESS.cuPerSecond!;
    const counter = limits.counter("cu", rate, 1)!;
    const counted = async () => (await counter.get(who.projectId))?.consumedPoints ?? 0;
    // What one of the two live web processes may hold back before it reports at once.
    const threshold = (rate * HELD_BACK_SHARE) / limits.liveWebProcesses();
    expect(limits.liveWebProcesses()).toBe(2);
    const below = Math.floor((threshold - 1) / CHAIN_ID_CU);
    for (let i = 0; i < below; i++) expect(limiter.take(who, CHAIN_ID_CU)).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(await counted()).toBe(0);
    await vi.waitFor(async () => expect(await counted()).toBe(below * CHAIN_ID_CU), { timeout: SLOW_REPORT_MS + 2_000, interval: 20 });
    // Past the threshold: reported with the next report (REPORT_MS), not SLOW_REPORT_MS later.
    const over = Math.ceil(threshold / CHAIN_ID_CU);
    for (let i = 0; i < over; i++) expect(limiter.take(who, CHAIN_ID_CU)).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(await counted()).toBe((below + over) * CHAIN_ID_CU);
  });
});
