import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { connectTestDatabase } from "@/lib/testing/harness";
import { solveChallenge, solves } from "./proof-of-work";
import { CHALLENGE_TTL_MS, issueChallenge, SpentChallenges, spendProof } from "./sign-up-challenge";
import { proofDifficulty } from "./throttle";

beforeAll(async () => {
  // The challenges are signed with a key derived from APP_SECRET.
  await connectTestDatabase();
});

/** The refusal spendProof throws: 400 with a message naming `proof`. */
async function refusal(proof: unknown, now?: number): Promise<{ status: number; code: string; message: string }> {
  try {
    await spendProof(proof, now);
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error("the proof was accepted");
}

/** A nonce that does not solve the challenge (one in 2^bits does, so the first few are tried). */
function wrongNonce(challenge: string, bits: number): string {
  for (let n = 0; ; n++) if (!solves(challenge, String(n), bits)) return String(n);
}

describe("sign-up proof of work", () => {
  it("is solved by the browser's solver and accepted once; reused, it is refused", async () => {
    const { challenge, difficulty, expiresAt } = issueChallenge(10);
    expect(difficulty).toBe(10);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(CHALLENGE_TTL_MS - 5_000);
    const nonce = await solveChallenge(challenge, difficulty);
    expect(solves(challenge, nonce, 10)).toBe(true);
    await spendProof({ challenge, nonce });
    expect(await refusal({ challenge, nonce })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: expect.stringMatching(/^proof: This challenge was already used\. Fetch a new one/) });
  });

  it("refuses a wrong nonce with 400, and the challenge can still be solved", async () => {
    const { challenge } = issueChallenge(10);
    expect(await refusal({ challenge, nonce: wrongNonce(challenge, 10) })).toEqual({
      status: 400,
      code: "INVALID_PARAMETER",
      message: "proof: The nonce does not solve the challenge: SHA-256 of the challenge followed by the nonce must start with 10 zero bits.",
    });
    await spendProof({ challenge, nonce: await solveChallenge(challenge, 10) });
  });

  it("refuses an expired challenge with 400", async () => {
    const issuedAt = Date.now() - CHALLENGE_TTL_MS - 1;
    const { challenge } = issueChallenge(8, issuedAt);
    const nonce = await solveChallenge(challenge, 8);
    expect(await refusal({ challenge, nonce })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: expect.stringMatching(/^proof: This challenge has expired\./) });
    // A moment before it expired, it was good.
    await spendProof({ challenge, nonce }, issuedAt + CHALLENGE_TTL_MS - 1);
  });

  it("refuses a challenge whose signature, difficulty or expiry was changed, with 400", async () => {
    const { challenge } = issueChallenge(8);
    const parts = challenge.split(".");
    const signature = parts[4]!;
    const tampered = [
      [...parts.slice(0, 4), (signature[0] === "A" ? "B" : "A") + signature.slice(1)],
      [parts[0], parts[1], "1", parts[3], signature],
      [parts[0], String(Number(parts[1]) + 3_600_000), parts[2], parts[3], signature],
    ].map((p) => p.join("."));
    for (const t of [...tampered, "not a challenge"]) {
      const nonce = await solveChallenge(t, 8);
      expect(await refusal({ challenge: t, nonce })).toEqual({ status: 400, code: "INVALID_PARAMETER", message: expect.stringMatching(/^proof: This challenge was not issued by this server\./) });
    }
  });

  it("refuses a malformed proof with 400 naming what is wrong", async () => {
    const { challenge } = issueChallenge(8);
    expect((await refusal({ challenge, nonce: "12a" })).message).toBe("proof: nonce must be a decimal number of at most 16 digits. Send { challenge, nonce }.");
    expect((await refusal("x")).status).toBe(400);
    expect((await refusal({ nonce: "1" })).message).toMatch(/^proof: challenge /);
  });

  it("gets harder as the surplus over the budget grows, up to 20 bits", () => {
    expect([0, 1, 99, 100, 299, 300, 1_000_000].map(proofDifficulty)).toEqual([18, 18, 18, 19, 19, 20, 20]);
  });

  it("remembers spent challenges in bounded memory: the forgotten ones, and any expiring before them, count as used", () => {
    const spent = new SpentChallenges(10);
    for (let i = 1; i <= 11; i++) spent.add(`s${i}`, 1000 + i, 0);
    // Over 10: pruned to 9, the two oldest forgotten.
    expect(spent.has("s1", 1001)).toBe(true);
    expect(spent.has("s2", 1002)).toBe(true);
    expect(spent.has("never spent, expiring as early", 1002)).toBe(true);
    expect(spent.has("never spent, expiring later", 1003)).toBe(false);
    expect(spent.has("s11", 1011)).toBe(true);
    // Full again later: the expired ones go, and no more is forgotten.
    spent.add("s12", 5000, 1100);
    spent.add("s13", 5001, 1100);
    expect(spent.has("s12", 5000)).toBe(true);
    expect(spent.has("s13", 5001)).toBe(true);
    expect(spent.has("never spent, expiring later", 1003)).toBe(false);
  });
});
