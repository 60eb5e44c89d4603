import { rawPool } from "@/lib/db/client";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import type { StatusClass } from "./meter";

/** Rows kept per project: the sweep deletes older ones, and only this many per project wait for a flush. */
export const REQUEST_LOG_ROWS = 1000;
/** Longest params, result and path excerpt stored, in characters. */
export const EXCERPT_CHARS = 2048;
/** Characters (or bytes) of a body the excerpt is taken from: a little more than it keeps, for masking. */
const EXCERPT_SOURCE = EXCERPT_CHARS + 64;
/** Buffers backed by at most this many bytes are held as they are until the flush; larger ones are copied (their excerpt's bytes only). */
const MAX_HELD_BUFFER = 8192;
/** Rows held in memory between flushes, over all projects; past this, new rows are dropped (and counted) until a flush makes room. */
const MAX_PENDING = 20_000;
/** Rows per INSERT statement (whole projects: a statement holds up to BATCH + REQUEST_LOG_ROWS - 1). */
const BATCH = 2000;
const SWEEP_EVERY_MS = 10_000;
const ORPHAN_SWEEP_EVERY_MS = 60 * 60_000;

/**
 * One finished request, as the gateway hands it over. `params` and `result` are the request's body
 * and the answer as sent: they are cut, masked and serialised only when written, and only for the
 * rows still among their project's newest REQUEST_LOG_ROWS then. Neither may be changed after.
 */
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
  params: string | Buffer | undefined;
  result: string | Buffer | undefined;
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

/** What a body is held as until the flush: itself when small, else a copy of the part the excerpt is taken from. */
function held(body: string | Buffer | undefined): string | Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") {
    // A slice of a string can keep the whole string alive: the excerpt's part goes into a Buffer of its own.
    return body.length <= EXCERPT_SOURCE ? body : Buffer.from(body.slice(0, EXCERPT_SOURCE), "utf8");
  }
  return body.buffer.byteLength <= MAX_HELD_BUFFER ? body : Buffer.from(body.subarray(0, EXCERPT_SOURCE));
}

/** The first EXCERPT_SOURCE characters (or bytes, of a Buffer) of a body. */
function excerpt(body: string | Buffer | undefined): string {
  if (body === undefined) return "";
  return typeof body === "string" ? (body.length > EXCERPT_SOURCE ? body.slice(0, EXCERPT_SOURCE) : body) : body.toString("utf8", 0, Math.min(body.length, EXCERPT_SOURCE));
}

/** A project's newest entries since the last flush, at most REQUEST_LOG_ROWS (a ring: the oldest is overwritten). */
class Ring {
  private items: RequestLogEntry[] = [];
  /** Where the oldest entry is once the ring is full. */
  private head = 0;
  /** Entries overwritten since the last flush, never written: the project's rows in the table no longer end where these begin. */
  superseded = 0;

  get size(): number {
    return this.items.length;
  }

  push(e: RequestLogEntry): void {
    if (this.items.length < REQUEST_LOG_ROWS) {
      this.items.push(e);
      return;
    }
    this.items[this.head] = e;
    this.head = (this.head + 1) % REQUEST_LOG_ROWS;
    this.superseded++;
  }

  /** Oldest first. */
  entries(): RequestLogEntry[] {
    return this.head === 0 ? this.items : [...this.items.slice(this.head), ...this.items.slice(0, this.head)];
  }

  /** Puts older entries (a flush that failed) before these, keeping the newest REQUEST_LOG_ROWS. */
  prepend(older: Ring): void {
    const newer = this.entries();
    const superseded = this.superseded + older.superseded;
    this.items = [];
    this.head = 0;
    this.superseded = superseded;
    for (const e of older.entries()) this.push(e);
    for (const e of newer) this.push(e);
  }
}

/**
 * The last requests of each project, for the console's request log and recent traffic. Like the
 * usage meter (lib/usage/meter.ts), the gateway only appends to memory, and only the newest
 * REQUEST_LOG_ROWS entries of each project wait for the flush (the table keeps no more): an entry
 * superseded before a flush is never cut, masked, serialised or written, so a project sending
 * thousands of requests a second costs at most REQUEST_LOG_ROWS rows per flush.
 *
 * A flush writes the entries (cut and masked, maskExcerpt) in one statement per BATCH rows. A
 * project whose entries were superseded loses its older rows in the same statement: its rows
 * always follow one another without a gap, so recent traffic (lib/usage/requests.ts) counts every
 * request from the oldest row on. A sweep on the same timer keeps the newest REQUEST_LOG_ROWS rows
 * of each project written to since the last sweep, in one DELETE for all of them.
 *
 * It is a log, not an account: rows that cannot be written (the database is away) are kept (the
 * newest REQUEST_LOG_ROWS per project, MAX_PENDING in all) and written later; beyond MAX_PENDING
 * new rows are dropped, and the count is logged.
 */
export class RequestLog {
  private rings = new Map<string, Ring>();
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private failing = false;
  /** Projects written to since the last sweep. */
  private touched = new Set<string>();
  private sweptAt = Date.now();
  private orphansSweptAt = 0;
  /** Statements the flushes and sweeps sent, and rows they inserted (for the benchmarks). */
  readonly written = { statements: 0, rows: 0, superseded: 0 };

  constructor(private readonly log: Logger = componentLogger("request-log")) {}

  record(entry: RequestLogEntry): void {
    let ring = this.rings.get(entry.projectId);
    if (!ring) {
      ring = new Ring();
      this.rings.set(entry.projectId, ring);
    }
    if (ring.size < REQUEST_LOG_ROWS) {
      if (this.pending >= MAX_PENDING) {
        this.dropped++;
        return;
      }
      this.pending++;
    }
    entry.params = held(entry.params);
    entry.result = held(entry.result);
    ring.push(entry);
  }

  /** Entries waiting for the flush (at most REQUEST_LOG_ROWS per project). */
  get unwritten(): number {
    return this.pending;
  }

  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    if (this.pending > 0) this.log.warn({ rows: this.pending }, "request log rows could not be written before stopping and are lost");
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
    if (this.pending > 0) {
      const rings = [...this.rings].filter(([, ring]) => ring.size > 0);
      this.rings = new Map();
      this.pending = 0;
      let i = 0;
      /** Rings before this one are written. */
      let done = 0;
      try {
        while (i < rings.length) {
          // Whole projects per statement, so each project's older rows go in the statement holding its oldest new one.
          const batch: [string, Ring][] = [];
          let rows = 0;
          while (i < rings.length && rows < BATCH) {
            batch.push(rings[i]!);
            rows += rings[i]![1].size;
            i++;
          }
          await insert(batch);
          this.written.statements++;
          this.written.rows += rows;
          for (const [projectId, ring] of batch) {
            this.written.superseded += ring.superseded;
            this.touched.add(projectId);
          }
          done = i;
        }
        this.failing = false;
      } catch (e) {
        if (!this.failing) this.log.warn({ err: errorMessage(e) }, "request log write failed; rows are kept in memory and written later");
        this.failing = true;
        // Back before what was recorded since, keeping the newest of each project.
        for (let j = done; j < rings.length; j++) this.restore(...rings[j]!);
        return;
      }
    }
    if (Date.now() - this.sweptAt >= SWEEP_EVERY_MS) await this.sweep();
  }

  /** Puts a ring whose flush failed back, before what its project recorded since. */
  private restore(projectId: string, ring: Ring): void {
    const now = this.rings.get(projectId);
    if (now) {
      this.pending -= now.size;
      now.prepend(ring);
      ring = now;
    } else {
      this.rings.set(projectId, ring);
    }
    this.pending += ring.size;
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
        this.written.statements++;
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
        this.written.statements++;
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

const COLUMNS = "project_id, key_id, request_id, at, api, network, method, calls, status, status_class, latency_ms, cu, path, params, result";
const RECORD = `r(project_id text, key_id text, request_id text, at timestamptz, api text, network text, method text, calls int,
  status int, status_class text, latency_ms real, cu int, path text, params text, result text)`;
/** The rows of the JSON array $1. */
const INSERT_ROWS = `INSERT INTO request_logs (${COLUMNS}) SELECT ${COLUMNS} FROM json_to_recordset($1::json) AS ${RECORD}`;

/**
 * Inserts the rings' entries, oldest first, in one statement; the projects whose entries were
 * superseded lose their rows older than the ones inserted, in the same statement.
 */
async function insert(rings: [string, Ring][]): Promise<void> {
  const rows: unknown[] = [];
  const superseded: string[] = [];
  for (const [projectId, ring] of rings) {
    if (ring.superseded > 0) superseded.push(projectId);
    for (const r of ring.entries()) {
      rows.push({
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
        params: maskExcerpt(excerpt(r.params)),
        result: maskExcerpt(excerpt(r.result)),
      });
    }
  }
  const json = JSON.stringify(rows);
  // Through node-postgres rather than Prisma: the batch is one large parameter, which Prisma's
  // query engine would copy and inspect again (measured: ~16 µs per logged request at c=32).
  if (superseded.length === 0) {
    await rawPool().query(INSERT_ROWS, [json]);
    return;
  }
  // The DELETE does not see the rows the INSERT adds (one snapshot): it removes older rows only.
  await rawPool().query(
    `WITH ins AS (${INSERT_ROWS} RETURNING id, project_id)
     DELETE FROM request_logs d
     USING (SELECT project_id, min(id) AS first FROM ins WHERE project_id = ANY($2::text[]) GROUP BY project_id) f
     WHERE d.project_id = f.project_id AND d.id < f.first`,
    [json, superseded],
  );
}

const g = globalThis as unknown as { __blockgateRequestLog?: RequestLog };

/** The process's request log (written by the gateway). */
export function requestLog(): RequestLog {
  g.__blockgateRequestLog ??= new RequestLog();
  return g.__blockgateRequestLog;
}
