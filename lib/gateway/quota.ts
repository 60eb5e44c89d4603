import { db } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { REPORT_MS, SLOW_REPORT_MS, type SharedLimits } from "@/lib/limits/shared";
import { componentLogger, errorMessage } from "@/lib/log";
import { PLANS, type PlanLimits } from "@/lib/plans";

interface Usage {
  periodStart: number;
  periodEnd: number;
  /** CU recorded in the database for this period when last read. */
  stored: number;
  /** CU this process has charged since that read. */
  local: number;
  /** The period's CU as Redis counts them (the stored CU when it was first counted, then every process's reports): the highest answer seen. */
  shared: number;
  /** CU charged here and not yet counted in `shared` (reported or not). */
  unreported: number;
  /** CU charged here and not yet sent to Redis (part of `unreported`). */
  unsent: number;
  /** The plan's allowance for the period (what the report threshold is a share of). */
  allowance: number;
  /** When Redis's count was last asked for (wall-clock ms). */
  sharedAt: number;
  refreshedAt: number;
  /** No refresh is attempted before this time (set after a failure). */
  retryAt: number;
  refreshing?: Promise<void>;
  /** The last X-RateLimit-* headers made, for the CU used and the seconds to the reset they say (shared by the responses until either changes). */
  headers?: { used: number; reset: number; values: Readonly<Record<string, string>> };
}

const REFRESH_MS = 30_000;
/** While a project is being served, how often its count in Redis is read (the CU other processes charged). */
const SHARED_READ_MS = 250;
/** The share of its allowance a project's CU may wait in a process before they are reported to Redis at once (÷ live web processes). */
const ALLOWANCE_HELD_BACK = 0.001;

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
 *
 * With `shared` limits, processes see each other's CU within moments instead of at the next
 * read: while shared, Redis holds each project's CU of the period (started from the stored CU
 * with SET NX, then every process adds what it charged, every REPORT_MS, without waiting), read in
 * the background while the project is served. While local, each process counts what it charged
 * times the live web processes (its share of what was left at the read).
 */
export class QuotaTracker {
  private usage = new Map<string, Usage>();
  /** Projects with CU not reported to Redis yet. */
  private readonly toReport = new Set<string>();
  private reporting?: NodeJS.Timeout;
  /** The report due within SLOW_REPORT_MS (no project held back enough to be reported sooner); either timer sends every project's. */
  private reportingSlowly?: NodeJS.Timeout;
  /** True from a failed refresh until one succeeds: the failure is logged once per streak. */
  private failing = false;
  private readonly log = componentLogger("quota");

  /** `clock`: wall-clock milliseconds (tests move it across a reset). */
  constructor(
    private readonly clock: () => number = Date.now,
    private readonly shared?: SharedLimits,
  ) {}

  /** The CU the project used in the period, as far as this process knows. */
  private used(u: Usage): number {
    if (!this.shared) return u.stored + u.local;
    return Math.max(u.stored + u.local * this.shared.share(), u.shared + u.unreported);
  }

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
      const fresh: Usage = { periodStart: start, periodEnd: period(limits.period, now).end, stored: 0, local: 0, shared: 0, unreported: 0, unsent: 0, allowance: limits.allowanceCu, sharedAt: 0, refreshedAt: 0, retryAt: 0 };
      this.usage.set(projectId, fresh);
      return this.refresh(projectId, fresh, now).then(() => {
        if (!served) this.enforce(fresh, limits, now);
      });
    }
    if (now - u.refreshedAt > REFRESH_MS && now >= u.retryAt && !u.refreshing) void this.refresh(projectId, u, now);
    else if (this.shared && now - u.sharedAt > SHARED_READ_MS) this.readShared(projectId, u, now);
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
    const used = current ? this.used(u) : 0;
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
    const used = u !== undefined && u.periodStart === period(limits.period, now).start ? this.used(u) : 0;
    const refusal = allowanceRefusal(limits, used, now, cu);
    if (refusal) throw refusal;
  }

  private enforce(u: Usage, limits: PlanLimits, now: number): void {
    const refusal = allowanceRefusal(limits, this.used(u), now);
    if (refusal) throw refusal;
  }

  add(projectId: string, cu: number): void {
    const u = this.usage.get(projectId);
    if (!u) return;
    u.local += cu;
    if (this.shared?.mode !== "shared") return;
    u.unreported += cu;
    u.unsent += cu;
    this.toReport.add(projectId);
    // Reported at once in a batch when a thousandth of the allowance (÷ live web processes) is held
    // back, else within SLOW_REPORT_MS: the processes together count at most that much late.
    if (u.unsent >= (u.allowance * ALLOWANCE_HELD_BACK) / this.shared.liveWebProcesses()) this.reporting ??= setTimeout(this.sendReports, REPORT_MS);
    else this.reportingSlowly ??= setTimeout(this.sendReports, SLOW_REPORT_MS);
  }

  /** The counter of the projects' CU in Redis, while limits are shared (its size and window are unused: every key is given its period's). */
  private counter() {
    return this.shared?.counter("quota", 1, 86_400);
  }

  /** A project's key for the period in Redis, and its life in seconds (to the period's end, and an hour). */
  private static sharedKey(projectId: string, u: Usage, now: number): { key: string; ttlS: number } {
    return { key: `${projectId}:${u.periodStart}`, ttlS: Math.ceil((u.periodEnd - now) / 1000) + 3_600 };
  }

  private readShared(projectId: string, u: Usage, now: number): void {
    const counter = this.counter();
    if (!counter) return;
    u.sharedAt = now;
    counter.get(QuotaTracker.sharedKey(projectId, u, now).key).then(
      (res) => {
        if (res) u.shared = Math.max(u.shared, res.consumedPoints);
      },
      (e: unknown) => this.shared!.refusal(e),
    );
  }

  /** Starts the project's count in Redis from the stored CU, unless a process did already. */
  private seedShared(projectId: string, u: Usage, now: number): void {
    if (!this.counter()) return;
    const { key, ttlS } = QuotaTracker.sharedKey(projectId, u, now);
    this.shared!.seed("quota", key, u.stored, ttlS);
    this.readShared(projectId, u, now);
  }

  private readonly sendReports = () => {
    clearTimeout(this.reporting);
    clearTimeout(this.reportingSlowly);
    this.reporting = this.reportingSlowly = undefined;
    const counter = this.counter();
    const now = this.clock();
    for (const projectId of this.toReport) {
      const u = this.usage.get(projectId);
      if (!u) continue;
      // Sent once: what an earlier report has in flight is not sent again.
      const cu = u.unsent;
      u.unsent = 0;
      if (!counter) {
        u.unreported = 0;
        continue;
      }
      if (cu <= 0) continue;
      const { key, ttlS } = QuotaTracker.sharedKey(projectId, u, now);
      counter
        .penalty(key, Math.ceil(cu), { customDuration: ttlS })
        .then(
          (res) => {
            u.shared = Math.max(u.shared, res.consumedPoints);
          },
          (e: unknown) => this.shared!.refusal(e),
        )
        .finally(() => {
          // Counted in `shared` now, or lost with Redis (then the stored CU count it once flushed).
          u.unreported = Math.max(0, u.unreported - cu);
        });
    }
    this.toReport.clear();
  };

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
      this.seedShared(projectId, u, now);
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
