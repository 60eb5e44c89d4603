/**
 * The native CometBFT WebSocket follows its key after the upgrade: a revocation, reset or
 * allowlist change (here or in another process) closes the key's open connections with 1008, or
 * updates what they act with (plan, overage, allowlists), as new HTTP calls are refused at once.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { db } from "@/lib/db/client";
import { databaseUrl } from "@/lib/env";
import { hashKey } from "@/lib/keys/secret";
import { createAdditionalKey, resetKeyForUser, revokeKeyForUser, setKeyAllowlist } from "@/lib/keys/service";
import { services } from "@/lib/services";
import { networkBySlug, type Network } from "@/lib/networks";
import { setOverage } from "@/lib/projects/plan";
import { addTestNetworks, createTestProject, startTestGateway, withDeadDatabase, type TestGateway } from "@/lib/testing/harness";
import { connectSocket, type SocketClient } from "@/lib/testing/socket";
import { startDevnetProducer, type ProducerHandle } from "../devnet/producer";
import { deleteNetworkIndex } from "../store";
import { POLICY_VIOLATION, SOCKET_LIMITS } from "./websocket";

let gw: TestGateway;
let producer: ProducerHandle;

const net: Network = { ...networkBySlug("babylon-testnet")!, slug: `cometws-keys-${randomBytes(3).toString("hex")}` };
const wsUrl = (key?: string) => `${gw.url.replace(/^http/, "ws")}/cometbft/${net.slug}${key ? `/${key}` : ""}/websocket`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A subscription to NewBlock that has delivered an event. */
async function subscribed(c: SocketClient, id = "blocks"): Promise<void> {
  expect((await c.call(id, "subscribe", { query: "tm.event='NewBlock'" })).result).toEqual({});
  await c.until("a NewBlock event", () => c.events(id).length >= 1);
}

/** Resolves with the close, or fails after `ms` (the refusal must be prompt: nothing like the cache TTL). */
function closedWithin(c: SocketClient, ms = 3_000): Promise<{ code: number; reason: string }> {
  return Promise.race([c.closed, sleep(ms).then(() => Promise.reject(new Error(`the socket was not closed within ${ms} ms`)))]);
}

/** Requests metered to a key, per endpoint (the meter flushed first). */
async function usageOfKey(keyId: string): Promise<Record<string, number>> {
  await gw.meter.flush();
  const out: Record<string, number> = {};
  for (const r of await db().usageBucket.findMany({ where: { keyId } })) out[r.endpoint] = (out[r.endpoint] ?? 0) + r.requests;
  return out;
}

const keyIdOf = async (secret: string) => (await db().apiKey.findUniqueOrThrow({ where: { hash: hashKey(secret) }, select: { id: true } })).id;

/** After a close: the client hears nothing more, and nothing more is metered to the key while blocks go on. */
async function nothingAfter(c: SocketClient, keyId: string): Promise<void> {
  const heard = c.messages.length;
  const metered = await usageOfKey(keyId);
  await sleep(1_000); // several blocks (one every 150 ms)
  expect(c.messages.length).toBe(heard);
  expect(await usageOfKey(keyId)).toEqual(metered);
}

beforeAll(async () => {
  gw = await startTestGateway();
  addTestNetworks(net);
  producer = startDevnetProducer(net, { databaseUrl: process.env.DATABASE_URL!, blockTimeMs: 150 });
}, 120_000);

afterAll(async () => {
  await producer?.stop();
  await deleteNetworkIndex(net.slug);
  await gw?.stop();
});

describe("a key revoked, reset or restricted while its WebSocket is open", () => {
  it("closes the socket of a revoked key with 1008 at once; a message sent after the revocation is neither answered nor metered", async () => {
    const p = await createTestProject("WS revoke", "ENTERPRISE");
    const extra = await createAdditionalKey(p.userId, p.projectId, "socket");
    const c = await connectSocket(wsUrl(extra.apiKey));
    await subscribed(c);

    await revokeKeyForUser(p.userId, p.projectId, extra.id);
    c.ws.send(JSON.stringify({ jsonrpc: "2.0", id: "late", method: "subscribe", params: { query: "tm.event='Tx'" } }));
    expect(await closedWithin(c)).toEqual({ code: POLICY_VIOLATION, reason: "API key revoked" });
    expect(c.answer("late")).toBeUndefined();
    const usage = await usageOfKey(extra.id);
    expect(usage["subscribe"]).toBe(1); // the first one only
    await nothingAfter(c, extra.id);

    // HTTP agrees: the key is refused.
    const r = await fetch(`${gw.url}/cometbft/${net.slug}/${extra.apiKey}/status`);
    expect(r.status).toBe(401);
  });

  it("verifies a key once for all its connections, and closes them all", async () => {
    const p = await createTestProject("WS herd", "ENTERPRISE");
    const extra = await createAdditionalKey(p.userId, p.projectId, "sockets");
    const clients = await Promise.all([0, 1, 2].map(() => connectSocket(wsUrl(extra.apiKey))));
    await Promise.all(clients.map((c) => subscribed(c)));
    const before = services().keyVerifier.lookups;
    await revokeKeyForUser(p.userId, p.projectId, extra.id);
    for (const c of clients) expect(await closedWithin(c)).toEqual({ code: POLICY_VIOLATION, reason: "API key revoked" });
    expect(services().keyVerifier.lookups - before).toBe(1);
  });

  it("closes the socket of a reset key's old secret; the new secret's socket works", async () => {
    const p = await createTestProject("WS reset", "ENTERPRISE");
    const keyId = await keyIdOf(p.apiKey);
    const old = await connectSocket(wsUrl(), { "X-API-KEY": p.apiKey });
    await subscribed(old);

    const fresh = await resetKeyForUser(p.userId, p.projectId, keyId);
    expect(await closedWithin(old)).toEqual({ code: POLICY_VIOLATION, reason: "API key reset or no longer valid" });

    const c = await connectSocket(wsUrl(fresh));
    try {
      await subscribed(c);
      expect((await c.call("s", "status")).result).toMatchObject({ node_info: expect.anything() });
    } finally {
      c.ws.close();
    }
  });

  it("keeps a socket the new allowlist still admits (working, under the new lists), and closes one it no longer admits", async () => {
    const p = await createTestProject("WS allowlist", "ENTERPRISE");
    const keyId = await keyIdOf(p.apiKey);
    const origin = "https://app.example.com";
    const c = await connectSocket(wsUrl(p.apiKey), { Origin: origin });
    await subscribed(c);

    await setKeyAllowlist(p.userId, p.projectId, keyId, { origins: [origin, "https://other.example.com"], ips: [] });
    const events = c.events("blocks").length;
    await c.until("more events after the change", () => c.events("blocks").length >= events + 3);
    expect((await c.call("s", "status")).result).toMatchObject({ node_info: expect.anything() });
    expect((await c.call("t", "subscribe", { query: "tm.event='Tx'" })).result).toEqual({});
    expect(c.ws.readyState).toBe(WebSocket.OPEN);

    await setKeyAllowlist(p.userId, p.projectId, keyId, { origins: ["https://other.example.com"], ips: [] });
    expect(await closedWithin(c)).toEqual({ code: POLICY_VIOLATION, reason: "origin no longer allowed by this key's allowlist" });
    await nothingAfter(c, keyId);
  });

  it("checks the client's address as the upgrade did (not a header the client sent)", async () => {
    const p = await createTestProject("WS allowlist address", "ENTERPRISE");
    const keyId = await keyIdOf(p.apiKey);
    const c = await connectSocket(wsUrl(p.apiKey), { "x-blockgate-client-ip": "10.1.2.3" });
    await subscribed(c);

    await setKeyAllowlist(p.userId, p.projectId, keyId, { origins: [], ips: ["127.0.0.1"] });
    expect((await c.call("s", "status")).result).toMatchObject({ node_info: expect.anything() });
    expect(c.ws.readyState).toBe(WebSocket.OPEN);

    await setKeyAllowlist(p.userId, p.projectId, keyId, { origins: [], ips: ["10.0.0.0/8"] });
    expect(await closedWithin(c)).toEqual({ code: POLICY_VIOLATION, reason: "address no longer allowed by this key's allowlist" });
  });
});

describe("invalidations from another process", () => {
  it("closes the socket of a key revoked elsewhere once that process's notification arrives", async () => {
    const p = await createTestProject("WS notify", "ENTERPRISE");
    const extra = await createAdditionalKey(p.userId, p.projectId, "elsewhere");
    const listening = services().keyVerifier.listen(databaseUrl()!);
    try {
      await listening.ready;
      const c = await connectSocket(wsUrl(extra.apiKey));
      await subscribed(c);
      // Another process revokes the key: its database write, then its notification.
      await db().apiKey.update({ where: { id: extra.id }, data: { revokedAt: new Date() } });
      await sleep(300);
      expect(c.ws.readyState).toBe(WebSocket.OPEN); // nothing told this process yet
      await db().$executeRaw`SELECT pg_notify('blockgate_key_invalidated', ${hashKey(extra.apiKey)})`;
      expect(await closedWithin(c)).toEqual({ code: POLICY_VIOLATION, reason: "API key revoked" });
      await nothingAfter(c, extra.id);
    } finally {
      await listening.stop();
    }
  });

  it("verifies every open socket's key again when the invalidation listener (re)connects, since notifications may have been missed", async () => {
    const p = await createTestProject("WS listener", "ENTERPRISE");
    const extra = await createAdditionalKey(p.userId, p.projectId, "missed");
    const kept = await connectSocket(wsUrl(p.apiKey));
    const c = await connectSocket(wsUrl(extra.apiKey));
    await subscribed(c);
    // Revoked while no notification could reach this process.
    await db().apiKey.update({ where: { id: extra.id }, data: { revokedAt: new Date() } });
    const listening = services().keyVerifier.listen(databaseUrl()!);
    try {
      expect(await closedWithin(c)).toEqual({ code: POLICY_VIOLATION, reason: "API key revoked" });
      expect((await kept.call("s", "status")).result).toMatchObject({ node_info: expect.anything() });
    } finally {
      kept.ws.close();
      await listening.stop();
    }
  });
});

describe("what the socket acts with after its key is verified again", () => {
  it("applies overage turned off to the next call, metering an over-allowance call to an unknown method under one bounded name", async () => {
    const p = await createTestProject("WS overage", "STARTER_PLUS");
    const user = { id: p.userId, email: p.email };
    await setOverage(user, p.projectId, true);
    const keyId = await keyIdOf(p.apiKey);
    const now = new Date();
    // The month's allowance (100M CU) is used up; overage serves the project past it.
    await db().usageDay.create({
      data: { projectId: p.projectId, keyId, network: net.slug, api: "cometbft", endpoint: "status", day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())), cu: 100_000_000n, requests: 1 },
    });
    const c = await connectSocket(wsUrl(p.apiKey));
    try {
      expect((await c.call(1, "status")).result).toMatchObject({ node_info: expect.anything() });

      await setOverage(user, p.projectId, false);
      const refused = await c.call(2, "status");
      expect(refused.error).toMatchObject({ code: -32603, data: expect.stringContaining("allowance") });
      const made = `${"x".repeat(60)}${randomBytes(4).toString("hex")}`;
      expect((await c.call(3, made)).error).toMatchObject({ code: -32603, data: expect.stringContaining("allowance") });
      expect(c.ws.readyState).toBe(WebSocket.OPEN);

      const usage = await gw.usageByEndpoint(p.projectId);
      expect(Object.keys(usage).filter((e) => e.startsWith("xxx"))).toEqual([]);
      expect(usage["invalid"]).toMatchObject({ requests: 1, errors: 1, cu: 0 });
      expect(usage["status"]).toMatchObject({ requests: 2, errors: 1 });
    } finally {
      c.ws.close();
    }
  });

  it("keeps its connections when the database cannot answer the re-verification, and verifies again once it can", async () => {
    const p = await createTestProject("WS outage", "ENTERPRISE");
    const extra = await createAdditionalKey(p.userId, p.projectId, "outage");
    const c = await connectSocket(wsUrl(extra.apiKey));
    await subscribed(c);
    const retry = SOCKET_LIMITS.recheckRetryMs;
    const retryMax = SOCKET_LIMITS.recheckRetryMaxMs;
    SOCKET_LIMITS.recheckRetryMs = 100;
    SOCKET_LIMITS.recheckRetryMaxMs = 400;
    // The real database, for what another process writes while this one cannot reach it.
    const elsewhere = new pg.Client({ connectionString: databaseUrl()! });
    await elsewhere.connect();
    try {
      await withDeadDatabase(async (attempts) => {
        services().keyVerifier.forget(hashKey(extra.apiKey));
        // Several re-verifications fail meanwhile (events stop too: they are read from the database).
        await c.until("tries of the database", () => attempts() >= 3);
        await sleep(500);
        expect(c.ws.readyState).toBe(WebSocket.OPEN);
        // Revoked meanwhile (its notification lost): a retry once the database is back finds it.
        await elsewhere.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [extra.id]);
      });
      expect(await closedWithin(c, 5_000)).toEqual({ code: POLICY_VIOLATION, reason: "API key revoked" });
    } finally {
      SOCKET_LIMITS.recheckRetryMs = retry;
      SOCKET_LIMITS.recheckRetryMaxMs = retryMax;
      await elsewhere.end();
    }
  });
});
