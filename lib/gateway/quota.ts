import { db } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { componentLogger, errorMessage } from "@/lib/log";
import { PLANS, type PlanLimits } from "@/lib/plans";

interface Usage {
  periodStart: number;
  /** CU recorded in the database for this period when last read. */
  stored: number;
  /** CU this process has charged since that read. */
  local: number;
  refreshedAt: number;
  /** No refresh is attempted before this time (set after a failure). */
  retryAt: number;
  refreshing?: Promise<void>;
}

const REFRESH_MS = 30_000;
/** After a failed refresh, how long the last known numbers serve before the next attempt. */
const RETRY_MS = 5_000;

/** Start of the plan period containing `now`: 00:00 UTC today, or the 1st of the month. */
export function periodStart(period: "day" | "month", now: number): number {
  const d = new Date(now);
  return period === "day" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/**
 * Plan allowance per project (the free plan's by the day, paid plans' by the month, reset at
 * 00:00 UTC). Reads the project's stored usage once (the daily rollup: a month is at most 31 days of
 * rows per key, network and call), then counts locally and re-reads in the
 * background every 30 s, so the hot path only waits for the database on a project's first call.
 */
export class QuotaTracker {
  private usage = new Map<string, Usage>();
  /** True from a failed refresh until one succeeds: the failure is logged once per streak. */
  private failing = false;
  private readonly log = componentLogger("quota");

  /** Throws EXCEEDED_QUOTA_LIMIT when over; returns a promise only when it must read the database first. */
  check(projectId: string, plan: Plan, now = Date.now()): Promise<void> | undefined {
    const limits = PLANS[plan];
    if (limits.allowanceCu === null) return undefined;
    const start = periodStart(limits.period, now);
    const u = this.usage.get(projectId);
    if (!u || u.periodStart !== start) {
      const fresh: Usage = { periodStart: start, stored: 0, local: 0, refreshedAt: 0, retryAt: 0 };
      this.usage.set(projectId, fresh);
      return this.refresh(projectId, fresh, now).then(() => this.enforce(fresh, limits));
    }
    if (now - u.refreshedAt > REFRESH_MS && now >= u.retryAt && !u.refreshing) void this.refresh(projectId, u, now);
    this.enforce(u, limits);
    return undefined;
  }

  private enforce(u: Usage, limits: PlanLimits): void {
    if (limits.allowanceCu !== null && u.stored + u.local >= limits.allowanceCu) {
      throw new AppError(
        "EXCEEDED_QUOTA_LIMIT",
        `This project used its ${limits.allowanceCu.toLocaleString("en-US")} CU ${limits.period === "day" ? "daily" : "monthly"} allowance of the ${limits.label} plan. It resets at 00:00 UTC${limits.period === "month" ? " on the 1st" : ""}; upgrade the plan for more.`,
      );
    }
  }

  add(projectId: string, cu: number): void {
    const u = this.usage.get(projectId);
    if (u) u.local += cu;
  }

  /** Re-reads the stored usage; on failure keeps the last known numbers (never rejects). */
  private refresh(projectId: string, u: Usage, now: number): Promise<void> {
    u.refreshing ??= (async () => {
      const localBefore = u.local;
      const rows = await db().$queryRaw<{ cu: bigint | null }[]>`
        SELECT sum(cu) AS cu FROM usage_days WHERE project_id = ${projectId} AND day >= ${new Date(u.periodStart)}`;
      // What was charged locally before the read may already be in the database (flushed);
      // keep only what came after, and accept a slight undercount across flush boundaries.
      u.stored = Number(rows[0]?.cu ?? 0);
      u.local = Math.max(0, u.local - localBefore);
      u.refreshedAt = now;
      if (this.failing) this.log.info("quota refresh recovered");
      this.failing = false;
    })()
      .catch((e: unknown) => {
        u.retryAt = now + RETRY_MS;
        if (!this.failing) this.log.warn({ err: errorMessage(e) }, "quota refresh failed; serving from the last known usage until it succeeds");
        this.failing = true;
      })
      .finally(() => {
        u.refreshing = undefined;
      });
    return u.refreshing;
  }
}
