import { rawPool } from "@/lib/db/client";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import type { StatusClass } from "./meter";

/** Rows kept per project: the sweep deletes older ones. */
export const REQUEST_LOG_ROWS = 1000;
/** Longest params, result and path excerpt stored, in characters. */
export const EXCERPT_CHARS = 2048;
/** Rows held in memory between flushes; past this, new rows are dropped (and counted) until a flush makes room. */
const MAX_PENDING = 20_000;
/** Rows per INSERT statement. */
const BATCH = 2000;
const SWEEP_EVERY_MS = 10_000;
const ORPHAN_SWEEP_EVERY_MS = 60 * 60_000;

/** One finished request, as the gateway hands it over (excerpts not yet masked, at most EXCERPT_CHARS + a little). */
export interface RequestLogEntry {
  projectId: string;
  keyId: string;
  requestId: string;
  /** When the answer was sent, ms since the epoch. */
  at: number;
  api: string;
  network: string;
  method: string;
  calls: number;
  status: number;
  statusClass: StatusClass;
  latencyMs: number;
  cu: number;
  path: string;
  params: string;
  result: string;
}

// Keys of Blockgate (bg_ + base58) and anything of that shape, whatever the prefix: an excerpt cut
// through a key still hides what remains of it (4 characters after the prefix are enough to mask).
const KEY_LIKE = /bg_[1-9A-HJ-NP-Za-km-z]{4,}/g;
// Values of JSON fields or query parameters whose name says they hold a secret.
const SECRET_FIELD = /("(?:[\w-]*(?:api[_-]?key|secret|token|password|passwd|authorization|auth)[\w-]*)"\s*:\s*")((?:[^"\\]|\\.)*)(")/gi;
const SECRET_PARAM = /([?&](?:[\w-]*(?:api[_-]?key|secret|token|password|auth)[\w-]*)=)([^&#\s]*)/gi;
const BEARER = /(Bearer\s+)[^\s"',]+/gi;
const SECRET_HINT = /key|secret|token|passw|auth|bearer/i;
export const MASK = "••••";

/** An excerpt with keys and secret-looking values masked, cut to `max` characters (a cut is marked with …). */
export function maskExcerpt(text: string, max = EXCERPT_CHARS): string {
  let s = text.length > max + 256 ? text.slice(0, max + 256) : text;
  // Most excerpts hold nothing to mask: two cheap scans decide, before the costlier patterns.
  if (s.includes("bg_")) s = s.replace(KEY_LIKE, `bg_${MASK}`);
  if (SECRET_HINT.test(s)) s = s.replace(SECRET_FIELD, `$1${MASK}$3`).replace(SECRET_PARAM, `$1${MASK}`).replace(BEARER, `$1${MASK}`);
  if (s.length > max || text.length > max + 256) s = `${s.slice(0, max)}…`;
  // PostgreSQL text holds neither NUL nor a lone surrogate (a cut can leave one).
  return s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/**
 * The last requests of each project, for the console's request log and recent traffic. Like the
 * usage meter (lib/usage/meter.ts), the gateway only appends to memory; rows are written in
 * batches (one statement per BATCH rows) on a timer, and a sweep on the same timer keeps the
 * newest REQUEST_LOG_ROWS rows of each project written to since the last sweep, in one DELETE for
 * all of them. Rows are masked (maskExcerpt) when written, off the request's path.
 *
 * It is a log, not an account: rows that cannot be written (the database is away) are kept up to
 * MAX_PENDING and written later; beyond that they are dropped, and the count is logged.
 */
export class RequestLog {
  private pending: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private failing = false;
  /** Projects written to since the last sweep. */
  private touched = new Set<string>();
  private sweptAt = Date.now();
  private orphansSweptAt = 0;

  constructor(private readonly log: Logger = componentLogger("request-log")) {}

  record(entry: RequestLogEntry): void {
    if (this.pending.length >= MAX_PENDING) {
      this.dropped++;
      return;
    }
    this.pending.push(entry);
  }

  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    if (this.pending.length > 0) this.log.warn({ rows: this.pending.length }, "request log rows could not be written before stopping and are lost");
  }

  /** Writes what is pending, then sweeps when it is time. Never rejects. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async flushOnce(): Promise<void> {
    if (this.dropped > 0) {
      this.log.warn({ rows: this.dropped }, `${this.dropped} request log rows were dropped: more were waiting than the log holds in memory`);
      this.dropped = 0;
    }
    while (this.pending.length > 0) {
      const rows = this.pending.slice(0, BATCH);
      try {
        await insert(rows);
      } catch (e) {
        if (!this.failing) this.log.warn({ err: errorMessage(e) }, "request log write failed; rows are kept in memory and written later");
        this.failing = true;
        return;
      }
      this.failing = false;
      this.pending = this.pending.slice(rows.length);
      for (const r of rows) this.touched.add(r.projectId);
    }
    if (Date.now() - this.sweptAt >= SWEEP_EVERY_MS) await this.sweep();
  }

  /**
   * Deletes the rows beyond the newest REQUEST_LOG_ROWS of every project written to since the last
   * sweep (one statement), and once an hour the rows of projects that no longer exist.
   */
  async sweep(): Promise<number> {
    this.sweptAt = Date.now();
    const projects = [...this.touched];
    this.touched = new Set();
    let deleted = 0;
    try {
      if (projects.length > 0) {
        const { rowCount } = await rawPool().query(
          `DELETE FROM request_logs r
           USING (SELECT p, (SELECT id FROM request_logs WHERE project_id = p ORDER BY id DESC OFFSET $2 LIMIT 1) AS cutoff
                  FROM unnest($1::text[]) AS p) c
           WHERE r.project_id = c.p AND r.id <= c.cutoff`,
          [projects, REQUEST_LOG_ROWS],
        );
        deleted += rowCount ?? 0;
      }
      if (Date.now() - this.orphansSweptAt >= ORPHAN_SWEEP_EVERY_MS) {
        this.orphansSweptAt = Date.now();
        const { rowCount } = await rawPool().query(`DELETE FROM request_logs r WHERE NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = r.project_id)`);
        deleted += rowCount ?? 0;
      }
    } catch (e) {
      for (const p of projects) this.touched.add(p);
      this.log.warn({ err: errorMessage(e) }, "request log sweep failed; trying again at the next flush");
    }
    return deleted;
  }
}

async function insert(rows: RequestLogEntry[]): Promise<void> {
  const json = JSON.stringify(
    rows.map((r) => ({
      project_id: r.projectId,
      key_id: r.keyId,
      request_id: r.requestId,
      at: new Date(r.at).toISOString(),
      api: r.api,
      network: r.network,
      method: r.method,
      calls: r.calls,
      status: r.status,
      status_class: r.statusClass,
      latency_ms: Math.round(r.latencyMs * 100) / 100,
      cu: r.cu,
      path: maskExcerpt(r.path, 512),
      params: maskExcerpt(r.params),
      result: maskExcerpt(r.result),
    })),
  );
  // Through node-postgres rather than Prisma: the batch is one large parameter, which Prisma's
  // query engine would copy and inspect again (measured: ~16 µs per logged request at c=32).
  await rawPool().query(
    `INSERT INTO request_logs (project_id, key_id, request_id, at, api, network, method, calls, status, status_class, latency_ms, cu, path, params, result)
     SELECT project_id, key_id, request_id, at, api, network, method, calls, status, status_class, latency_ms, cu, path, params, result
     FROM json_to_recordset($1::json) AS r(project_id text, key_id text, request_id text, at timestamptz, api text, network text, method text, calls int,
       status int, status_class text, latency_ms real, cu int, path text, params text, result text)`,
    [json],
  );
}

const g = globalThis as unknown as { __blockgateRequestLog?: RequestLog };

/** The process's request log (written by the gateway). */
export function requestLog(): RequestLog {
  g.__blockgateRequestLog ??= new RequestLog();
  return g.__blockgateRequestLog;
}
