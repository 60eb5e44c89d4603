import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { networkBySlug } from "@/lib/networks";
import { captureLogs } from "@/lib/testing/logs";
import { createWebhook } from "@/lib/webhooks/service";
import { UsageMeter, type UsageSample } from "./meter";
import { STEPS, usageCsv, usageReport, type Step } from "./query";

const MINUTE = 60_000;
const HOUR = 3_600_000;
// Far in the past and away from other tests' times.
const START = Date.UTC(2003, 4, 10, 0, 0);

beforeAll(async () => {
  await connectTestDatabase();
});

describe("usage report steps", () => {
  it("puts each row in the step its time falls in, for steps made of several rows too", async () => {
    const p = await createTestProject("Steps");
    const keyId = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const meter = new UsageMeter(captureLogs().logger);
    // One call at minute m of the first 2 days whose CU is unique to its time: every 7th minute,
    // CU = its index, two methods alternating.
    const calls: Array<{ at: number; cu: number; endpoint: string }> = [];
    for (let i = 1, m = 3; m < 48 * 60; i++, m += 7) calls.push({ at: START + m * MINUTE + 20_000, cu: i, endpoint: i % 2 === 0 ? "eth_call" : "eth_getLogs" });
    for (const c of calls) meter.record({ projectId: p.projectId, keyId, subscriptionId: "", network: "ethereum-mainnet", api: "node", endpoint: c.endpoint, status: "2xx", cu: c.cu, error: false, latencyMs: 5 }, c.at);
    await meter.flush();

    const project = { id: p.projectId, plan: "FREE" as const };
    const cases: Array<{ step: Step; span: number }> = [
      { step: "1m", span: 3 * HOUR },
      { step: "5m", span: 3 * HOUR },
      { step: "15m", span: 6 * HOUR },
      { step: "1h", span: 48 * HOUR },
      { step: "6h", span: 48 * HOUR },
      { step: "1d", span: 48 * HOUR },
    ];
    for (const { step, span } of cases) {
      const stepMs = STEPS[step] * 1000;
      const r = await usageReport(project, { from: START, to: START + span, step, groupBy: "method", format: "json" }, START + span);
      expect(r.times).toHaveLength(span / stepMs);
      expect(r.times.every((t, i) => Date.parse(t) === START + i * stepMs)).toBe(true);
      const expected = new Array<number>(span / stepMs).fill(0);
      for (const c of calls) if (c.at < START + span) expected[Math.floor((c.at - START) / stepMs)]! += c.cu;
      expect(r.total.cu, step).toEqual(expected);
      const calls2 = calls.filter((c) => c.at < START + span && c.endpoint === "eth_call");
      expect(r.groups.find((g) => g.key === "node:eth_call")?.requests.reduce((a, b) => a + b, 0), step).toBe(calls2.length);
    }
  });
});

describe("usage by key", () => {
  it("shows webhook messages under their subscription, labelled as such, beside the keys' calls", async () => {
    const p = await createTestProject("By key");
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const sub = await createWebhook(p.projectId, networkBySlug("ethereum-mainnet")!, { eventType: "BLOCK_PERIOD", description: "Treasury watch", notification: { webhookUrl: "https://example.com/hook" }, condition: { period: 1 } });
    const gone = "wh_NoLongerThere";
    const meter = new UsageMeter(captureLogs().logger);
    const at = START + 10 * 24 * HOUR;
    const sample = (who: Pick<UsageSample, "keyId" | "subscriptionId">, endpoint: string, cu: number): UsageSample => ({ projectId: p.projectId, ...who, network: "ethereum-mainnet", api: who.keyId ? "node" : "v1", endpoint, status: "2xx", cu, error: false, latencyMs: 5 });
    meter.record(sample({ keyId: key.id, subscriptionId: "" }, "eth_call", 26), at);
    meter.record(sample({ keyId: "", subscriptionId: sub.subscriptionId }, "webhooks.delivery", 10), at);
    meter.record(sample({ keyId: "", subscriptionId: sub.subscriptionId }, "webhooks.delivery", 10), at + MINUTE);
    meter.record(sample({ keyId: "", subscriptionId: gone }, "webhooks.delivery", 10), at);
    await meter.flush();

    const r = await usageReport({ id: p.projectId, plan: "FREE" }, { from: at, to: at + HOUR, step: "1h", groupBy: "key", format: "json" }, at + HOUR);
    expect(r.groups.map((g) => [g.key, g.label, g.cu.reduce((a, b) => a + b, 0)])).toEqual([
      [key.id, `${key.name} (${key.start}…)`, 26],
      [sub.subscriptionId, "Webhook “Treasury watch”", 20],
      [gone, `Deleted webhook (${gone})`, 10],
    ]);
  });
});

describe("usage CSV", () => {
  it("quotes what needs quoting and defuses texts a spreadsheet would run as formulas", () => {
    const series = { cu: [5], requests: [1], errors: [0], p50: [12], p95: [null], p99: [null] };
    const csv = usageCsv({
      from: "2026-01-01T00:00:00.000Z",
      to: "2026-01-01T00:01:00.000Z",
      step: "1m",
      stepSeconds: 60,
      groupBy: "key",
      times: ["2026-01-01T00:00:00.000Z"],
      groups: [
        { key: "key_1", label: '=HYPERLINK("http://x"),"q"', ...series },
        { key: "key_2", label: "@SUM(A1), -1, +1", ...series },
        { key: "key_3", label: 'Plain, "quoted"', ...series },
      ],
      total: series,
      sums: { cu: 5, requests: 1, errors: 0 },
      allowance: { plan: "FREE", label: "Starter (free)", period: "day", allowanceCu: 1_000_000, usedCu: 5, overage: false, periodStart: "2026-01-01T00:00:00.000Z", resetsAt: "2026-01-02T00:00:00.000Z" },
    });
    expect(csv.split("\n")).toEqual([
      "time,group,label,cu,requests,errors,p50_ms,p95_ms,p99_ms",
      `2026-01-01T00:00:00.000Z,key_1,"'=HYPERLINK(""http://x""),""q""",5,1,0,12,,`,
      `2026-01-01T00:00:00.000Z,key_2,"'@SUM(A1), -1, +1",5,1,0,12,,`,
      `2026-01-01T00:00:00.000Z,key_3,"Plain, ""quoted""",5,1,0,12,,`,
      "2026-01-01T00:00:00.000Z,all,All,5,1,0,12,,",
      "",
    ]);
  });
});
