import { describe, expect, it } from "vitest";
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, parseEnv } from "@/lib/env";
import { MAX_RETRY_AFTER_MS, nextAttemptAt, retryAfterMs } from "./schedule";

const base = { APP_SECRET: "x".repeat(32), NEXTAUTH_SECRET: "y".repeat(32) };

describe("retry schedule", () => {
  it("retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with ±20 % jitter, then stops", () => {
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const s = DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS;
    expect(nextAttemptAt(s, 1, 0, undefined, () => 0)!.getTime()).toBe(4_000);
    expect(nextAttemptAt(s, 1, 0, undefined, () => 1)!.getTime()).toBe(6_000);
    expect(nextAttemptAt(s, 7, 0, undefined, () => 0.5)!.getTime()).toBe(36_000_000);
    expect(nextAttemptAt(s, 8, 0)).toBeNull();
    expect(nextAttemptAt([], 1, 0)).toBeNull();
  });

  it("waits at least as long as Retry-After asks, seconds or HTTP date, bounded", () => {
    const now = Date.parse("2026-11-24T09:00:00Z");
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs("Tue, 24 Nov 2026 09:10:00 GMT", now)).toBe(600_000);
    expect(retryAfterMs("Tue, 24 Nov 2026 08:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("99999999", now)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(nextAttemptAt([5_000], 1, now, 120_000, () => 0.5)!.getTime()).toBe(now + 120_000);
    expect(nextAttemptAt([5_000], 1, now, 1_000, () => 0.5)!.getTime()).toBe(now + 5_000);
  });

  it("WEBHOOK_RETRY_SCHEDULE_MS and WEBHOOK_TIMEOUT_MS are validated", () => {
    expect(parseEnv({ ...base }).WEBHOOK_RETRY_SCHEDULE_MS).toEqual(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS);
    expect(parseEnv({ ...base }).WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(parseEnv({ ...base, WEBHOOK_RETRY_SCHEDULE_MS: "50, 100,200" }).WEBHOOK_RETRY_SCHEDULE_MS).toEqual([50, 100, 200]);
    expect(() => parseEnv({ ...base, WEBHOOK_RETRY_SCHEDULE_MS: "5s,10s" })).toThrow(/WEBHOOK_RETRY_SCHEDULE_MS: must be 1 to 20 delays in milliseconds/);
    expect(() => parseEnv({ ...base, WEBHOOK_RETRY_SCHEDULE_MS: "700000000" })).toThrow(/at most 7 days/);
    expect(() => parseEnv({ ...base, WEBHOOK_TIMEOUT_MS: "10" })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });
});
