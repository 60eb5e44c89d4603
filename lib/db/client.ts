import { PrismaPg } from "@prisma/adapter-pg";
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
const globalForDb = globalThis as unknown as { __blockgateDb?: Client };

export function db(): Client {
  globalForDb.__blockgateDb ??= createClient();
  return globalForDb.__blockgateDb;
}

export async function disconnectDb(): Promise<void> {
  const client = globalForDb.__blockgateDb;
  globalForDb.__blockgateDb = undefined;
  await client?.$disconnect();
}
