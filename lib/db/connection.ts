// Which PostgreSQL to use: DATABASE_URL when set, else the embedded cluster under DATA_DIR.
// Reads process.env directly so scripts can use it without loading the app's full config.
import path from "node:path";
import { startEmbeddedPostgres } from "./embedded";

export const DEFAULT_EMBEDDED_PG_PORT = 54329;

export interface DatabaseHandle {
  url: string;
  /** True when this call started (or attached to) the embedded cluster. */
  embedded: boolean;
  /** Stops the embedded cluster if this call started it; no-op otherwise. */
  stop(): Promise<void>;
}

export async function ensureDatabase(opts: { log?: (msg: string) => void } = {}): Promise<DatabaseHandle> {
  const external = process.env.DATABASE_URL?.trim();
  if (external) return { url: external, embedded: false, stop: async () => {} };

  const dataDir = path.resolve(process.cwd(), process.env.DATA_DIR?.trim() || ".data", "postgres");
  const server = await startEmbeddedPostgres({ dataDir, port: embeddedPort(), log: opts.log });
  return { url: server.url, embedded: true, stop: server.stop };
}

function embeddedPort(): number {
  const raw = process.env.EMBEDDED_PG_PORT?.trim();
  if (!raw) return DEFAULT_EMBEDDED_PG_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`EMBEDDED_PG_PORT must be a port number (1-65535), got "${raw}"`);
  }
  return port;
}
