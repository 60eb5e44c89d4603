import { Client } from "pg";

/**
 * The right to write one network's consensus index: a PostgreSQL advisory lock held on a
 * dedicated connection. Shared by the devnet producer and the upstream follower, so one process
 * writes a network's index, whatever its source; others wait and take over if it stops.
 */
export class IndexWriterLock {
  private client: Client | undefined;
  private lost = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly network: string,
  ) {}

  /** True when this process holds the lock (acquiring it now if it can). */
  async tryAcquire(): Promise<boolean> {
    if (this.lost) await this.release();
    if (!this.client) {
      const client = new Client({ connectionString: this.databaseUrl });
      // A dropped connection releases the lock on the server: stop writing until re-acquired.
      client.on("error", () => {
        this.lost = true;
      });
      await client.connect();
      this.client = client;
      this.lost = false;
    }
    const r = await this.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [`blockgate:consensus-index:${this.network}`]);
    return r.rows[0]?.ok === true;
  }

  /** The connection holding the lock was lost since it was acquired. */
  get isLost(): boolean {
    return this.lost;
  }

  async release(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
