import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { connectionName } from "@/lib/db/connection-name";
import { databaseUrl, getEnv, type Env } from "@/lib/env";
import { perProcess } from "@/lib/per-process";
import { PrismaClient } from "./generated/client";

export { Prisma } from "./generated/client";

function requiredDatabaseUrl(): string {
  const connectionString = databaseUrl();
  if (!connectionString) throw new Error("DATABASE_URL is not set: start the service with `npm start`, which provides the database");
  return connectionString;
}

/**
 * The most connections one process opens with this configuration, besides one per leader lock it
 * holds (README, Connections): its pools (the public one in web processes only), its LISTEN
 * connections (key changes; webhook messages due in workers; blocks stored in web processes, while
 * WebSocket subscribers listen) and one short-lived check (the database probe during an outage,
 * the migrations check at start).
 */
export function connectionBudget(env: Pick<Env, "ROLE" | "DATABASE_POOL_SIZE" | "DATABASE_PUBLIC_POOL_SIZE" | "DATABASE_RAW_POOL_SIZE">): number {
  const web = env.ROLE !== "worker";
  const worker = env.ROLE !== "web";
  const listeners = 1 + (worker ? 1 : 0) + (web ? 1 : 0);
  return env.DATABASE_POOL_SIZE + (web ? env.DATABASE_PUBLIC_POOL_SIZE : 0) + env.DATABASE_RAW_POOL_SIZE + listeners + 1;
}

function createClient(): PrismaClient {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: requiredDatabaseUrl(), max: getEnv().DATABASE_POOL_SIZE, application_name: connectionName("pool") }),
    // Secret columns are never selected unless a query asks for them by name.
    omit: { apiKey: { ciphertext: true }, user: { passwordHash: true } },
  });
}

type Client = ReturnType<typeof createClient>;

// One set of pools per process (lib/per-process.ts): the launcher, the gateway, the workers and the
// Next.js bundles share them. Opened on first use, once the launcher recorded the database
// (setDatabaseUrl); closed by disconnectDb, after which the next use opens them again.
const pools = perProcess("db", (): { db?: Client; publicDb?: Client; rawPool?: pg.Pool } => ({}));

export function db(): Client {
  pools.db ??= createClient();
  return pools.db;
}

/**
 * Planner settings of every connection of the public pool. A search is one semi-join per condition
 * (lib/consensus/query/sql.ts), and PostgreSQL searches the join orders of up to
 * join_collapse_limit / from_collapse_limit relations at once (8 by default): a cost that grows
 * steeply with the condition count. At 4 the planner orders the row and the first three conditions
 * freely and then adds the others in the order written, a plan whose cost grows linearly with the
 * count; the compiler writes the conditions selective-first, so that fixed order is a good one.
 * Sent as startup options: applied by PostgreSQL when a connection opens, no round trip per query.
 */
export const PUBLIC_PLANNER_SETTINGS = { join_collapse_limit: 4, from_collapse_limit: 4 } as const;

/**
 * The client for queries the public API runs on a caller's behalf (consensus reads and searches):
 * its own small pool, so the console, key lookups, usage metering and ingestion never queue behind
 * them, a statement timeout, so no query holds a connection longer than
 * PUBLIC_STATEMENT_TIMEOUT_MS (a timed-out query fails with SQLSTATE 57014; see isStatementTimeout),
 * and PUBLIC_PLANNER_SETTINGS, so no query's planning grows steeply with its conditions.
 */
export function publicDb(): Client {
  if (!pools.publicDb) {
    const env = getEnv();
    pools.publicDb = new PrismaClient({
      adapter: new PrismaPg({
        connectionString: requiredDatabaseUrl(),
        max: env.DATABASE_PUBLIC_POOL_SIZE,
        statement_timeout: env.PUBLIC_STATEMENT_TIMEOUT_MS,
        options: Object.entries(PUBLIC_PLANNER_SETTINGS)
          .map(([name, value]) => `-c ${name}=${value}`)
          .join(" "),
        application_name: connectionName("public queries"),
      }),
      omit: { apiKey: { ciphertext: true }, user: { passwordHash: true } },
    });
  }
  return pools.publicDb;
}

/** Whether a database error is PostgreSQL cancelling a statement for its statement_timeout (SQLSTATE 57014). */
export function isStatementTimeout(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur !== null && typeof cur === "object" && depth < 5; depth++) {
    const o = cur as { code?: unknown; originalCode?: unknown; message?: unknown; cause?: unknown; meta?: unknown };
    if (o.code === "57014" || o.originalCode === "57014") return true;
    if (typeof o.message === "string" && /canceling statement due to statement timeout/.test(o.message)) return true;
    cur = o.cause ?? o.meta;
  }
  return false;
}

/**
 * A plain node-postgres pool beside Prisma, for what Prisma cannot do (chain ingestion's COPY,
 * lib/consensus/store.ts) and for hot statements where Prisma's per-call work is the larger cost
 * (webhook followers and delivery, the request log). Small: each of those holds a connection only
 * for one statement or one short transaction at a time.
 */
export function rawPool(): pg.Pool {
  if (!pools.rawPool) {
    const pool = new pg.Pool({ connectionString: requiredDatabaseUrl(), max: getEnv().DATABASE_RAW_POOL_SIZE, allowExitOnIdle: true, application_name: connectionName("raw pool") });
    // A connection dropped by the server (a restart, a crash) must not crash the process: idle, the
    // pool hears of it; checked out, node-postgres fails the query and also emits "error" on the
    // client, which needs a listener of its own.
    pool.on("error", () => undefined);
    pool.on("connect", (client) => client.on("error", () => undefined));
    pools.rawPool = pool;
  }
  return pools.rawPool;
}

/** A node-postgres connection, alone or inside rawTransaction. */
export type RawClient = pg.ClientBase;

/** Runs `work` in one transaction on a connection of rawPool(): committed if it resolves, rolled back if it throws. */
export async function rawTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await rawPool().connect();
  // A connection whose ROLLBACK failed is in an unknown state: the pool drops it.
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (e) {
    await client.query("ROLLBACK").catch((rollback: unknown) => {
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw e;
  } finally {
    client.release(broken);
  }
}

export async function disconnectDb(): Promise<void> {
  const { db: client, publicDb: publicClient, rawPool: pool } = pools;
  pools.db = pools.publicDb = pools.rawPool = undefined;
  await Promise.all([client?.$disconnect(), publicClient?.$disconnect(), pool?.end()]);
}
