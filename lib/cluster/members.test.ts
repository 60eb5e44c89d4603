import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { connectTestDatabase } from "@/lib/testing/harness";
import { joinCluster } from "./members";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => {
  await db().$disconnect();
});

// Other suites sharing the database may have processes registered: counts are compared, not absolute.
describe("cluster members", () => {
  it("each process registers with its role, host and pid; web processes count while their heartbeat is fresh; a clean stop removes the row", async () => {
    const web = await joinCluster({ role: "web" });
    const before = web.webProcesses();
    const other = await joinCluster({ role: "all" });
    const worker = await joinCluster({ role: "worker" });
    await web.beat();
    expect(web.webProcesses()).toBe(before + 1);
    const row = await db().clusterMember.findUniqueOrThrow({ where: { id: worker.id } });
    expect(row).toMatchObject({ role: "worker", pid: process.pid, version: expect.any(String) });

    // A process that stopped beating a minute ago (frozen, or its host gone) no longer counts, and its row is swept.
    await db().$executeRaw`UPDATE cluster_members SET heartbeat_at = now() - interval '1 minute' WHERE id = ${other.id}`;
    await web.beat();
    expect(web.webProcesses()).toBe(before);
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
});
