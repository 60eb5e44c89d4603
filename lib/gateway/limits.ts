import { AppError } from "@/lib/errors";
import { PLANS } from "@/lib/plans";
import { retryAfterSeconds } from "@/lib/rate-limit";
import type { Plan } from "@/lib/db/generated/enums";
import type { RateLimiterRedis } from "rate-limiter-flexible";
import { BackgroundReports, HELD_BACK_SHARE, type SharedLimits } from "@/lib/limits/shared";

/** Who a throughput limit counts for: a project, or on the free plan its account. */
export interface ThroughputSubject {
  projectId: string;
  ownerId: string;
  plan: Plan;
}

/**
 * The plan's CU-per-second limit as a call meets it: `take` decides at once, from what this
 * process holds, and never waits, so no call waits for a limit.
 *
 * A limit shared by several processes (RateLimiter with shared limits) keeps this shape: `take`
 * answers from a local bucket and from what Redis said last, and reports what it took in the
 * background, whose answers change only what the next calls are told.
 */
export interface ThroughputLimiter {
  /** Takes `cu` for `who`: 0 when taken; otherwise the milliseconds until it could be, and nothing is taken. */
  take(who: ThroughputSubject, cu: number): number;
}

/** The bucket a subject's throughput counts in: every free project of an account shares one. */
export function throughputKey(who: ThroughputSubject): string {
  return who.plan === "FREE" ? `owner:${who.ownerId}` : who.projectId;
}

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * Throughput limit: a token bucket in memory of the plan's CU per second with one second of burst,
 * per project on paid plans and per account on the free plan (all free projects of one account
 * share one bucket, so more free projects do not buy more throughput).
 *
 * A call costing more than one second of the plan's CU (eth_getBlockReceipts on the free plan) is
 * let through when the bucket is full and leaves it in debt: the calls after it wait until the
 * debt is paid back, so the average stays within the plan's CU per second and every call the
 * catalog has can be made on every plan.
 *
 * With `shared` limits, several processes share the plan's rate. While they are shared (Redis),
 * the bucket is the first gate and what it let through is reported to a one-second window in Redis
 * every REPORT_MS, without waiting; a subject Redis answers is over is refused here until that
 * window ends. While they are local, the bucket alone decides, holding the process's share of the
 * rate (the rate divided by the live web processes).
 */
export class RateLimiter implements ThroughputLimiter {
  private buckets = new Map<string, Bucket>();
  private readonly reports?: BackgroundReports;
  /** The counter in Redis of each plan rate. */
  private readonly counters = new Map<number, RateLimiterRedis>();

  constructor(private readonly shared?: SharedLimits) {
    this.reports = shared && new BackgroundReports(shared);
  }

  take(who: ThroughputSubject, cu: number, at?: number): number {
    const rate = PLANS[who.plan].cuPerSecond;
    if (rate === null || cu <= 0) return 0;
    // The clock is read only for a plan with a limit.
    const now = at ?? performance.now();
    const key = throughputKey(who);
    let limit = rate;
    if (this.shared) {
      const refused = this.reports!.refusedFor(key, now);
      if (refused > 0) return refused;
      limit = rate / this.shared.share();
    }
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: limit, updated: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(limit, b.tokens + ((now - b.updated) / 1000) * limit);
    b.updated = now;
    // A call dearer than the bucket holds needs a full bucket.
    const needed = Math.min(cu, limit);
    if (b.tokens < needed) return ((needed - b.tokens) / limit) * 1000;
    b.tokens -= cu;
    if (this.shared?.mode === "shared") this.reports!.add(this.counter(rate), key, cu, (rate * HELD_BACK_SHARE) / this.shared.liveWebProcesses());
    return 0;
  }

  /** The one-second window of `rate` CU in Redis (while limits are shared). */
  private counter(rate: number): RateLimiterRedis {
    let c = this.counters.get(rate);
    if (!c) {
      c = this.shared!.counter("cu", rate, 1)!;
      this.counters.set(rate, c);
    }
    return c;
  }
}

/** The refusals by plan and seconds to wait, each made once: a flood of refused calls costs no error (nor its stack trace) per call. */
const refusals: Partial<Record<Plan, AppError[]>> = {};

/** 429 TOO_MANY_REQUESTS for a call of a `plan` project that may run in `waitMs`, with Retry-After (in whole seconds, at least 1). */
export function throughputRefusal(plan: Plan, waitMs: number): AppError {
  const wait = retryAfterSeconds(waitMs);
  const byWait = (refusals[plan] ??= []);
  let error = byWait[wait];
  if (!error) {
    const rate = PLANS[plan].cuPerSecond;
    error = new AppError(
      "TOO_MANY_REQUESTS",
      plan === "FREE"
        ? `Rate limit of ${rate} CU per second exceeded: the free plan's limit is shared by all free projects of an account. Retry after ${wait} s or upgrade the plan.`
        : `Rate limit of ${rate} CU per second exceeded for this project's plan. Retry after ${wait} s or upgrade the plan.`,
      Object.freeze({ "Retry-After": String(wait) }),
    );
    byWait[wait] = error;
  }
  return error;
}
