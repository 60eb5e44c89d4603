import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { databaseUrl, getEnv, resetEnv, setDatabaseUrl } from "@/lib/env";
import { storedRange } from "@/lib/consensus/store";
import { addNetworks, type Network } from "@/lib/networks";
import { createProject } from "@/lib/projects/service";
import { startHttpServer, type HttpServerOptions, type RunningServer } from "@/lib/server";
import { UsageMeter } from "@/lib/usage/meter";
import { RequestLog } from "@/lib/usage/request-log";
import { freePort } from "./ports";

/** Points this test process at the run's PostgreSQL and gives it throwaway secrets. */
export async function connectTestDatabase(): Promise<string> {
  const url = inject("databaseUrl");
  process.env.DATABASE_URL = url;
  process.env.DATA_DIR = await mkdtemp(path.join(os.tmpdir(), "blockgate-test-data-"));
  process.env.APP_SECRET ??= randomBytes(32).toString("base64url");
  process.env.NEXTAUTH_SECRET ??= randomBytes(32).toString("base64url");
  process.env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
  // The configuration is read once per process: read it again with these values.
  resetEnv();
  getEnv();
  return url;
}

export interface TestGateway {
  url: string;
  meter: UsageMeter;
  requestLog: RequestLog;
  server: RunningServer;
  /** The requests, errors and CU the meter recorded for a project, per endpoint (flushed first). */
  usageByEndpoint(projectId: string): Promise<Record<string, { requests: number; errors: number; cu: number }>>;
  stop(): Promise<void>;
}

/**
 * The public API server on a free port (no Next.js), with its own meter and request log (flushed
 * by the test). `now`: the gateway's wall clock for plan periods (a test moves it across a reset);
 * `limiter`, `allowance`: the CU-per-second limiter and the allowance handed to the gateway instead
 * of in-memory ones of its own.
 */
export async function startTestGateway(options: Pick<HttpServerOptions, "trustedProxyHops" | "now" | "metering" | "limiter" | "allowance" | "limits"> = {}): Promise<TestGateway> {
  await connectTestDatabase();
  const meter = new UsageMeter();
  const requestLog = new RequestLog();
  const server = await startHttpServer({ ...options, host: "127.0.0.1", port: await freePort(), meter, requestLog });
  return {
    url: server.url,
    meter,
    requestLog,
    server,
    async usageByEndpoint(projectId) {
      await meter.flush();
      const out: Record<string, { requests: number; errors: number; cu: number }> = {};
      for (const r of await db().usageBucket.findMany({ where: { projectId } })) {
        const u = (out[r.endpoint] ??= { requests: 0, errors: 0, cu: 0 });
        u.requests += r.requests;
        u.errors += r.errors;
        u.cu += Number(r.cu);
      }
      return out;
    },
    async stop() {
      await server.close();
      await meter.stop();
      await requestLog.stop();
      await disconnectDb();
    },
  };
}

export function uniqueEmail(tag = "user"): string {
  return `${tag}-${Date.now()}-${randomBytes(4).toString("hex")}@example.com`;
}

/** A fresh user with one project and its key (on the free plan unless told otherwise). */
export async function createTestProject(name = "Test Project", plan: Plan = "FREE") {
  const email = uniqueEmail();
  const user = await createUser({ email, password: "correct horse battery" });
  const { projectId, apiKey } = await createProject(user.id, name);
  if (plan !== "FREE") await db().project.update({ where: { id: projectId }, data: { plan } });
  return { userId: user.id, email, projectId, apiKey };
}

/**
 * Runs `during` with this process pointed at a database that went away: a stand-in that accepts
 * connections and drops them at once (`attempts()` counts them), then points it back.
 */
export async function withDeadDatabase<T>(during: (attempts: () => number) => Promise<T>): Promise<T> {
  let attempts = 0;
  const dead = createServer((socket) => {
    attempts++;
    socket.destroy();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => dead.listen(port, "127.0.0.1", resolve));
  const real = databaseUrl();
  if (real === undefined) throw new Error("withDeadDatabase: no database is configured yet");
  await disconnectDb();
  setDatabaseUrl(`postgresql://blockgate@127.0.0.1:${port}/blockgate`);
  try {
    return await during(() => attempts);
  } finally {
    await disconnectDb();
    setDatabaseUrl(real);
    await new Promise<void>((resolve) => dead.close(() => resolve()));
  }
}

/**
 * Adds networks to this process's catalog: private copies of catalog networks (their own slug) that
 * a suite points at its own node or devnet, so suites sharing the database never meet.
 */
export function addTestNetworks(...extra: Network[]): void {
  addNetworks(...extra);
}

/** Polls `check` every 100 ms until it gives a value, which it answers; fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const value = await check();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Waits until the consensus index of `slug` holds `height`; fails after `timeoutMs` with `what` (and `detail()`). */
export async function waitForStoredHeight(slug: string, height: bigint, what: string, opts: { timeoutMs?: number; detail?: () => string } = {}): Promise<void> {
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  while (((await storedRange(slug))?.latest ?? -1n) < height) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${opts.detail ? `\n${opts.detail()}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
