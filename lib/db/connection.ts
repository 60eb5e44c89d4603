// Which PostgreSQL to use: DATABASE_URL when set, else the embedded cluster under DATA_DIR.
// Takes only the database settings, so scripts can use it without loading the app's full config.
import path from "node:path";
import { databaseSettings } from "@/lib/env";
import { startEmbeddedPostgres } from "./embedded";

export interface DatabaseHandle {
  /** The app's connection URL (for the embedded cluster: its own role, not a superuser). */
  url: string;
  /**
   * For tools needing more than the app's rights: the schema engine's diff makes temporary shadow
   * databases (CREATEDB). The embedded cluster's superuser; DATABASE_URL itself otherwise.
   */
  adminUrl: string;
  /** True when this call started (or attached to) the embedded cluster. */
  embedded: boolean;
  /** Stops the embedded cluster if this call started it; no-op otherwise. */
  stop(): Promise<void>;
}

export async function ensureDatabase(opts: { log?: (msg: string) => void } = {}): Promise<DatabaseHandle> {
  const settings = databaseSettings();
  if (settings.DATABASE_URL) return { url: settings.DATABASE_URL, adminUrl: settings.DATABASE_URL, embedded: false, stop: async () => {} };

  const dataDir = path.resolve(settings.DATA_DIR, "postgres");
  const server = await startEmbeddedPostgres({ dataDir, port: settings.EMBEDDED_PG_PORT, log: opts.log });
  return { url: server.url, adminUrl: server.superuserUrl, embedded: true, stop: server.stop };
}
