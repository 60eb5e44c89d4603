// Webhook delivery end to end: real PostgreSQL, messages written by the outbox as the engine
// writes them, real HTTP receivers on loopback, signatures checked with the npm `standardwebhooks`
// and `svix` libraries as a receiver would. Retry schedules and timeouts are shortened by options.
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { joinCluster } from "@/lib/cluster/members";
import { db, disconnectDb, rawTransaction } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import { networkBySlug } from "@/lib/networks";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { UsageMeter } from "@/lib/usage/meter";
import { enqueueMessages } from "../outbox";
import { createWebhook } from "../service";
import { USER_AGENT } from "./send";
import { claimDue, inboxAuthority, leaseHolder, receiverTurnSql } from "./store";
import { leaseMs, startDelivery, type DeliveryOptions, type DeliveryWorker } from "./worker";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on a free loopback port: records every request, answers as `respond` says. */
class Receiver {
  received: Received[] = [];
  open = 0;
  maxOpen = 0;
  private server: Server;
  private hanging: ServerResponse[] = [];
  url = "";

  constructor(public respond: (req: Received, n: number, res: ServerResponse) => void = (_r, _n, res) => res.end("ok")) {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      res.on("close", () => this.open--);
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const r = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
        this.received.push(r);
        this.respond(r, this.received.length, res);
      });
    });
  }

  /** Never answers (until close). */
  hang = (_r: Received, _n: number, res: ServerResponse) => {
    this.hanging.push(res);
  };

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const receivers: Receiver[] = [];
const workers: DeliveryWorker[] = [];
let project: Awaited<ReturnType<typeof createTestProject>>;
let usage: UsageMeter;
const ETH = networkBySlug("ethereum-mainnet")!;

async function receiver(respond?: Receiver["respond"]): Promise<Receiver> {
  const r = await new Receiver(respond).start();
  receivers.push(r);
  return r;
}

function worker(options: Partial<DeliveryOptions> = {}): DeliveryWorker {
  const w = startDelivery({ timeoutMs: 2000, retryScheduleMs: [50, 50, 50], pollMs: 20, leaseMarginMs: 500, meter: usage, projectIds: [project.projectId], ...options });
  workers.push(w);
  return w;
}

async function subscription(url: string) {
  return createWebhook(project.projectId, ETH, { eventType: "BLOCK_PERIOD", description: "delivery test", notification: { webhookUrl: url }, condition: { period: 1 } });
}

async function enqueue(subscriptionId: string, count = 1, opts: { test?: boolean; evenIfInactive?: boolean; asked?: boolean } = {}) {
  const block = { number: "0x10", hash: `0x${"ab".repeat(32)}` };
  return rawTransaction((client) =>
    enqueueMessages(
      client,
      Array.from({ length: count }, (_, i) => ({ subscriptionId, blockNumber: 16n + BigInt(i), blockHash: block.hash, content: { message: { ...block, i } }, test: opts.test })),
      { evenIfInactive: opts.evenIfInactive, asked: opts.asked },
    ),
  );
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const message = (id: string) => db().webhookMessage.findUniqueOrThrow({ where: { id } });
const attempts = (messageId: string) => db().webhookAttempt.findMany({ where: { messageId }, orderBy: { attempt: "asc" } });
const settled = (id: string) => waitFor(`message ${id} to settle`, async () => ((await message(id)).status !== "PENDING" ? message(id) : undefined));

async function deliveredCu(subscriptionId: string): Promise<{ cu: bigint; requests: number }> {
  await usage.flush();
  // The subscription's usage, no key's.
  const rows = await db().usageBucket.findMany({ where: { projectId: project.projectId, keyId: "", subscriptionId, endpoint: "webhooks.delivery" } });
  return { cu: rows.reduce((s, r) => s + r.cu, 0n), requests: rows.reduce((s, r) => s + r.requests, 0) };
}

beforeAll(async () => {
  process.env.WEBHOOK_ALLOW_PRIVATE_URLS = "on";
  process.env.WEBHOOK_HTTPS_ONLY = "off";
  await connectTestDatabase();
  usage = new UsageMeter();
  project = await createTestProject("Delivery", "ENTERPRISE");
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ abandon: true })));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

afterAll(async () => {
  await usage.stop();
  await disconnectDb();
  delete process.env.WEBHOOK_ALLOW_PRIVATE_URLS;
  delete process.env.WEBHOOK_HTTPS_ONLY;
  resetEnv();
});

describe("a delivered message", () => {
  it("is the stored body, signed as standardwebhooks and svix verify it, with x-signature, and charged once", async () => {
    const r = await receiver();
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    worker();
    const done = await settled(queued!.id);
    expect(done).toMatchObject({ status: "SUCCESS", attempts: 1, nextAttemptAt: null });

    expect(r.received).toHaveLength(1);
    const { headers, body } = r.received[0]!;
    const [stored] = await db().$queryRaw<{ body: string }[]>`SELECT payload::text AS body FROM webhook_messages WHERE id = ${queued!.id}`;
    expect(body).toBe(stored!.body);
    expect(JSON.parse(body)).toMatchObject({ subscriptionId: sub.subscriptionId, sequenceNumber: "1", eventType: "BLOCK_PERIOD" });
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["user-agent"]).toBe(USER_AGENT);
    expect(USER_AGENT).toMatch(/^Blockgate/);
    expect(headers["webhook-id"]).toBe(queued!.id);
    expect(headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    const key = sub.signingKey!;
    const wh = { "webhook-id": headers["webhook-id"] as string, "webhook-timestamp": headers["webhook-timestamp"] as string, "webhook-signature": headers["webhook-signature"] as string };
    expect(new Webhook(key).verify(body, wh)).toEqual(JSON.parse(body));
    const svix = { "svix-id": wh["webhook-id"], "svix-timestamp": wh["webhook-timestamp"], "svix-signature": wh["webhook-signature"] };
    expect(new SvixWebhook(key).verify(body, svix)).toEqual(JSON.parse(body));
    // Another key or another body does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(body, wh)).toThrow();
    expect(() => new SvixWebhook(key).verify(body.replace("delivery test", "tampered"), svix)).toThrow();

    const keyBytes = Buffer.from(key.slice("whsec_".length), "base64");
    expect(headers["x-signature"]).toBe(createHmac("sha256", keyBytes).update(body).digest("hex"));

    const [attempt] = await attempts(queued!.id);
    expect(attempt).toMatchObject({ attempt: 1, httpStatus: 200, success: true, error: null, responseBody: "ok", subscriptionId: sub.subscriptionId, projectId: project.projectId });
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(0);
    expect(attempt!.requestHeaders).toMatchObject({ "webhook-id": queued!.id, "content-type": "application/json", "user-agent": USER_AGENT });
    expect(JSON.stringify(attempt!.requestHeaders)).not.toContain(key.slice(6, 20));

    // The charge follows the row's SUCCESS by a moment (recorded once the batch is written).
    await expect.poll(() => deliveredCu(sub.subscriptionId)).toEqual({ cu: 10n, requests: 1 });
  });

  it("costs nothing more when it was charged as it was queued (a test, resend or replay the user asked for)", async () => {
    const r = await receiver();
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId, 1, { asked: true });
    const [chain] = await enqueue(sub.subscriptionId);
    const w = worker();
    expect(await settled(queued!.id)).toMatchObject({ status: "SUCCESS" });
    expect(await settled(chain!.id)).toMatchObject({ status: "SUCCESS" });
    // Only the chain's message is charged at delivery (and nothing follows once the worker is done).
    await expect.poll(() => deliveredCu(sub.subscriptionId)).toEqual({ cu: 10n, requests: 1 });
    await w.stop();
    expect(await deliveredCu(sub.subscriptionId)).toEqual({ cu: 10n, requests: 1 });
  });

  it("reaches an idle worker at once through the outbox's announcement, not at the worker's next poll", async () => {
    const r = await receiver();
    const sub = await subscription(r.url);
    // A minute between polls: only the announcement (NOTIFY at the outbox's commit) can wake it in time.
    const w = worker({ pollMs: 60_000 });
    await w.listening;
    await waitFor("the worker to be idle", async () => w.inFlight === 0 && (await new Promise((ok) => setTimeout(ok, 200, true))));
    const [queued] = await enqueue(sub.subscriptionId);
    expect(await settled(queued!.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    expect(r.received).toHaveLength(1);
  });

  it("fails three times, then succeeds: four attempts in the history, one webhook-id, charged once", async () => {
    const r = await receiver((_req, n, res) => {
      res.statusCode = n <= 3 ? 500 : 204;
      res.end(n <= 3 ? "boom" : undefined);
    });
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    worker();
    const done = await settled(queued!.id);
    expect(done).toMatchObject({ status: "SUCCESS", attempts: 4, nextAttemptAt: null });
    const history = await attempts(queued!.id);
    expect(history.map((a) => [a.attempt, a.httpStatus, a.success])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 500, false],
      [4, 204, true],
    ]);
    expect(history[0]).toMatchObject({ error: "the receiver answered HTTP 500", responseBody: "boom" });
    expect(new Set(r.received.map((x) => x.headers["webhook-id"]))).toEqual(new Set([queued!.id]));
    expect(r.received).toHaveLength(4);
    // The charge follows the row's SUCCESS by a moment (recorded once the batch is written).
    await expect.poll(() => deliveredCu(sub.subscriptionId)).toEqual({ cu: 10n, requests: 1 });
    expect((await db().webhookSubscription.findUniqueOrThrow({ where: { id: sub.subscriptionId } })).failingSince).toBeNull();
  });

  it("fails after the last retry of the schedule, costs nothing, and the subscription stays on but failing", async () => {
    const r = await receiver((_req, _n, res) => {
      res.statusCode = 302;
      res.setHeader("location", "http://127.0.0.1:1/");
      res.end();
    });
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    worker({ retryScheduleMs: [20, 20] });
    expect(await settled(queued!.id)).toMatchObject({ status: "FAIL", attempts: 3, nextAttemptAt: null });
    const history = await attempts(queued!.id);
    expect(history.map((a) => a.httpStatus)).toEqual([302, 302, 302]);
    expect(history[0]!.error).toBe("the receiver answered HTTP 302 (redirects are not followed)");
    expect(await deliveredCu(sub.subscriptionId)).toEqual({ cu: 0n, requests: 0 });
    const s = await db().webhookSubscription.findUniqueOrThrow({ where: { id: sub.subscriptionId } });
    expect(s.isActive).toBe(true);
    expect(s.failingSince).toEqual(history[0]!.startedAt);
  });
});

describe("turning subscriptions off", () => {
  it("410 Gone turns the subscription off with the reason and fails its pending messages", async () => {
    const r = await receiver((_req, _n, res) => {
      res.statusCode = 410;
      res.end();
    });
    const sub = await subscription(r.url);
    const [first, later] = await enqueue(sub.subscriptionId, 2);
    await db().webhookMessage.update({ where: { id: later!.id }, data: { nextAttemptAt: new Date(Date.now() + 3600_000) } });
    worker();
    expect(await settled(first!.id)).toMatchObject({ status: "FAIL", attempts: 1 });
    const s = await db().webhookSubscription.findUniqueOrThrow({ where: { id: sub.subscriptionId } });
    expect(s.isActive).toBe(false);
    expect(s.deactivatedReason).toMatch(/^The receiver answered 410 Gone on \d{4}-\d\d-\d\dT.*Z: deliveries stopped/);
    expect(s.deactivatedAt).toBeInstanceOf(Date);
    expect(await message(later!.id)).toMatchObject({ status: "FAIL", attempts: 0, nextAttemptAt: null });
    expect(r.received).toHaveLength(1);
  });

  it("a subscription failing continuously for 5 days is turned off with the reason", async () => {
    const r = await receiver((_req, _n, res) => {
      res.statusCode = 503;
      res.end();
    });
    const sub = await subscription(r.url);
    const since = new Date(Date.now() - 5 * 86_400_000 - 60_000);
    await db().webhookSubscription.update({ where: { id: sub.subscriptionId }, data: { failingSince: since } });
    const [queued] = await enqueue(sub.subscriptionId);
    worker();
    expect(await settled(queued!.id)).toMatchObject({ status: "FAIL", attempts: 1 });
    const s = await db().webhookSubscription.findUniqueOrThrow({ where: { id: sub.subscriptionId } });
    expect(s).toMatchObject({ isActive: false, failingSince: since });
    expect(s.deactivatedReason).toBe(`Every delivery failed for 5 days (since ${since.toISOString()}): deliveries stopped. Fix the receiver, then turn the webhook on again.`);
  });

  it("messages of a subscription its owner turned off are not sent, except a test message", async () => {
    const r = await receiver();
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    await db().webhookSubscription.update({ where: { id: sub.subscriptionId }, data: { isActive: false } });
    const [test] = await enqueue(sub.subscriptionId, 1, { test: true, evenIfInactive: true });
    worker();
    expect(await settled(test!.id)).toMatchObject({ status: "SUCCESS" });
    expect(await settled(queued!.id)).toMatchObject({ status: "FAIL", attempts: 0 });
    expect(await attempts(queued!.id)).toEqual([]);
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual([test!.id]);
  });
});

describe("receivers that misbehave", () => {
  it("a receiver that hangs times out, delays no other receiver, and never gets more than its share of connections", async () => {
    const slow = await receiver();
    slow.respond = slow.hang;
    const fast = await receiver();
    // More messages due for the slow receiver, over several subscriptions, than a claim looks at.
    const hung = [await subscription(slow.url), await subscription(slow.url), await subscription(slow.url)];
    const quick = await subscription(fast.url);
    for (const h of hung) await enqueue(h.subscriptionId, 30);
    worker({ timeoutMs: 1500, perHost: 2, concurrency: 8, retryScheduleMs: [3_600_000] });
    await waitFor("the slow receiver to hold its connections", async () => slow.open === 2);
    // Queued behind 90 due messages of the slow receiver while it holds its two slots: all delivered meanwhile.
    const queued = await enqueue(quick.subscriptionId, 20);
    for (const q of queued) expect(await settled(q.id)).toMatchObject({ status: "SUCCESS" });
    expect(fast.received).toHaveLength(20);
    const ids = hung.map((h) => h.subscriptionId);
    const first = await waitFor("a timeout in the history", async () => (await db().webhookAttempt.findFirst({ where: { subscriptionId: { in: ids } } })) ?? undefined);
    expect(first).toMatchObject({ httpStatus: null, success: false, error: "timed out: no complete answer within 1500 ms", responseBody: null });
    expect(await message(first.messageId)).toMatchObject({ status: "PENDING", attempts: 1 });
    await waitFor("the next ones to be sent", async () => slow.received.length >= 4);
    expect(slow.maxOpen).toBe(2);
  });

  it("an answer trickled slower than the timeout is cut at the timeout, within the lease: one request, one attempt, a timeout", async () => {
    // Raw TCP receivers that answer a byte at a time, for ever: one keeps sending interim
    // "103 Early Hints" heads (each restarts undici's own headers timeout), one a body that never ends.
    const trickles: Record<string, (socket: Socket) => NodeJS.Timeout> = {
      heads: (socket) => setInterval(() => socket.write("HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"), 40),
      body: (socket) => {
        socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\n");
        return setInterval(() => socket.write("x"), 40);
      },
    };
    const requests: Record<string, number> = { heads: 0, body: 0 };
    const servers: NetServer[] = [];
    const sockets = new Set<Socket>();
    const urls: Record<string, string> = {};
    for (const [name, trickle] of Object.entries(trickles)) {
      const server = createNetServer((socket) => {
        let timer: NodeJS.Timeout | undefined;
        sockets.add(socket);
        socket.on("error", () => undefined);
        socket.on("close", () => {
          clearInterval(timer);
          sockets.delete(socket);
        });
        socket.once("data", () => {
          requests[name]!++;
          timer = trickle(socket);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      servers.push(server);
      urls[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    }
    try {
      const queued: Record<string, string> = {};
      for (const name of Object.keys(trickles)) {
        const sub = await subscription(urls[name]!);
        queued[name] = (await enqueue(sub.subscriptionId))[0]!.id;
      }
      // Two workers: one whose attempt outlived its lease would see the other claim the message and send it again.
      const options = { timeoutMs: 300, leaseMarginMs: 200, retryScheduleMs: [3_600_000] };
      worker(options);
      worker(options);
      for (const name of Object.keys(trickles)) {
        const id = queued[name]!;
        const [attempt] = await waitFor(`the ${name} attempt`, async () => ((await attempts(id)).length > 0 ? attempts(id) : undefined));
        expect(attempt).toMatchObject({ attempt: 1, httpStatus: null, success: false, error: "timed out: no complete answer within 300 ms", responseBody: null });
        // Recorded by the worker still holding the lease (a re-claim would have moved it): one attempt, retried in an hour.
        expect(await message(id)).toMatchObject({ status: "PENDING", attempts: 1 });
        expect(await attempts(id)).toHaveLength(1);
        expect(requests[name]).toBe(1);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      for (const server of servers) server.close();
    }
  });

  it("an answer holding NUL or bytes that are not UTF-8 is recorded, with U+FFFD in their place in its excerpt", async () => {
    // The failed attempt's row is written one way (Prisma), the successful one's another (one statement for a batch).
    const r = await receiver((_req, n, res) => {
      res.statusCode = n === 1 ? 500 : 200;
      res.end(n === 1 ? Buffer.from([0x62, 0x00, 0xff]) : "ok\u0000");
    });
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    worker();
    expect(await settled(queued!.id)).toMatchObject({ status: "SUCCESS", attempts: 2 });
    expect((await attempts(queued!.id)).map((a) => [a.httpStatus, a.responseBody])).toEqual([
      [500, "b\uFFFD\uFFFD"],
      [200, "ok\uFFFD"],
    ]);
    expect(r.received).toHaveLength(2);
  });

  it("honours Retry-After, in seconds and as an HTTP date", async () => {
    const r = await receiver((_req, n, res) => {
      res.statusCode = n === 1 ? 429 : 503;
      res.setHeader("retry-after", n === 1 ? "120" : new Date(Date.now() + 600_000).toUTCString());
      res.end();
    });
    const sub = await subscription(r.url);
    const [a] = await enqueue(sub.subscriptionId);
    worker();
    const retry = await waitFor("the first attempt", async () => {
      const m = await message(a!.id);
      return m.attempts === 1 ? m : undefined;
    });
    const [first] = await attempts(a!.id);
    const wait = retry.nextAttemptAt!.getTime() - first!.startedAt.getTime();
    expect(wait).toBeGreaterThanOrEqual(120_000);
    expect(wait).toBeLessThan(130_000);
    // Due again now: the second answer asks for 10 minutes.
    await db().webhookMessage.update({ where: { id: a!.id }, data: { nextAttemptAt: new Date() } });
    const later = await waitFor("the second attempt", async () => {
      const m = await message(a!.id);
      return m.attempts === 2 ? m : undefined;
    });
    expect(later.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(590_000 - 60_000);
    expect(later.status).toBe("PENDING");
  });

  it("a private address is refused at delivery time when the server does not allow them", async () => {
    const r = await receiver();
    const sub = await subscription(r.url);
    process.env.WEBHOOK_ALLOW_PRIVATE_URLS = "off";
    resetEnv();
    try {
      const [queued] = await enqueue(sub.subscriptionId);
      worker({ retryScheduleMs: [] });
      expect(await settled(queued!.id)).toMatchObject({ status: "FAIL", attempts: 1 });
      const [attempt] = await attempts(queued!.id);
      expect(attempt).toMatchObject({ httpStatus: null, success: false, responseBody: null });
      expect(attempt!.error).toMatch(/^not sent: the URL resolves to 127\.0\.0\.1, a loopback address, which webhooks may not reach on this server/);
      expect(r.received).toHaveLength(0);
    } finally {
      process.env.WEBHOOK_ALLOW_PRIVATE_URLS = "on";
      resetEnv();
    }
  });

  it("a refused connection is recorded as such and retried", async () => {
    const r = await receiver();
    const url = r.url;
    await r.close();
    receivers.splice(receivers.indexOf(r), 1);
    const sub = await subscription(url);
    const [queued] = await enqueue(sub.subscriptionId);
    worker({ retryScheduleMs: [10] });
    expect(await settled(queued!.id)).toMatchObject({ status: "FAIL", attempts: 2 });
    const history = await attempts(queued!.id);
    expect(history.map((a) => a.error)).toEqual([`connection refused by 127.0.0.1:${new URL(url).port}`, `connection refused by 127.0.0.1:${new URL(url).port}`]);
  });
});

describe("workers that stop", () => {
  it("a worker killed mid-delivery leaves the message to another after its lease: delivered, the in-flight attempt the only duplicate", async () => {
    const r = await receiver((req, n, res) => {
      if (n === 1) return; // the first attempt hangs: its worker dies meanwhile
      res.end("ok");
    });
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    const a = worker({ timeoutMs: 1000, leaseMarginMs: 300 });
    await waitFor("the first attempt to arrive", async () => r.received.length === 1);
    await a.stop({ abandon: true });
    expect(await attempts(queued!.id)).toEqual([]);
    expect(await message(queued!.id)).toMatchObject({ status: "PENDING", attempts: 0 });
    worker({ timeoutMs: 1000, leaseMarginMs: 300 });
    expect(await settled(queued!.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual([queued!.id, queued!.id]);
    // The charge follows the row's SUCCESS by a moment (recorded once the batch is written).
    await expect.poll(() => deliveredCu(sub.subscriptionId)).toEqual({ cu: 10n, requests: 1 });
  });

  it("a worker frozen past its leases starts none of the messages it held when it wakes: handed back, they go out once each, under a live lease", async () => {
    const options = { perHost: 1, concurrency: 3, timeoutMs: 400, leaseMarginMs: 200, retryScheduleMs: [50] };
    const freezeMs = leaseMs(options.timeoutMs, options.leaseMarginMs) + 300;
    const unleased: string[] = [];
    const answered: string[] = [];
    const r = await receiver((req, n, res) => {
      const id = req.headers["webhook-id"] as string;
      void (async () => {
        // A message sent with its lease over may be another worker's by now.
        const [row] = await db().$queryRaw<{ live: boolean }[]>`SELECT coalesce(leased_until > now(), false) AS live FROM webhook_messages WHERE id = ${id}`;
        if (!row!.live) unleased.push(id);
        if (n > 1) {
          answered.push(id);
          res.end("ok");
          return;
        }
        // The process stops (as SIGSTOP stops it) past the leases, with the first attempt in
        // flight and the two others waiting for it; that attempt gets no answer.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, freezeMs);
        r.hang(req, n, res);
      })();
    });
    const sub = await subscription(r.url);
    const queued = await enqueue(sub.subscriptionId, 3);
    worker(options);
    for (const q of queued) expect(await settled(q.id)).toMatchObject({ status: "SUCCESS" });
    expect(unleased).toEqual([]);
    expect(answered.sort()).toEqual(queued.map((q) => q.id).sort());
    // Only the attempt in flight as the process froze went out twice.
    const frozen = r.received[0]!.headers["webhook-id"] as string;
    expect(r.received.map((x) => x.headers["webhook-id"]).sort()).toEqual([...queued.map((q) => q.id), frozen].sort());
  });

  it("a worker whose cluster member is no longer live sends nothing more of what it holds, nor claims: another worker delivers it, once", async () => {
    const member = await joinCluster({ role: "worker", heartbeatMs: 100 });
    let answerFirst: (() => void) | undefined;
    const r = await receiver((_req, n, res) => (n === 1 ? (answerFirst = () => res.end("ok")) : res.end("ok")));
    const sub = await subscription(r.url);
    const queued = await enqueue(sub.subscriptionId, 3);
    worker({ perHost: 1, concurrency: 3, member });
    await waitFor("the first attempt", async () => answerFirst !== undefined);
    // Its heartbeat stops and its row goes, as when it is found stale: its leases count for no one.
    await member.stop();
    answerFirst!();
    const first = r.received[0]!.headers["webhook-id"];
    expect(await settled(first as string)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    const rest = queued.filter((q) => q.id !== first).map((q) => q.id);
    const handedBack = async () => (await db().webhookMessage.count({ where: { id: { in: rest }, status: "PENDING", attempts: 0, leasedBy: null, nextAttemptAt: { lte: new Date() } } })) === rest.length;
    await waitFor("the messages waiting to be handed back", handedBack, 5_000);
    worker({ perHost: 1, concurrency: 3 });
    for (const id of rest) expect(await settled(id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    expect(r.received.map((x) => x.headers["webhook-id"]).sort()).toEqual(queued.map((q) => q.id).sort());
  });

  it("a clean stop finishes the attempts in flight and records them", async () => {
    let release: (() => void) | undefined;
    const r = await receiver((_req, _n, res) => {
      release = () => res.end("late");
    });
    const sub = await subscription(r.url);
    const [queued] = await enqueue(sub.subscriptionId);
    const w = worker();
    await waitFor("the attempt to arrive", async () => release !== undefined);
    const stopping = w.stop();
    release!();
    await stopping;
    expect(await message(queued!.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    expect((await attempts(queued!.id))[0]).toMatchObject({ success: true, responseBody: "late" });
  });

  it("many workers share the messages: each delivered once", async () => {
    const r = await receiver();
    const sub = await subscription(r.url);
    const queued = await enqueue(sub.subscriptionId, 60);
    worker();
    worker();
    worker();
    for (const q of queued) expect(await settled(q.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    expect(r.received).toHaveLength(60);
    expect(new Set(r.received.map((x) => x.headers["webhook-id"])).size).toBe(60);
    // The charge follows the row's SUCCESS by a moment (recorded once the batch is written).
    await expect.poll(() => deliveredCu(sub.subscriptionId)).toEqual({ cu: 600n, requests: 60 });
  });
});

describe("sharing a receiver", () => {
  it("a quiet subscription's messages go out within a second behind another's 5,000-message backlog on the same host, and the backlog still drains", async () => {
    const r = await receiver((_req, _n, res) => setTimeout(() => res.end("ok"), 2));
    const busy = await subscription(r.url);
    const quiet = await subscription(r.url);
    for (let i = 0; i < 5; i++) await enqueue(busy.subscriptionId, 1000);
    worker();
    await waitFor("the backlog's deliveries to start", async () => r.received.length >= 200);
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) {
      sent.push((await enqueue(quiet.subscriptionId))[0]!.id);
      await new Promise((ok) => setTimeout(ok, 50));
    }
    const pendingOf = (subscriptionId: string) => db().webhookMessage.count({ where: { subscriptionId, status: "PENDING" } });
    // The backlog was still there while the quiet subscription sent: what follows measures waiting behind it.
    expect(await pendingOf(busy.subscriptionId)).toBeGreaterThan(0);
    for (const id of sent) expect(await settled(id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    const delays = await db().$queryRaw<{ ms: number }[]>`
      SELECT extract(epoch FROM a.started_at - m.created_at)::float8 * 1000 AS ms
      FROM webhook_messages m JOIN webhook_attempts a ON a.message_id = m.id AND a.attempt = 1
      WHERE m.id = ANY(${sent}) ORDER BY ms`;
    const p99 = delays[Math.ceil(0.99 * delays.length) - 1]!.ms;
    expect(p99, `quiet subscription's enqueue → first attempt, ms: ${delays.map((d) => Math.round(d.ms)).join(", ")}`).toBeLessThan(1000);
    await waitFor("the backlog to drain", async () => (await pendingOf(busy.subscriptionId)) === 0, 60_000);
    expect(await db().webhookMessage.count({ where: { subscriptionId: busy.subscriptionId, status: "SUCCESS" } })).toBe(5000);
  });

  it("each test inbox of this service is a receiver of its own: one that hangs holds no other inbox's deliveries", async () => {
    const r = await receiver();
    const own = new URL(r.url).origin;
    process.env.PUBLIC_URL = own;
    resetEnv();
    try {
      const token = (c: string) => c.repeat(32);
      // Keyed by inbox only on this service's own origin: elsewhere the path is any receiver's.
      const elsewhere = new URL((await receiver()).url);
      const a = await subscription(`${elsewhere.origin}/v1/inbox/${token("a")}`);
      const b = await subscription(`${elsewhere.origin}/v1/inbox/${token("b")}`);
      const [ownA, ownB] = [await subscription(`${own}/v1/inbox/${token("a")}`), await subscription(`${own}/v1/inbox/${token("b")}`)];
      for (const s of [a, b, ownA, ownB]) await enqueue(s.subscriptionId);
      const { messages } = await claimDue({ max: 10, perHost: 10, heldPerHost: 10, busy: new Map(), fullHosts: [], leaseMs: 60_000, holder: "test", cursor: "", inboxAuthority: inboxAuthority(own), projectIds: [project.projectId] });
      const hostOf = (id: string) => messages.find((m) => m.subscriptionId === id)?.host;
      expect([a, b, ownA, ownB].map((s) => hostOf(s.subscriptionId))).toEqual([elsewhere.host, elsewhere.host, `${new URL(own).host}/v1/inbox/${token("a")}`, `${new URL(own).host}/v1/inbox/${token("b")}`]);

      const hung = await subscription(`${own}/v1/inbox/${token("c")}`);
      const other = await subscription(`${own}/v1/inbox/${token("d")}`);
      r.respond = (req, n, res) => (JSON.parse(req.body).subscriptionId === hung.subscriptionId ? r.hang(req, n, res) : res.end("ok"));
      await enqueue(hung.subscriptionId, 10);
      worker({ perHost: 2, timeoutMs: 30_000, leaseMarginMs: 30_000 });
      await waitFor("the hung inbox to hold its two connections", async () => r.open === 2);
      const queued = await enqueue(other.subscriptionId, 5);
      for (const q of queued) expect(await settled(q.id)).toMatchObject({ status: "SUCCESS" });
    } finally {
      delete process.env.PUBLIC_URL;
      resetEnv();
    }
  });

  it("several workers keep at most WEBHOOK_DELIVERY_PER_HOST in flight to a host together, deliver each message once, and a fast host waits for none of it", async () => {
    const slow = await receiver((_req, _n, res) => setTimeout(() => res.end("ok"), 150));
    const fast = await receiver();
    const backlog = [];
    for (let i = 0; i < 3; i++) backlog.push(...(await enqueue((await subscription(slow.url)).subscriptionId, 12)));
    const quick = await subscription(fast.url);
    // As two worker processes would run: each claims for itself, with room for 10 deliveries and 3 per host.
    worker({ perHost: 3, concurrency: 10 });
    worker({ perHost: 3, concurrency: 10 });
    await waitFor("the slow receiver's deliveries to start", async () => slow.received.length > 0);
    const queued = await enqueue(quick.subscriptionId, 20);
    for (const q of queued) expect(await settled(q.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    // The fast host's messages went out while the slow host's backlog was still there.
    expect(await db().webhookMessage.count({ where: { id: { in: backlog.map((m) => m.id) }, status: "PENDING" } })).toBeGreaterThan(0);
    for (const m of backlog) expect(await settled(m.id)).toMatchObject({ status: "SUCCESS", attempts: 1 });
    expect(slow.maxOpen).toBe(3);
    const ids = (r: Receiver) => r.received.map((x) => x.headers["webhook-id"] as string).sort();
    expect(ids(slow)).toEqual(backlog.map((m) => m.id).sort());
    expect(ids(fast)).toEqual(queued.map((m) => m.id).sort());
  });
});

describe("leases", () => {
  it("run on the database's clock: a worker whose clock is an hour off neither takes a message leased to another nor keeps one past its lease", async () => {
    // A project of its own: no message left by the tests before is claimed here.
    const own = await createTestProject("Delivery leases", "ENTERPRISE");
    const sub = await createWebhook(own.projectId, ETH, { eventType: "BLOCK_PERIOD", description: "lease test", notification: { webhookUrl: (await receiver()).url }, condition: { period: 1 } });
    const claim = (leaseMs: number) => claimDue({ max: 10, perHost: 10, heldPerHost: 10, busy: new Map(), fullHosts: [], leaseMs, holder: "test", cursor: "", inboxAuthority: "blockgate.invalid", projectIds: [own.projectId] });
    /** Claims as a worker whose clock is `skewMs` off would. */
    const skewed = async (skewMs: number, leaseMs: number) => {
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + skewMs });
      try {
        return await claim(leaseMs);
      } finally {
        vi.useRealTimers();
      }
    };
    const ids = (c: Awaited<ReturnType<typeof claim>>) => c.messages.map((m) => m.id);

    // Leased for a minute by a worker an hour behind: still leased for everyone else.
    const [behind] = await enqueue(sub.subscriptionId);
    expect(ids(await skewed(-3_600_000, 60_000))).toEqual([behind!.id]);
    expect(ids(await claim(60_000))).toEqual([]);

    // Leased for a moment by a worker an hour ahead, which then dies: free again once the moment is over.
    const [ahead] = await enqueue(sub.subscriptionId);
    const held = await skewed(3_600_000, 100);
    expect(ids(held)).toEqual([ahead!.id]);
    expect((await message(ahead!.id)).nextAttemptAt).toEqual(held.messages[0]!.lease);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ids(await claim(60_000))).toEqual([ahead!.id]);
  });

  it("a claim that waited for another's turn on the receiver counts what that one leased: together at most perHost", async () => {
    const own = await createTestProject("Delivery turns", "ENTERPRISE");
    const host = "127.0.0.1:9";
    const sub = await createWebhook(own.projectId, ETH, { eventType: "BLOCK_PERIOD", description: "turn test", notification: { webhookUrl: `http://${host}/hooks` }, condition: { period: 1 } });
    const queued = await enqueue(sub.subscriptionId, 10);
    const claim = (holder: string) => claimDue({ max: 10, perHost: 3, heldPerHost: 9, busy: new Map(), fullHosts: [], leaseMs: 60_000, holder, cursor: "", inboxAuthority: "blockgate.invalid", projectIds: [own.projectId] });
    const waiting = async () => {
      const [row] = await db().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 2 AND objid = (hashtext(${host})::bigint & 4294967295)::oid AND NOT granted`;
      return row!.n > 0;
    };
    // Another worker's claim in its turn, as the claim writes it: two messages leased, not committed yet.
    const { claimed } = await rawTransaction(async (client) => {
      await client.query(`SELECT ${receiverTurnSql("$1")}`, [host]);
      await client.query(
        `UPDATE webhook_messages SET next_attempt_at = now() + interval '1 minute', leased_until = now() + interval '1 minute', leased_by = 'other', receiver = $2 WHERE id = ANY($1)`,
        [queued.slice(0, 2).map((m) => m.id), host],
      );
      const claimed = claim("this");
      await waitFor("the claim to wait for the receiver's turn", waiting);
      return { claimed };
    });
    expect((await claimed).messages).toHaveLength(1);
    expect((await claim("a third")).messages).toEqual([]);
  });

  it("the leases of a worker whose cluster member is no longer live (stale or gone) stop counting against the receiver; a worker outside the cluster's count until they end", async () => {
    const own = await createTestProject("Delivery dead holders", "ENTERPRISE");
    const host = "127.0.0.1:11";
    const sub = await createWebhook(own.projectId, ETH, { eventType: "BLOCK_PERIOD", description: "dead holder test", notification: { webhookUrl: `http://${host}/hooks` }, condition: { period: 1 } });
    await enqueue(sub.subscriptionId, 10);
    const claim = async (holder: string) => (await claimDue({ max: 3, perHost: 3, heldPerHost: 9, busy: new Map(), fullHosts: [], leaseMs: 60_000, holder, cursor: "", inboxAuthority: "blockgate.invalid", projectIds: [own.projectId] })).messages;
    // No heartbeat of their own during the test: their rows say what the test makes them say.
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => joinCluster({ role: "worker", heartbeatMs: 600_000 })));
    try {
      expect(await claim(leaseHolder(a!.id))).toHaveLength(3);
      // a is live: its round fills the receiver.
      expect(await claim(leaseHolder(b!.id))).toEqual([]);
      // a stopped beating a minute ago (killed, or frozen): b serves the receiver as if alone.
      await db().$executeRaw`UPDATE cluster_members SET heartbeat_at = now() - interval '1 minute' WHERE id = ${a!.id}`;
      expect(await claim(leaseHolder(b!.id))).toHaveLength(3);
      // b's row is gone (swept): a worker outside the cluster finds room too.
      await db().$executeRaw`DELETE FROM cluster_members WHERE id = ${b!.id}`;
      expect(await claim(leaseHolder(undefined))).toHaveLength(3);
      // Whose leases count until they end: the receiver is full for c.
      expect(await claim(leaseHolder(c!.id))).toEqual([]);
    } finally {
      await Promise.all([a, b, c].map((m) => m!.stop()));
    }
  });
});
