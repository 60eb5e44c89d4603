import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { usageApiResponse } from "./api";
import { minuteRetentionMs, PRUNE_BATCH, UsageMeter } from "./meter";
import type { UsageReport } from "./query";

const MINUTE = 60_000;
const DAY = 86_400_000;
// Far in the past, so pruning at this "now" deletes no other test's rows.
const NOW = Date.UTC(2001, 0, 31, 12, 0);
const RETENTION = 2 * DAY;
const CUTOFF = NOW - RETENTION;
// More old minutes than one DELETE removes.
const OLD = PRUNE_BATCH + 1000;

beforeAll(async () => {
  await connectTestDatabase();
});

async function snapshot(projectId: string) {
  const rows = async (table: string, column: string) =>
    (await db().$queryRawUnsafe<Array<{ t: Date; endpoint: string; cu: bigint; requests: bigint }>>(`SELECT ${column} AS t, endpoint, cu::bigint, requests::bigint FROM ${table} WHERE project_id = $1 ORDER BY 1, 2`, projectId)).map(
      (r) => ({ t: r.t.toISOString(), endpoint: r.endpoint, cu: Number(r.cu), requests: Number(r.requests) }),
    );
  return { minutes: await rows("usage_buckets", "minute"), hours: await rows("usage_hours", "hour"), days: await rows("usage_days", "day") };
}

describe("minute retention", () => {
  it("deletes minute buckets older than the retention in batches, keeps newer ones and the rollups, and the 30-day chart still sums them all", async () => {
    const p = await createTestProject("Retention");
    const keyId = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    // One meter records; another, which never flushes (a flush prunes at the real time), prunes.
    const meter = new UsageMeter(captureLogs().logger);
    const pruner = new UsageMeter(captureLogs().logger, RETENTION);
    const sample = (endpoint: string, cu: number) => ({ projectId: p.projectId, keyId, subscriptionId: "", network: "ethereum-mainnet", api: "node", endpoint, status: "2xx" as const, cu, error: false, latencyMs: 5 });
    // One call a minute for OLD minutes ending just before the cutoff, and a few after it.
    for (let i = 1; i <= OLD; i++) meter.record(sample("eth_call", 26), CUTOFF - i * MINUTE + 30_000);
    meter.record(sample("eth_chainId", 1), CUTOFF);
    meter.record(sample("eth_chainId", 1), CUTOFF + 5 * MINUTE);
    meter.record(sample("eth_getLogs", 75), NOW - MINUTE);
    await meter.flush();
    const before = await snapshot(p.projectId);
    expect(before.minutes).toHaveLength(OLD + 3);

    expect(await pruner.prune(NOW)).toBe(OLD);

    const after = await snapshot(p.projectId);
    expect(after.minutes).toEqual([
      { t: new Date(CUTOFF).toISOString(), endpoint: "eth_chainId", cu: 1, requests: 1 },
      { t: new Date(CUTOFF + 5 * MINUTE).toISOString(), endpoint: "eth_chainId", cu: 1, requests: 1 },
      { t: new Date(NOW - MINUTE).toISOString(), endpoint: "eth_getLogs", cu: 75, requests: 1 },
    ]);
    expect(after.hours).toEqual(before.hours);
    expect(after.days).toEqual(before.days);
    // Nothing left to delete: a second prune removes nothing.
    expect(await pruner.prune(NOW)).toBe(0);

    // The 30-day chart (daily steps, from the rollups) still holds every call.
    const url = new URL(`http://console.test/api/projects/${p.projectId}/usage`);
    url.searchParams.set("from", new Date(NOW - 30 * DAY).toISOString());
    url.searchParams.set("to", new Date(NOW).toISOString());
    url.searchParams.set("step", "1d");
    const res = await usageApiResponse(p.userId, p.projectId, url, NOW);
    const report = (await res.json()) as UsageReport;
    const total = OLD * 26 + 1 + 1 + 75;
    expect(report.sums).toEqual({ cu: total, requests: OLD + 3, errors: 0 });
    expect(report.total.cu.reduce((s, x) => s + x, 0)).toBe(total);
    expect(Object.fromEntries(report.groups.map((g) => [g.key, g.cu.reduce((s, x) => s + x, 0)]))).toEqual({ node: total });
  });

  it("refuses a minute step for a range that starts before the kept minutes, and draws it hourly when no step is asked for", async () => {
    const p = await createTestProject("Retention range");
    const url = (params: Record<string, string>) => {
      const u = new URL(`http://console.test/api/projects/${p.projectId}/usage`);
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      return u;
    };
    const kept = NOW - minuteRetentionMs();
    const old = { from: new Date(kept - DAY).toISOString(), to: new Date(kept - DAY + 2 * 3_600_000).toISOString() };
    for (const step of ["1m", "5m", "15m"]) {
      const e = await usageApiResponse(p.userId, p.projectId, url({ ...old, step }), NOW).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(AppError);
      expect(e).toMatchObject({
        status: 400,
        code: "WRONG_RANGE_PARAMETER",
        message: `Usage per minute is kept for 16 days, so steps of 1m, 5m, 15m start at ${new Date(kept).toISOString()} at the earliest: use a step of 1h or more for this range, or a later from.`,
      });
    }
    const hourly = (await (await usageApiResponse(p.userId, p.projectId, url(old), NOW)).json()) as UsageReport;
    expect({ step: hourly.step, times: hourly.times.length }).toEqual({ step: "1h", times: 2 });
    // Within the kept minutes, the same two hours are drawn per minute.
    const recent = (await (await usageApiResponse(p.userId, p.projectId, url({ from: new Date(NOW - 2 * 3_600_000).toISOString(), to: new Date(NOW).toISOString() }), NOW)).json()) as UsageReport;
    expect({ step: recent.step, times: recent.times.length }).toEqual({ step: "1m", times: 120 });
  });
});
