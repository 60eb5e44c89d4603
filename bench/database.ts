/** A throwaway database and secrets for the servers a benchmark starts. */
import { randomBytes } from "node:crypto";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { applyMigrations } from "@/lib/db/migrate";
import { resetEnv } from "@/lib/env";
import { freePort } from "@/lib/testing/ports";
import { cleanup, tempDir } from "./cleanup";

/** 32 random bytes, base64url: secrets for the servers a bench starts. */
export const secret = (): string => randomBytes(32).toString("base64url");

/**
 * A throwaway embedded PostgreSQL with the migrations applied, stopped by `stop()` or else by the
 * cleanup stack; this process's DATABASE_URL and secrets point at it (APP_SECRET encrypts the
 * keys a bench creates), and the environment is read again (lib/env.ts caches what it read).
 */
export async function throwawayDatabase(prefix: string): Promise<{ url: string; superuserUrl: string; appSecret: string; stop: () => Promise<void> }> {
  const pgDir = await tempDir(`${prefix}pg-`);
  console.error("[bench] starting a throwaway PostgreSQL…");
  const pgStart = startEmbeddedPostgres({ dataDir: pgDir, port: await freePort(), persistent: false });
  const stopPg = async () => {
    const handle = await pgStart.catch(() => undefined);
    await handle?.stop();
  };
  const unregister = cleanup.add("stop PostgreSQL", stopPg);
  const pg = await pgStart;
  await applyMigrations(pg.url);
  const appSecret = secret();
  process.env.DATABASE_URL = pg.url;
  // With DATABASE_URL every process needs the three shared secrets (lib/env.ts): the servers a bench
  // starts inherit them from here.
  process.env.APP_SECRET = appSecret;
  process.env.NEXTAUTH_SECRET ??= secret();
  process.env.NEXT_SERVER_ACTIONS_ENCRYPTION_KEY ??= randomBytes(32).toString("base64");
  resetEnv();
  // Stopped early by hand (a bench with several parts), or by the cleanup.
  const stop = async () => {
    unregister();
    await stopPg();
  };
  return { url: pg.url, superuserUrl: pg.superuserUrl, appSecret, stop };
}
