import { AppError } from "@/lib/errors";
import { PLANS } from "@/lib/plans";
import type { Plan } from "@/lib/db/generated/enums";

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * Throughput limit: a token bucket of the plan's CU per second with one second of burst, per
 * project on paid plans and per account on the free plan (all free projects of one account share
 * one bucket, so more free projects do not buy more throughput). In memory, per process: with
 * several web processes each enforces its own share.
 *
 * A call costing more than one second of the plan's CU (eth_getBlockReceipts on the free plan) is
 * let through when the bucket is full and leaves it in debt: the calls after it wait until the
 * debt is paid back, so the average stays within the plan's CU per second and every call the
 * catalog has can be made on every plan.
 */
export class RateLimiter {
  private buckets = new Map<string, Bucket>();

  /** Takes `cu` tokens or throws TOO_MANY_REQUESTS with the seconds to wait. */
  take(who: { projectId: string; ownerId: string; plan: Plan }, cu: number, at?: number): void {
    const plan = who.plan;
    const rate = PLANS[plan].cuPerSecond;
    if (rate === null || cu <= 0) return;
    // The clock is read only for a plan with a limit.
    const now = at ?? performance.now();
    const shared = plan === "FREE";
    const key = shared ? `owner:${who.ownerId}` : who.projectId;
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: rate, updated: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(rate, b.tokens + ((now - b.updated) / 1000) * rate);
    b.updated = now;
    // A call dearer than the bucket holds needs a full bucket.
    const needed = Math.min(cu, rate);
    if (b.tokens < needed) throw refusal(plan, Math.max(1, Math.ceil((needed - b.tokens) / rate)));
    b.tokens -= cu;
  }
}

/** The refusals by plan and seconds to wait, each made once: a flood of refused calls costs no error (nor its stack trace) per call. */
const refusals: Partial<Record<Plan, AppError[]>> = {};

function refusal(plan: Plan, wait: number): AppError {
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
