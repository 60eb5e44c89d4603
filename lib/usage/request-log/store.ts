import { rawPool } from "@/lib/db/client";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";
import { observeFlush } from "@/lib/metrics";
import { REQUEST_LOG_ROWS, Ring, type RequestLogEntry, type Row } from "./ring";

/** Rows held in memory between flushes, over all projects; past this, new rows are dropped (and counted) until a flush makes room. */
const MAX_PENDING = 20_000;
/** Rows per INSERT statement (whole projects: a statement holds up to BATCH + REQUEST_LOG_ROWS - 1). */
const BATCH = 2000;
const SWEEP_EVERY_MS = 10_000;
const ORPHAN_SWEEP_EVERY_MS = 60 * 60_000;

/** One project's rows ready to write, oldest first, and how many of its entries were superseded before them. */
interface Rows {
  projectId: string;
  rows: Row[];
  superseded: number;
}

/**
 * The last requests of each project, for the console's request log and recent traffic. Like the
 * usage meter (lib/usage/meter.ts), the gateway only copies into memory (a ring per project,
 * reused: see Ring), and only the newest REQUEST_LOG_ROWS entries of each project wait for the
 * flush (the table keeps no more): an entry superseded before a flush is never cut, masked,
 * serialised or written, so a project sending thousands of requests a second costs at most
 * REQUEST_LOG_ROWS rows per flush.
 *
 * A flush writes the entries (cut and masked, maskExcerpt) in one statement per BATCH rows. A
 * project whose entries were superseded loses its older rows in the same statement. A sweep on the
 * same timer keeps the newest REQUEST_LOG_ROWS rows of each project written to since the last
 * sweep, in one DELETE for all of them. Newest is by the request's time (then id), never by which
 * process wrote it when: the logs of several processes serving a project merge into its newest
 * REQUEST_LOG_ROWS, and a row is deleted only once that many newer ones are stored, so recent
 * traffic (lib/usage/requests.ts) counts every request from the oldest row on.
 *
 * It is a log, not an account: rows that cannot be written (the database is away) are kept (the
 * newest REQUEST_LOG_ROWS per project, MAX_PENDING in all) and written later; beyond MAX_PENDING
 * new rows are dropped, and the count is logged.
 */
export class RequestLog {
  private rings = new Map<string, Ring>();
  /** Rows a flush could not write, per project, oldest first: written before the project's ring at the next flush. */
  private kept = new Map<string, Rows>();
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

  /** Copies the entry in (the caller keeps it and its bodies). */
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
    ring.push(entry);
  }

  /** Entries waiting for the flush (at most REQUEST_LOG_ROWS per project and flush). */
  get unwritten(): number {
    return this.pending;
  }

  /** Bytes of bodies held by reference until the flush (those too large for their ring's slot, at most their excerpt's part). */
  get heldBytes(): number {
    let n = 0;
    for (const ring of this.rings.values()) n += ring.heldBytes;
    return n;
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
      const work = this.take();
      this.pending = 0;
      let i = 0;
      /** Projects before this one are written. */
      let done = 0;
      const started = performance.now();
      try {
        while (i < work.length) {
          // Whole projects per statement, so each project's older rows go in the statement holding its oldest new one.
          const batch: Rows[] = [];
          let rows = 0;
          while (i < work.length && rows < BATCH) {
            batch.push(work[i]!);
            rows += work[i]!.rows.length;
            i++;
          }
          await insert(batch);
          this.written.statements++;
          this.written.rows += rows;
          for (const p of batch) {
            this.written.superseded += p.superseded;
            this.touched.add(p.projectId);
          }
          done = i;
        }
        this.failing = false;
        observeFlush("request_log", (performance.now() - started) / 1000, true);
      } catch (e) {
        observeFlush("request_log", (performance.now() - started) / 1000, false);
        if (!this.failing) this.log.warn({ err: errorMessage(e) }, "request log write failed; rows are kept in memory and written later");
        this.failing = true;
        // Written at the next flush, before what was recorded since.
        for (let j = done; j < work.length; j++) {
          this.kept.set(work[j]!.projectId, work[j]!);
          this.pending += work[j]!.rows.length;
        }
        return;
      }
    }
    if (Date.now() - this.sweptAt >= SWEEP_EVERY_MS) await this.sweep();
  }

  /** Every project's rows to write (kept ones first, the newest REQUEST_LOG_ROWS); rings left empty since the last flush are let go. */
  private take(): Rows[] {
    const work: Rows[] = [];
    for (const [projectId, ring] of this.rings) {
      if (ring.size === 0) {
        this.rings.delete(projectId);
        continue;
      }
      const superseded = ring.superseded;
      const rows = ring.take(projectId);
      const kept = this.kept.get(projectId);
      if (!kept) {
        work.push({ projectId, rows, superseded });
        continue;
      }
      this.kept.delete(projectId);
      const all = kept.rows.concat(rows);
      const over = Math.max(0, all.length - REQUEST_LOG_ROWS);
      work.push({ projectId, rows: over > 0 ? all.slice(over) : all, superseded: kept.superseded + superseded + over });
    }
    for (const kept of this.kept.values()) work.push(kept);
    this.kept.clear();
    return work;
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
          deleteOlder(`(SELECT p AS project_id, c.at, c.id FROM unnest($1::text[]) AS p
             CROSS JOIN LATERAL (SELECT at, id FROM request_logs WHERE project_id = p ORDER BY at DESC, id DESC OFFSET $2 LIMIT 1) c)`),
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
 * Inserts the projects' rows, oldest first, in one statement; the projects whose entries were
 * superseded lose their rows older than the ones inserted, in the same statement.
 */
async function insert(projects: Rows[]): Promise<void> {
  const rows = projects.flatMap((p) => p.rows);
  const superseded = projects.filter((p) => p.superseded > 0).map((p) => p.projectId);
  const json = JSON.stringify(rows);
  // Through node-postgres rather than Prisma: the batch is one large parameter, which Prisma's
  // query engine would copy and inspect again (measured: ~16 µs per logged request at c=32).
  if (superseded.length === 0) {
    await rawPool().query(INSERT_ROWS, [json]);
    return;
  }
  // The DELETE does not see the rows the INSERT adds (one snapshot): the newest rows are counted
  // over both, and only rows there before are deleted (new ones beyond are left to the sweep).
  await rawPool().query(
    `WITH ins AS (${INSERT_ROWS} RETURNING id, project_id, at),
     cut AS (SELECT project_id, at, id FROM (
       SELECT u.*, row_number() OVER (PARTITION BY project_id ORDER BY at DESC, id DESC) AS n FROM (
         SELECT project_id, at, id FROM request_logs WHERE project_id = ANY($2::text[])
         UNION ALL SELECT project_id, at, id FROM ins WHERE project_id = ANY($2::text[])) u) r
       WHERE n = $3 + 1)
     ${deleteOlder("cut")}`,
    [json, superseded, REQUEST_LOG_ROWS],
  );
}

/**
 * Deletes each project's rows from `cut`'s row on (by time, then id: the newest REQUEST_LOG_ROWS
 * across every process writing the project are kept, whichever flushed when). The rows are locked
 * in id order first, so that processes deleting the same rows never wait for each other in a cycle.
 */
function deleteOlder(cut: string): string {
  return `DELETE FROM request_logs d WHERE d.id IN (
    SELECT r.id FROM request_logs r JOIN ${cut} c ON r.project_id = c.project_id AND (r.at, r.id) <= (c.at, c.id)
    ORDER BY r.id FOR UPDATE OF r)`;
}
