// The upstream pool against real loopback HTTP servers: what a caller of a flaky, slow or
// misbehaving node gets, which node is asked, and what reaches errors and logs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { freeLowPort } from "@/lib/testing/ports";
import { NodeFailure, parseJson, UpstreamPool, UpstreamUnavailable, type CallOptions, type PoolOptions } from "./pool";

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

interface Node {
  url: string;
  seen: Seen[];
  /** Replaces how the node answers. */
  answer(handler: (req: Seen, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

const servers: Server[] = [];

/** A node on loopback; by default it answers `{"ok":<its name>}`. */
async function startNode(name: string): Promise<Node> {
  const seen: Seen[] = [];
  let handler: (req: Seen, res: ServerResponse) => void = (_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: name }));
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s = { method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body: Buffer.concat(chunks).toString("utf8") };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, answer: (h) => void (handler = h), close };
}

afterAll(async () => {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
});

/** A pool whose log lines are kept, with a clock the test moves. */
function testPool(urls: string[], opts: Partial<PoolOptions> = {}) {
  const lines: Array<{ level: string; network: string; msg: string }> = [];
  const logger = pino({ base: undefined, timestamp: false, formatters: { level: (label) => ({ level: label }) } }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
  const clock = { now: 1_000_000 };
  const pool = new UpstreamPool(urls, { network: "test-net", logger, now: () => clock.now, ...opts });
  pools.push(pool);
  return { pool, lines, clock };
}
const pools: UpstreamPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const read = (extra: Partial<CallOptions<unknown>> = {}): CallOptions<unknown> => ({ method: "GET", path: "status", retryable: true, check: parseJson, ...extra });
const write = (extra: Partial<CallOptions<unknown>> = {}): CallOptions<unknown> => ({ method: "POST", body: '{"write":1}', retryable: false, check: parseJson, ...extra });
const unavailable = async (p: Promise<unknown>): Promise<UpstreamUnavailable> => {
  const e = await p.then(
    (v) => v,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(UpstreamUnavailable);
  return e as UpstreamUnavailable;
};
const closedPort = async () => `http://127.0.0.1:${await freeLowPort()}`;

describe("upstream pool", () => {
  it("asks the first node, and the second when the first cannot be reached", async () => {
    const a = await startNode("a");
    const b = await startNode("b");
    expect(await testPool([a.url, b.url]).pool.call(read())).toEqual({ ok: "a" });
    expect(b.seen).toHaveLength(0);

    const dead = await closedPort();
    const { pool, lines } = testPool([dead, b.url]);
    expect(await pool.call(read())).toEqual({ ok: "b" });
    expect(pool.health()).toEqual([
      { origin: dead, unhealthy: true },
      { origin: b.url, unhealthy: false },
    ]);
    expect(lines).toEqual([{ level: "warn", network: "test-net", msg: `upstream ${dead} failed (connect ECONNREFUSED); passing over it for 30 s` }]);
  });

  it("gives up on a node that does not answer within the call's timeout, and asks the next", async () => {
    const hanging = await startNode("hanging");
    hanging.answer(() => undefined);
    const b = await startNode("b");
    // One that starts its answer, then stalls.
    const stalling = await startNode("stalling");
    stalling.answer((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).write('{"ok":'));
    // The pool's default would wait longer than the test may run: the call's own timeout applies.
    const { pool } = testPool([hanging.url, stalling.url, b.url], { timeoutMs: 600_000 });
    expect(await pool.call(read({ timeoutMs: 200 }))).toEqual({ ok: "b" });
    expect([hanging.seen.length, stalling.seen.length]).toEqual([1, 1]);
    const alone = testPool([hanging.url, stalling.url], { timeoutMs: 600_000 }).pool;
    const e = await unavailable(alone.call(read({ timeoutMs: 200 })));
    expect(e.message).toBe("no upstream node answered (timed out; timed out)");
    expect(e.failures).toEqual([
      { index: 0, origin: hanging.url, reason: "timed out" },
      { index: 1, origin: stalling.url, reason: "timed out" },
    ]);
  });

  it("treats a body that is not JSON, a connection closed mid-body and an HTTP 500 page as failures of the node", async () => {
    const garbage = await startNode("garbage");
    garbage.answer((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end('{"ok": tru'));
    const cut = await startNode("cut");
    cut.answer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"ok": "cut", "padding": "');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const page = await startNode("page");
    page.answer((_req, res) => void res.writeHead(500, { "content-type": "text/html" }).end("<html>Internal Server Error</html>"));
    const good = await startNode("good");
    const { pool, lines } = testPool([garbage.url, cut.url, page.url, good.url]);
    expect(await pool.call(read())).toEqual({ ok: "good" });
    expect(pool.health().map((h) => h.unhealthy)).toEqual([true, true, true, false]);
    expect(lines.map((l) => l.msg)).toEqual([
      `upstream ${garbage.url} failed (HTTP 200 with a body that is not JSON); passing over it for 30 s`,
      `upstream ${cut.url} failed (other side closed); passing over it for 30 s`,
      `upstream ${page.url} failed (HTTP 500 with a body that is not JSON); passing over it for 30 s`,
    ]);
  });

  it("returns what the check makes of an answer, and passes on what it throws other than NodeFailure without blaming the node", async () => {
    const a = await startNode("a");
    a.answer((_req, res) => void res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"code":-32000,"message":"execution reverted"}}'));
    const b = await startNode("b");
    const { pool } = testPool([a.url, b.url]);
    class Reverted extends Error {}
    const check = (res: { status: number; text: string }) => {
      const answer = parseJson({ ...res, headers: {} }) as { error?: { message: string } };
      if (answer.error) throw new Reverted(answer.error.message);
      return answer;
    };
    await expect(pool.call({ ...read(), check })).rejects.toThrow(Reverted);
    expect(b.seen).toHaveLength(0);
    expect(pool.health()[0]!.unhealthy).toBe(false);
    // A check that finds the answer malformed: the next node is asked.
    const picky = (res: { status: number; text: string }) => {
      const answer = parseJson({ ...res, headers: {} }) as { ok?: string };
      if (answer.ok !== "b") throw new NodeFailure("malformed answer");
      return answer.ok;
    };
    expect(await pool.call({ ...read(), check: picky })).toBe("b");
    expect(pool.health()[0]!.unhealthy).toBe(true);
  });

  it("passes over a failed node for 30 s, asks it as a last resort meanwhile, and says once when it is healthy again", async () => {
    const a = await startNode("a");
    const b = await startNode("b");
    const ok = (name: string) => (_req: Seen, res: ServerResponse) => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: name }));
    const busy = (_req: Seen, res: ServerResponse) => void res.writeHead(503).end("busy");
    a.answer(busy);
    const { pool, lines, clock } = testPool([a.url, b.url]);
    for (let i = 0; i < 4; i++) expect(await pool.call(read())).toEqual({ ok: "b" });
    expect([a.seen.length, b.seen.length]).toEqual([1, 4]);
    a.answer(ok("a"));
    clock.now += 29_000;
    expect(await pool.call(read())).toEqual({ ok: "b" });
    expect([a.seen.length, b.seen.length]).toEqual([1, 5]);
    // 30 s on, the first node is asked first again.
    clock.now += 1_001;
    expect(await pool.call(read())).toEqual({ ok: "a" });
    expect([a.seen.length, b.seen.length]).toEqual([2, 5]);
    // Passed over, yet asked when the healthy node fails too.
    a.answer(busy);
    expect(await pool.call(read())).toEqual({ ok: "b" });
    a.answer(ok("a"));
    b.answer(busy);
    expect(await pool.call(read())).toEqual({ ok: "a" });
    expect([a.seen.length, b.seen.length]).toEqual([4, 7]);
    expect(lines.map((l) => `${l.level} ${l.msg}`)).toEqual([
      `warn upstream ${a.url} failed (HTTP 503 with a body that is not JSON); passing over it for 30 s`,
      `info upstream ${a.url} is healthy again`,
      `warn upstream ${a.url} failed (HTTP 503 with a body that is not JSON); passing over it for 30 s`,
      `warn upstream ${b.url} failed (HTTP 503 with a body that is not JSON); passing over it for 30 s`,
      `info upstream ${a.url} is healthy again`,
    ]);
  });

  it("logs a failing node once per streak however often it fails", async () => {
    const a = await startNode("a");
    a.answer((_req, res) => void res.writeHead(502).end("bad gateway"));
    const { pool, lines, clock } = testPool([a.url]);
    for (let i = 0; i < 5; i++) {
      await unavailable(pool.call(read()));
      clock.now += 31_000;
    }
    expect(lines).toHaveLength(1);
  });

  it("never sends a write again once a node may have received it, but does when the connection was refused", async () => {
    const dropper = await startNode("dropper");
    dropper.answer((_req, res) => res.socket?.destroy());
    const b = await startNode("b");
    const e = await unavailable(testPool([dropper.url, b.url]).pool.call(write()));
    expect(e.failures.map((f) => f.origin)).toEqual([dropper.url]);
    expect([dropper.seen.length, b.seen.length]).toEqual([1, 0]);
    // A read in the same situation goes on to the next node.
    expect(await testPool([dropper.url, b.url]).pool.call(read())).toEqual({ ok: "b" });
    // Refused before anything was sent: the write goes to the next node.
    const dead = await closedPort();
    expect(await testPool([dead, b.url]).pool.call(write())).toEqual({ ok: "b" });
    expect(b.seen.map((s) => [s.method, s.body])).toEqual([
      ["GET", ""],
      ["POST", '{"write":1}'],
    ]);
  });

  it("sends URL credentials as Basic authentication and keeps the URL's path and query", async () => {
    const a = await startNode("a");
    const url = a.url.replace("http://", "http://user:p%40ss@") + "/v2/key-123/?apikey=q1";
    const pool = testPool([url]).pool;
    await pool.call(read({ path: "block?height=5" }));
    await pool.call(write());
    expect(a.seen.map((s) => [s.method, s.url, s.authorization])).toEqual([
      ["GET", "/v2/key-123/block?apikey=q1&height=5", `Basic ${Buffer.from("user:p@ss").toString("base64")}`],
      ["POST", "/v2/key-123?apikey=q1", `Basic ${Buffer.from("user:p@ss").toString("base64")}`],
    ]);
  });

  it("names nodes by origin only: never a path, query or credentials in errors or logs", async () => {
    const a = await startNode("a");
    a.answer((_req, res) => void res.writeHead(500).end("oops"));
    const dead = await closedPort();
    const secretUrl = (base: string) => base.replace("http://", "http://alice:pw-SECRET1@") + "/key-SECRET2?token=SECRET3";
    const { pool, lines } = testPool([secretUrl(a.url), secretUrl(dead)]);
    const e = await unavailable(pool.call(read()));
    const said = JSON.stringify({ message: e.message, failures: e.failures, stack: e.stack, lines, health: pool.health() });
    expect(said).not.toMatch(/SECRET|alice/);
    expect(e.failures).toEqual([
      { index: 0, origin: a.url, reason: "HTTP 500 with a body that is not JSON" },
      { index: 1, origin: dead, reason: "connect ECONNREFUSED" },
    ]);
    // The message may reach API callers: it does not say which nodes there are.
    expect(e.message).toBe("no upstream node answered (HTTP 500 with a body that is not JSON; connect ECONNREFUSED)");
    expect(lines.map((l) => l.msg)).toEqual([
      `upstream ${a.url} failed (HTTP 500 with a body that is not JSON); passing over it for 30 s`,
      `upstream ${dead} failed (connect ECONNREFUSED); passing over it for 30 s`,
    ]);
    // An invalid URL is refused without being repeated.
    expect(() => new UpstreamPool(["http://u:SECRET4@[bad/x"], { network: "n" })).toThrow(/^upstream #1 is not a valid URL$/);
  });

  it("stops when the caller aborts, with the caller's reason, without blaming the node", async () => {
    const hanging = await startNode("hanging");
    hanging.answer(() => undefined);
    const b = await startNode("b");
    const { pool, lines } = testPool([hanging.url, b.url]);
    const abort = new AbortController();
    const calls = [pool.call(read({ signal: abort.signal })), pool.call(read({ signal: abort.signal }))];
    setTimeout(() => abort.abort(new Error("shutting down")), 50);
    for (const call of calls) await expect(call).rejects.toThrow("shutting down");
    expect(b.seen).toHaveLength(0);
    expect(pool.health().map((h) => h.unhealthy)).toEqual([false, false]);
    expect(lines).toEqual([]);
    // Already aborted: nothing is sent.
    await expect(pool.call(read({ signal: abort.signal }))).rejects.toThrow("shutting down");
    expect(hanging.seen).toHaveLength(2);
  });

  it("verifies each node before its first use, leaves out a wrong one with one log line, and retries a node that could not tell", async () => {
    const right = await startNode("right");
    const wrong = await startNode("wrong");
    const mute = await startNode("mute");
    mute.answer((_req, res) => void res.writeHead(503).end());
    const verify: PoolOptions["verify"] = async (ask) => {
      const name = (parseJson(await ask({ method: "GET", path: "whoami" })) as { ok: string }).ok;
      return name === "wrong" ? { leftOut: "it is the wrong node" } : "ok";
    };
    const { pool, lines } = testPool([mute.url, wrong.url, right.url], { verify });
    for (let i = 0; i < 3; i++) expect(await pool.call(read())).toEqual({ ok: "right" });
    // The wrong node was asked once (to verify it), the right one verified once then used.
    expect(wrong.seen.map((s) => s.url)).toEqual(["/whoami"]);
    expect(right.seen.map((s) => s.url)).toEqual(["/whoami", "/status", "/status", "/status"]);
    // The mute node could not tell: used anyway, then passed over, and asked again when it comes back.
    expect(mute.seen.map((s) => s.url)).toEqual(["/whoami", "/status"]);
    expect(lines.filter((l) => l.msg.includes("left out"))).toEqual([
      { level: "error", network: "test-net", msg: `upstream ${wrong.url} is left out: it is the wrong node (check the network's UPSTREAM_ variable)` },
    ]);
    expect(pool.health()[1]).toEqual({ origin: wrong.url, unhealthy: false, leftOut: "it is the wrong node" });

    const e = await unavailable(testPool([wrong.url], { verify }).pool.call(read()));
    expect(e.message).toBe("every upstream node is left out (it is the wrong node)");
  });
});
