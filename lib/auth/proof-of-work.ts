import { sha256 } from "@noble/hashes/sha2";

/**
 * The sign-up proof of work, shared by the browser (which solves) and the server (which checks):
 * a nonce solves a challenge when SHA-256 of the challenge's text followed by the nonce's (a
 * decimal number) starts with `difficulty` zero bits, which takes 2^difficulty hashes on average.
 */

const encoder = new TextEncoder();

/** True when the hash starts with at least `bits` zero bits. */
export function hasLeadingZeroBits(hash: Uint8Array, bits: number): boolean {
  const whole = Math.floor(bits / 8);
  for (let i = 0; i < whole; i++) if (hash[i] !== 0) return false;
  const rest = bits % 8;
  return rest === 0 || ((hash[whole] ?? 0xff) >> (8 - rest)) === 0;
}

export function solves(challenge: string, nonce: string, difficulty: number): boolean {
  return hasLeadingZeroBits(sha256(encoder.encode(challenge + nonce)), difficulty);
}

/** How long the solver hashes before it lets the page handle input and paint. */
const SLICE_MS = 25;

/**
 * The next macrotask. A message, unlike setTimeout, is not slowed down to once a second when the
 * tab is in the background, so switching tabs does not stall the sign-up.
 */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

/** Finds a nonce that solves the challenge, in slices that keep the page responsive; rejects when `signal` aborts. */
export async function solveChallenge(challenge: string, difficulty: number, signal?: AbortSignal): Promise<string> {
  // The challenge's bytes are hashed once; each try copies that state into one reused hash and
  // adds the nonce's digits, with no allocation per try (four times as many tries a second).
  const prefix = sha256.create().update(encoder.encode(challenge));
  const attempt = sha256.create();
  const digits = new Uint8Array(16);
  const hash = new Uint8Array(32);
  for (let nonce = 0; ; ) {
    const until = performance.now() + SLICE_MS;
    do {
      const text = String(nonce);
      for (let i = 0; i < text.length; i++) digits[i] = text.charCodeAt(i);
      prefix._cloneInto(attempt).update(digits.subarray(0, text.length)).digestInto(hash);
      if (hasLeadingZeroBits(hash, difficulty)) return text;
      nonce++;
    } while (nonce % 1024 !== 0 || performance.now() < until);
    await nextTask();
    signal?.throwIfAborted();
  }
}
