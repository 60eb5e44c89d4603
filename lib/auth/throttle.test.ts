import { describe, expect, it } from "vitest";
import { recordFailure, recordSuccess, retryAfterMs } from "./throttle";

describe("sign-in throttle", () => {
  it("lets five failures through, then makes each further attempt wait longer", () => {
    const email = `t-${Math.random()}@example.com`;
    const t0 = 1_000_000;
    for (let i = 0; i < 5; i++) {
      expect(retryAfterMs(email, t0)).toBe(0);
      recordFailure(email, t0);
    }
    expect(retryAfterMs(email, t0)).toBe(1000);
    recordFailure(email, t0 + 1000);
    expect(retryAfterMs(email, t0 + 1000)).toBe(2000);
    expect(retryAfterMs(email, t0 + 3000)).toBe(0);
    recordSuccess(email);
    expect(retryAfterMs(email, t0 + 3000)).toBe(0);
  });

  it("forgets failures after the window", () => {
    const email = `w-${Math.random()}@example.com`;
    for (let i = 0; i < 8; i++) recordFailure(email, 0);
    expect(retryAfterMs(email, 1000)).toBeGreaterThan(0);
    expect(retryAfterMs(email, 16 * 60_000)).toBe(0);
  });
});
