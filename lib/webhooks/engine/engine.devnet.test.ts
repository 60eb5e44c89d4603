// The engine as the service runs it: the manager starts a follower (under its leader lock) for a
// network once it has an active subscription, over the built-in anvil devnet with its traffic,
// and stops it when none is left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { databaseUrl } from "@/lib/env";
import { startTestDevnets, type TestDevnets } from "@/lib/evm/testing";
import { configureNetworks, networkBySlug } from "@/lib/networks";
import { connectTestDatabase, createTestProject, waitFor } from "@/lib/testing/harness";
import { createWebhook } from "../service";
import { startWebhookEngine } from "./follower";

// No other suite of this run subscribes on this network: the manager follows any network with an
// active subscription in the shared database.
const SLUG = "arbitrum-sepolia";
let devnets: TestDevnets;

beforeAll(async () => {
  await connectTestDatabase();
  configureNetworks({});
  devnets = await startTestDevnets({ blockTimeSec: 1 });
});

afterAll(async () => {
  await devnets?.stop();
  await disconnectDb();
});

describe("webhook engine on a devnet", () => {
  it("follows a network with active subscriptions: every block for period 1, gap-free; final blocks 2 deep; stops when none is left", async () => {
    const network = networkBySlug(SLUG)!;
    const { projectId } = await createTestProject("Devnet engine", "DEVELOPER");
    const base = { eventType: "BLOCK_PERIOD", description: "every block", notification: { webhookUrl: "http://127.0.0.1:9/hook" }, condition: { period: 1 } };
    const instant = (await createWebhook(projectId, network, { ...base, isInstant: true })).subscriptionId;
    const final = (await createWebhook(projectId, network, { ...base, isInstant: false })).subscriptionId;
    const engine = startWebhookEngine({ databaseUrl: databaseUrl()!, include: (n) => n.slug === SLUG, pollMs: 200, followerPollMs: 200 });
    try {
      const rows = (id: string) => db().webhookMessage.findMany({ where: { subscriptionId: id }, orderBy: { sequenceNumber: "asc" } });
      const atLeast = (id: string, n: number) => async () => {
        const r = await rows(id);
        return r.length >= n ? r : undefined;
      };
      const list = await waitFor("four instant messages", atLeast(instant, 4), 45_000);
      const start = (await db().webhookSubscription.findUniqueOrThrow({ where: { id: instant } })).startBlock!;
      expect(list.map((r) => r.sequenceNumber)).toEqual(list.map((_, i) => BigInt(i + 1)));
      expect(list.map((r) => r.blockNumber)).toEqual(list.map((_, i) => start + 1n + BigInt(i)));
      expect(engine.followed()).toEqual([SLUG]);

      // isInstant false: a block is delivered once 2 blocks are on top of it.
      const finals = await waitFor("a final message", atLeast(final, 1), 45_000);
      const url = await devnets.nodeUrl(SLUG);
      const headAfter = BigInt(((await (await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' })).json()) as { result: string }).result);
      for (const r of finals) expect(headAfter - r.blockNumber!).toBeGreaterThanOrEqual(2n);

      await db().webhookSubscription.updateMany({ where: { projectId }, data: { isActive: false } });
      await waitFor("the follower to stop", () => (engine.followed().length === 0 ? true : undefined), 45_000);
    } finally {
      await engine.stop();
    }
  });
});
