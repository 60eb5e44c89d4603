import { describe, expect, it } from "vitest";
import { SIGN_IN_ADDRESS, SIGN_IN_PAIR, signUpBudget, signUpPerAddress, signUpPerNetwork } from "@/lib/auth/throttle";
import { FailureBackoff, retryAfterSeconds, TokenBuckets } from "./rate-limit";

describe("token buckets (sign-up limits)", () => {
  it("allows 30 sign-ups from one address at once, then one every 2 minutes, by default", () => {
    const buckets = new TokenBuckets(signUpPerAddress(30));
    for (let i = 0; i < 30; i++) {
      expect(buckets.waitMs("a", 0)).toBe(0);
      buckets.take("a", 0);
    }
    expect(buckets.waitMs("a", 0)).toBe(120_000);
    expect(buckets.waitMs("a", 45_000)).toBe(75_000);
    expect(buckets.waitMs("b", 0)).toBe(0);
    expect(buckets.waitMs("a", 120_000)).toBe(0);
    buckets.take("a", 120_000);
    expect(buckets.waitMs("a", 120_000)).toBe(120_000);
  });

  it("allows 60 sign-ups from one network at once, then one a minute, by default", () => {
    const buckets = new TokenBuckets(signUpPerNetwork(30));
    for (let i = 0; i < 60; i++) buckets.take("n", 0);
    expect(buckets.waitMs("n", 0)).toBe(60_000);
    expect(buckets.waitMs("n", 60_000)).toBe(0);
  });

  it("by default lets 100 sign-ups over all clients come without a proof of work at once, then one every 6 seconds", () => {
    expect(signUpBudget(0)).toBeNull();
    const buckets = new TokenBuckets(signUpBudget(600)!);
    for (let i = 0; i < 100; i++) buckets.take("all", 0);
    expect(buckets.waitMs("all", 0)).toBe(6_000);
    expect(buckets.waitMs("all", 5_000)).toBe(1_000);
    expect(buckets.waitMs("all", 6_000)).toBe(0);
    // Idle for an hour refills only up to the burst.
    expect(buckets.waitMs("all", 3_600_000)).toBe(0);
    for (let i = 0; i < 100; i++) buckets.take("all", 3_600_000);
    expect(buckets.waitMs("all", 3_600_000)).toBe(6_000);
  });
});

describe("token buckets: giving back", () => {
  it("returns a request taken, never more than was taken", () => {
    const buckets = new TokenBuckets({ burst: 2, refillMs: 1000 });
    buckets.take("a", 0);
    buckets.take("a", 0);
    expect(buckets.waitMs("a", 0)).toBe(1000);
    buckets.giveBack("a", 0);
    expect(buckets.waitMs("a", 0)).toBe(0);
    buckets.take("a", 0);
    expect(buckets.waitMs("a", 0)).toBe(1000);
    buckets.giveBack("a", 0);
    buckets.giveBack("a", 0);
    buckets.giveBack("a", 0);
    // Back to a full bucket, not beyond it: two at once, then a wait.
    buckets.take("a", 0);
    buckets.take("a", 0);
    expect(buckets.waitMs("a", 0)).toBe(1000);
    buckets.giveBack("b", 0);
    expect(buckets.waitMs("b", 0)).toBe(0);
  });
});

describe("failure backoff (sign-in limits)", () => {
  it("lets five failures of a pair through, then doubles the wait from 1 s up to 5 minutes", () => {
    const backoff = new FailureBackoff(SIGN_IN_PAIR);
    for (let i = 0; i < 5; i++) {
      expect(backoff.waitMs("pair", 0)).toBe(0);
      backoff.recordFailure("pair", 0);
    }
    expect(backoff.waitMs("pair", 0)).toBe(1000);
    backoff.recordFailure("pair", 1000);
    expect(backoff.waitMs("pair", 1000)).toBe(2000);
    expect(backoff.waitMs("pair", 3000)).toBe(0);
    for (let i = 0; i < 20; i++) backoff.recordFailure("pair", 3000);
    expect(backoff.waitMs("pair", 3000)).toBe(5 * 60_000);
    backoff.forget("pair");
    expect(backoff.waitMs("pair", 3000)).toBe(0);
  });

  it("lets twenty failures from one address through, then waits up to 15 minutes", () => {
    const backoff = new FailureBackoff(SIGN_IN_ADDRESS);
    for (let i = 0; i < 20; i++) backoff.recordFailure("addr", 0);
    expect(backoff.waitMs("addr", 0)).toBe(1000);
    for (let i = 0; i < 20; i++) backoff.recordFailure("addr", 0);
    expect(backoff.waitMs("addr", 0)).toBe(15 * 60_000);
  });

  it("forgets failures 15 minutes after the last one", () => {
    const backoff = new FailureBackoff(SIGN_IN_PAIR);
    for (let i = 0; i < 8; i++) backoff.recordFailure("k", 0);
    expect(backoff.waitMs("k", 1000)).toBeGreaterThan(0);
    expect(backoff.waitMs("k", 15 * 60_000 + 1)).toBe(0);
    backoff.recordFailure("k", 15 * 60_000 + 1);
    expect(backoff.waitMs("k", 15 * 60_000 + 1)).toBe(0);
  });
});

describe("Retry-After", () => {
  it("rounds up to whole seconds, at least one", () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(180_000)).toBe(180);
  });
});
