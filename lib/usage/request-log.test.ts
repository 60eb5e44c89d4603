import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { faultProxyDatabase } from "@/lib/testing/fault-proxy";
import { createTestProject } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { RequestLog, REQUEST_LOG_ROWS, type RequestLogEntry } from "./request-log";

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
    path: "POST /node/ethereum-mainnet",
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
    // What the log holds no longer refers to the large body.
    expect(Buffer.isBuffer(e.params) && e.params.buffer.byteLength).toBeLessThan(10_000);
    expect((e.result as string | Buffer).length).toBeLessThan(10_000);
    await log.flush();
    const [row] = await stored(p.projectId);
    expect(row!.params).toBe(`${big.slice(0, 2048)}…`);
    expect(row!.result).toBe(`${big.slice(0, 2048)}…`);
  });
});
