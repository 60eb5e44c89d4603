import { randomBytes } from "node:crypto";
import { base58 } from "@scure/base";

export type IdPrefix = "usr" | "ses" | "prj" | "key" | "wh" | "msg" | "att" | "inb" | "req" | "pch";

/**
 * Prefixed, time-sortable id: 6 bytes of milliseconds then 10 random bytes, base58,
 * left-padded so that lexical order follows creation order.
 */
export function newId(prefix: IdPrefix): string {
  const bytes = new Uint8Array(16);
  bytes.set(randomChunk(10), 6);
  // Milliseconds fit in 48 bits (until the year 10889), and in a double's exact range.
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  return `${prefix}_${base58.encode(bytes).padStart(22, "1")}`;
}

/** Random bytes are drawn from the system 4 KiB at a time, not one call per id. */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let used = 0;

function randomChunk(n: number): Uint8Array {
  if (used + n > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    used = 0;
  }
  const chunk = pool.subarray(used, used + n);
  used += n;
  return chunk;
}
