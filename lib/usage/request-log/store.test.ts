import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { faultProxyDatabase } from "@/lib/testing/fault-proxy";
import { createTestProject } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { maskExcerpt, maskRequestLine, RequestLog, REQUEST_LOG_ROWS, type RequestLogEntry } from ".";

// The log reaches PostgreSQL through a proxy that can refuse connections (the database is gone).
const { proxy } = faultProxyDatabase();

function entry(projectId: string, i: number, params: string | Buffer): RequestLogEntry {
  return {
    projectId,
    keyId: "key_test",
    requestId: `req_${i}`,
    at: Date.now(),
    api: "node",
    network: "ethereum-mainnet",
    method: "eth_call",
    calls: 1,
    status: 200,
    statusClass: "2xx",
    latencyMs: 1.5,
    cu: 26,
    httpMethod: "POST",
    url: "/node/ethereum-mainnet",
    params,
    result: `{"jsonrpc":"2.0","id":${i},"result":"0x1"}`,
  };
}

const stored = (projectId: string) =>
  db().requestLog.findMany({ where: { projectId }, orderBy: { id: "asc" }, select: { requestId: true, params: true, result: true } });

describe("the request log", () => {
  it("keeps the newest 1,000 requests of a project while the database is away and writes them, masked, when it is back", async () => {
    const p = await createTestProject("Request log outage");
    const other = await createTestProject("Request log outage, quiet project");
    const logs = captureLogs();
    const log = new RequestLog(logs.logger);
    const key = "bg_5Hq2Wr9xKk3pLm7Nd4Tz";
    proxy().refuse();
    try {
      for (let i = 0; i < 600; i++) log.record(entry(p.projectId, i, `{"params":["${key}"],"id":${i}}`));
      log.record(entry(other.projectId, 0, "{}"));
      await log.flush();
      for (let i = 600; i < 1200; i++) log.record(entry(p.projectId, i, `{"params":["${key}"],"id":${i}}`));
      await log.flush();
      expect(log.unwritten).toBe(REQUEST_LOG_ROWS + 1);
    } finally {
      proxy().pass();
    }
    await log.flush();
    expect(log.unwritten).toBe(0);
    const rows = await stored(p.projectId);
    expect(rows.map((r) => r.requestId)).toEqual(Array.from({ length: REQUEST_LOG_ROWS }, (_, i) => `req_${200 + i}`));
    expect(rows[0]).toEqual({ requestId: "req_200", params: `{"params":["bg_••••"],"id":200}`, result: `{"jsonrpc":"2.0","id":200,"result":"0x1"}` });
    expect((await stored(other.projectId)).map((r) => r.requestId)).toEqual(["req_0"]);
    expect(logs.messages.filter((m) => m.startsWith("request log write failed"))).toHaveLength(1);
  });

  it("holds only the excerpt of a large body, cut and marked", async () => {
    const p = await createTestProject("Request log, large bodies");
    const log = new RequestLog(captureLogs().logger);
    const big = `{"data":"${"ab".repeat(300_000)}"}`;
    const e = entry(p.projectId, 1, Buffer.from(big));
    e.result = big;
    log.record(e);
    // What the log holds no longer refers to the 600 KB bodies: only copies of their excerpts' parts
    // (each in a slab of Node's Buffer pool, 8 KB).
    expect(log.heldBytes).toBeGreaterThan(2 * 2048);
    expect(log.heldBytes).toBeLessThanOrEqual(2 * 8192);
    await log.flush();
    const [row] = await stored(p.projectId);
    expect(row!.params).toBe(`${big.slice(0, 2048)}…`);
    expect(row!.result).toBe(`${big.slice(0, 2048)}…`);
  });

  it("writes every entry as it was recorded, whatever its texts, after the ring grew, wrapped and was reused", async () => {
    const p = await createTestProject("Request log, texts of every shape");
    const log = new RequestLog(captureLogs().logger);
    // Texts short enough to be copied into the ring and too long for it, ASCII and not (lone
    // surrogates, NUL, emoji), strings and Buffers (also of invalid UTF-8), absent bodies.
    const body = fc.oneof(
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 4, arbitrary: fc.string({ unit: "binary-ascii", minLength: 100, maxLength: 250 }) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 700 }) },
      { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 20, maxLength: 200 }) },
      { weight: 1, arbitrary: fc.string({ maxLength: 3000 }) },
      { weight: 2, arbitrary: fc.uint8Array({ minLength: 50, maxLength: 300 }).map((a) => Buffer.from(a)) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 900 }).map((a) => Buffer.from(a)) },
      { weight: 1, arbitrary: fc.constant(`{"jsonrpc":"2.0","method":"eth_call","params":[{"to":"0x00"}],"apiKey":"bg_5Hq2Wr9xKk3pLm7Nd4Tz"}`) },
    );
    const url = fc.oneof(
      fc.constant("/node/ethereum-mainnet"),
      fc.constant("/node/ethereum-mainnet/bg_5Hq2Wr9xKk3pLm7Nd4Tz?x=1"),
      fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 900 }).map((s) => `/node/${s}`),
    );
    const mixed = fc.record({ params: body, result: body, url, long: fc.boolean() });
    const ascii = (min: number, max: number) => fc.string({ unit: "binary-ascii", minLength: min, maxLength: max });
    const small = fc.record({ params: ascii(0, 40), result: ascii(0, 40), url: fc.constant("/node/ethereum-mainnet"), long: fc.constant(false) });
    const large = fc.record({ params: ascii(180, 220), result: ascii(180, 220), url: fc.constant("/node/ethereum-mainnet"), long: fc.constant(false) });
    const excerpt = (t: string | Buffer | undefined) => maskExcerpt(t === undefined ? "" : typeof t === "string" ? t.slice(0, 2112) : t.toString("utf8", 0, Math.min(t.length, 2112)));
    const all: RequestLogEntry[] = [];
    // Between flushes: the ring grows from 16 to 1,000 and wraps; then it is reused with texts far
    // smaller and far larger, so its buffer wraps at other places and large texts are held.
    const rounds: Array<[typeof mixed, number]> = [
      [mixed, 1300],
      [small, 1200],
      [large, 1037],
      [small, 400],
      [large, 999],
      [mixed, 1500],
    ];
    for (const [r, [shape, n]] of rounds.entries()) {
      for (const { params, result, url, long } of fc.sample(shape, { numRuns: n, seed: 20261126 + r })) {
        const i = all.length;
        const e: RequestLogEntry = {
          ...entry(p.projectId, i, params ?? ""),
          requestId: long ? `req_${i}_${"r".repeat(600)}` : `req_${i}`,
          method: long ? `eth_${"m".repeat(520)}` : "eth_call",
          status: 200 + (i % 300),
          latencyMs: i / 7,
          cu: i,
          url,
          params,
          result,
        };
        all.push(e);
        log.record(e);
      }
      await log.flush();
      const rows = (await db().requestLog.findMany({ where: { projectId: p.projectId }, orderBy: { id: "asc" } })).slice(-REQUEST_LOG_ROWS);
      const newest = all.slice(-REQUEST_LOG_ROWS);
      expect(rows).toHaveLength(newest.length);
      rows.forEach((row, j) => {
        const e = newest[j]!;
        expect({
          requestId: row.requestId,
          method: row.method,
          status: row.status,
          latencyMs: row.latencyMs,
          cu: row.cu,
          at: row.at.getTime(),
          path: row.path,
          params: row.params,
          result: row.result,
        }).toEqual({
          requestId: e.requestId,
          method: e.method,
          status: e.status,
          latencyMs: Math.round(e.latencyMs * 100) / 100,
          cu: e.cu,
          at: e.at,
          path: maskRequestLine(`POST ${e.url}`),
          params: excerpt(e.params),
          result: excerpt(e.result),
        });
      });
    }
    const rows = await db().requestLog.findMany({ where: { projectId: p.projectId }, select: { path: true, params: true } });
    expect(rows.some((r) => r.path.includes("bg_••••"))).toBe(true);
    expect(rows.some((r) => r.params.includes(`"apiKey":"••••"`))).toBe(true);
    expect(log.heldBytes).toBe(0);
  });
});

describe("the request logs of several processes", () => {
  it("merge into the newest 1,000 requests of the project, whichever process wrote them and when", async () => {
    const p = await createTestProject("Request log, two processes");
    // Two logs, as in two web processes serving the same project: their requests interleave in
    // time (A's at even milliseconds, B's at odd), and each flushes on its own schedule, so one
    // writes older requests after the other wrote newer ones.
    const a = new RequestLog(captureLogs().logger);
    const b = new RequestLog(captureLogs().logger);
    const t0 = Date.now() - 60_000;
    const at = (log: RequestLog, i: number) => t0 + 2 * i + (log === a ? 0 : 1);
    const record = (log: RequestLog, from: number, to: number) => {
      for (let i = from; i < to; i++) log.record({ ...entry(p.projectId, i, "{}"), requestId: `${log === a ? "a" : "b"}_${i}`, at: at(log, i) });
    };
    const union: Array<{ requestId: string; at: number }> = [];
    for (const log of [a, b]) for (let i = 0; i < 2600; i++) union.push({ requestId: `${log === a ? "a" : "b"}_${i}`, at: at(log, i) });
    // A: 0–1499 (more than the log keeps: its older ones are superseded), flushed; B: 0–1199, flushed;
    // then both go on, B flushing first.
    record(a, 0, 1500);
    await a.flush();
    record(b, 0, 1200);
    await b.flush();
    record(a, 1500, 1800);
    record(b, 1200, 2600);
    await b.flush();
    await a.flush();
    record(a, 1800, 2600);
    await a.flush();
    await Promise.all([a.sweep(), b.sweep()]);

    const rows = await db().requestLog.findMany({ where: { projectId: p.projectId }, select: { requestId: true, at: true } });
    const newest = union.sort((x, y) => y.at - x.at).slice(0, REQUEST_LOG_ROWS);
    expect(rows.map((r) => r.requestId).sort()).toEqual(newest.map((r) => r.requestId).sort());
  });
});
