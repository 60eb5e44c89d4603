import { db } from "@/lib/db/client";
import { componentLogger, errorMessage, type Logger } from "@/lib/log";

export interface UsageSample {
  projectId: string;
  keyId: string;
  network: string;
  endpoint: string;
  cu: number;
  error: boolean;
}

interface Counter {
  projectId: string;
  keyId: string;
  network: string;
  endpoint: string;
  minute: number;
  cu: number;
  requests: number;
  errors: number;
}

const MINUTE = 60_000;
/** Rows per INSERT statement; keeps the bind-parameter count far below PostgreSQL's 65,535. */
const BATCH = 1000;

/**
 * Usage aggregated in memory per (project, key, network, endpoint, minute) and flushed as
 * per-minute buckets with one upsert-increment statement, never one row per request.
 * A failed flush keeps the counts for the next attempt, so usage is not lost.
 */
export class UsageMeter {
  private pending = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** When the current run of failed flushes began (undefined while flushes succeed). */
  private failingSince: number | undefined;

  constructor(private readonly log: Logger = componentLogger("usage")) {}

  record(s: UsageSample, now = Date.now()): void {
    const minute = now - (now % MINUTE);
    const id = `${s.projectId}\u0000${s.keyId}\u0000${s.network}\u0000${s.endpoint}\u0000${minute}`;
    let c = this.pending.get(id);
    if (!c) {
      c = { projectId: s.projectId, keyId: s.keyId, network: s.network, endpoint: s.endpoint, minute, cu: 0, requests: 0, errors: 0 };
      this.pending.set(id, c);
    }
    c.cu += s.cu;
    c.requests += 1;
    if (s.error) c.errors += 1;
  }

  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Flushes what is pending; concurrent calls wait for the same flush, then flush again. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const progress = { written: 0 };
    this.flushing = this.write(batch, progress)
      .then(() => {
        if (this.failingSince === undefined) return;
        this.log.info(`usage written again after ${((Date.now() - this.failingSince) / 1000).toFixed(1)} s of failed flushes; nothing was lost`);
        this.failingSince = undefined;
      })
      .catch((e: unknown) => {
        // One line per outage: the counts stay in memory and every later flush tries again.
        if (this.failingSince === undefined) {
          this.failingSince = Date.now();
          this.log.warn({ err: errorMessage(e) }, "usage flush failed; the counts are kept in memory and written when the database answers again");
        }
        // Statements that committed are not counted again.
        for (const c of batch.slice(progress.written)) this.merge(c);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private merge(c: Counter): void {
    const id = `${c.projectId}\u0000${c.keyId}\u0000${c.network}\u0000${c.endpoint}\u0000${c.minute}`;
    const existing = this.pending.get(id);
    if (!existing) this.pending.set(id, c);
    else {
      existing.cu += c.cu;
      existing.requests += c.requests;
      existing.errors += c.errors;
    }
  }

  /** Writes the counters BATCH at a time; `progress.written` counts those whose statement committed. */
  private async write(counters: Counter[], progress: { written: number }): Promise<void> {
    for (let i = 0; i < counters.length; i += BATCH) {
      const rows = counters.slice(i, i + BATCH);
      const values: unknown[] = [];
      const tuples = rows.map((c, r) => {
        values.push(c.projectId, c.keyId, c.network, c.endpoint, new Date(c.minute), c.cu, c.requests, c.errors);
        const p = r * 8;
        return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8})`;
      });
      await db().$executeRawUnsafe(
        `INSERT INTO usage_buckets (project_id, key_id, network, endpoint, minute, cu, requests, errors)
         VALUES ${tuples.join(", ")}
         ON CONFLICT (project_id, minute, key_id, network, endpoint) DO UPDATE SET
           cu = usage_buckets.cu + excluded.cu,
           requests = usage_buckets.requests + excluded.requests,
           errors = usage_buckets.errors + excluded.errors`,
        ...values,
      );
      progress.written = i + rows.length;
    }
  }
}

const g = globalThis as unknown as { __blockgateMeter?: UsageMeter };

/** The process's meter (shared by the gateway and anything else in the process that meters). */
export function meter(): UsageMeter {
  g.__blockgateMeter ??= new UsageMeter();
  return g.__blockgateMeter;
}
