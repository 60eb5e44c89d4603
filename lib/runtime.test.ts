import { captureLogs } from "@/lib/testing/logs";
import { spawn, type ChildProcess } from "node:child_process";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionBudget, db, disconnectDb } from "@/lib/db/client";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { applyMigrations, listMigrations } from "@/lib/db/migrate";
import { parseEnv, resetEnv } from "@/lib/env";
import { LeaderLock } from "@/lib/workers/leader-lock";
import { startService } from "@/lib/runtime";
import { createTestProject, connectTestDatabase } from "@/lib/testing/harness";
import { freeLowPort, freePort } from "@/lib/testing/ports";
import { version as packageVersion } from "@/package.json";

const root = path.resolve(import.meta.dirname, "..");

function startLauncher(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let out = "";
  // The same command `npm start` runs.
  const child = spawn(process.execPath, ["bin/start.mjs", "--api-only"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

/** The launcher's log line (LOG_FORMAT=json) whose message starts with `text`, parsed. */
function logLine(output: string, text: string): unknown {
  const line = output.split("\n").find((l) => l.startsWith("{") && (JSON.parse(l) as { msg?: string }).msg?.startsWith(text));
  return line === undefined ? undefined : JSON.parse(line);
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => disconnectDb());

describe("launcher", () => {
  it("serves the public API and its probes (--api-only), logs its host, role and version, and on SIGTERM drains (/readyz 503, requests served for DRAIN_MS), flushes usage and exits 0 within 10 s", async () => {
    const project = await createTestProject();
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-launcher-"));
    const launcher = startLauncher({
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      DATA_DIR: dataDir,
      NODE_ENV: "test",
      DEVNETS: "off",
      // A long flush interval: only the shutdown flush can have written the usage.
      USAGE_FLUSH_MS: "60000",
      DRAIN_MS: "2000",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
    });
    const url = `http://127.0.0.1:${port}`;
    await waitFor(() => launcher.output().includes("Blockgate is running"), 60_000, `the launcher to start:\n${launcher.output()}`);
    const probe = async (path: string) => {
      const res = await fetch(url + path);
      return [res.status, await res.json()] as const;
    };
    expect(await probe("/healthz")).toEqual([200, { status: "ok" }]);
    expect(await probe("/readyz")).toEqual([200, { status: "ready", limits: "local" }]);
    expect(logLine(launcher.output(), "database connections: at most")).toMatchObject({ hostname: os.hostname(), role: "all", version: packageVersion, pid: launcher.child.pid });
    const call = (i: number) =>
      fetch(`${url}/node/base-mainnet`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-KEY": project.apiKey },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "net_version" }),
      });
    const n = 12;
    for (let i = 0; i < n; i++) expect((await call(i)).status).toBe(200);
    expect(await db().usageBucket.count({ where: { projectId: project.projectId } })).toBe(0);
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => launcher.child.on("exit", (code) => resolve(code)));
    launcher.child.kill("SIGTERM");
    // A load balancer's probe hears it first; requests are still served meanwhile.
    await waitFor(async () => (await probe("/readyz"))[0] === 503, 1000, "/readyz to answer 503");
    expect(await probe("/readyz")).toEqual([503, { status: "draining" }]);
    expect((await call(n)).status).toBe(200);
    expect(await exited, launcher.output()).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    const rows = await db().usageBucket.findMany({ where: { projectId: project.projectId } });
    expect(rows.reduce((s, r) => s + r.requests, 0)).toBe(n + 1);
    expect(rows.reduce((s, r) => s + Number(r.cu), 0)).toBe((n + 1) * 5);
    expect(launcher.output()).toContain("Stopped.");
  });

  it("as ROLE=worker with WORKER_HTTP_PORT, answers /healthz, /readyz and /metrics on that port (404 otherwise) and closes it when stopped", async () => {
    const port = await freePort();
    const launcher = startLauncher({
      DATABASE_URL: databaseUrl,
      ROLE: "worker",
      WORKER_HTTP_PORT: String(port),
      PORT: String(await freePort()),
      DATA_DIR: await mkdtemp(path.join(os.tmpdir(), "blockgate-launcher-worker-")),
      NODE_ENV: "test",
      DEVNETS: "off",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
    });
    const url = `http://127.0.0.1:${port}`;
    await waitFor(() => launcher.output().includes("Blockgate worker is running"), 60_000, `the worker to start:\n${launcher.output()}`);
    expect(launcher.output()).toContain(`Blockgate worker is running (role worker); probes at ${url}/healthz and /readyz.`);
    for (const [path, status, body] of [
      ["/healthz", 200, { status: "ok" }],
      ["/readyz", 200, { status: "ready" }],
      ["/api/ready", 200, { status: "ready" }],
      ["/node/base-mainnet", 404, { code: "WRONG_ENDPOINT", message: "Not found." }],
    ] as const) {
      const res = await fetch(url + path);
      expect([path, res.status, res.headers.get("cache-control"), await res.json()]).toEqual([path, status, status === 200 ? "no-store" : null, body]);
    }
    // Its metrics on the same listener: the process's own and the service's (the leader locks it holds, say).
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    const scraped = await metrics.text();
    expect(scraped).toContain("# TYPE blockgate_leader_locks_held gauge");
    expect(scraped).toMatch(/^process_cpu_user_seconds_total [\d.e+-]+$/m);
    expect(logLine(launcher.output(), "database connections: at most")).toMatchObject({ hostname: os.hostname(), role: "worker", version: packageVersion });
    const exited = new Promise<number | null>((resolve) => launcher.child.on("exit", (code) => resolve(code)));
    launcher.child.kill("SIGTERM");
    expect(await exited, launcher.output()).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("with its own embedded PostgreSQL and the devnets running, stops in order within 10 s", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "blockgate-launcher-embedded-"));
    const launcher = startLauncher({
      DATABASE_URL: "",
      PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      NODE_ENV: "test",
      DEVNETS: "on",
      CONSENSUS_BLOCK_TIME_MS: "200",
      // The producers say they started at info level (hidden by default under NODE_ENV=test).
      LOG_LEVEL: "info",
    });
    await waitFor(() => /producing devnet blocks/.test(launcher.output()), 60_000, `the devnet producers to start:\n${launcher.output()}`);
    await new Promise((r) => setTimeout(r, 600));
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => launcher.child.on("exit", (code) => resolve(code)));
    launcher.child.kill("SIGTERM");
    expect(await exited, launcher.output()).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(launcher.output()).toMatch(/PostgreSQL stopped[\s\S]*Stopped\./);
  });

  it("refuses to start with bad configuration and names the variable", async () => {
    const launcher = startLauncher({ DATABASE_URL: databaseUrl, PORT: "not-a-port", NODE_ENV: "test" });
    const code = await new Promise<number | null>((resolve) => launcher.child.on("exit", (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(launcher.output()).toContain("PORT");
  });

  it("refuses to start on DATABASE_URL without the shared secrets", async () => {
    const launcher = startLauncher({ DATABASE_URL: databaseUrl, NODE_ENV: "production", APP_SECRET: "", NEXTAUTH_SECRET: "" });
    const code = await new Promise<number | null>((resolve) => launcher.child.on("exit", (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(launcher.output()).toMatch(/APP_SECRET, NEXTAUTH_SECRET: required with DATABASE_URL/);
  });

  it("refuses to start with a bad DATABASE_POOL_SIZE or upstream URL and names both", async () => {
    const launcher = startLauncher({ DATABASE_URL: databaseUrl, NODE_ENV: "test", DATABASE_POOL_SIZE: "0", UPSTREAM_BASE_MAINNET: "ftp://base.example" });
    const code = await new Promise<number | null>((resolve) => launcher.child.on("exit", (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(launcher.output()).toContain("DATABASE_POOL_SIZE");
    expect(launcher.output()).toContain('UPSTREAM_BASE_MAINNET: "ftp://base.example" is not an http(s) URL');
  });
});

/** Handles keeping this process busy (timers, sockets, child processes), counted by kind. */
function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

describe("a start-up that fails half-way", () => {
  it("stops what it had started (devnet producers, key listener, usage flusher, embedded PostgreSQL) when the port is taken", async () => {
    const blocker = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    const pgPort = await freeLowPort();
    const saved = { ...process.env };
    const { logger, messages: logs } = captureLogs();
    const before = activeResources();
    try {
      Object.assign(process.env, {
        DATABASE_URL: "",
        EMBEDDED_PG_PORT: String(pgPort),
        DATA_DIR: await mkdtemp(path.join(os.tmpdir(), "blockgate-failed-start-")),
        HOST: "127.0.0.1",
        PORT: String(port),
        DEVNETS: "on",
        CONSENSUS_BLOCK_TIME_MS: "100",
      });
      await expect(startService({ withNext: false, logger })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
      resetEnv();
    }
    // Workers that were still running would go on logging their failures against the stopped database.
    const logged = logs.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(logs.slice(logged)).toEqual([]);
    // Nothing new keeps the process busy: no timer, socket or child process of the service is left.
    const after = activeResources();
    for (const [kind, n] of Object.entries(after)) expect(n, `${kind} handles: ${JSON.stringify({ before, after })}`).toBeLessThanOrEqual(before[kind] ?? 0);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(pgPort, "127.0.0.1");
      socket.on("connect", () => {
        socket.destroy();
        resolve(false);
      });
      socket.on("error", () => resolve(true));
    });
    expect(refused, "the embedded PostgreSQL still accepts connections").toBe(true);
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  });
});

describe("with DATABASE_URL", () => {
  it("waits for the migrations npm run db:migrate applies (logged once, GET /readyz and /api/ready 503 meanwhile) instead of applying them, then starts", async () => {
    const server = await startEmbeddedPostgres({ dataDir: await mkdtemp(path.join(os.tmpdir(), "blockgate-migrations-wait-")), port: await freePort(), persistent: false });
    // A database one migration behind this build.
    const older = await mkdtemp(path.join(os.tmpdir(), "blockgate-older-build-"));
    await cp(path.join(root, "prisma"), path.join(older, "prisma"), { recursive: true });
    const last = (await listMigrations()).at(-1) ?? "";
    await rm(path.join(older, "prisma", "migrations", last), { recursive: true });
    expect((await readdir(path.join(older, "prisma", "migrations"))).includes(last)).toBe(false);
    await applyMigrations(server.url, { root: older });

    const saved = { ...process.env };
    const { logger, messages } = captureLogs();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    try {
      Object.assign(process.env, { DATABASE_URL: server.url, ROLE: "web", HOST: "127.0.0.1", PORT: String(port), DEVNETS: "off", DRAIN_MS: "0", DATA_DIR: await mkdtemp(path.join(os.tmpdir(), "blockgate-waiting-")) });
      const starting = startService({ withNext: false, logger });
      let started = false;
      void starting.then(() => (started = true), () => undefined);
      const ready = async () => {
        const res = await fetch(`${url}/api/ready`).catch(() => undefined);
        return res && { status: res.status, body: (await res.json()) as unknown };
      };
      await waitFor(async () => (await ready()) !== undefined, 30_000, "the waiting process to hold its port");
      expect(await ready()).toEqual({ status: 503, body: { status: "not_ready", reason: `pending migrations: ${last}`, limits: "local" } });
      const readyz = await fetch(`${url}/readyz`);
      expect([readyz.status, await readyz.json()]).toEqual([503, { status: "not_ready", reason: `pending migrations: ${last}`, limits: "local" }]);
      const api = await fetch(`${url}/node/base-mainnet`, { method: "POST", body: "{}" });
      expect(api.status).toBe(503);
      expect(await api.json()).toMatchObject({ code: "UNAVAILABLE" });
      // It keeps waiting (it polls every second), says so once, and applied nothing.
      await new Promise((r) => setTimeout(r, 1500));
      expect(started).toBe(false);
      expect(messages.filter((m) => m.startsWith("waiting for migrations"))).toEqual(["waiting for migrations (1 pending): run npm run db:migrate once for the cluster"]);
      const applied = await db().$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM _prisma_migrations WHERE migration_name = $1", last);
      expect(applied[0]?.n).toBe(0);

      // npm run db:migrate, once for all: the process starts.
      expect(await applyMigrations(server.url)).toEqual([last]);
      const service = await starting;
      expect(messages).toContain("the migrations are applied; starting");
      const res = await fetch(`${url}/node/base-mainnet`, { method: "POST", body: "{}" });
      expect(res.status).toBe(401);
      await service.stop();
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
      resetEnv();
      await disconnectDb();
      await server.stop();
    }
  });

  it("keeps a process's connections within its budget under load, each named with its pid, and a worker waiting for a leader lock holds no connection", async () => {
    // This test holds the retention worker's lock: the process waits for it.
    const lock = new LeaderLock(databaseUrl, "retention", "all", () => undefined);
    await waitFor(() => lock.tryAcquire(), 15_000, "the retention lock");
    const projects = await Promise.all(Array.from({ length: 6 }, () => createTestProject()));
    const env = { DATABASE_URL: databaseUrl, ROLE: "all", PORT: String(await freePort()), DATA_DIR: await mkdtemp(path.join(os.tmpdir(), "blockgate-budget-")), NODE_ENV: "test", DEVNETS: "off", USAGE_FLUSH_MS: "100", DRAIN_MS: "0" };
    const launcher = startLauncher(env);
    const url = `http://127.0.0.1:${env.PORT}`;
    try {
      await waitFor(() => launcher.output().includes("Blockgate is running"), 60_000, `the launcher to start:\n${launcher.output()}`);
      const budget = connectionBudget(parseEnv({ ...process.env, ...env }));
      expect(budget).toBe(10 + 4 + 4 + 3 + 1);
      const samples: Array<{ mine: number; pool: number; waiting: number }> = [];
      let loading = true;
      const sampling = (async () => {
        while (loading) {
          const [row] = await db().$queryRaw<Array<{ mine: number; pool: number; waiting: number }>>`
            SELECT count(*) FILTER (WHERE application_name LIKE ${`% (pid ${launcher.child.pid})`})::int AS mine,
                   count(*) FILTER (WHERE application_name = ${`blockgate pool (pid ${launcher.child.pid})`})::int AS pool,
                   count(*) FILTER (WHERE application_name = 'blockgate worker retention:all'
                     AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted))::int AS waiting
            FROM pg_stat_activity a`;
          if (row) samples.push(row);
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
      // 40 clients at once for 600 requests, on six keys and unknown ones (each a lookup).
      let sent = 0;
      const statuses = new Map<number, number>();
      await Promise.all(
        Array.from({ length: 40 }, async () => {
          while (sent < 600) {
            const i = sent++;
            const key = i % 4 === 0 ? `bg_unknown${i}` : (projects[i % projects.length]?.apiKey ?? "");
            const res = await fetch(`${url}/node/base-mainnet`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": key }, body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "net_version" }) });
            await res.arrayBuffer();
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 300));
      loading = false;
      await sampling;
      expect(statuses.get(200) ?? 0, JSON.stringify([...statuses])).toBeGreaterThan(300);
      const peak = Math.max(...samples.map((x) => x.mine));
      expect(peak, JSON.stringify(samples.slice(-5))).toBeLessThanOrEqual(budget);
      expect(Math.max(...samples.map((x) => x.pool))).toBeGreaterThan(0);
      // A waiter opens a connection for each attempt (every 5 s) and closes it: seen in a sample at most now and then.
      expect(samples.filter((x) => x.waiting > 0).length, `${samples.length} samples`).toBeLessThan(samples.length / 4);
    } finally {
      launcher.child.kill("SIGTERM");
      await new Promise((resolve) => launcher.child.once("exit", resolve));
      await lock.release();
    }
  });
});
