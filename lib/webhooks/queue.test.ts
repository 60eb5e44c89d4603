// The webhook queue's bounds per plan and what queued messages cost: real PostgreSQL, the public
// API on a free port, the services the console's routes call, and replays over a real anvil (as
// ethereum-holesky's upstream, which no other suite follows). No delivery worker runs: what is
// queued stays PENDING.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, rawTransaction } from "@/lib/db/client";
import { rpcDirect, spawnAnvil, type BareAnvil } from "@/lib/evm/testing";
import { configureNetworks, networkBySlug, type Network } from "@/lib/networks";
import { PLANS } from "@/lib/plans";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { UsageMeter } from "@/lib/usage/meter";
import { WEBHOOK_DELIVERY_CU, WEBHOOK_ROUTES } from "./catalog";
import { enqueueMessages } from "./outbox";
import { consoleBilling, createWebhook, replayWebhook, resendWebhookMessage, testWebhook, webhookHistory } from "./service";

const SLUG = "ethereum-holesky";
const API = "/v1/ethereum/holesky/webhooks";
let gw: TestGateway;
let anvil: BareAnvil;
let network: Network;
/** The console's meter in these tests (the process's own is not flushed here). */
let consoleMeter: UsageMeter;

type Project = Awaited<ReturnType<typeof createTestProject>>;
type Json = Record<string, unknown>;

beforeAll(async () => {
  gw = await startTestGateway();
  anvil = await spawnAnvil({ chainId: 17000 });
  configureNetworks({ UPSTREAM_ETHEREUM_HOLESKY: anvil.url });
  network = networkBySlug(SLUG)!;
  await rpcDirect(anvil.url, "anvil_mine", ["0x96"]); // blocks 1..150
  consoleMeter = new UsageMeter();
});

afterAll(async () => {
  await consoleMeter?.stop();
  await anvil?.stop();
  configureNetworks({});
  await gw?.stop();
});

async function call(key: string, path: string, body?: unknown) {
  const res = await fetch(gw.url + path, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": key }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Json };
}

/** A BLOCK_PERIOD(1) subscription: every block replays as one message. */
async function everyBlock(p: Project): Promise<string> {
  const rec = await createWebhook(p.projectId, network, { eventType: "BLOCK_PERIOD", description: "every block", notification: { webhookUrl: "http://127.0.0.1:9/hook" }, condition: { period: 1 } });
  return rec.subscriptionId;
}

const pending = (where: { subscriptionId: string } | { projectId: string }) => db().webhookMessage.count({ where: { ...where, status: "PENDING" } });
const fromConsole = (p: Project) => consoleBilling(p.projectId, consoleMeter);
const replay = (p: Project, id: string, fromBlock: number, toBlock: number) => replayWebhook({ projectId: p.projectId }, id, { fromBlock, toBlock }, fromConsole(p));

/** `n` messages as a follower writes them (blocks 1..n), in one transaction. */
async function chainMessages(subscriptionId: string, n: number) {
  return rawTransaction((client) =>
    enqueueMessages(
      client,
      Array.from({ length: n }, (_, i) => ({ subscriptionId, blockNumber: BigInt(i + 1), blockHash: `0x${"ab".repeat(32)}`, content: { message: { block_number: i + 1 } } })),
    ),
  );
}

/** CU and requests metered for a project, by usage label (the gateway's and the console's meters flushed). */
async function usage(projectId: string): Promise<Record<string, { cu: number; requests: number }>> {
  await gw.meter.flush();
  await consoleMeter.flush();
  const out: Record<string, { cu: number; requests: number }> = {};
  for (const r of await db().usageBucket.findMany({ where: { projectId, status: "2xx" } })) {
    const u = (out[r.endpoint] ??= { cu: 0, requests: 0 });
    u.cu += Number(r.cu);
    u.requests += r.requests;
  }
  return out;
}

describe("pending messages per webhook", () => {
  it("looping replays on a free project stop at the plan's 1,000: the call past it is refused with 429 naming the bound, and queues nothing", async () => {
    const p = await createTestProject("Replay loop");
    const id = await everyBlock(p);
    const answers: Array<{ messages: number } | { code: string; message: string }> = [];
    for (let i = 0; i < 12; i++) answers.push(await replay(p, id, 1, 100).catch((e: { code: string; message: string }) => ({ code: e.code, message: e.message })));
    expect(answers.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => ({ fromBlock: "1", toBlock: "100", messages: 100 })));
    for (const refused of answers.slice(10)) {
      expect(refused).toEqual({
        code: "TOO_MANY_REQUESTS",
        message:
          "This webhook already has 1,000 messages waiting for delivery, the most the Starter (free) plan keeps per webhook: nothing more is queued. Waiting messages make room as they are delivered or fail; try again then, or upgrade the plan.",
      });
    }
    expect(await pending({ subscriptionId: id })).toBe(PLANS.FREE.maxPendingPerWebhook);
    // Refused calls took no sequence number: the next message is 1,001.
    expect((await db().webhookSubscription.findUniqueOrThrow({ where: { id } })).sequence).toBe(1000n);

    // The public API answers the same, with the status, and so do test and resend.
    const api = await call(p.apiKey, `${API}/${id}/replay`, { fromBlock: 101, toBlock: 101 });
    expect(api.status).toBe(429);
    expect(api.json).toMatchObject({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("This webhook already has 1,000 messages waiting") });
    const test = await call(p.apiKey, `${API}/${id}/test`);
    expect([test.status, test.json.code]).toEqual([429, "TOO_MANY_REQUESTS"]);
    expect(test.json.message).toContain("the message this would queue is refused");
    const failed = await db().webhookMessage.findFirstOrThrow({ where: { subscriptionId: id } });
    await db().webhookMessage.update({ where: { id: failed.id }, data: { status: "FAIL", nextAttemptAt: null } });
    await replay(p, id, 150, 150); // the room that freed is taken again
    await expect(resendWebhookMessage({ projectId: p.projectId }, id, failed.id, fromConsole(p))).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS" });
    // A message still waiting adds nothing: resending it is allowed.
    const waiting = await db().webhookMessage.findFirstOrThrow({ where: { subscriptionId: id, status: "PENDING" } });
    expect(await resendWebhookMessage({ projectId: p.projectId }, id, waiting.id, fromConsole(p))).toEqual({ messageId: waiting.id });
    expect(await pending({ subscriptionId: id })).toBe(1000);
  });

  it("a replay over the plan's blocks per call is refused with 400 naming the bound and the plan", async () => {
    const p = await createTestProject("Replay range");
    const id = await everyBlock(p);
    const message = "fromBlock..toBlock covers 101 blocks, and the Starter (free) plan replays at most 100 blocks per call: split the range, or upgrade the plan.";
    await expect(replay(p, id, 0, 100)).rejects.toMatchObject({ code: "WRONG_RANGE_PARAMETER", message });
    const api = await call(p.apiKey, `${API}/${id}/replay`, { fromBlock: 0, toBlock: 400 });
    expect(api.status).toBe(400);
    expect(api.json).toEqual({ code: "WRONG_RANGE_PARAMETER", message: message.replace("101", "401") });
    expect(await pending({ subscriptionId: id })).toBe(0);
  });

  it("two replays at once cannot both pass the bound", async () => {
    const p = await createTestProject("Replay race");
    const id = await everyBlock(p);
    await chainMessages(id, 900);
    const both = await Promise.allSettled([replay(p, id, 1, 100), replay(p, id, 1, 100)]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(both.find((r) => r.status === "rejected")).toMatchObject({
      reason: { code: "TOO_MANY_REQUESTS", message: expect.stringMatching(/^This webhook already has 1,000 messages waiting for delivery, .*: the 100 messages this would queue are refused\./) },
    });
    expect(await pending({ subscriptionId: id })).toBe(1000);
  });

  it("the chain's messages past the bound are written as failed, in sequence, with the reason in the delivery history", async () => {
    const p = await createTestProject("Chain past the bound");
    const id = await everyBlock(p);
    const queued = await chainMessages(id, 1002);
    expect(queued.map((q) => q.sequenceNumber)).toEqual(Array.from({ length: 1002 }, (_, i) => BigInt(i + 1)));
    expect(await pending({ subscriptionId: id })).toBe(1000);
    const reason = (block: number) =>
      `not queued: 1,000 messages of this webhook were already waiting for delivery, the most the Starter (free) plan keeps; replay block ${block} once the receiver catches up`;
    expect(queued.slice(1000).map((q) => q.refused)).toEqual([reason(1001), reason(1002)]);
    const refused = await db().webhookMessage.findMany({ where: { subscriptionId: id, status: "FAIL" }, orderBy: { sequenceNumber: "asc" } });
    expect(refused.map((m) => [m.sequenceNumber, m.blockNumber, m.attempts, m.nextAttemptAt])).toEqual([
      [1001n, 1001n, 0, null],
      [1002n, 1002n, 0, null],
    ]);
    const history = await webhookHistory({ projectId: p.projectId }, { subscriptionId: id, status: "FAIL" });
    // Written in one statement, at one time: in either order.
    expect(history.items.map((h) => [h.sequenceNumber, h.attempt, h.status, h.httpStatus, h.error]).sort()).toEqual([
      ["1001", 0, "FAIL", null, reason(1001)],
      ["1002", 0, "FAIL", null, reason(1002)],
    ]);
  });
});

describe("pending messages per project", () => {
  it("counts every webhook of the project: 429 naming the project's bound, also when two replays race for the last room", async () => {
    const p = await createTestProject("Project bound");
    const [a, b, c] = [await everyBlock(p), await everyBlock(p), await everyBlock(p)];
    await chainMessages(a, 1000);
    await chainMessages(b, 950);
    await expect(replay(p, c, 1, 100)).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message:
        "This project has 1,950 messages waiting for delivery, and the Starter (free) plan keeps at most 2,000 per project (all its webhooks together): the 100 messages this would queue are refused. Waiting messages make room as they are delivered or fail; try again then, or upgrade the plan.",
    });
    await db().webhookMessage.updateMany({ where: { subscriptionId: a, sequenceNumber: { lte: 80 } }, data: { status: "SUCCESS", nextAttemptAt: null } });
    // 1,870 waiting: room for one of these two, not both.
    const both = await Promise.allSettled([replay(p, b, 1, 50), replay(p, c, 1, 100)]);
    expect(both.map((r) => r.status)).toContain("rejected");
    expect(await pending({ projectId: p.projectId })).toBeLessThanOrEqual(PLANS.FREE.maxPendingPerProject);
    expect(await pending({ projectId: p.projectId })).toBeGreaterThan(1870);
  });
});

describe("what queued messages cost", () => {
  it("a call that queues messages costs its CU plus 10 per message, from the API and (messages only) from the console", async () => {
    const p = await createTestProject("Message CU");
    const id = await everyBlock(p);
    expect((await call(p.apiKey, `${API}/${id}/replay`, { fromBlock: 1, toBlock: 20 })).json).toEqual({ fromBlock: "1", toBlock: "20", messages: 20 });
    const test = await call(p.apiKey, `${API}/${id}/test`);
    expect(test.status).toBe(200);
    const resend = await call(p.apiKey, `${API}/${id}/messages/${test.json.messageId as string}/resend`);
    expect(resend.status).toBe(200);
    await replay(p, id, 21, 30);
    await testWebhook({ projectId: p.projectId }, id, fromConsole(p));
    expect(await usage(p.projectId)).toEqual({
      "webhooks.replay": { cu: WEBHOOK_ROUTES.replay.cu + 20 * WEBHOOK_DELIVERY_CU + 10 * WEBHOOK_DELIVERY_CU, requests: 2 },
      "webhooks.test": { cu: WEBHOOK_ROUTES.test.cu + 2 * WEBHOOK_DELIVERY_CU, requests: 2 },
      "webhooks.resend": { cu: WEBHOOK_ROUTES.resend.cu + WEBHOOK_DELIVERY_CU, requests: 1 },
    });
    const messages = await db().webhookMessage.findMany({ where: { subscriptionId: id } });
    expect(messages.every((m) => m.prepaid)).toBe(true);
  });

  it("messages the allowance cannot pay are refused with 429 EXCEEDED_QUOTA_LIMIT before anything is queued; with overage on they are queued", async () => {
    const p = await createTestProject("Allowance");
    const id = await everyBlock(p);
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId } });
    const today = new Date(new Date().toISOString().slice(0, 10));
    await db().usageDay.create({ data: { projectId: p.projectId, keyId: key.id, network: SLUG, api: "node", endpoint: "eth_call", day: today, cu: 999_500n, requests: 1 } });
    const message = "This costs 1,000 CU, and this project has 500 CU left of its 1,000,000 CU daily allowance of the Starter (free) plan.";
    await expect(replay(p, id, 1, 100)).rejects.toMatchObject({ code: "EXCEEDED_QUOTA_LIMIT", message: expect.stringContaining(message) });
    const api = await call(p.apiKey, `${API}/${id}/replay`, { fromBlock: 1, toBlock: 100 });
    expect(api.status).toBe(429);
    expect(api.json).toMatchObject({ code: "EXCEEDED_QUOTA_LIMIT", message: expect.stringContaining(message) });
    expect(Number(api.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await pending({ subscriptionId: id })).toBe(0);
    // What the allowance can pay is queued.
    expect(await replay(p, id, 1, 50)).toMatchObject({ messages: 50 });

    const paid = await createTestProject("Overage", "DEVELOPER");
    await db().project.update({ where: { id: paid.projectId }, data: { overage: true } });
    const paidKey = await db().apiKey.findFirstOrThrow({ where: { projectId: paid.projectId } });
    await db().usageDay.create({ data: { projectId: paid.projectId, keyId: paidKey.id, network: SLUG, api: "node", endpoint: "eth_call", day: new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1)), cu: 450_000_000n, requests: 1 } });
    const paidId = await everyBlock(paid);
    expect(await replay(paid, paidId, 1, 10)).toMatchObject({ messages: 10 });
  });
});
