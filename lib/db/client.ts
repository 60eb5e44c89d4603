import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { databaseUrl, getEnv } from "@/lib/env";
import { PrismaClient } from "./generated/client";

export type { Prisma } from "./generated/client";

function requiredDatabaseUrl(): string {
  const connectionString = databaseUrl();
  if (!connectionString) throw new Error("DATABASE_URL is not set: start the service with `npm start`, which provides the database");
  return connectionString;
}

function createClient(): PrismaClient {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: requiredDatabaseUrl(), max: getEnv().DATABASE_POOL_SIZE }),
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
 * A plain node-postgres pool beside Prisma, for what Prisma cannot do: chain ingestion's COPY
 * (lib/consensus/store.ts). Small: ingestion runs one writer per network.
 */
export function rawPool(): pg.Pool {
  if (!globalForDb.__blockgateRawPool) {
    const pool = new pg.Pool({ connectionString: requiredDatabaseUrl(), max: 4, allowExitOnIdle: true });
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
