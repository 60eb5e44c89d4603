import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "./generated/client";

export type { Prisma } from "./generated/client";

function createClient(): PrismaClient {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error("DATABASE_URL is not set: start the service with `npm start`, which provides the database");
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) }),
    // Secret columns are never selected unless a query asks for them by name.
    omit: { apiKey: { ciphertext: true }, user: { passwordHash: true } },
  });
}

type Client = ReturnType<typeof createClient>;

// One client per process: the launcher, the gateway and the Next.js bundle share it.
const globalForDb = globalThis as unknown as { __blockgateDb?: Client; __blockgateRawPool?: pg.Pool };

export function db(): Client {
  globalForDb.__blockgateDb ??= createClient();
  return globalForDb.__blockgateDb;
}

/**
 * A plain node-postgres pool beside Prisma, for bulk statements (chain ingestion) whose large
 * array parameters Prisma's query layer would convert and copy once more: measured, that
 * conversion cost as much CPU as PostgreSQL's own work. Small: ingestion runs one writer per network.
 */
export function rawPool(): pg.Pool {
  if (!globalForDb.__blockgateRawPool) {
    const connectionString = process.env.DATABASE_URL;
    if (!connectionString) throw new Error("DATABASE_URL is not set: start the service with `npm start`, which provides the database");
    const pool = new pg.Pool({ connectionString, max: 4, allowExitOnIdle: true });
    // An idle connection dropped by the server (a restart, shutdown) must not crash the process.
    pool.on("error", () => undefined);
    globalForDb.__blockgateRawPool = pool;
  }
  return globalForDb.__blockgateRawPool;
}

export async function disconnectDb(): Promise<void> {
  const client = globalForDb.__blockgateDb;
  const pool = globalForDb.__blockgateRawPool;
  globalForDb.__blockgateDb = undefined;
  globalForDb.__blockgateRawPool = undefined;
  await Promise.all([client?.$disconnect(), pool?.end()]);
}
