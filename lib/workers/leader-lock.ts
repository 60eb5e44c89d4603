import pg from "pg";

/** The advisory lock's name: hashed by PostgreSQL into the lock's key. */
export function leaderLockName(kind: string, key: string): string {
  return `blockgate:${kind}:${key}`;
}

/**
 * Leadership of one (kind, key) across processes: a PostgreSQL session advisory lock held on a
 * dedicated connection (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS).
 * The server releases it when that connection ends, so a dropped connection means the lock is
 * gone: `lost` turns true and `onLost` fires at once, before any other session can take it.
 */
export class LeaderLock {
  private client: pg.Client | undefined;
  private connectionLost = false;
  private holding = false;
  readonly name: string;

  constructor(
    private readonly databaseUrl: string,
    kind: string,
    key: string,
    private readonly onLost: () => void,
  ) {
    this.name = leaderLockName(kind, key);
  }

  /** True when this instance holds the lock (taking it now if no other session does). */
  async tryAcquire(): Promise<boolean> {
    if (this.holding) return true;
    if (this.connectionLost) await this.release();
    if (!this.client) {
      const client = new pg.Client({
        connectionString: this.databaseUrl,
        // Names the connection in pg_stat_activity, beside the lock it holds (63 characters at most).
        application_name: `blockgate worker ${this.name.slice("blockgate:".length)}`.slice(0, 63),
        connectionTimeoutMillis: 10_000,
        keepAlive: true,
      });
      const dropped = () => {
        if (this.client !== client || this.connectionLost) return;
        this.connectionLost = true;
        if (this.holding) this.onLost();
      };
      client.on("error", dropped);
      client.on("end", dropped);
      this.client = client;
      this.connectionLost = false;
      try {
        await client.connect();
      } catch (e) {
        this.client = undefined;
        await client.end().catch(() => undefined);
        throw e;
      }
    }
    // hashtext (32 bits) as the consensus index lock always used: processes of an earlier version
    // and of this one agree on who writes during a rolling upgrade.
    const r = await this.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [this.name]);
    this.holding = r.rows[0]?.ok === true && !this.connectionLost;
    return this.holding;
  }

  /** The lock was held and its connection has dropped since: the server has released it. */
  get lost(): boolean {
    return this.holding && this.connectionLost;
  }

  get held(): boolean {
    return this.holding && !this.connectionLost;
  }

  /** Gives the lock up (at once, not when the server notices the connection closing) and closes the connection. */
  async release(): Promise<void> {
    const client = this.client;
    const unlock = this.holding && !this.connectionLost;
    this.client = undefined;
    this.holding = false;
    this.connectionLost = false;
    if (!client) return;
    if (unlock) await client.query("SELECT pg_advisory_unlock(hashtext($1))", [this.name]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
