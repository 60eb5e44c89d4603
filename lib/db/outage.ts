/**
 * What a request does when PostgreSQL cannot be reached: it answers 503 UNAVAILABLE with
 * Retry-After instead of 500, and the process logs one line when the outage begins and one when the
 * database answers again (a probe checks every second while it is down), never one per request.
 */
import pg from "pg";
import { connectionName } from "@/lib/db/connection-name";
import { databaseUrl } from "@/lib/env";
import { componentLogger, errorMessage } from "@/lib/log";
import { perProcess } from "@/lib/per-process";

/** Seconds a client is told to wait (Retry-After) while the database is unreachable. */
export const OUTAGE_RETRY_AFTER_S = 5;
const PROBE_MS = 1000;

// Network failures, and PostgreSQL refusing work while it stops, starts or recovers
// (SQLSTATE 57P01-57P03, 08xxx connection exceptions), as node-postgres and Prisma report them; a
// node-postgres client whose connection failed refuses later queries with no code ("Client has
// encountered a connection error and is not queryable").
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "57P01", "57P02", "57P03", "P1001", "P1002", "P1017", "P2024"]);
const UNREACHABLE_TEXT =
  /Connection terminated|connection is closed|Can't reach database server|Server has closed the connection|the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)|terminating connection due to (administrator command|unexpected postmaster exit)|timed out fetching a new connection|Connection refused|ECONNREFUSED|ECONNRESET|(?:has encountered a connection error|was closed) and is not queryable/i;

/**
 * Whether an error, or any error it wraps, says that the database could not be reached. Prisma
 * wraps the driver's error in `meta.driverAdapterError` (with the SQLSTATE in its `cause`);
 * node-postgres and Node use `cause`; a connection attempt to several addresses, `errors`.
 */
export function isDatabaseUnreachable(e: unknown): boolean {
  const queue: unknown[] = [e];
  for (let seen = 0; queue.length > 0 && seen < 16; seen++) {
    const cur = queue.shift();
    if (cur === null || typeof cur !== "object") continue;
    const o = cur as { code?: unknown; originalCode?: unknown; kind?: unknown; message?: unknown; cause?: unknown; meta?: unknown; driverAdapterError?: unknown; errors?: unknown };
    for (const code of [o.code, o.originalCode]) {
      if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || code.startsWith("08"))) return true;
    }
    if (o.kind === "DatabaseNotReachable" || o.kind === "ConnectionClosed" || o.kind === "SocketTimeout") return true;
    if (typeof o.message === "string" && UNREACHABLE_TEXT.test(o.message)) return true;
    queue.push(o.cause, o.meta, o.driverAdapterError);
    if (Array.isArray(o.errors)) queue.push(...(o.errors as unknown[]));
  }
  return false;
}

interface OutageState {
  since: number | undefined;
  probe: NodeJS.Timeout | undefined;
}

// Per process (lib/per-process.ts): the gateway and the Next.js bundles share one outage.
const outage = perProcess("db-outage", (): OutageState => ({ since: undefined, probe: undefined }));

/** Whether this process has seen the database unreachable and not yet seen it answer again. */
export function databaseOutage(): { since: Date } | undefined {
  return outage.since === undefined ? undefined : { since: new Date(outage.since) };
}

/** Notes a request that failed because the database is unreachable: logs the outage's start once and probes until it ends. */
export function reportDatabaseUnreachable(e: unknown): void {
  const s = outage;
  if (s.since !== undefined) return;
  s.since = Date.now();
  const log = componentLogger("database");
  log.error({ err: errorMessage(e) }, `the database is unreachable; requests that need it answer 503 UNAVAILABLE (Retry-After ${OUTAGE_RETRY_AFTER_S} s) until it is back`);
  const probe = async () => {
    const url = databaseUrl();
    if (!url) return;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_MS, application_name: connectionName("database probe") });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      const seconds = ((Date.now() - (s.since ?? Date.now())) / 1000).toFixed(1);
      s.since = undefined;
      if (s.probe) clearInterval(s.probe);
      s.probe = undefined;
      log.info(`the database answers again after ${seconds} s`);
    } catch {
      // Still down: the next probe tries again.
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  s.probe = setInterval(() => void probe(), PROBE_MS);
  s.probe.unref();
}
