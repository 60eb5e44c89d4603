import { clientKey, networkKey } from "@/lib/client-ip";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { componentLogger } from "@/lib/log";
import { SharedBackoff, SharedBuckets } from "@/lib/limits/shared";
import { retryAfterSeconds, type BackoffPolicy, type BucketLimit } from "@/lib/rate-limit";
import { sharedLimits } from "@/lib/services";
import { issueChallenge, spendProof } from "./sign-up-challenge";

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

/**
 * Sign-ups per client address, from SIGN_UP_PER_ADDRESS_PER_HOUR: by default 30 at once, then one
 * every 2 minutes (30 an hour).
 */
export function signUpPerAddress(perHour: number): BucketLimit {
  return { burst: perHour, refillMs: 3_600_000 / perHour };
}

/**
 * Sign-ups per network (an IPv4 /24, an IPv6 /48, see networkKey): twice an address's, by default
 * 60 at once, then one a minute, so a party rotating through the addresses of its block gets no
 * more than twice one address.
 */
export function signUpPerNetwork(perHourPerAddress: number): BucketLimit {
  return signUpPerAddress(2 * perHourPerAddress);
}

/**
 * Sign-ups over all clients that need no proof of work, from SIGN_UP_FREE_PER_HOUR (600: 100 at
 * once, then one every 6 seconds); null when every sign-up needs one.
 */
export function signUpBudget(perHour: number): BucketLimit | null {
  return perHour === 0 ? null : { burst: Math.ceil(perHour / 6), refillMs: 3_600_000 / perHour };
}

/**
 * The proof-of-work difficulty (leading zero bits) by the surplus: how many sign-ups over the
 * budget the budget has not yet refilled. 2^bits hashes on average: Chromium on a busy 2-core
 * machine hashes about 430,000 times a second, so 18 bits take it about 0.6 s and 20 bits, the
 * most, about 2.4 s (a phone, a few times longer).
 */
export const PROOF_LEVELS: readonly { surplus: number; bits: number }[] = [
  { surplus: 0, bits: 18 },
  { surplus: 100, bits: 19 },
  { surplus: 300, bits: 20 },
];

interface Limiters {
  signInPair: SharedBackoff;
  signInAddress: SharedBackoff;
  signUpAddress: SharedBuckets;
  signUpNetwork: SharedBuckets;
  /** Null: every sign-up needs a proof of work. */
  signUpBudget: SharedBuckets | null;
  /** Sign-ups are over the budget (logged once per such streak). */
  signUpsOverBudget: boolean;
}

// Per process, whichever Next.js bundle asks (route handlers and server actions must count against
// the same limits), and held with the other web processes through the shared limits.
const limits = sharedLimits("auth-limits", (shared): Limiters => {
  const env = getEnv();
  const budget = signUpBudget(env.SIGN_UP_FREE_PER_HOUR);
  return {
    signInPair: new SharedBackoff("sign-in-pair", SIGN_IN_PAIR, shared),
    signInAddress: new SharedBackoff("sign-in-address", SIGN_IN_ADDRESS, shared),
    signUpAddress: new SharedBuckets("sign-up-address", signUpPerAddress(env.SIGN_UP_PER_ADDRESS_PER_HOUR), shared),
    signUpNetwork: new SharedBuckets("sign-up-network", signUpPerNetwork(env.SIGN_UP_PER_ADDRESS_PER_HOUR), shared),
    signUpBudget: budget && new SharedBuckets("sign-up-budget", budget, shared),
    signUpsOverBudget: false,
  };
});

const pairKey = (email: string, ip: string) => `${clientKey(ip)} ${email}`;

function tooMany(message: string, waitMs: number): AppError {
  const seconds = retryAfterSeconds(waitMs);
  return new AppError("TOO_MANY_REQUESTS", `${message} Try again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`, {
    "Retry-After": String(seconds),
  });
}

/** TOO_MANY_REQUESTS (with Retry-After) when this email and address must wait before another sign-in attempt. */
export async function signInRefusal(email: string, ip: string): Promise<AppError | null> {
  const l = limits();
  const wait = Math.max(...(await Promise.all([l.signInPair.waitMs(pairKey(email, ip)), l.signInAddress.waitMs(clientKey(ip))])));
  return wait > 0 ? tooMany("Too many failed sign-ins.", wait) : null;
}

export async function recordSignInFailure(email: string, ip: string): Promise<void> {
  const l = limits();
  await Promise.all([l.signInPair.recordFailure(pairKey(email, ip)), l.signInAddress.recordFailure(clientKey(ip))]);
}

export async function recordSignInSuccess(email: string, ip: string): Promise<void> {
  await limits().signInPair.forget(pairKey(email, ip));
}

/** Zero bits (no proof needed) while sign-ups are within the budget, else the level of PROOF_LEVELS for the surplus. */
export async function signUpDifficulty(): Promise<number> {
  const budget = limits().signUpBudget;
  let surplus = 0;
  if (budget) {
    const excess = await budget.excess("all");
    if (excess === null) return 0;
    surplus = excess;
  }
  return proofDifficulty(surplus);
}

export function proofDifficulty(surplus: number): number {
  let bits = 0;
  for (const level of PROOF_LEVELS) if (surplus >= level.surplus) bits = level.bits;
  return bits;
}

/**
 * GET /api/sign-up/challenge: the proof of work a sign-up needs now, if any (`challenge` null and
 * `difficulty` 0 when none is needed).
 */
export async function signUpChallenge(): Promise<{ challenge: string | null; difficulty: number; expiresAt: string | null }> {
  const difficulty = await signUpDifficulty();
  return difficulty === 0 ? { challenge: null, difficulty, expiresAt: null } : issueChallenge(difficulty);
}

/**
 * Counts one sign-up from this address, or throws and counts nothing: TOO_MANY_REQUESTS (with
 * Retry-After) past the address's or its network's limit; over the budget, 400 naming `proof`
 * unless `proof` solves a challenge from signUpChallenge() (which it spends). Nobody is refused
 * for what other networks do: they only make the proof harder.
 */
export async function takeSignUp(ip: string, proof?: unknown): Promise<void> {
  const l = limits();
  const address = clientKey(ip);
  const network = networkKey(ip);
  const addressWait = await l.signUpAddress.consume(address);
  if (addressWait > 0) throw tooMany("Too many sign-ups from your network.", addressWait);
  const networkWait = await l.signUpNetwork.consume(network);
  if (networkWait > 0) {
    await l.signUpAddress.refund(address);
    throw tooMany("Too many sign-ups from your network.", networkWait);
  }
  try {
    if ((await signUpDifficulty()) > 0) {
      if (!l.signUpsOverBudget) {
        componentLogger("auth").warn({ perHour: getEnv().SIGN_UP_FREE_PER_HOUR }, "sign-ups over all clients are over their budget; new sign-ups must come with a proof of work for now");
      }
      l.signUpsOverBudget = true;
      if (proof === undefined) {
        throw new AppError(
          "MISSING_REQUIRED_PARAMETER",
          "proof: Many sign-ups are arriving right now. Fetch a challenge from GET /api/sign-up/challenge, solve it, and send it as proof.",
        );
      }
      await spendProof(proof);
    } else {
      l.signUpsOverBudget = false;
    }
  } catch (e) {
    await Promise.all([l.signUpAddress.refund(address), l.signUpNetwork.refund(network)]);
    throw e;
  }
  await l.signUpBudget?.add("all");
}
