import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { databaseUrl, resetEnv } from "@/lib/env";
import { BATCH_BUDGET_USED, INTERNAL_ERROR } from "@/lib/jsonrpc/errors";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";

// What a query may cost, set small so that a held lock makes every public query run out of time.
process.env.PUBLIC_STATEMENT_TIMEOUT_MS = "200";
process.env.PUBLIC_BATCH_BUDGET_MS = "300";
process.env.DATABASE_PUBLIC_POOL_SIZE = "2";
resetEnv();

// Searches here need no data (every one waits on a lock): the index of this network is left as
// the other suites, which share the run's database, write it.
const NET = "babylon-mainnet";
let gw: TestGateway;
let key: string;
let projectId: string;

type Answer = { id: number; result?: unknown; error?: { code: number; message: string; data: string } };

async function batch(items: object[]): Promise<{ status: number; answers: Answer[] }> {
  const res = await fetch(`${gw.url}/rpc/${NET}`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": key }, body: JSON.stringify(items) });
  return { status: res.status, answers: (await res.json()) as Answer[] };
}

/** Holds an exclusive lock on the transactions table (every search waits on it) until released. */
async function lockTxs(): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  await client.query("BEGIN");
  await client.query("LOCK TABLE consensus_txs IN ACCESS EXCLUSIVE MODE");
  return async () => {
    await client.query("ROLLBACK");
    await client.end();
  };
}

beforeAll(async () => {
  gw = await startTestGateway();
  ({ apiKey: key, projectId } = await createTestProject("Limits", "ENTERPRISE"));
}, 120_000);
afterAll(async () => gw.stop());

describe("public query limits", () => {
  it("stops a query at the statement timeout and answers an error that says how to narrow it", async () => {
    const release = await lockTxs();
    try {
      const res = await fetch(`${gw.url}/rpc/${NET}/tx_search?query=${encodeURIComponent("tx.height>0")}`, { headers: { "X-API-KEY": key } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Answer;
      expect(body.error).toMatchObject({ code: INTERNAL_ERROR, message: expect.stringContaining("ran longer than 0.2 s and was stopped: narrow it") });
      expect(body.result).toBeUndefined();
    } finally {
      await release();
    }
    // The same query answers once nothing holds it up.
    const res = await fetch(`${gw.url}/rpc/${NET}/tx_search?query=${encodeURIComponent("tx.height>0")}`, { headers: { "X-API-KEY": key } });
    const answer = (await res.json()) as Answer;
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ txs: expect.any(Array), total_count: expect.stringMatching(/^\d+$/) });
  });

  it("keeps the console's pool free while public queries wait", async () => {
    const release = await lockTxs();
    try {
      const searches = Array.from({ length: 4 }, () => fetch(`${gw.url}/rpc/${NET}/tx_search?query=${encodeURIComponent("tx.height>0")}`, { headers: { "X-API-KEY": key } }));
      // Both public connections are waiting on the lock; the main pool still answers at once.
      let consoleDone = false;
      const count = db()
        .project.count({ where: { id: projectId } })
        .then((n) => ((consoleDone = true), n));
      expect(await count).toBe(1);
      const settled = await Promise.all(searches.map(async (r) => ((await (await r).json()) as Answer).error?.code));
      expect(consoleDone).toBe(true);
      expect(settled).toEqual([INTERNAL_ERROR, INTERNAL_ERROR, INTERNAL_ERROR, INTERNAL_ERROR]);
    } finally {
      await release();
    }
  });

  it("starts no batch item after the batch's time budget; those are answered −32001 and not metered", async () => {
    await gw.meter.flush();
    const before = await db().usageBucket.aggregate({ where: { projectId, endpoint: "tx_search" }, _sum: { requests: true } });
    const release = await lockTxs();
    let answers: Answer[];
    try {
      ({ answers } = await batch(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tx_search", params: { query: "tx.height>0" } }))));
    } finally {
      await release();
    }
    expect(answers.map((a) => a.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The first four ran (and timed out); the last ones could not start within the budget.
    for (const a of answers.slice(0, 4)) expect(a.error?.code).toBe(INTERNAL_ERROR);
    for (const a of answers.slice(8)) expect(a.error).toMatchObject({ code: BATCH_BUDGET_USED, message: expect.stringContaining("Batch time budget used up") });
    const budget = answers.filter((a) => a.error?.code === BATCH_BUDGET_USED).length;
    await gw.meter.flush();
    const after = await db().usageBucket.aggregate({ where: { projectId, endpoint: "tx_search" }, _sum: { requests: true } });
    expect((after._sum.requests ?? 0) - (before._sum.requests ?? 0)).toBe(10 - budget);
  });
});
