/** A throwaway database and secrets for the servers a benchmark starts. */
import { randomBytes } from "node:crypto";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { applyMigrations } from "@/lib/db/migrate";
import { freePort } from "@/lib/testing/ports";
import { cleanup, tempDir } from "./cleanup";

/** 32 random bytes, base64url: secrets for the servers a bench starts. */
export const secret = (): string => randomBytes(32).toString("base64url");

/**
 * A throwaway embedded PostgreSQL with the migrations applied, stopped by the cleanup stack; this
 * process's DATABASE_URL and APP_SECRET point at it (APP_SECRET encrypts the keys a bench creates).
 */
export async function throwawayDatabase(prefix: string): Promise<{ url: string; appSecret: string }> {
  const pgDir = await tempDir(`${prefix}pg-`);
  console.error("[bench] starting a throwaway PostgreSQL…");
  const pgStart = startEmbeddedPostgres({ dataDir: pgDir, port: await freePort(), persistent: false });
  cleanup.add("stop PostgreSQL", async () => {
    const handle = await pgStart.catch(() => undefined);
    await handle?.stop();
  });
  const pg = await pgStart;
  await applyMigrations(pg.url);
  const appSecret = secret();
  process.env.DATABASE_URL = pg.url;
  process.env.APP_SECRET = appSecret;
  return { url: pg.url, appSecret };
}
