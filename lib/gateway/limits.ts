import { AppError } from "@/lib/errors";
import { PLANS } from "@/lib/plans";
import { retryAfterSeconds } from "@/lib/rate-limit";
import type { Plan } from "@/lib/db/generated/enums";

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
 * A limit shared by several processes fits the same shape: its `take` answers from a local bucket
 * and from what the shared store said last (a subject the store reported over its limit is refused
 * here, with the store's wait, until that wait has passed), and reports what it took to the store
 * in the background, whose answers arrive later and change only what the next calls are told.
 * While the store is away the local bucket alone decides. The gateway only ever calls `take`.
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
 * Throughput limit in memory, per process (with several web processes each enforces its own
 * share): a token bucket of the plan's CU per second with one second of burst, per project on
 * paid plans and per account on the free plan (all free projects of one account share one bucket,
 * so more free projects do not buy more throughput).
 *
 * A call costing more than one second of the plan's CU (eth_getBlockReceipts on the free plan) is
 * let through when the bucket is full and leaves it in debt: the calls after it wait until the
 * debt is paid back, so the average stays within the plan's CU per second and every call the
 * catalog has can be made on every plan.
 */
export class RateLimiter implements ThroughputLimiter {
  private buckets = new Map<string, Bucket>();

  take(who: ThroughputSubject, cu: number, at?: number): number {
    const rate = PLANS[who.plan].cuPerSecond;
    if (rate === null || cu <= 0) return 0;
    // The clock is read only for a plan with a limit.
    const now = at ?? performance.now();
    const key = throughputKey(who);
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: rate, updated: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(rate, b.tokens + ((now - b.updated) / 1000) * rate);
    b.updated = now;
    // A call dearer than the bucket holds needs a full bucket.
    const needed = Math.min(cu, rate);
    if (b.tokens < needed) return ((needed - b.tokens) / rate) * 1000;
    b.tokens -= cu;
    return 0;
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
