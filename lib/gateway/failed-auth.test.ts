import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db/client";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { resetKey } from "@/lib/keys/service";
import { services } from "@/lib/services";
import { createTestProject, startTestGateway, withDeadDatabase, type TestGateway } from "@/lib/testing/harness";
import { FAILED_AUTH_LIMIT } from "./router";

// Short, so a test can let a cached answer expire; read when the gateway creates the verifier.
const KEY_CACHE_TTL_MS = 1000;
process.env.KEY_CACHE_TTL_MS = String(KEY_CACHE_TTL_MS);

let gw: TestGateway;

beforeAll(async () => {
  // Behind one trusted proxy: each X-Forwarded-For address below is its own client.
  gw = await startTestGateway({ trustedProxyHops: 1 });
});
afterAll(async () => gw.stop());

// The limits and the key cache read the monotonic clock (performance.now()); frozen here, no
// token comes back and no cached answer expires unless a test moves the clock on.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const madeUpKey = () => generateKeyMaterial().secret;

// A connection per request: hundreds of refusals in a row on kept-alive connections would be
// answered late (REFUSALS_BEFORE_CLOSE, lib/gateway/router.ts), which is not what this file tests.
const oneShot = new Agent({ pipelining: 0 });
afterAll(() => oneShot.close());

async function send(key: string, forwardedFor: string) {
  const res = await request(`${gw.url}/node/ethereum-mainnet`, {
    method: "POST",
    dispatcher: oneShot,
    headers: { "Content-Type": "application/json", "X-API-KEY": key, "X-Forwarded-For": forwardedFor },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  const retryAfter = res.headers["retry-after"];
  return { status: res.statusCode, retryAfter: typeof retryAfter === "string" ? retryAfter : null, body: (await res.body.json()) as Record<string, unknown> };
}

/** Sends made-up keys from the address until one is refused with 429 (the address is throttled). */
async function throttle(address: string) {
  for (let i = 0; i <= FAILED_AUTH_LIMIT.burst; i++) if ((await send(madeUpKey(), address)).status === 429) return;
  throw new Error(`${address} was not throttled`);
}

describe("failed authentication per client address", () => {
  it("costs 1,000 made-up keys from one address only the burst of database lookups; the rest answer 429 with Retry-After", async () => {
    const address = "198.51.100.7";
    const before = services().keyVerifier.lookups;
    const answers: Awaited<ReturnType<typeof send>>[] = [];
    // 20 waves of 50 at once: the limit holds under concurrency too.
    for (let wave = 0; wave < 20; wave++) answers.push(...(await Promise.all(Array.from({ length: 50 }, () => send(madeUpKey(), address)))));

    expect(services().keyVerifier.lookups - before).toBe(FAILED_AUTH_LIMIT.burst);
    const unauthorized = answers.filter((a) => a.status === 401);
    const limited = answers.filter((a) => a.status === 429);
    expect(unauthorized).toHaveLength(FAILED_AUTH_LIMIT.burst);
    expect(limited).toHaveLength(1000 - FAILED_AUTH_LIMIT.burst);
    for (const a of unauthorized) expect(a.body).toEqual({ code: "AUTHENTICATION_FAILED", message: "The API key is invalid or has been reset." });
    for (const a of limited) {
      expect(a.body).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("unknown API keys from your address") });
      expect(a.retryAfter).toBe("1");
    }

    // Tokens come back with time (one per refill interval), each good for one more lookup.
    vi.advanceTimersByTime(FAILED_AUTH_LIMIT.refillMs * 2);
    const after = [await send(madeUpKey(), address), await send(madeUpKey(), address), await send(madeUpKey(), address)];
    expect(after.map((a) => a.status)).toEqual([401, 401, 429]);
    expect(services().keyVerifier.lookups - before).toBe(FAILED_AUTH_LIMIT.burst + 2);
  });

  it("keeps serving a real key from a throttled address, cached or not; a key never seen there waits; other addresses are not affected", async () => {
    const address = "198.51.100.8";
    const p = await createTestProject();
    expect((await send(p.apiKey, address)).status).toBe(200);
    await throttle(address);

    // Cached: no lookup at all.
    const before = services().keyVerifier.lookups;
    expect((await send(p.apiKey, address)).status).toBe(200);
    expect(services().keyVerifier.lookups - before).toBe(0);
    // Its cached answer expired: looked up again (it was found valid before), not refused.
    vi.advanceTimersByTime(KEY_CACHE_TTL_MS + 1);
    await throttle(address);
    const beforeExpired = services().keyVerifier.lookups;
    expect((await send(p.apiKey, address)).status).toBe(200);
    expect(services().keyVerifier.lookups - beforeExpired).toBe(1);

    // A real key this server has not seen yet waits like a made-up one (nothing tells them apart
    // without a lookup)...
    const q = await createTestProject();
    const waiting = await send(q.apiKey, address);
    expect(waiting.status).toBe(429);
    expect(waiting.retryAfter).toBe("1");
    // ...until it has been found valid from anywhere.
    expect((await send(q.apiKey, "198.51.100.9")).status).toBe(200);
    expect((await send(q.apiKey, address)).status).toBe(200);

    // Other addresses get their own allowance; a client-written X-Forwarded-For entry in front of
    // the one the trusted proxy appended does not escape the limit.
    expect((await send(madeUpKey(), "198.51.100.10")).status).toBe(401);
    expect((await send(madeUpKey(), `203.0.113.9, ${address}`)).status).toBe(429);
  });

  it("refuses a reset key from a throttled address without a lookup, and serves its replacement", async () => {
    const address = "198.51.100.11";
    const p = await createTestProject();
    expect((await send(p.apiKey, address)).status).toBe(200);
    const key = await db().apiKey.findFirstOrThrow({ where: { projectId: p.projectId }, select: { id: true } });
    const fresh = await resetKey(p.projectId, key.id);
    await throttle(address);
    const before = services().keyVerifier.lookups;
    expect((await send(p.apiKey, address)).status).toBe(429);
    expect(services().keyVerifier.lookups - before).toBe(0);
    expect((await send(fresh, "198.51.100.12")).status).toBe(200);
    expect((await send(fresh, address)).status).toBe(200);
  });

  it("does not count lookups the database failed to answer against the address", async () => {
    const address = "198.51.100.13";
    await withDeadDatabase(async () => {
      for (let i = 0; i < FAILED_AUTH_LIMIT.burst + 5; i++) {
        const r = await send(madeUpKey(), address);
        expect(r.status).toBe(503);
        expect(r.body).toMatchObject({ code: "UNAVAILABLE" });
      }
    });
    expect((await send(madeUpKey(), address)).status).toBe(401);
  });

  it("lets an IPv6 client's whole /64 share one allowance", async () => {
    for (let i = 0; i < FAILED_AUTH_LIMIT.burst; i++) expect((await send(madeUpKey(), `2001:db8:1:2::${(i + 1).toString(16)}`)).status).toBe(401);
    expect((await send(madeUpKey(), "2001:db8:1:2:ffff::1")).status).toBe(429);
    expect((await send(madeUpKey(), "2001:db8:1:3::1")).status).toBe(401);
  });
});
