import { randomUUID } from "node:crypto";
import { db } from "@/lib/db/client";
import { getEnv, type Env } from "@/lib/env";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { observeFlush } from "@/lib/metrics";
import { emptyHistogram, LATENCY_BUCKETS, latencyBucket } from "./latency";

/** `2xx`, `4xx`, `5xx`, or `rpc_error`: a JSON-RPC error object (whatever the HTTP status). */
export type StatusClass = "2xx" | "4xx" | "5xx" | "rpc_error";

export interface UsageSample {
  projectId: string;
  /** The API key the call came with; "" for usage no key made (subscriptionId says whose it is). */
  keyId: string;
  /**
   * The webhook subscription a message was delivered for, or queued for by the console (test,
   * resend, replay); "" for a call made with a key.
   */
  subscriptionId: string;
  network: string;
  /** The public API: `node`, `rpc`, `aptos`, `v1`. */
  api: string;
  /** The call within the API, from its catalog or a fixed label (never caller-chosen text). */
  endpoint: string;
  status: StatusClass;
  cu: number;
  error: boolean;
  latencyMs: number;
}

/** The status class of an HTTP status. */
export function statusClass(httpStatus: number): StatusClass {
  return httpStatus >= 500 ? "5xx" : httpStatus >= 400 ? "4xx" : "2xx";
}

/** The sums of the samples with one key (project, key, subscription, network, API, endpoint, status class) in one minute. */
interface Counter extends Pick<UsageSample, "projectId" | "keyId" | "subscriptionId" | "network" | "api" | "endpoint" | "status"> {
  /** Start of the minute (or hour, or day, for the rollups), ms since the epoch. */
  minute: number;
  cu: number;
  requests: number;
  errors: number;
  latencySum: number;
  hist: number[];
}

/** A level of the meter's index of counters. */
type Level<T> = Map<string, T>;

/** The map below `key`, made when missing. */
function child<V>(m: Level<Level<V>>, key: string): Level<V> {
  let next = m.get(key);
  if (next === undefined) {
    next = new Map();
    m.set(key, next);
  }
  return next;
}

/** The counters of an endpoint, one per status class (STATUS_SLOT), made when missing. */
function slots(m: Level<Array<Counter | undefined>>, key: string): Array<Counter | undefined> {
  let next = m.get(key);
  if (next === undefined) {
    next = [undefined, undefined, undefined, undefined];
    m.set(key, next);
  }
  return next;
}

const STATUS_SLOT: Record<StatusClass, number> = { "2xx": 0, "4xx": 1, "5xx": 2, rpc_error: 3 };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Minutes per statement (with at most as many hours and days: 39,000 bind parameters, below PostgreSQL's 65,535). */
const BATCH = 1000;
/** How long the ids of committed flushes are kept (a flush is re-sent within seconds of its first try). */
const FLUSH_ID_RETENTION = "1 day";
const PRUNE_EVERY_MS = 60 * MINUTE;
/** Minute rows deleted per statement when pruning: each DELETE is short, whatever the backlog. */
export const PRUNE_BATCH = 5000;

/** How long minute buckets are kept, in ms (USAGE_MINUTE_RETENTION_DAYS). */
export function minuteRetentionMs(env: Env = getEnv()): number {
  return env.USAGE_MINUTE_RETENTION_DAYS * DAY;
}

/** Counters taken out of `pending` for one flush, sent as statements `<id>:0`, `<id>:1`, …: */
interface Flush {
  id: string;
  counters: Counter[];
}

/**
 * Usage aggregated in memory per (project, key, subscription, network, api, endpoint, status, minute) and
 * flushed as per-minute buckets with one upsert-increment statement, never one row per request.
 * The same statement adds the counts to the hour and day rollups (usage_hours, usage_days), so
 * the three tables always agree.
 *
 * A flush that fails keeps its counters in memory and is sent again, as it is and under the same
 * id, before anything newer: each statement records its id in `usage_flushes` in the same
 * statement as the increments, so one whose commit succeeded but whose answer was lost (the
 * database died at that moment) is skipped when sent again. Usage is neither lost while the
 * database is away nor counted twice when it comes back; a hard kill of the process loses what
 * was recorded since the last successful flush.
 */
export class UsageMeter {
  /** The counters recorded since the last flush. */
  private pending: Counter[] = [];
  /** The same counters by minute, project, key, subscription, network, API, endpoint and status (STATUS_SLOT). */
  private index = new Map<number, Level<Level<Level<Level<Level<Level<Array<Counter | undefined>>>>>>>>();
  /** The flush sent last and not known to be written: re-sent under its id until it is. */
  private unconfirmed: Flush | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  /** When the current run of failed flushes began (undefined while flushes succeed). */
  private failingSince: number | undefined;
  private prunedAt = 0;
  /** When each key was last used (ms since the epoch), since the last write of api_keys.last_used_at. */
  private lastUsed = new Map<string, number>();
  /**
   * The counter the last sample went to, and when: a request's samples, and a client's requests,
   * mostly go to the same counter one after the other, found then without the index.
   */
  private last: Counter | undefined;
  private lastAt = 0;

  constructor(
    private readonly log: Logger = componentLogger("usage"),
    /** How long minute buckets are kept; undefined: the meter deletes none (the process's, lib/services.ts, keeps USAGE_MINUTE_RETENTION_DAYS). */
    private readonly minuteRetention?: number,
  ) {}

  record(s: UsageSample, now = Date.now()): void {
    const minute = now - (now % MINUTE);
    let c = this.last;
    if (
      c === undefined ||
      c.minute !== minute ||
      c.keyId !== s.keyId ||
      c.endpoint !== s.endpoint ||
      c.status !== s.status ||
      c.network !== s.network ||
      c.api !== s.api ||
      c.projectId !== s.projectId ||
      c.subscriptionId !== s.subscriptionId
    ) {
      this.releaseLast();
      c = this.counter(s, minute);
      this.last = c;
    }
    this.lastAt = now;
    const ms = Math.max(0, Math.round(s.latencyMs));
    c.cu += s.cu;
    c.requests += 1;
    if (s.error) c.errors += 1;
    c.latencySum += ms;
    c.hist[latencyBucket(ms)]! += 1;
  }

  /** Notes when the last sample's key (if any) was used; the next sample looks its counter up in the index. */
  private releaseLast(): void {
    if (this.last && this.last.keyId !== "") this.lastUsed.set(this.last.keyId, this.lastAt);
    this.last = undefined;
  }

  /** The pending counter of the sample's key, call and status in the minute, made when missing. */
  private counter(s: UsageSample, minute: number): Counter {
    // Nested maps rather than one composite string key: no string is built or hashed per call.
    let byProject = this.index.get(minute);
    if (!byProject) {
      byProject = new Map();
      this.index.set(minute, byProject);
    }
    const byStatus = slots(child(child(child(child(child(byProject, s.projectId), s.keyId), s.subscriptionId), s.network), s.api), s.endpoint);
    const slot = STATUS_SLOT[s.status];
    let c = byStatus[slot];
    if (!c) {
      c = { projectId: s.projectId, keyId: s.keyId, subscriptionId: s.subscriptionId, network: s.network, api: s.api, endpoint: s.endpoint, status: s.status, minute, cu: 0, requests: 0, errors: 0, latencySum: 0, hist: emptyHistogram() };
      byStatus[slot] = c;
      this.pending.push(c);
    }
    return c;
  }

  /** Requests recorded and not yet known to be written. */
  get unwritten(): number {
    let n = 0;
    for (const c of this.pending) n += c.requests;
    for (const c of this.unconfirmed?.counters ?? []) n += c.requests;
    return n;
  }

  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /**
   * Writes what is recorded: a flush left unconfirmed by a failure first, then what is pending.
   * Concurrent calls wait for the flush in progress, then flush again. Never rejects: a failure
   * keeps the counts for the next call.
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    // A flush re-sent after a failure is followed at once by what was recorded meanwhile.
    const rounds = this.unconfirmed ? 2 : 1;
    for (let round = 0; round < rounds; round++) {
      this.flushing = this.flushOnce().finally(() => {
        this.flushing = undefined;
      });
      if (!(await this.flushing)) return;
    }
  }

  /** Stops the periodic flush and writes all that is recorded (what cannot be written is lost, and logged). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    const lost = this.unwritten;
    if (lost > 0) this.log.error({ requests: lost }, `the usage of ${lost} requests could not be written before stopping (the database is unreachable) and is lost`);
  }

  /** One flush: the unconfirmed one if any, else what is pending. Resolves true when it was written. */
  private async flushOnce(): Promise<boolean> {
    if (!this.unconfirmed) {
      if (this.pending.length === 0) return true;
      this.unconfirmed = { id: randomUUID(), counters: this.pending };
      this.pending = [];
      this.index = new Map();
      this.releaseLast();
    }
    const started = performance.now();
    try {
      await this.write(this.unconfirmed);
      this.unconfirmed = undefined;
      observeFlush("usage", (performance.now() - started) / 1000, true);
    } catch (e) {
      observeFlush("usage", (performance.now() - started) / 1000, false);
      // One line per outage: the counts stay in memory and every later flush sends them again.
      if (this.failingSince === undefined) {
        this.failingSince = Date.now();
        this.log.warn({ err: errorMessage(e) }, "usage flush failed; the counts are kept in memory and written when the database answers again");
      }
      return false;
    }
    if (this.failingSince !== undefined) {
      this.log.info(`usage written again after ${((Date.now() - this.failingSince) / 1000).toFixed(1)} s of failed flushes; nothing was lost`);
      this.failingSince = undefined;
    }
    await this.writeLastUsed();
    const now = Date.now();
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now;
      await this.prune(now);
    }
    return true;
  }

  /**
   * Sets api_keys.last_used_at of the keys used since the last flush, in one statement per
   * BATCH keys (never later than a time already stored). What cannot be written is kept for the
   * next flush; the usage counts do not depend on it.
   */
  private async writeLastUsed(): Promise<void> {
    this.releaseLast();
    if (this.lastUsed.size === 0) return;
    const used = [...this.lastUsed];
    this.lastUsed = new Map();
    try {
      for (let i = 0; i < used.length; i += BATCH) {
        const batch = used.slice(i, i + BATCH);
        const values = batch.flatMap(([id, at]) => [id, new Date(at).toISOString()]);
        // The column is a UTC timestamp without time zone: the ISO string's Z is ignored by the cast.
        // Locked in id order first, whatever plan the update gets.
        await db().$executeRawUnsafe(
          `UPDATE api_keys k SET last_used_at = l.t
           FROM (SELECT a.id, v.t::timestamp(3) AS t FROM (VALUES ${batch.map((_, j) => `($${2 * j + 1}, $${2 * j + 2})`).join(", ")}) AS v(id, t)
                 JOIN api_keys a ON a.id = v.id ORDER BY a.id FOR UPDATE OF a) l
           WHERE k.id = l.id AND (k.last_used_at IS NULL OR k.last_used_at < l.t)`,
          ...values,
        );
      }
    } catch (e) {
      for (const [id, at] of used) if ((this.lastUsed.get(id) ?? 0) < at) this.lastUsed.set(id, at);
      this.log.warn({ err: errorMessage(e) }, "could not record when keys were last used; trying again with the next flush");
    }
  }

  /**
   * One statement per BATCH counters, each claiming its id in usage_flushes and adding its
   * increments to the minutes, hours and days only when the claim is new, atomically. Rows are
   * upserted in the order of the tables' keys: processes flushing the same counters lock them in
   * one order, never each waiting for a row the other holds (deadlock).
   */
  private async write(flush: Flush): Promise<void> {
    for (let i = 0; i < flush.counters.length; i += BATCH) {
      const minutes = flush.counters.slice(i, i + BATCH);
      const values: unknown[] = [`${flush.id}:${i / BATCH}`];
      const tuples = (rows: Counter[]) =>
        rows
          .map((c) => {
            const p = values.length;
            values.push(c.projectId, c.keyId, c.subscriptionId, c.network, c.api, c.endpoint, c.status, new Date(c.minute), c.cu, c.requests, c.errors, c.latencySum, `{${c.hist.join(",")}}`);
            return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8}::timestamptz, $${p + 9}::bigint, $${p + 10}::int, $${p + 11}::int, $${p + 12}::bigint, $${p + 13}::int[])`;
          })
          .join(", ");
      const upsert = (table: string, time: string, rows: Counter[]) =>
        `INSERT INTO ${table} (project_id, key_id, subscription_id, network, api, endpoint, status, ${time}, cu, requests, errors, latency_ms_sum, latency_hist)
         SELECT v.* FROM (VALUES ${tuples(rows)}) AS v(project_id, key_id, subscription_id, network, api, endpoint, status, t, cu, requests, errors, latency_ms_sum, latency_hist)
         WHERE EXISTS (SELECT 1 FROM claim)
         ORDER BY project_id, t, key_id, subscription_id, network, api, endpoint, status
         ON CONFLICT (project_id, ${time}, key_id, subscription_id, network, api, endpoint, status) DO UPDATE SET
           cu = ${table}.cu + excluded.cu,
           requests = ${table}.requests + excluded.requests,
           errors = ${table}.errors + excluded.errors,
           latency_ms_sum = ${table}.latency_ms_sum + excluded.latency_ms_sum,
           latency_hist = ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, k) => `${table}.latency_hist[${k + 1}] + excluded.latency_hist[${k + 1}]`).join(", ")}]`;
      await db().$executeRawUnsafe(
        `WITH claim AS (INSERT INTO usage_flushes (id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING id),
         m AS (${upsert("usage_buckets", "minute", minutes)}),
         h AS (${upsert("usage_hours", "hour", rollup(minutes, HOUR))})
         ${upsert("usage_days", "day", rollup(minutes, DAY))}`,
        ...values,
      );
    }
  }

  /**
   * Deletes flush ids older than FLUSH_ID_RETENTION and minute buckets older than the minute
   * retention (when the meter has one), PRUNE_BATCH rows per statement (the hour and day rollups
   * are kept).
   * Runs from the flush at most once every PRUNE_EVERY_MS; never rejects. Resolves the number of
   * minute rows deleted.
   */
  async prune(now = Date.now()): Promise<number> {
    await db()
      .$executeRawUnsafe(`DELETE FROM usage_flushes WHERE created_at < now() - interval '${FLUSH_ID_RETENTION}'`)
      .catch((e: unknown) => this.log.warn({ err: errorMessage(e) }, "could not delete old usage flush ids; trying again in an hour"));
    if (this.minuteRetention === undefined) return 0;
    const cutoff = new Date(minuteRetentionStart(now, this.minuteRetention));
    let deleted = 0;
    try {
      for (;;) {
        const n = await db().$executeRawUnsafe(
          `DELETE FROM usage_buckets WHERE ctid = ANY (ARRAY(SELECT ctid FROM usage_buckets WHERE minute < $1 LIMIT ${PRUNE_BATCH}))`,
          cutoff,
        );
        deleted += n;
        if (n < PRUNE_BATCH) break;
      }
    } catch (e) {
      this.log.warn({ err: errorMessage(e), deleted }, "could not delete old per-minute usage; trying again in an hour");
    }
    return deleted;
  }
}

/** The oldest minute still kept at `now`: minute buckets before it are deleted (or about to be). */
export function minuteRetentionStart(now: number, retentionMs = minuteRetentionMs()): number {
  const t = now - retentionMs;
  return t - (t % MINUTE);
}

/** The counters summed per hour or per UTC day (one row per key of the rollup table). */
function rollup(counters: Counter[], span: number): Counter[] {
  const out = new Map<string, Counter>();
  for (const c of counters) {
    const t = c.minute - (c.minute % span);
    const id = `${c.projectId}\u0000${c.keyId}\u0000${c.subscriptionId}\u0000${c.network}\u0000${c.api}\u0000${c.endpoint}\u0000${c.status}\u0000${t}`;
    const r = out.get(id);
    if (!r) {
      out.set(id, { ...c, minute: t, hist: [...c.hist] });
      continue;
    }
    r.cu += c.cu;
    r.requests += c.requests;
    r.errors += c.errors;
    r.latencySum += c.latencySum;
    for (let k = 0; k < r.hist.length; k++) r.hist[k]! += c.hist[k]!;
  }
  return [...out.values()];
}
