/**
 * The WebSocket's caps per key (connections, subscriptions) held by two web processes of one
 * cluster together. The two processes are two copies of lib/ in this test process
 * (lib/testing/cluster.ts), each with its own gateway and shared limits, sharing one real
 * redis-server. Who is live is this suite's own list, as lib/cluster/members.ts would answer it
 * (its test checks that answer): the processes other suites register in the shared database then
 * change nothing here, and this suite changes nothing for theirs.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SharedCounts, SharedLimits } from "@/lib/limits/shared";
import { startTwoProcesses } from "@/lib/testing/cluster";
import { captureLogs } from "@/lib/testing/logs";
import { startRedis, type TestRedis } from "@/lib/testing/redis";
import { connectSocket, refusedUpgrade, type SocketClient } from "@/lib/testing/socket";
import { SOCKET_LIMITS } from "./websocket";

type WebProcess = Awaited<ReturnType<typeof startProcess>>;

let redis: TestRedis;
let a: WebProcess;
let b: WebProcess;

/** The live web processes' ids. */
const live = new Set<string>();

/** One web process: its copy of the modules, its gateway on its own connection to the shared limits. */
async function startProcess(redisUrl: string) {
  const harness = await import("@/lib/testing/harness");
  const { SharedLimits } = await import("@/lib/limits/shared");
  const member = { id: randomUUID(), webProcesses: () => live.size, webMembers: () => live };
  live.add(member.id);
  // Commands get 2 s, not 500 ms: on a loaded machine a stalled event loop would otherwise turn the limits local now and then.
  const limits = new SharedLimits({ redisUrl, member: () => member, logger: captureLogs().logger, probeMs: 100, commandTimeoutMs: 2_000 });
  const gw = await harness.startTestGateway({ limits });
  return { gw, limits, member, harness };
}

beforeAll(async () => {
  redis = await startRedis();
  [a, b] = await startTwoProcesses(() => startProcess(redis.url));
}, 60_000);

afterAll(async () => {
  for (const p of [a, b]) {
    await p?.limits.stop();
    await p?.gw.stop();
  }
  await redis?.stop();
});

const sockets: SocketClient[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.ws.close();
});

const cap = SOCKET_LIMITS.connectionsPerKey;
const socketUrl = (p: WebProcess, key: string) => `${p.gw.url.replace(/^http/, "ws")}/cometbft/babylon-testnet/${key}/websocket`;

async function open(p: WebProcess, key: string): Promise<SocketClient> {
  const socket = await connectSocket(socketUrl(p, key));
  sockets.push(socket);
  return socket;
}

async function refusal(p: WebProcess, key: string) {
  const { status, body } = await refusedUpgrade(socketUrl(p, key));
  return { status, code: body.code, message: body.message };
}

const tooMany = { status: 429, code: "TOO_MANY_REQUESTS", message: `This API key already has ${cap} WebSocket connections open; close one first.` };

const project = async (name: string) => (await a.harness.createTestProject(name, "ENTERPRISE")).apiKey;

describe("WebSocket caps per key, for the cluster", () => {
  it("two web processes hold a key to 20 connections and 50 subscriptions together, not 20 and 50 each", async () => {
    const key = await project("Shared WebSocket caps");
    for (let i = 0; i < cap; i++) await open(i % 2 === 0 ? a : b, key);
    expect(await refusal(a, key)).toEqual(tooMany);
    expect(await refusal(b, key)).toEqual(tooMany);

    // Spread over the connections of both processes (even ones: a's), within 5 per connection.
    const subscriptionCap = SOCKET_LIMITS.subscriptionsPerKey;
    let calls = 0;
    const subscribe = (i: number) => sockets[i % cap]!.call(`s${i}-${calls++}`, "subscribe", { query: `tm.event='Tx' AND tx.height > ${i}` });
    for (let i = 0; i < subscriptionCap; i++) expect((await subscribe(i)).result).toEqual({});
    const over = { code: -32603, message: "Internal error", data: `max_subscriptions_per_key ${subscriptionCap} reached: this API key holds that many subscriptions on open connections` };
    expect((await subscribe(subscriptionCap)).error).toEqual(over);
    expect((await subscribe(subscriptionCap + 1)).error).toEqual(over);

    // What one process's clients give up, the other's may take: a subscription, a connection.
    expect((await sockets[1]!.call("u", "unsubscribe", { query: "tm.event='Tx' AND tx.height > 1" })).result).toEqual({});
    await vi.waitFor(async () => expect((await subscribe(subscriptionCap + 2)).result).toEqual({}), { timeout: 2_000, interval: 20 });
    sockets[1]!.ws.close();
    await sockets[1]!.closed;
    await vi.waitFor(() => open(a, key), { timeout: 2_000, interval: 20 });
    expect(await refusal(b, key)).toEqual(tooMany);
  });

  it("while Redis is away each process admits its share of a key's connections; back, those count for every process", async () => {
    const key = await project("WebSocket caps, Redis away");
    let share = 0;
    redis.freeze();
    try {
      await expect.poll(() => [a.limits.mode, b.limits.mode], { timeout: 5_000 }).toEqual(["local", "local"]);
      // The cap ÷ live web processes, rounded up.
      share = cap / 2;
      expect(a.limits.share()).toBe(2);
      for (let i = 0; i < share; i++) await open(a, key);
      expect(await refusal(a, key)).toEqual(tooMany);
    } finally {
      redis.thaw();
    }
    await expect.poll(() => [a.limits.mode, b.limits.mode], { timeout: 5_000 }).toEqual(["shared", "shared"]);
    for (let i = 0; i < cap - share; i++) await open(b, key);
    expect(await refusal(b, key)).toEqual(tooMany);
    expect(await refusal(a, key)).toEqual(tooMany);
  });

  it("the connections of a process gone without a word stop counting once its heartbeat is stale", async () => {
    const key = await project("WebSocket caps, a process gone");
    for (let i = 0; i < cap; i++) await open(b, key);
    expect(await refusal(a, key)).toEqual(tooMany);
    // b stops answering: nothing more reaches Redis from it, and its heartbeat in cluster_members
    // ages out (15 s): a counts without it from its next count of the live processes.
    await b.limits.stop();
    live.delete(b.member.id);
    for (let i = 0; i < cap; i++) await open(a, key);
    expect(await refusal(a, key)).toEqual(tooMany);
  });
});

describe("SharedCounts without Redis", () => {
  it("admits a process's share of a cap: the cap ÷ live web processes, rounded up, at least one", async () => {
    const counts = new SharedCounts("test-local", new SharedLimits({ webProcesses: () => 3, logger: captureLogs().logger }));
    const admitted: boolean[] = [];
    for (let i = 0; i < 8; i++) admitted.push(await counts.acquire("key", 20));
    expect(admitted).toEqual([true, true, true, true, true, true, true, false]);
    counts.release("key");
    expect(await counts.acquire("key", 20)).toBe(true);
    expect(await counts.acquire("another", 2)).toBe(true);
    expect(await counts.acquire("another", 2)).toBe(false);
  });
});
