import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { connectTestDatabase, createTestProject, withDeadDatabase } from "@/lib/testing/harness";
import { QuotaTracker } from "./quota";
import { setRootLogger } from "@/lib/log";

// What this process logs, as parsed lines: the process logger is created on first use.
const lines: Array<{ level: number; component?: string; msg: string; err?: string }> = [];
setRootLogger(
  pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line) as (typeof lines)[number]);
        done();
      },
    }),
  ),
);

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

async function waitFor(check: () => boolean, what: string) {
  const until = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const quotaLines = () => lines.filter((l) => l.component === "quota");

function expectOverQuota(f: () => unknown) {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("EXCEEDED_QUOTA_LIMIT");
    return;
  }
  throw new Error("the quota was not enforced");
}

describe("plan allowance", () => {
  it("keeps enforcing the last known usage while the database is unreachable, logging the failure once per streak", async () => {
    const p = await createTestProject();
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const now = Date.now();
    const today = new Date(now - (now % 86_400_000));
    await db().usageDay.create({
      data: { projectId: p.projectId, keyId: key.id, network: "ethereum-mainnet", api: "node", endpoint: "eth_chainId", day: today, cu: 1_000_000n, requests: 1 },
    });
    const quota = new QuotaTracker();
    const first = quota.check(p.projectId, "FREE", false, now);
    await expect(first).rejects.toMatchObject({ code: "EXCEEDED_QUOTA_LIMIT" });

    await withDeadDatabase(async (attempts) => {
      // Due for a refresh (30 s later): it fails in the background; the known usage still counts.
      expectOverQuota(() => quota.check(p.projectId, "FREE", false, now + 31_000));
      await waitFor(() => quotaLines().length === 1, "the failure to be logged");
      expect(quotaLines()[0]).toMatchObject({ level: 40, msg: expect.stringContaining("quota refresh failed") });
      expect(attempts()).toBe(1);
      // Within 5 s of a failure it does not try again; then it does, and fails again, silently.
      expectOverQuota(() => quota.check(p.projectId, "FREE", false, now + 33_000));
      expectOverQuota(() => quota.check(p.projectId, "FREE", false, now + 37_000));
      await waitFor(() => attempts() === 2, "a second attempt");
    });
    // Back: the next attempt succeeds (once the failed one is over) and says so.
    await waitFor(() => {
      expectOverQuota(() => quota.check(p.projectId, "FREE", false, now + 43_000));
      return quotaLines().length > 1;
    }, "the recovery to be logged");
    expect(quotaLines().map((l) => [l.level, l.msg])).toEqual([
      [40, expect.stringContaining("quota refresh failed")],
      [30, "quota refresh recovered"],
    ]);
  });
});
