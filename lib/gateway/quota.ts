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
  /** The last X-RateLimit-* headers made, for the CU used and the seconds to the reset they say (shared by the responses until either changes). */
  headers?: { used: number; reset: number; values: Readonly<Record<string, string>> };
}

const REFRESH_MS = 30_000;

const secondsUntilReset = (limits: PlanLimits, now: number) => Math.max(1, Math.ceil((period(limits.period, now).end - now) / 1000));
/** After a failed refresh, how long the last known numbers serve before the next attempt. */
const RETRY_MS = 5_000;

/** Start of the plan period containing `now`: 00:00 UTC today, or the 1st of the month. */
export function periodStart(period: "day" | "month", now: number): number {
  const d = new Date(now);
  return period === "day" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** End of the plan period containing `now` (when the allowance resets): the next 00:00 UTC, or the next 1st. */
export function periodEnd(period: "day" | "month", now: number): number {
  const d = new Date(now);
  return period === "day" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

const periods = { day: { start: 0, end: 0 }, month: { start: 0, end: 0 } };

/** The plan period containing `now` (kept until `now` leaves it: no date arithmetic per request). */
function period(p: "day" | "month", now: number): { start: number; end: number } {
  const b = periods[p];
  if (now < b.start || now >= b.end) periods[p] = { start: periodStart(p, now), end: periodEnd(p, now) };
  return periods[p];
}

/**
 * The rate-limit headers of every response to a request with a valid key, describing the plan's
 * allowance (README "Rate-limit headers"): its size in CU, the CU left in the period (0 once used
 * up, overage or not) and the seconds until it resets.
 */
export const RATE_LIMIT_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const;

/** Whether the project is served past its allowance: overage is on and the plan is a paid one. */
export function overageApplies(plan: Plan, overage: boolean): boolean {
  return overage && plan !== "FREE";
}

/**
 * The answer when a plan's allowance cannot pay (429 EXCEEDED_QUOTA_LIMIT, Retry-After: the seconds
 * until the reset), or undefined: with `cu` 0, when `usedCu` reached the allowance (a call is
 * served while any of it is left); with `cu`, when `cu` more would pass it.
 */
export function allowanceRefusal(limits: PlanLimits, usedCu: number, now: number, cu = 0): AppError | undefined {
  if (limits.allowanceCu === null) return undefined;
  const over = cu === 0 ? usedCu >= limits.allowanceCu : usedCu + cu > limits.allowanceCu;
  if (!over) return undefined;
  const allowance = `${limits.allowanceCu.toLocaleString("en-US")} CU ${limits.period === "day" ? "daily" : "monthly"} allowance of the ${limits.label} plan`;
  const what =
    cu === 0
      ? `This project used its ${allowance}.`
      : `This costs ${cu.toLocaleString("en-US")} CU, and this project has ${Math.max(0, limits.allowanceCu - usedCu).toLocaleString("en-US")} CU left of its ${allowance}.`;
  return new AppError(
    "EXCEEDED_QUOTA_LIMIT",
    `${what} It resets at 00:00 UTC${limits.period === "month" ? " on the 1st" : ""}; upgrade the plan (or, on a paid plan, turn on overage) for more.`,
    { "Retry-After": String(secondsUntilReset(limits, now)) },
  );
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

  /** `clock`: wall-clock milliseconds (tests move it across a reset). */
  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * Throws EXCEEDED_QUOTA_LIMIT (with Retry-After: the seconds until the reset) when over, unless
   * overage applies; returns a promise only when it must read the database first.
   */
  check(projectId: string, plan: Plan, overage = false, at?: number): Promise<void> | undefined {
    const limits = PLANS[plan];
    if (limits.allowanceCu === null) return undefined;
    // The clock is read only for a plan with an allowance.
    const now = at ?? this.clock();
    const start = period(limits.period, now).start;
    const u = this.usage.get(projectId);
    const served = overageApplies(plan, overage);
    if (!u || u.periodStart !== start) {
      const fresh: Usage = { periodStart: start, stored: 0, local: 0, refreshedAt: 0, retryAt: 0 };
      this.usage.set(projectId, fresh);
      return this.refresh(projectId, fresh, now).then(() => {
        if (!served) this.enforce(fresh, limits, now);
      });
    }
    if (now - u.refreshedAt > REFRESH_MS && now >= u.retryAt && !u.refreshing) void this.refresh(projectId, u, now);
    if (!served) this.enforce(u, limits, now);
    return undefined;
  }

  /**
   * The X-RateLimit-* headers for the project's allowance as this process counts it (after `check`
   * ran for the period); undefined for a plan without a fixed allowance.
   */
  headers(projectId: string, plan: Plan, at?: number): Readonly<Record<string, string>> | undefined {
    const limits = PLANS[plan];
    if (limits.allowanceCu === null) return undefined;
    const now = at ?? this.clock();
    const u = this.usage.get(projectId);
    const current = u !== undefined && u.periodStart === period(limits.period, now).start;
    const used = current ? u.stored + u.local : 0;
    const reset = secondsUntilReset(limits, now);
    const cached = current ? u.headers : undefined;
    if (cached && cached.used === used && cached.reset === reset) return cached.values;
    const values = {
      "X-RateLimit-Limit": String(limits.allowanceCu),
      "X-RateLimit-Remaining": String(Math.max(0, limits.allowanceCu - used)),
      "X-RateLimit-Reset": String(reset),
    };
    if (current) u.headers = { used, reset, values };
    return values;
  }

  /**
   * Throws EXCEEDED_QUOTA_LIMIT when paying `cu` more would take the project past its allowance,
   * unless overage applies: for work bought in bulk within one call (the webhook messages a call
   * queues), after `check` ran for the call.
   */
  affords(projectId: string, plan: Plan, overage: boolean, cu: number, at?: number): void {
    const limits = PLANS[plan];
    if (limits.allowanceCu === null || overageApplies(plan, overage)) return;
    const now = at ?? this.clock();
    const u = this.usage.get(projectId);
    const used = u !== undefined && u.periodStart === period(limits.period, now).start ? u.stored + u.local : 0;
    const refusal = allowanceRefusal(limits, used, now, cu);
    if (refusal) throw refusal;
  }

  private enforce(u: Usage, limits: PlanLimits, now: number): void {
    const refusal = allowanceRefusal(limits, u.stored + u.local, now);
    if (refusal) throw refusal;
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
