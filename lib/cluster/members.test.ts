import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { listMigrations } from "@/lib/db/migrate";
import { getEnv } from "@/lib/env";
import { connectTestDatabase } from "@/lib/testing/harness";
import { joinCluster, memberIdentity } from "./members";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => {
  await db().$disconnect();
});

// Other suites sharing the database may have processes registered: counts are compared, not absolute.
describe("cluster members", () => {
  it("each process registers with its role, host and pid; web processes count (and are listed) while their heartbeat is fresh; a clean stop removes the row", async () => {
    const web = await joinCluster({ role: "web" });
    const before = web.webProcesses();
    const other = await joinCluster({ role: "all" });
    const worker = await joinCluster({ role: "worker" });
    await web.beat();
    expect(web.webProcesses()).toBe(before + 1);
    // Their ids: whose counts of what they hold still count (lib/limits/shared.ts SharedCounts).
    expect([web.id, other.id, worker.id].map((id) => web.webMembers().has(id))).toEqual([true, true, false]);
    const row = await db().clusterMember.findUniqueOrThrow({ where: { id: worker.id } });
    expect(row).toMatchObject({ role: "worker", pid: process.pid, version: expect.any(String) });

    // A process that stopped beating a minute ago (frozen, or its host gone) no longer counts, and its row is swept.
    await db().$executeRaw`UPDATE cluster_members SET heartbeat_at = now() - interval '1 minute' WHERE id = ${other.id}`;
    await web.beat();
    expect(web.webProcesses()).toBe(before);
    expect(web.webMembers().has(other.id)).toBe(false);
    expect(await db().clusterMember.findUnique({ where: { id: other.id } })).toBeNull();
    // Its next heartbeat registers it again.
    await other.beat();
    await web.beat();
    expect(web.webProcesses()).toBe(before + 1);

    await other.stop();
    await worker.stop();
    await web.beat();
    expect(web.webProcesses()).toBe(before);
    expect(await db().clusterMember.count({ where: { id: { in: [other.id, worker.id] } } })).toBe(0);
    await web.stop();
  });

  it("a process frozen past the live period learns on waking that it was not live meanwhile; live again from its next heartbeat", async () => {
    // Live for three heartbeats (300 ms) after the last.
    const member = await joinCluster({ role: "worker", heartbeatMs: 100 });
    try {
      const before = performance.now();
      expect(member.liveSince(before)).toBe(true);
      // Stopped (as SIGSTOP stops it) for longer: the others may have found its row stale.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
      expect(member.liveSince(before)).toBe(false);
      await member.beat();
      const after = performance.now();
      expect(member.liveSince(after)).toBe(true);
      expect(member.liveSince(before)).toBe(false);
    } finally {
      await member.stop();
    }
    // Stopped, its row gone: not live.
    expect(member.liveSince(performance.now())).toBe(false);
  });

  it("refuses a process whose secrets or build differ from the live members', naming what differs and showing no secret", async () => {
    const member = await joinCluster({ role: "web" });
    const env = getEnv();
    const mine = await memberIdentity();
    const registered = () => db().clusterMember.count({ where: { pid: process.pid } });
    const before = await registered();

    const otherKey = await memberIdentity({ ...env, NEXTAUTH_SECRET: "another session secret, 32 chars+" });
    expect(otherKey.build).toBe(mine.build);
    const refusal = await joinCluster({ role: "web", identity: otherKey }).then(
      () => "joined",
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(refusal).toMatch(/^This process cannot join the cluster: its NEXTAUTH_SECRET differs from that of the \d+ live process(es)? sharing this database\. Every process needs the same APP_SECRET, NEXTAUTH_SECRET, NEXT_SERVER_ACTIONS_ENCRYPTION_KEY\.$/);
    for (const shown of [env.APP_SECRET, env.NEXTAUTH_SECRET, env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY, ...otherKey.secrets.split(".")]) expect(refusal).not.toContain(shown);
    await expect(joinCluster({ role: "worker", identity: await memberIdentity({ ...env, APP_SECRET: "another app secret, 32 characters+", NEXT_SERVER_ACTIONS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") }) })).rejects.toThrow(
      /its APP_SECRET, NEXT_SERVER_ACTIONS_ENCRYPTION_KEY differ from that of/,
    );

    // Another build: one more migration than the live members know.
    const newer = await memberIdentity(env, [...(await listMigrations()), "20991231000000_from_the_future"]);
    await expect(joinCluster({ role: "worker", identity: newer })).rejects.toThrow(new RegExp(`this process runs build ${newer.build.replace("+", "\\+")}, the \\d+ live process(es)? sharing this database run ${mine.build.replace("+", "\\+")}\\. An upgrade stops every process`));
    expect(await registered()).toBe(before);

    // The same identity joins.
    const same = await joinCluster({ role: "worker", identity: await memberIdentity() });
    expect(await registered()).toBe(before + 1);
    await same.stop();
    await member.stop();
  });
});
