import { clientKey } from "@/lib/client-ip";
import { AppError } from "@/lib/errors";
import { componentLogger } from "@/lib/log";
import { FailureBackoff, retryAfterSeconds, TokenBuckets, type BackoffPolicy, type BucketLimit } from "@/lib/rate-limit";

/**
 * Failed sign-ins per (email, client address) pair: five free, then 1 s, 2 s, 4 s... up to 5
 * minutes between attempts; forgotten 15 minutes after the last failure or at a successful
 * sign-in. Keyed by the pair, so someone guessing a password from one address never locks the
 * owner out when they sign in from another.
 */
export const SIGN_IN_PAIR: BackoffPolicy = { freeFailures: 5, windowMs: 15 * 60_000, firstDelayMs: 1000, maxDelayMs: 5 * 60_000 };

/**
 * Failed sign-ins per client address over all emails (one address trying many accounts): twenty
 * free, then 1 s doubling up to 15 minutes; forgotten 15 minutes after the last failure (a
 * successful sign-in does not reset it, or one valid account would unlock the address).
 */
export const SIGN_IN_ADDRESS: BackoffPolicy = { freeFailures: 20, windowMs: 15 * 60_000, firstDelayMs: 1000, maxDelayMs: 15 * 60_000 };

/** Sign-ups per client address: 30 at once, then one every 2 minutes (30 an hour). */
export const SIGN_UP_PER_ADDRESS: BucketLimit = { burst: 30, refillMs: 2 * 60_000 };

/** Sign-ups over all clients: 100 at once, then one every 6 seconds (600 an hour). */
export const SIGN_UP_GLOBAL: BucketLimit = { burst: 100, refillMs: 6_000 };

interface Limiters {
  signInPair: FailureBackoff;
  signInAddress: FailureBackoff;
  signUpAddress: TokenBuckets;
  signUpGlobal: TokenBuckets;
  /** The global sign-up limit refused the last attempt (logged once per such streak). */
  signUpsRefused: boolean;
}

// On globalThis: Next.js bundles route handlers and server actions separately, and both must
// count against the same limits.
const g = globalThis as unknown as { __blockgateAuthLimits?: Limiters };
const limits = (g.__blockgateAuthLimits ??= {
  signInPair: new FailureBackoff(SIGN_IN_PAIR),
  signInAddress: new FailureBackoff(SIGN_IN_ADDRESS),
  signUpAddress: new TokenBuckets(SIGN_UP_PER_ADDRESS),
  signUpGlobal: new TokenBuckets(SIGN_UP_GLOBAL),
  signUpsRefused: false,
});

const pairKey = (email: string, ip: string) => `${clientKey(ip)} ${email}`;

function tooMany(message: string, waitMs: number): AppError {
  const seconds = retryAfterSeconds(waitMs);
  return new AppError("TOO_MANY_REQUESTS", `${message} Try again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`, {
    "Retry-After": String(seconds),
  });
}

/** TOO_MANY_REQUESTS (with Retry-After) when this email and address must wait before another sign-in attempt. */
export function signInRefusal(email: string, ip: string, now = performance.now()): AppError | null {
  const wait = Math.max(limits.signInPair.waitMs(pairKey(email, ip), now), limits.signInAddress.waitMs(clientKey(ip), now));
  return wait > 0 ? tooMany("Too many failed sign-ins.", wait) : null;
}

export function recordSignInFailure(email: string, ip: string, now = performance.now()): void {
  limits.signInPair.recordFailure(pairKey(email, ip), now);
  limits.signInAddress.recordFailure(clientKey(ip), now);
}

export function recordSignInSuccess(email: string, ip: string): void {
  limits.signInPair.forget(pairKey(email, ip));
}

/** Counts one sign-up from this address, or throws TOO_MANY_REQUESTS (with Retry-After) and counts nothing. */
export function takeSignUp(ip: string, now = performance.now()): void {
  const key = clientKey(ip);
  const own = limits.signUpAddress.waitMs(key, now);
  if (own > 0) throw tooMany("Too many sign-ups from your network.", own);
  const all = limits.signUpGlobal.waitMs("all", now);
  if (all > 0) {
    if (!limits.signUpsRefused) {
      componentLogger("auth").warn({ burst: SIGN_UP_GLOBAL.burst, refillMs: SIGN_UP_GLOBAL.refillMs }, "sign-ups over all clients reached their limit; refusing new sign-ups for now");
    }
    limits.signUpsRefused = true;
    throw tooMany("Too many sign-ups right now.", all);
  }
  limits.signUpsRefused = false;
  limits.signUpAddress.take(key, now);
  limits.signUpGlobal.take("all", now);
}
