import { Client } from "pg";
import { db } from "@/lib/db/client";
import { invalidateKey } from "./cache";

const CHANNEL = "blockgate_key_invalidated";

/** Tells every process sharing the database to drop a key from its verification cache. */
export async function notifyKeyInvalidated(hash: string): Promise<void> {
  await db().$executeRaw`SELECT pg_notify(${CHANNEL}, ${hash})`;
}

/**
 * Listens for invalidations from other processes (ROLE=web on many machines). Reconnects
 * after a lost connection; until then the cache TTL (KEY_CACHE_TTL_MS) bounds staleness.
 */
export function listenForKeyInvalidations(connectionString: string, log: (msg: string) => void): { stop(): Promise<void> } {
  let client: Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = new Client({ connectionString });
    c.on("notification", (msg) => {
      if (msg.channel === CHANNEL && msg.payload) invalidateKey(msg.payload);
    });
    c.on("error", () => {
      if (stopped) return;
      log("key invalidation listener lost its connection; reconnecting");
      c.end().catch(() => undefined);
      retry = setTimeout(() => void connect().catch(() => undefined), 1000);
    });
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    client = c;
  };
  void connect().catch((e: unknown) => {
    log(`key invalidation listener failed to start: ${String(e)}`);
    retry = setTimeout(() => void connect().catch(() => undefined), 1000);
  });
  return {
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
