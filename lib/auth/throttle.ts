/**
 * Slows down repeated failed sign-ins per email: after FREE_ATTEMPTS failures inside the window,
 * each further attempt must wait an exponentially growing delay (capped). In memory per process.
 */
const FREE_ATTEMPTS = 5;
const WINDOW_MS = 15 * 60_000;
const MAX_DELAY_MS = 5 * 60_000;

interface Record_ {
  failures: number;
  last: number;
}

const g = globalThis as unknown as { __blockgateSignInThrottle?: Map<string, Record_> };
const failures = (g.__blockgateSignInThrottle ??= new Map());

/** Milliseconds the caller must still wait before another attempt for this email (0 when none). */
export function retryAfterMs(email: string, now = Date.now()): number {
  const r = failures.get(email);
  if (!r) return 0;
  if (now - r.last > WINDOW_MS) {
    failures.delete(email);
    return 0;
  }
  if (r.failures < FREE_ATTEMPTS) return 0;
  const delay = Math.min(MAX_DELAY_MS, 1000 * 2 ** (r.failures - FREE_ATTEMPTS));
  return Math.max(0, r.last + delay - now);
}

export function recordFailure(email: string, now = Date.now()): void {
  const r = failures.get(email);
  failures.set(email, { failures: r && now - r.last <= WINDOW_MS ? r.failures + 1 : 1, last: now });
}

export function recordSuccess(email: string): void {
  failures.delete(email);
}
