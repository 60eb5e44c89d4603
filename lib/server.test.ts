import type { IncomingMessage, ServerResponse } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { databaseOutage, reportDatabaseUnreachable } from "@/lib/db/outage";
import { setDatabaseUrl } from "@/lib/env";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { listMigrations } from "@/lib/db/migrate";
import { setExpectedMigrations, type NotReady } from "@/lib/health";
import { startHttpServer, startWorkerHttpServer, type Route, type RunningServer } from "@/lib/server";
import { connectTestDatabase } from "@/lib/testing/harness";
import { freePort } from "@/lib/testing/ports";
import { UsageMeter } from "@/lib/usage/meter";

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are (no client library would send these requests) and reads the answer until the server closes. */
function raw(server: RunningServer, request: string): Promise<RawAnswer> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => {
      chunks.push(d);
      // A keep-alive answer: stop once its declared body is complete.
      const text = Buffer.concat(chunks).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
      if (end !== -1 && (length !== undefined ? text.length >= end + 4 + Number(length) : /^HTTP\/1\.1 204/.test(text))) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: text.slice(end + 4) });
    });
    socket.write(request);
  });
}

let plain: RunningServer;
let withNext: RunningServer;
let behindProxy: RunningServer;
const meter = new UsageMeter();

/** Stands in for Next.js: answers with the client address header it was handed. */
const echoNext = async (req: IncomingMessage, res: ServerResponse) => {
  const body = JSON.stringify({ clientIp: req.headers[CLIENT_IP_HEADER] ?? null, url: req.url });
  res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }).end(body);
};

beforeAll(async () => {
  const base = { host: "127.0.0.1", meter };
  plain = await startHttpServer({ ...base, port: await freePort() });
  withNext = await startHttpServer({ ...base, port: await freePort(), next: echoNext });
  behindProxy = await startHttpServer({ ...base, port: await freePort(), next: echoNext, trustedProxyHops: 1 });
});
afterAll(async () => {
  await Promise.all([plain.close(), withNext.close(), behindProxy.close()]);
  await meter.stop();
});

const json = (a: RawAnswer) => JSON.parse(a.body) as unknown;

describe("refusals of the HTTP layer", () => {
  it("answers OPTIONS * with 204 and Allow, without Next.js", async () => {
    const res = await raw(withNext, "OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    expect(res.status).toBe(204);
    expect(res.headers.allow).toBe("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    expect(res.body).toBe("");
  });

  it("answers * with another method, and other targets that are not a path, with 400 JSON", async () => {
    for (const line of ["GET * HTTP/1.1", "GET ftp://example.com/x HTTP/1.1"]) {
      const res = await raw(withNext, `${line}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(400);
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(json(res)).toEqual({ code: "INVALID_PARAMETER", message: "The request target must be a path starting with / (or * for OPTIONS)." });
    }
  });

  it("serves an absolute-form target as its path", async () => {
    const res = await raw(withNext, "GET http://localhost/sign-in?next=%2F HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n");
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ clientIp: "127.0.0.1", url: "/sign-in?next=%2F" });
  });

  it("answers a path that is not percent-encoded UTF-8 with 400: JSON on API paths, a line of text on console pages", async () => {
    const message = "The URL path is not valid percent-encoded UTF-8.";
    for (const path of ["/api/projects/%ff", "/api/projects/%E0%A4%A", "/node/ethereum-mainnet/%ff", "/v1/ethereum/mainnet/webhooks/%", "/rpc/babylon-mainnet/block%C0%80"]) {
      const res = await raw(withNext, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      expect([path, res.status, res.headers["content-type"], json(res)]).toEqual([path, 400, "application/json; charset=utf-8", { code: "INVALID_PARAMETER", message }]);
      expect(res.headers["access-control-allow-origin"]).toBe(path.startsWith("/api/") ? undefined : "*");
    }
    for (const path of ["/projects/%ff", "/%", "/projects/prj_x/webhooks/%ED%A0%80?tab=%41"]) {
      const res = await raw(withNext, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      expect([path, res.status, res.headers["content-type"], res.body]).toEqual([path, 400, "text/plain; charset=utf-8", `Bad request: ${message}\n`]);
    }
    // Decodable paths pass, and the query is left to whoever reads it.
    const passed = await raw(withNext, "GET /projects/%41%C3%A9%00?next=%ff HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    expect(json(passed)).toEqual({ clientIp: "127.0.0.1", url: "/projects/%41%C3%A9%00?next=%ff" });
    const gateway = await raw(withNext, "GET /rpc/babylon-mainnet/block?height=%ff HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    expect([gateway.status, json(gateway)]).toEqual([401, { code: "NO_AUTHENTICATION_FOUND", message: expect.any(String) }]);
  });

  it("answers a console URL over 8192 characters with 414 JSON, and one over the header limit too", async () => {
    for (const length of [10_000, 20_000]) {
      const res = await raw(withNext, `GET /${"a".repeat(length)} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(414);
      expect(json(res)).toEqual({ code: "TOO_LONG_URI", message: "The URL is longer than 8192 characters." });
    }
  });

  it("answers headers over 16 KB with 431 JSON", async () => {
    const res = await raw(plain, `GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.headers.connection).toBe("close");
    expect(json(res)).toEqual({ code: "CONTENTS_TOO_LARGE", message: "The request's URL and headers are larger than 16384 bytes together." });
  });

  it("answers a request that is not HTTP with 400 JSON", async () => {
    const res = await raw(plain, "HELLO THERE\r\n\r\n");
    expect(res.status).toBe(400);
    expect(json(res)).toEqual({ code: "INVALID_PARAMETER", message: "The request is not valid HTTP/1.1." });
  });
});

describe("the client address handed to Next.js", () => {
  it("is the socket's peer, overwriting a value the client sent and ignoring its X-Forwarded-For", async () => {
    const res = await raw(
      withNext,
      `GET /sign-in HTTP/1.1\r\nHost: localhost\r\n${CLIENT_IP_HEADER}: 6.6.6.6\r\nX-Forwarded-For: 7.7.7.7\r\nConnection: close\r\n\r\n`,
    );
    expect(json(res)).toEqual({ clientIp: "127.0.0.1", url: "/sign-in" });
  });

  it("with one trusted proxy, is the last X-Forwarded-For entry", async () => {
    const res = await raw(
      behindProxy,
      `GET /sign-in HTTP/1.1\r\nHost: localhost\r\n${CLIENT_IP_HEADER}: 6.6.6.6\r\nX-Forwarded-For: 7.7.7.7, 203.0.113.9\r\nConnection: close\r\n\r\n`,
    );
    expect(json(res)).toEqual({ clientIp: "203.0.113.9", url: "/sign-in" });
  });
});

describe("the HTTP server without Next.js", () => {
  it("answers a console path with 404 WRONG_ENDPOINT as JSON", async () => {
    for (const path of ["/", "/projects", "/favicon.ico"]) {
      const res = await fetch(plain.url + path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toBe("application/json");
      expect(await res.json(), path).toEqual({ code: "WRONG_ENDPOINT", message: "Not found." });
    }
  });
});

describe("console requests while the database is unreachable", () => {
  it("answer 503 with Retry-After (a self-reloading page, or JSON for /api), let static files through, and reach Next.js again once the database answers", async () => {
    setDatabaseUrl(`postgresql://nobody@127.0.0.1:${await freePort()}/none`);
    reportDatabaseUnreachable(new Error("connect ECONNREFUSED"));
    const page = await fetch(withNext.url + "/projects");
    expect(page.status).toBe(503);
    expect(page.headers.get("retry-after")).toBe("5");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain("cannot reach its database");
    expect(html).toContain('<meta http-equiv="refresh" content="5">');
    const api = await fetch(withNext.url + "/api/projects");
    expect([api.status, api.headers.get("retry-after"), await api.json()]).toEqual([
      503,
      "5",
      { code: "UNAVAILABLE", message: "The service's database is unreachable at the moment. Please retry shortly." },
    ]);
    for (const path of ["/_next/static/chunks/app.js", "/favicon.ico", "/logo.svg"]) {
      const res = await fetch(withNext.url + path);
      expect([path, res.status]).toEqual([path, 200]);
    }
    // The probes say themselves what they see.
    const health = await fetch(withNext.url + "/api/health");
    expect([health.status, await health.json()]).toEqual([200, { status: "ok" }]);
    // The probe finds the database again (the run's real PostgreSQL) and the outage ends by itself.
    setDatabaseUrl(inject("databaseUrl"));
    await expect.poll(() => databaseOutage(), { timeout: 10_000 }).toBeUndefined();
    const after = await fetch(withNext.url + "/projects");
    expect([after.status, await after.json()]).toEqual([200, { clientIp: "127.0.0.1", url: "/projects" }]);
  });
});

describe("probes for load balancers, answered by the server itself", () => {
  let names: string[];
  beforeAll(async () => {
    await connectTestDatabase();
    names = await listMigrations();
    setExpectedMigrations(names);
  });

  const answer = async (res: Response) => [res.status, res.headers.get("cache-control"), res.headers.get("content-type"), await res.json()] as const;

  it("GET /healthz and /api/health: 200 ok; /readyz and /api/ready: 200 ready with how limits count; never cached, HEAD too, other methods 405; with or without Next.js", async () => {
    for (const server of [plain, withNext]) {
      for (const path of ["/healthz", "/api/health"]) expect([path, ...(await answer(await fetch(server.url + path)))]).toEqual([path, 200, "no-store", "application/json", { status: "ok" }]);
      for (const path of ["/readyz", "/api/ready", "/readyz?verbose"]) {
        expect([path, ...(await answer(await fetch(server.url + path)))]).toEqual([path, 200, "no-store", "application/json", { status: "ready", limits: "local" }]);
      }
      const head = await raw(server, "HEAD /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
      expect([head.status, head.headers["cache-control"], head.body]).toEqual([200, "no-store", ""]);
      const post = await fetch(server.url + "/healthz", { method: "POST", body: "{}" });
      expect([post.status, post.headers.get("allow"), await post.json()]).toEqual([405, "GET, HEAD", { code: "METHOD_NOT_ALLOWED", message: "Use GET or HEAD on this endpoint." }]);
    }
  });

  it("/readyz: 503 naming the migrations this build expects that the database lacks (/healthz still 200)", async () => {
    setExpectedMigrations([...names, "20991231000000_later"]);
    try {
      for (const path of ["/readyz", "/api/ready"]) {
        expect([path, ...(await answer(await fetch(plain.url + path)))]).toEqual([path, 503, "no-store", "application/json", { status: "not_ready", reason: "pending migrations: 20991231000000_later", limits: "local" }]);
      }
      expect((await fetch(plain.url + "/healthz")).status).toBe(200);
    } finally {
      setExpectedMigrations(names);
    }
  });

  it("drains: once close() is called, /readyz answers 503 draining at once while other requests are still served for drainMs, on new and kept-alive connections; then the port closes", async () => {
    const server = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter, next: echoNext, drainMs: 1500 });
    expect((await fetch(server.url + "/readyz")).status).toBe(200);
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    expect(await answer(await fetch(server.url + "/readyz"))).toEqual([503, "no-store", "application/json", { status: "draining" }]);
    const page = await raw(server, "GET /projects HTTP/1.1\r\nHost: localhost\r\n\r\n");
    expect([page.status, page.headers.connection, json(page)]).toEqual([200, "keep-alive", { clientIp: "127.0.0.1", url: "/projects" }]);
    expect((await fetch(server.url + "/healthz")).status).toBe(200);
    expect(closed).toBe(false);
    await closing;
    await expect(fetch(server.url + "/healthz")).rejects.toThrow();
  });

  it("a worker's listener: /healthz, /readyz from its parts and the database, routes mounted beside them, 404 JSON otherwise", async () => {
    let parts: NotReady | undefined = { status: "not_ready", reason: "starting" };
    const metrics: Route = (req, res) => {
      if (req.url !== "/metrics") return false;
      res.writeHead(200, { "Content-Type": "text/plain" }).end("up 1\n");
      return true;
    };
    const worker = await startWorkerHttpServer({ host: "127.0.0.1", port: await freePort(), parts: () => parts, routes: [metrics] });
    try {
      expect(await answer(await fetch(worker.url + "/readyz"))).toEqual([503, "no-store", "application/json", { status: "not_ready", reason: "starting" }]);
      parts = undefined;
      expect(await answer(await fetch(worker.url + "/readyz"))).toEqual([200, "no-store", "application/json", { status: "ready" }]);
      expect(await answer(await fetch(worker.url + "/healthz"))).toEqual([200, "no-store", "application/json", { status: "ok" }]);
      const scraped = await fetch(worker.url + "/metrics");
      expect([scraped.status, await scraped.text()]).toEqual([200, "up 1\n"]);
      for (const path of ["/", "/node/ethereum-mainnet", "/metrics/x"]) {
        const res = await fetch(worker.url + path);
        expect([path, res.status, await res.json()]).toEqual([path, 404, { code: "WRONG_ENDPOINT", message: "Not found." }]);
      }
      parts = { status: "draining" };
      expect(await answer(await fetch(worker.url + "/readyz"))).toEqual([503, "no-store", "application/json", { status: "draining" }]);
    } finally {
      await worker.close();
    }
    await expect(fetch(worker.url + "/healthz")).rejects.toThrow();
  });
});

describe("stopping under keep-alive load", () => {
  it("drains: answers in flight finish with Connection: close, busy keep-alive clients are let go without a reset, and every answered request is metered", async () => {
    const { createTestProject } = await import("@/lib/testing/harness");
    const { db, disconnectDb } = await import("@/lib/db/client");
    const { Agent, request } = await import("undici");
    await connectTestDatabase();
    const project = await createTestProject("Drain", "ENTERPRISE");
    const meter = new UsageMeter();
    const server = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter });
    const agent = new Agent({ connections: 32, pipelining: 1, keepAliveTimeout: 60_000 });
    let answered = 0;
    /** How the requests that got no answer failed: only a new connection to a server no longer listening may. */
    const failures: string[] = [];
    const loop = async () => {
      for (;;) {
        try {
          const res = await request(`${server.url}/node/ethereum-mainnet`, {
            method: "POST",
            dispatcher: agent,
            headers: { "content-type": "application/json", "x-api-key": project.apiKey },
            body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
          });
          const text = await res.body.text();
          expect(res.statusCode).toBe(200);
          expect(JSON.parse(text)).toMatchObject({ result: expect.any(String) });
          answered++;
        } catch (e) {
          // Refused once the server stopped listening: this client is done.
          if (e instanceof Error && e.name === "AssertionError") throw e;
          failures.push((e as { code?: string }).code ?? String(e));
          return;
        }
      }
    };
    const loops = Array.from({ length: 32 }, loop);
    await new Promise((r) => setTimeout(r, 300));
    // One request whose body is still arriving when the server is told to stop: it is in flight.
    const { port } = new URL(server.url);
    const body = '{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}';
    const slow = connect(Number(port), "127.0.0.1");
    let text = "";
    slow.on("data", (d: Buffer) => (text += d.toString()));
    const slowAnswer = new Promise<string>((resolve) => slow.on("close", () => resolve(text)));
    await new Promise<void>((resolve) => slow.once("connect", () => resolve()));
    // 100-continue: the server says when it has read the request's head and waits for its body.
    slow.write(`POST /node/ethereum-mainnet HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-KEY: ${project.apiKey}\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 10)}`);
    while (!text.includes("100 Continue")) await new Promise((r) => setTimeout(r, 10));
    const closed = server.close();
    slow.write(body.slice(10));
    await closed;
    await Promise.all(loops);
    await agent.close();
    await meter.stop();
    expect(answered).toBeGreaterThan(0);
    // No request sent on a kept-alive connection was cut (ECONNRESET, or undici's "other side closed").
    expect(failures.filter((code) => code !== "ECONNREFUSED")).toEqual([]);
    // The request in flight was answered in full, told Connection: close, and its socket closed by the server.
    const answer = await slowAnswer;
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(answer.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(answer).toMatch(/\{"jsonrpc":"2\.0","id":7,"result":"0x[0-9a-f]+"\}$/);
    answered += 1;
    const rows = await db().usageBucket.findMany({ where: { projectId: project.projectId } });
    expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(answered);
    await disconnectDb();
  });
});
