import { createHmac, randomBytes } from "node:crypto";
import { z } from "zod";
import { constantTimeEqual, deriveKey } from "@/lib/crypto";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { RateLimiterRes } from "rate-limiter-flexible";
import { sharedLimits } from "@/lib/services";
import { FIELDS, parseInput, type Wording } from "@/lib/validation";
import { solves } from "./proof-of-work";

/**
 * Proof-of-work challenges for sign-ups under pressure. A challenge is its own record: expiry,
 * difficulty and a random salt, signed with a key derived from APP_SECRET, so issuing one stores
 * nothing. A solved challenge is remembered as spent until it expires.
 */

/** A challenge is good for this long after it is issued: enough to solve it and send the form. */
export const CHALLENGE_TTL_MS = 2 * 60_000;

/** Spent challenges remembered at most (about 100 bytes each). */
const MAX_SPENT = 100_000;

export interface IssuedChallenge {
  challenge: string;
  difficulty: number;
  expiresAt: string;
}

const FORMAT = /^v1\.(\d{13})\.(\d{1,2})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

const mac = (payload: string) => createHmac("sha256", deriveKey(getEnv().APP_SECRET, "sign-up-challenge")).update(payload).digest("base64url");

export function issueChallenge(difficulty: number, now = Date.now()): IssuedChallenge {
  const expires = now + CHALLENGE_TTL_MS;
  const payload = `v1.${expires}.${difficulty}.${randomBytes(16).toString("base64url")}`;
  return { challenge: `${payload}.${mac(payload)}`, difficulty, expiresAt: new Date(expires).toISOString() };
}

/**
 * Challenges already used, until they expire, as one process remembers them (the web processes
 * share them through Redis: this is where each keeps them while Redis is away). Full, it forgets the
 * oldest and from then on refuses every challenge expiring no later than those it forgot, so
 * memory stays bounded without letting a forgotten challenge be used twice.
 */
export class SpentChallenges {
  private readonly expiry = new Map<string, number>();
  private floor = 0;

  constructor(private readonly max = MAX_SPENT) {}

  has(salt: string, expires: number): boolean {
    return expires <= this.floor || this.expiry.has(salt);
  }

  add(salt: string, expires: number, now: number): void {
    this.expiry.set(salt, expires);
    if (this.expiry.size <= this.max) return;
    for (const [s, e] of this.expiry) if (e <= now) this.expiry.delete(s);
    for (const [s, e] of this.expiry) {
      if (this.expiry.size <= this.max * 0.9) break;
      this.floor = Math.max(this.floor, e);
      this.expiry.delete(s);
    }
  }
}

// Per process, whichever bundle asks (the route handler and the form's server action are bundled
// apart and must share it); in Redis for all web processes, one counter of 1 per challenge's life.
const spent = sharedLimits("spent-challenges", (shared) => ({ shared, local: new SpentChallenges() }));
const SPENT_S = Math.ceil(CHALLENGE_TTL_MS / 1000);

/** Marks the challenge spent: false when it already was, by any process. */
function markSpent(salt: string, expires: number, now: number): Promise<boolean> {
  const { shared, local } = spent();
  return shared.attempt(
    shared.counter("spent-challenge", 1, SPENT_S),
    (counter) =>
      counter.consume(salt, 1).then(
        () => true,
        (reason: unknown) => {
          if (reason instanceof RateLimiterRes) return false;
          throw reason;
        },
      ),
    () => {
      if (local.has(salt, expires)) return false;
      local.add(salt, expires, now);
      return true;
    },
  );
}

/** What a sign-up sends with a proof: the challenge as issued and the nonce that solves it. */
export const proofSchema = z.object({
  challenge: z.string().max(200),
  nonce: z.string().regex(/^\d{1,16}$/, "must be a decimal number of at most 16 digits"),
});

/** `proof: nonce must be …. Send { challenge, nonce }.`; an absent part is MISSING_REQUIRED_PARAMETER, as an absent proof is. */
const PROOF: Wording = { ...FIELDS, problem: (path, message) => `proof: ${path ? `${path} ` : ""}${message}. Send { challenge, nonce }.` };

const FETCH_NEW = "Fetch a new one from GET /api/sign-up/challenge and solve it.";

function invalid(message: string): AppError {
  return new AppError("INVALID_PARAMETER", `proof: ${message}`);
}

/** Checks a sign-up's proof and marks its challenge spent; throws 400 INVALID_PARAMETER naming `proof` and what is wrong. */
export async function spendProof(input: unknown, now = Date.now()): Promise<void> {
  const { challenge, nonce } = parseInput(proofSchema, input, PROOF);
  const m = FORMAT.exec(challenge);
  const payload = challenge.slice(0, challenge.lastIndexOf("."));
  if (!m?.[1] || !m[2] || !m[3] || !m[4] || !constantTimeEqual(m[4], mac(payload))) {
    throw invalid(`This challenge was not issued by this server. ${FETCH_NEW}`);
  }
  const expires = Number(m[1]);
  const difficulty = Number(m[2]);
  if (expires <= now) throw invalid(`This challenge has expired. ${FETCH_NEW}`);
  if (!solves(challenge, nonce, difficulty)) {
    throw invalid(`The nonce does not solve the challenge: SHA-256 of the challenge followed by the nonce must start with ${difficulty} zero bits.`);
  }
  if (!(await markSpent(m[3], expires, now))) throw invalid(`This challenge was already used. ${FETCH_NEW}`);
}
