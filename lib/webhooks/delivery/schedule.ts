/**
 * When a failed delivery is tried again: the configured schedule (WEBHOOK_RETRY_SCHEDULE_MS,
 * default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) with ±20 % jitter, or later when the receiver
 * asked so with Retry-After (seconds or an HTTP date, at most MAX_RETRY_AFTER_MS). After the last
 * delay's attempt the message fails.
 */

export const JITTER = 0.2;
/** A Retry-After further away than this is shortened to it. */
export const MAX_RETRY_AFTER_MS = 6 * 3600_000;

/**
 * Milliseconds the receiver asked to wait (Retry-After: delay-seconds or HTTP-date, RFC 9110
 * §10.2.3), bounded by MAX_RETRY_AFTER_MS; undefined when absent or unreadable.
 */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * When to try a message again after its attempt number `attempt` (1 for the first) failed, or
 * null when that was the last one the schedule allows.
 */
export function nextAttemptAt(schedule: readonly number[], attempt: number, now: number, retryAfter?: number, random: () => number = Math.random): Date | null {
  const base = schedule[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  return new Date(now + Math.max(jittered, retryAfter ?? 0));
}
