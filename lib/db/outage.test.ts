import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { resetEnv } from "@/lib/env";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { createProject } from "@/lib/projects/service";
import { startHttpServer, type RunningServer } from "@/lib/server";
import { captureLogs } from "@/lib/testing/logs";
import { UsageMeter } from "@/lib/usage/meter";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./embedded";
import { setExpectedMigrations } from "@/lib/health";
import { applyMigrations, listMigrations } from "./migrate";
import { isDatabaseUnreachable } from "./outage";
import { setRootLogger } from "@/lib/log";

// This suite kills its own PostgreSQL: it runs one of its own, not the run's shared one.
const logs = captureLogs();
setRootLogger(logs.logger);
const pgLog: string[] = [];

let scratch: string;
let pgServer: EmbeddedPostgresHandle;
let http: RunningServer;
let meter: UsageMeter;
let apiKey: string;
let projectId: string;

const chainId = (key: string) =>
  fetch(`${http.url}/node/ethereum-mainnet`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": key }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });

const probe = async (path: string) => {
  const res = await fetch(http.url + path);
  return [res.status, await res.json()] as const;
};

async function waitFor(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "blockgate-outage-test-"));
  await fs.chmod(scratch, 0o755);
  pgServer = await startEmbeddedPostgres({ dataDir: path.join(scratch, "postgres"), persistent: false, log: (m) => pgLog.push(m) });
  await applyMigrations(pgServer.url);
  setExpectedMigrations(await listMigrations());
  process.env.DATABASE_URL = pgServer.url;
  process.env.DATA_DIR = scratch;
  process.env.KEY_CACHE_TTL_MS = "60000";
  process.env.APP_SECRET ??= randomBytes(32).toString("base64url");
  process.env.NEXTAUTH_SECRET ??= randomBytes(32).toString("base64url");
  resetEnv();
  const user = await createUser({ email: `outage-${Date.now()}@example.com`, password: "correct horse battery" });
  ({ apiKey, projectId } = await createProject(user.id, "Outage"));
  meter = new UsageMeter();
  http = await startHttpServer({ host: "127.0.0.1", port: 0, meter });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await meter?.stop();
  await disconnectDb();
  await pgServer?.stop();
  await fs.rm(scratch, { recursive: true, force: true });
});

describe("a database outage", () => {
  it("answers 503 with Retry-After while PostgreSQL is down (and /readyz 503), keeps cached keys working, logs once, and resumes by itself without losing usage", async () => {
    // Verified (and cached) before the outage.
    for (let i = 0; i < 3; i++) expect((await chainId(apiKey)).status).toBe(200);
    expect(await probe("/readyz")).toEqual([200, { status: "ready", limits: "local" }]);
    let answered = 3;

    // kill -9 the postmaster, and hold its port for a while so that the restart must wait.
    const pid = Number(readFileSync(path.join(pgServer.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(pid, "SIGKILL");
    let blocker: Server | undefined;
    await waitFor("the port to be free", async () => {
      blocker = await new Promise<Server | undefined>((resolve) => {
        const s = createServer((socket) => socket.destroy());
        s.once("error", () => resolve(undefined));
        s.listen(pgServer.port, "127.0.0.1", () => resolve(s));
      });
      return blocker !== undefined;
    });

    const refused: Response[] = [];
    for (let i = 0; i < 5; i++) refused.push(await chainId(generateKeyMaterial().secret));
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("5");
      expect(await r.json()).toEqual({ code: "UNAVAILABLE", message: expect.stringContaining("database is unreachable") });
    }
    // Not ready while its database is gone, yet alive.
    expect(await probe("/readyz")).toEqual([503, { status: "not_ready", reason: "database unreachable or not migrated", limits: "local" }]);
    expect(await probe("/healthz")).toEqual([200, { status: "ok" }]);
    // A key the gateway knows needs no database: it keeps being answered, and metered in memory.
    for (let i = 0; i < 4; i++) expect((await chainId(apiKey)).status).toBe(200);
    answered += 4;
    await meter.flush(); // fails: kept in memory

    await new Promise<void>((resolve) => blocker!.close(() => resolve()));
    await waitFor("PostgreSQL to be restarted", async () => pgLog.some((m) => m.includes("PostgreSQL restarted")));
    await waitFor("the database to answer requests again", async () => (await chainId(generateKeyMaterial().secret)).status === 401);
    expect((await chainId(apiKey)).status).toBe(200);
    answered += 1;
    expect(await probe("/readyz")).toEqual([200, { status: "ready", limits: "local" }]);

    await waitFor("usage to be written", async () => {
      await meter.flush();
      const rows = await db().usageBucket.findMany({ where: { projectId } }).catch(() => []);
      return rows.reduce((n, r) => n + r.requests, 0) >= answered;
    });
    const rows = await db().usageBucket.findMany({ where: { projectId } });
    expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(answered);
    expect(rows.reduce((n, r) => n + Number(r.cu), 0)).toBe(answered * 5);

    expect(pgLog.some((m) => m.includes("PostgreSQL exited unexpectedly"))).toBe(true);
    await waitFor("the outage's end to be logged", async () => logs.messages.some((m) => m.startsWith("the database answers again after")));
    expect(logs.messages.filter((m) => m.startsWith("the database is unreachable"))).toHaveLength(1);
    expect(logs.messages.filter((m) => m.startsWith("usage flush failed"))).toHaveLength(1);
    expect(logs.lines.filter((l) => l.level === "error" && l.msg === "request failed")).toEqual([]);
  });

  it("tells unreachable-database errors from others", () => {
    expect(isDatabaseUnreachable(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isDatabaseUnreachable(new Error("x", { cause: new Error("Connection terminated unexpectedly") }))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(true);
    // A node-postgres client used again after its connection failed (inside a transaction, say).
    expect(isDatabaseUnreachable(new Error("Client has encountered a connection error and is not queryable"))).toBe(true);
    expect(isDatabaseUnreachable(new Error("Client was closed and is not queryable"))).toBe(true);
    // As Prisma reports a query whose connection died with the postmaster: the SQLSTATE two levels down.
    const prisma = Object.assign(new Error("Invalid `prisma.consensusBlock.findFirst()` invocation: Database error."), {
      code: "P2039",
      meta: { modelName: "ConsensusBlock", driverAdapterError: { name: "DriverAdapterError", cause: { kind: "postgres", code: "57P01", message: "terminating connection due to unexpected postmaster exit" } } },
    });
    expect(isDatabaseUnreachable(prisma)).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error("Database error."), { code: "P2039", meta: { driverAdapterError: { cause: { kind: "postgres", code: "23505" } } } }))).toBe(false);
    expect(isDatabaseUnreachable(Object.assign(new Error('relation "x" does not exist'), { code: "42P01" }))).toBe(false);
    expect(isDatabaseUnreachable(new Error("boom"))).toBe(false);
  });
});
