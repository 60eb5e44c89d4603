import pg from "pg";
import type { RawClient } from "@/lib/db/client";
import type { Logger } from "@/lib/log";
import { trackLeaderLock } from "@/lib/metrics";
import { execute, type Transaction } from "./cursor";

/** The advisory lock's name: hashed by PostgreSQL into the lock's key. */
export function leaderLockName(kind: string, key: string): string {
  return `blockgate:${kind}:${key}`;
}

/**
 * How long a silent holder keeps the lock, and how a new holder deals with its predecessor.
 *
 * A session advisory lock is freed when PostgreSQL ends the session, and PostgreSQL only notices a
 * dead socket when the kernel gives up on it: minutes to hours for a vanished host, never for a
 * process that is stopped (SIGSTOP, a hung VM), since its kernel still acknowledges. TCP keepalive
 * and tcp_user_timeout cannot tell a stopped process from a live one, so the lock's session sets
 * `idle_session_timeout` instead (PostgreSQL 14+): the server ends a session that sent nothing for
 * `sessionTimeoutMs`, whatever became of its peer, on the server's own clock. The holder asks every
 * `pingMs` whether it still holds the lock and its term is current; a frozen or cut-off holder
 * stops asking and loses the lock after `sessionTimeoutMs`. With the defaults and a waiter polling
 * every 2 s, a frozen holder is taken over within ~17 s (a killed one within the poll: its kernel
 * closes the socket), plus `fenceGraceMs` when one of its writes is stuck open.
 */
export interface LeaderTiming {
  /** The lock's session ends after this long without a statement. */
  sessionTimeoutMs: number;
  /** How often the holder checks its lock (a third of the timeout: two missed pings are tolerated). */
  pingMs: number;
  /** How long a new holder waits for the previous term's open writes before ending them. */
  fenceGraceMs: number;
}

export const DEFAULT_LEADER_TIMING: LeaderTiming = { sessionTimeoutMs: 15_000, pingMs: 5000, fenceGraceMs: 5000 };

/** One tenure of a leader lock: its number rises with every new holder (table leader_terms). */
export interface LeaderTerm {
  readonly name: string;
  readonly term: bigint;
}

/** A leader's write was refused: its term is over (another process holds the lock now). Nothing was written. */
export class LeadershipLostError extends Error {
  override name = "LeadershipLostError";
}

// FOR SHARE: a new holder's increment of the term waits for this transaction, so a write either
// commits before the next term begins or is refused; it never lands in the middle of another's.
const CHECK_TERM = "SELECT 1 FROM leader_terms WHERE name = $1 AND term = $2::bigint FOR SHARE";

/**
 * Fences a leader's write: run first in its transaction (a Prisma transaction or a node-postgres
 * connection inside rawTransaction). Throws LeadershipLostError, rolling the transaction back,
 * when `term` is no longer current. Without a term (no leader lock: tools, tests), does nothing.
 */
export async function checkTerm(tx: Transaction | RawClient, term: LeaderTerm | undefined): Promise<void> {
  if (!term) return;
  if ((await execute(tx, CHECK_TERM, [term.name, term.term.toString()])) !== 1) {
    throw new LeadershipLostError(`term ${term.term} of ${term.name} is over: another worker took over the lock`);
  }
}

const NEXT_TERM = `INSERT INTO leader_terms (name, term) VALUES ($1, 1)
  ON CONFLICT (name) DO UPDATE SET term = leader_terms.term + 1 RETURNING term::text AS term`;
const PING = `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND granted) AS locked,
  EXISTS (SELECT 1 FROM leader_terms WHERE name = $1 AND term = $2::bigint) AS current`;

/**
 * Leadership of one (kind, key) across processes: a PostgreSQL session advisory lock held on a
 * dedicated connection (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS),
 * with a term number per tenure that the leader's writes check (checkTerm). The lock is lost when
 * its connection drops, when the holder's check finds it gone, or when the check went unanswered
 * for the session's timeout (the server has ended the session by then): `lost` turns true and
 * `onLost` fires once.
 */
export class LeaderLock {
  private client: pg.Client | undefined;
  private lostBecause: string | undefined;
  private holding = false;
  private current: LeaderTerm | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private answeredAt = 0;
  private pinging = false;
  /** The lock session's backend, whose waits endStaleWrites looks at. */
  private backendPid = 0;
  /** Ends its count in blockgate_leader_locks_held (while it holds the lock: tracked from acquisition to release). */
  private untrack: (() => void) | undefined;
  readonly name: string;

  constructor(
    private readonly databaseUrl: string,
    readonly kind: string,
    key: string,
    private readonly onLost: () => void,
    private readonly timing: LeaderTiming = DEFAULT_LEADER_TIMING,
    private readonly log?: Logger,
  ) {
    this.name = leaderLockName(kind, key);
  }

  /** True when this instance holds the lock (taking it now, with a new term, if no other session does). */
  async tryAcquire(): Promise<boolean> {
    if (this.holding) return true;
    if (this.lostBecause !== undefined) await this.release();
    if (!this.client) {
      const client = new pg.Client({
        connectionString: this.databaseUrl,
        // Names the connection in pg_stat_activity, beside the lock it holds (63 characters at most).
        application_name: `blockgate worker ${this.name.slice("blockgate:".length)}`.slice(0, 63),
        connectionTimeoutMillis: 10_000,
        keepAlive: true,
      });
      const dropped = () => this.lose(client, "its database connection dropped");
      client.on("error", dropped);
      client.on("end", dropped);
      this.client = client;
      this.lostBecause = undefined;
      try {
        await client.connect();
        // Also ends a waiter's idle session (polling rarely): it connects again at its next try.
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid, set_config('idle_session_timeout', $1, false)", [String(this.timing.sessionTimeoutMs)]);
        this.backendPid = rows[0]!.pid;
      } catch (e) {
        this.client = undefined;
        await client.end().catch(() => undefined);
        throw e;
      }
    }
    const client = this.client;
    // hashtext (32 bits) as the consensus index lock always used: processes of an earlier version
    // and of this one agree on who writes during a rolling upgrade.
    const r = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [this.name]);
    if (r.rows[0]?.ok !== true || this.lostBecause !== undefined) {
      // A waiter holds no connection between attempts: only the leaders of a cluster count against max_connections.
      await this.release();
      return false;
    }
    this.holding = true;
    try {
      this.current = { name: this.name, term: await this.nextTerm(client) };
    } catch (e) {
      await this.release();
      throw e;
    }
    if (this.lostBecause !== undefined) {
      await this.release();
      return false;
    }
    this.answeredAt = Date.now();
    this.untrack = trackLeaderLock(this);
    this.pinger = setInterval(() => this.ping(client), this.timing.pingMs);
    this.pinger.unref();
    return true;
  }

  /** The term of the current tenure (undefined when not holding). */
  get term(): LeaderTerm | undefined {
    return this.held ? this.current : undefined;
  }

  /** The lock was held and is gone since (see `lostReason`). */
  get lost(): boolean {
    return this.holding && this.lostBecause !== undefined;
  }

  /** Why the lock was lost, for the log: "its database connection dropped", … */
  get lostReason(): string | undefined {
    return this.lostBecause;
  }

  get held(): boolean {
    return this.holding && this.lostBecause === undefined;
  }

  /** Gives the lock up (at once, not when the server notices the connection closing) and closes the connection. */
  async release(): Promise<void> {
    const client = this.client;
    const unlock = this.held;
    this.untrack?.();
    this.untrack = undefined;
    clearInterval(this.pinger);
    this.pinger = undefined;
    this.client = undefined;
    this.holding = false;
    this.current = undefined;
    this.lostBecause = undefined;
    if (!client) return;
    if (!unlock) {
      // A connection that went silent may never answer the goodbye: not waited for.
      void client.end().catch(() => undefined);
      return;
    }
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [this.name]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }

  private lose(client: pg.Client, reason: string): void {
    if (this.client !== client || this.lostBecause !== undefined) return;
    this.lostBecause = reason;
    clearInterval(this.pinger);
    this.pinger = undefined;
    if (this.holding) this.onLost();
  }

  private ping(client: pg.Client): void {
    const silent = Date.now() - this.answeredAt;
    // The server ends a session silent this long: whatever held us up (a stop, a cut), the lock is gone.
    if (silent > this.timing.sessionTimeoutMs) return this.lose(client, `no answer from the database for ${silent} ms`);
    if (this.pinging) return;
    const term = this.current!;
    this.pinging = true;
    client
      .query<{ locked: boolean; current: boolean }>(PING, [term.name, term.term.toString()])
      .then(
        ({ rows: [row] }) => {
          this.answeredAt = Date.now();
          if (!row?.locked) this.lose(client, "the database no longer has it");
          else if (!row.current) this.lose(client, `term ${term.term} is over`);
        },
        () => this.lose(client, "its database connection dropped"),
      )
      .finally(() => (this.pinging = false));
  }

  /**
   * Raises the term. A write of the previous term still open holds the term's row (checkTerm) and
   * makes this wait: it commits before this term begins. One still open after fenceGraceMs
   * belongs to a process that stopped mid-transaction (its own session's timeout does not apply
   * inside a statement, nor to a COPY waiting for data): its session is ended, rolling it back.
   */
  private async nextTerm(client: pg.Client): Promise<bigint> {
    const next = client.query<{ term: string }>(NEXT_TERM, [this.name]);
    const ender = setInterval(() => void this.endStaleWrites(this.backendPid), this.timing.fenceGraceMs);
    try {
      return BigInt((await next).rows[0]!.term);
    } finally {
      clearInterval(ender);
    }
  }

  private async endStaleWrites(waiter: number): Promise<void> {
    const other = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 10_000 });
    other.on("error", () => undefined);
    try {
      await other.connect();
      const { rows } = await other.query<{ pid: number; ended: boolean }>("SELECT pid, pg_terminate_backend(pid) AS ended FROM unnest(pg_blocking_pids($1)) AS pid", [waiter]);
      const ended = rows.filter((r) => r.ended).map((r) => r.pid);
      if (ended.length > 0) this.log?.warn({ pids: ended }, `ended ${ended.length} write(s) of the previous term of ${this.name} still open after ${this.timing.fenceGraceMs} ms`);
    } catch (e) {
      this.log?.warn({ err: e }, `could not end the previous term's writes holding ${this.name}; still waiting for them`);
    } finally {
      await other.end().catch(() => undefined);
    }
  }
}
