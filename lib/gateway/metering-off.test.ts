import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

// USAGE_METERING=off: the gateway serves without metering or plan limits; the request log still works.
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ metering: false });
}, 120_000);
afterAll(async () => gw.stop());

describe("with metering off", () => {
  it("serves past the plan's CU per second and allowance, sends no rate-limit headers, meters nothing and still logs requests", async () => {
    const p = await createTestProject("Unmetered");
    // Used up: 2 M CU today on the free plan's 1 M daily allowance.
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const today = new Date();
    await db().usageDay.create({
      data: { projectId: p.projectId, keyId: key.id, network: "ethereum-mainnet", api: "node", endpoint: "eth_chainId", day: new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate())), cu: 2_000_000n, requests: 1 },
    });
    // 100 × 5 CU in one batch: beyond the free plan's 300 CU per second.
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] }));
    const res = await fetch(`${gw.url}/node/ethereum-mainnet`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": p.apiKey }, body: JSON.stringify(batch) });
    expect(res.status).toBe(200);
    const items = (await res.json()) as Array<{ result?: string }>;
    expect(items.filter((i) => typeof i.result === "string")).toHaveLength(100);
    expect([res.headers.get("x-ratelimit-limit"), res.headers.get("retry-after")]).toEqual([null, null]);

    await gw.meter.flush();
    await gw.requestLog.flush();
    expect(await db().usageBucket.count({ where: { projectId: p.projectId } })).toBe(0);
    const logged = await db().requestLog.findMany({ where: { projectId: p.projectId } });
    expect(logged.map((r) => ({ method: r.method, calls: r.calls, status: r.status, cu: r.cu }))).toEqual([{ method: "batch", calls: 100, status: 200, cu: 500 }]);
  });
});
