/**
 * In-memory limits keyed by a string (a client address, an email and address pair, "all"): what
 * one process counts. Limits the processes of a cluster share (lib/limits/shared.ts) count here
 * while Redis is away, each process holding its share (`share`: the live web processes). Times are
 * milliseconds on the monotonic clock (performance.now()), so a wall-clock step neither frees nor
 * blocks anyone.
 */

/** How many keys a limiter keeps before it drops idle ones (then the least recently used). */
const MAX_KEYS = 100_000;

export interface BucketLimit {
  /** Requests allowed at once. */
  burst: number;
  /** One more request is allowed every this many milliseconds, up to `burst`. */
  refillMs: number;
}

/**
 * A token bucket per key: `burst` requests at once, then one every `refillMs`. Kept as the time
 * each bucket is full again (the generic cell rate algorithm), which is exact in whole milliseconds.
 */
export class TokenBuckets {
  private readonly fullAt = new Map<string, number>();

  /** `share`: what the limit is divided by now (a smaller burst, a slower refill); default 1. */
  constructor(
    private readonly whole: BucketLimit,
    private readonly share?: () => number,
  ) {}

  /** The limit this process holds now. */
  get limit(): BucketLimit {
    const s = this.share?.() ?? 1;
    return s === 1 ? this.whole : { burst: Math.max(1, Math.floor(this.whole.burst / s)), refillMs: this.whole.refillMs * s };
  }

  /** Milliseconds until the key may make a request (0: it may now). Takes nothing. */
  waitMs(key: string, now = performance.now()): number {
    const { burst, refillMs } = this.limit;
    const full = Math.max(this.fullAt.get(key) ?? now, now);
    return Math.max(0, Math.ceil(full - (burst - 1) * refillMs - now));
  }

  /** Counts one request for the key (call after waitMs answered 0). */
  take(key: string, now = performance.now()): void {
    const full = Math.max(this.fullAt.get(key) ?? now, now) + this.limit.refillMs;
    this.fullAt.delete(key);
    this.fullAt.set(key, full);
    if (this.fullAt.size > MAX_KEYS) prune(this.fullAt, (at) => at <= now);
  }

  /** Returns one request taken for the key (one that turned out not to count). */
  giveBack(key: string, now = performance.now()): void {
    const full = this.fullAt.get(key);
    if (full === undefined) return;
    const refillMs = this.limit.refillMs;
    if (full - refillMs <= now) this.fullAt.delete(key);
    else this.fullAt.set(key, full - refillMs);
  }
}

export interface BackoffPolicy {
  /** Failures allowed before any wait. */
  freeFailures: number;
  /** Failures are forgotten this long after the last one. */
  windowMs: number;
  /** The wait after the first failure over the free ones; it doubles with each further failure. */
  firstDelayMs: number;
  maxDelayMs: number;
}

/** Failure counting per key: after the free failures, each attempt waits twice as long as the one before. */
export class FailureBackoff {
  private readonly entries = new Map<string, { failures: number; last: number }>();

  /** `share`: what the free failures are divided by now; default 1. */
  constructor(
    readonly policy: BackoffPolicy,
    private readonly share?: () => number,
  ) {}

  private live(key: string, now: number): { failures: number; last: number } | undefined {
    const e = this.entries.get(key);
    if (e && now - e.last > this.policy.windowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** Milliseconds the key must still wait before its next attempt (0: none). */
  waitMs(key: string, now = performance.now()): number {
    const e = this.live(key, now);
    const free = Math.floor(this.policy.freeFailures / (this.share?.() ?? 1));
    if (!e || e.failures < free) return 0;
    const delay = backoffDelayMs(this.policy, e.failures - free);
    return Math.max(0, Math.ceil(e.last + delay - now));
  }

  recordFailure(key: string, now = performance.now()): void {
    const failures = (this.live(key, now)?.failures ?? 0) + 1;
    this.entries.delete(key);
    this.entries.set(key, { failures, last: now });
    if (this.entries.size > MAX_KEYS) prune(this.entries, (e) => now - e.last > this.policy.windowMs);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/** The wait after `over` failures past the free ones (0: the first over them). */
export function backoffDelayMs(policy: BackoffPolicy, over: number): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** over);
}

/** Drops the idle entries, then the least recently used ones (maps keep insertion order) until under MAX_KEYS. */
function prune<V>(map: Map<string, V>, idle: (v: V) => boolean): void {
  for (const [k, v] of map) if (idle(v)) map.delete(k);
  for (const k of map.keys()) {
    if (map.size <= MAX_KEYS * 0.9) break;
    map.delete(k);
  }
}

/** Whole seconds for a Retry-After header (at least 1). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
