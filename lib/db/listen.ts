/**
 * PostgreSQL LISTEN on a connection of its own: the one way a process hears what others (or itself)
 * announce with `pg_notify(channel, payload)`: key invalidations, blocks stored, webhook messages
 * due. A notification is delivered once the notifying transaction commits, to every session that
 * listens on the channel at that moment; one sent while this connection is away is lost, so users
 * learn of every (re)connection through `onListening` and catch up there if they must.
 *
 * A lost connection is opened again every RECONNECT_MS until stopped. The first attempt failing
 * either retries the same way (the default: `ready` settles once the first attempt is over) or,
 * with `retryFirst: false`, rejects `ready` and gives up (for callers that report the failure).
 *
 * A connection can also die without a word: its host vanished, a NAT or proxy dropped it, a
 * pooler stopped forwarding. TCP keepalive ends it after a while; sooner, the listener notifies
 * itself every `heartbeatMs` (on a channel of its own connection) and counts the connection lost
 * when two heartbeats in a row did not come back.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { connectionName } from "@/lib/db/connection-name";
import { getEnv } from "@/lib/env";

export const RECONNECT_MS = 1000;
/** Idle time before TCP keepalive probes start on a listening connection. */
const KEEPALIVE_DELAY_MS = 10_000;

export interface ListenOptions {
  /** The database (a function: read when each connection opens). */
  connectionString: string | (() => string);
  channel: string;
  /** Shown as the session's application_name: "blockgate <name> (pid N)" (connectionName). */
  name: string;
  onNotification(payload: string): void;
  /** After LISTEN is in place; `afterOutage` when a failure or loss came before (notifications may have been missed). */
  onListening?(afterOutage: boolean): void;
  /** Once per outage: the connection could not be opened or was lost; `wasUp` if it had been listening before. */
  onLost?(error: unknown, wasUp: boolean): void;
  /** Default true; false: a first attempt that fails rejects `ready` and is not retried. */
  retryFirst?: boolean;
  /** How often the connection checks itself with a notification of its own (default LISTEN_HEARTBEAT_MS). */
  heartbeatMs?: number;
}

export interface Listening {
  /** Settles when the first attempt is over (see retryFirst). */
  ready: Promise<void>;
  /** Closes the connection and stops retrying. */
  stop(): Promise<void>;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

export function listen(o: ListenOptions): Listening {
  if (!CHANNEL_NAME.test(o.channel)) throw new Error(`listen: channel "${o.channel}" must be a lower-case SQL identifier`);
  const retryFirst = o.retryFirst ?? true;
  const heartbeatMs = o.heartbeatMs ?? getEnv().LISTEN_HEARTBEAT_MS;
  let client: Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let stopped = false;
  let everUp = false;
  let outage = false;
  let retry: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch(() => undefined);
    }, RECONNECT_MS);
  };

  // A failing connection can both reject and emit "error" or "end": handled once.
  const lost = (c: Client, e: unknown) => {
    if (client !== c) return;
    client = undefined;
    clearInterval(heartbeat);
    heartbeat = undefined;
    c.end().catch(() => undefined);
    if (stopped) return;
    if (!outage) {
      outage = true;
      o.onLost?.(e, everUp);
    }
    if (everUp || retryFirst) schedule();
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const url = typeof o.connectionString === "function" ? o.connectionString() : o.connectionString;
    const c = new Client({ connectionString: url, application_name: connectionName(o.name), keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS });
    client = c;
    // Private to this connection: other processes never hear its heartbeats.
    const heartbeatChannel = `blockgate_heartbeat_${randomBytes(8).toString("hex")}`;
    let heardAt = Date.now();
    c.on("notification", (msg) => {
      if (msg.channel === o.channel) o.onNotification(msg.payload ?? "");
      else if (msg.channel === heartbeatChannel) heardAt = Date.now();
    });
    c.on("error", (e) => lost(c, e));
    c.on("end", () => lost(c, new Error("the connection was closed")));
    try {
      await c.connect();
      await c.query(`LISTEN ${o.channel}; LISTEN ${heartbeatChannel}`);
    } catch (e) {
      lost(c, e);
      throw e;
    }
    if (stopped || client !== c) {
      await c.end().catch(() => undefined);
      return;
    }
    heardAt = Date.now();
    heartbeat = setInterval(() => {
      if (Date.now() - heardAt > 2 * heartbeatMs) {
        lost(c, new Error(`no heartbeat for ${Date.now() - heardAt} ms: the connection went silent`));
        return;
      }
      c.query(`NOTIFY ${heartbeatChannel}`).catch((e: unknown) => lost(c, e));
    }, heartbeatMs);
    heartbeat.unref();
    const afterOutage = outage;
    everUp = true;
    outage = false;
    o.onListening?.(afterOutage);
  };

  const first = connect();
  return {
    ready: retryFirst ? first.catch(() => undefined) : first,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      retry = undefined;
      clearInterval(heartbeat);
      heartbeat = undefined;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
