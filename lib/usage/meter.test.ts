import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { faultProxyDatabase } from "@/lib/testing/fault-proxy";
import { createTestProject } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { createAdditionalKey } from "@/lib/keys/service";
import { UsageMeter, type UsageSample } from "./meter";

// The meter reaches PostgreSQL through a proxy that can refuse connections (the database is gone)
// or drop the answer to a statement that committed (the database died just after the commit).
const { proxy } = faultProxyDatabase();

async function stored(projectId: string) {
  const rows = await db().usageBucket.findMany({ where: { projectId } });
  return {
    requests: rows.reduce((n, r) => n + r.requests, 0),
    errors: rows.reduce((n, r) => n + r.errors, 0),
    cu: rows.reduce((n, r) => n + Number(r.cu), 0),
  };
}

function sample(projectId: string, keyId: string, endpoint: string, cu: number, error = false): UsageSample {
  return { projectId, keyId, subscriptionId: "", network: "ethereum-mainnet", api: "node", endpoint, status: error ? "rpc_error" : "2xx", cu, error, latencyMs: 12 };
}

describe("the usage meter", () => {
  it("aggregates calls into per-minute buckets and adds to them on later flushes", async () => {
    const p = await createTestProject("Meter");
    const keyId = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const meter = new UsageMeter(captureLogs().logger);
    const minute = Date.UTC(2026, 0, 1, 12, 0);
    meter.record(sample(p.projectId, keyId, "eth_call", 26), minute + 1000);
    meter.record(sample(p.projectId, keyId, "eth_call", 26), minute + 59_000);
    meter.record(sample(p.projectId, keyId, "eth_call", 0, true), minute + 60_000);
    meter.record(sample(p.projectId, keyId, "eth_getLogs", 75), minute + 2000);
    await meter.flush();
    meter.record(sample(p.projectId, keyId, "eth_call", 26), minute + 3000);
    await meter.stop();

    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId }, orderBy: [{ minute: "asc" }, { endpoint: "asc" }] });
    const hist = (n: number) => [0, 0, n, 0, 0, 0, 0, 0, 0, 0, 0]; // 12 ms: the 10–25 ms bucket
    expect(rows.map((r) => ({ minute: r.minute.toISOString(), endpoint: r.endpoint, status: r.status, cu: Number(r.cu), requests: r.requests, errors: r.errors, latencyMsSum: Number(r.latencyMsSum), latencyHist: r.latencyHist }))).toEqual([
      { minute: "2026-01-01T12:00:00.000Z", endpoint: "eth_call", status: "2xx", cu: 78, requests: 3, errors: 0, latencyMsSum: 36, latencyHist: hist(3) },
      { minute: "2026-01-01T12:00:00.000Z", endpoint: "eth_getLogs", status: "2xx", cu: 75, requests: 1, errors: 0, latencyMsSum: 12, latencyHist: hist(1) },
      { minute: "2026-01-01T12:01:00.000Z", endpoint: "eth_call", status: "rpc_error", cu: 0, requests: 1, errors: 1, latencyMsSum: 12, latencyHist: hist(1) },
    ]);
    // The same statements kept the hour and day rollups.
    for (const rollup of [await db().usageHour.findMany({ where: { projectId: p.projectId }, orderBy: [{ endpoint: "asc" }, { status: "asc" }] }), await db().usageDay.findMany({ where: { projectId: p.projectId }, orderBy: [{ endpoint: "asc" }, { status: "asc" }] })]) {
      expect(rollup.map((r) => ({ endpoint: r.endpoint, status: r.status, cu: Number(r.cu), requests: Number(r.requests), errors: Number(r.errors), latencyHist: r.latencyHist }))).toEqual([
        { endpoint: "eth_call", status: "2xx", cu: 78, requests: 3, errors: 0, latencyHist: hist(3) },
        { endpoint: "eth_call", status: "rpc_error", cu: 0, requests: 1, errors: 1, latencyHist: hist(1) },
        { endpoint: "eth_getLogs", status: "2xx", cu: 75, requests: 1, errors: 0, latencyHist: hist(1) },
      ]);
    }
    expect(meter.unwritten).toBe(0);
  });

  it("counts runs of one key and call, switches between keys, calls and minutes, and flushes in between exactly; records when each key was last used", async () => {
    const p = await createTestProject("Meter runs", "DEVELOPER");
    const keyA = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const keyB = (await createAdditionalKey(p.userId, p.projectId, "Second")).id;
    const meter = new UsageMeter(captureLogs().logger);
    const minute = Date.UTC(2026, 0, 1, 12, 0);
    // Runs of one counter (found without the index), and every kind of switch between counters.
    const sequence: Array<[string, string, number, boolean, number]> = [
      [keyA, "eth_call", 26, false, 1_000],
      [keyA, "eth_call", 26, false, 2_000],
      [keyA, "eth_call", 0, true, 3_000],
      [keyB, "eth_call", 26, false, 4_000],
      [keyA, "eth_call", 26, false, 5_000],
      [keyA, "eth_getLogs", 75, false, 6_000],
      [keyA, "eth_call", 26, false, 61_000],
      [keyA, "eth_call", 26, false, 62_000],
      [keyB, "eth_call", 26, false, 63_000],
    ];
    for (const [keyId, endpoint, cu, error, at] of sequence.slice(0, 5)) meter.record(sample(p.projectId, keyId, endpoint, cu, error), minute + at);
    await meter.flush();
    // The counter of the last sample before the flush was sent: the same call after it starts a new one.
    meter.record(sample(p.projectId, keyA, "eth_call", 26), minute + 5_500);
    for (const [keyId, endpoint, cu, error, at] of sequence.slice(5)) meter.record(sample(p.projectId, keyId, endpoint, cu, error), minute + at);
    await meter.stop();

    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId } });
    const got = rows
      .map((r) => `${r.minute.toISOString().slice(11, 16)} ${r.keyId === keyA ? "A" : "B"} ${r.endpoint} ${r.status} cu=${Number(r.cu)} n=${r.requests} err=${r.errors}`)
      .sort();
    expect(got).toEqual([
      "12:00 A eth_call 2xx cu=104 n=4 err=0",
      "12:00 A eth_call rpc_error cu=0 n=1 err=1",
      "12:00 A eth_getLogs 2xx cu=75 n=1 err=0",
      "12:00 B eth_call 2xx cu=26 n=1 err=0",
      "12:01 A eth_call 2xx cu=52 n=2 err=0",
      "12:01 B eth_call 2xx cu=26 n=1 err=0",
    ]);
    const keys = await db().apiKey.findMany({ where: { projectId: p.projectId } });
    const lastUsed = Object.fromEntries(keys.map((k) => [k.id === keyA ? "A" : "B", k.lastUsedAt?.getTime()]));
    expect(lastUsed).toEqual({ A: minute + 62_000, B: minute + 63_000 });
  });

  it("keeps usage in memory while the database is unreachable, logs that once, and writes it all once when it is back", async () => {
    const p = await createTestProject("Meter outage");
    const keyId = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const logs = captureLogs();
    const meter = new UsageMeter(logs.logger);
    proxy().refuse();
    try {
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 5; i++) meter.record(sample(p.projectId, keyId, "eth_blockNumber", 10));
        meter.record(sample(p.projectId, keyId, "eth_blockNumber", 0, true));
        await meter.flush();
      }
      expect(meter.unwritten).toBe(18);
    } finally {
      proxy().pass();
    }
    await meter.flush();
    expect(meter.unwritten).toBe(0);
    expect(await stored(p.projectId)).toEqual({ requests: 18, errors: 3, cu: 150 });
    expect(logs.messages.filter((m) => m.startsWith("usage flush failed"))).toHaveLength(1);
    expect(logs.messages.filter((m) => m.startsWith("usage written again after"))).toHaveLength(1);
  });

  it("says how much usage it loses when it is stopped while the database is unreachable", async () => {
    const p = await createTestProject("Meter stop");
    const keyId = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const logs = captureLogs();
    const meter = new UsageMeter(logs.logger);
    for (let i = 0; i < 3; i++) meter.record(sample(p.projectId, keyId, "eth_call", 26));
    proxy().refuse();
    try {
      await meter.stop();
    } finally {
      proxy().pass();
    }
    expect(logs.lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual(["the usage of 3 requests could not be written before stopping (the database is unreachable) and is lost"]);
    expect(await stored(p.projectId)).toEqual({ requests: 0, errors: 0, cu: 0 });
  });

  it("does not count a flush twice when the database committed it but its answer was lost", async () => {
    const p = await createTestProject("Meter lost answer");
    const keyId = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const meter = new UsageMeter(captureLogs().logger);
    for (let i = 0; i < 4; i++) meter.record(sample(p.projectId, keyId, "eth_call", 26));
    const cut = proxy().cutAfterReply("INSERT 0 1");
    await meter.flush();
    await cut;
    // Committed, but the meter could not know it: it still holds the counts.
    expect(await stored(p.projectId)).toEqual({ requests: 4, errors: 0, cu: 104 });
    expect(meter.unwritten).toBe(4);

    // Sent again under the same id (and what came meanwhile under a new one): the first is skipped.
    meter.record(sample(p.projectId, keyId, "eth_call", 26));
    await meter.flush();
    expect(meter.unwritten).toBe(0);
    expect(await stored(p.projectId)).toEqual({ requests: 5, errors: 0, cu: 130 });
    const day = await db().usageDay.aggregate({ where: { projectId: p.projectId }, _sum: { cu: true, requests: true } });
    expect({ cu: Number(day._sum.cu), requests: Number(day._sum.requests) }).toEqual({ cu: 130, requests: 5 });
  });
});

describe("several processes flushing the same counters", () => {
  it("never deadlock, in whatever order each recorded them, and add up to the unit", async () => {
    const p = await createTestProject("Meter concurrency", "DEVELOPER");
    const keyA = (await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } })).id;
    const keyB = (await createAdditionalKey(p.userId, p.projectId, "Second")).id;
    const minute = Date.UTC(2026, 0, 2, 12, 0);
    // Both keys' rows in api_keys are written too (when each was last used).
    const endpoints = Array.from({ length: 60 }, (_, i) => [i % 2 === 0 ? keyA : keyB, `e${String(i).padStart(2, "0")}`] as const);
    // Four meters, as four processes would have (each flush a statement on its own connection),
    // recording the same counters (two minutes of one hour: the hour and day rows are shared too)
    // in opposite and shifting orders.
    const logs = Array.from({ length: 4 }, () => captureLogs());
    const meters = logs.map((l) => new UsageMeter(l.logger));
    let requests = 0;
    let cu = 0;
    const until = Date.now() + 3000;
    for (let round = 0; Date.now() < until; round++) {
      meters.forEach((meter, m) => {
        const order = m % 2 === 0 ? endpoints : [...endpoints].reverse();
        const shift = (round * 7 + m * 13) % order.length;
        for (const [keyId, endpoint] of [...order.slice(shift), ...order.slice(0, shift)]) {
          for (const at of [1000, 61_000]) {
            meter.record(sample(p.projectId, keyId, endpoint, 3), minute + at + round);
            requests += 1;
            cu += 3;
          }
        }
      });
      await Promise.all(meters.map((meter) => meter.flush()));
    }
    await Promise.all(meters.map((meter) => meter.stop()));

    expect(logs.flatMap((l) => l.lines.filter((line) => line.level !== "info" && line.level !== "debug"))).toEqual([]);
    expect(await stored(p.projectId)).toEqual({ requests, errors: 0, cu });
    const hours = await db().usageHour.findMany({ where: { projectId: p.projectId } });
    expect(hours.reduce((n, r) => n + Number(r.requests), 0)).toBe(requests);
    const days = await db().usageDay.findMany({ where: { projectId: p.projectId } });
    expect(days.reduce((n, r) => n + Number(r.cu), 0)).toBe(cu);
  });
});
