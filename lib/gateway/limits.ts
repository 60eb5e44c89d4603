import { AppError } from "@/lib/errors";
import { PLANS } from "@/lib/plans";
import type { Plan } from "@/lib/db/generated/enums";

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * Throughput limit per project: a token bucket of the plan's CU per second with one second of
 * burst. In memory, per process: with several web processes each enforces its own share.
 */
export class RateLimiter {
  private buckets = new Map<string, Bucket>();

  /** Takes `cu` tokens or throws TOO_MANY_REQUESTS with the seconds to wait. */
  take(projectId: string, plan: Plan, cu: number, now = performance.now()): void {
    const rate = PLANS[plan].cuPerSecond;
    if (rate === null || cu <= 0) return;
    let b = this.buckets.get(projectId);
    if (!b) {
      b = { tokens: rate, updated: now };
      this.buckets.set(projectId, b);
    }
    b.tokens = Math.min(rate, b.tokens + ((now - b.updated) / 1000) * rate);
    b.updated = now;
    if (b.tokens < cu) {
      const wait = Math.max(1, Math.ceil((cu - b.tokens) / rate));
      throw new AppError("TOO_MANY_REQUESTS", `Rate limit of ${rate} CU per second exceeded for this project's plan. Retry after ${wait} s or upgrade the plan.`, {
        "Retry-After": String(wait),
      });
    }
    b.tokens -= cu;
  }
}
