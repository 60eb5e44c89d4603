import { randomBytes } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Base58 (Bitcoin alphabet) of arbitrary bytes; leading zero bytes keep their width. */
export function base58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = "1" + out;
  }
  return out;
}

export type IdPrefix = "usr" | "prj" | "key";

/**
 * Prefixed, time-sortable id: 6 bytes of milliseconds then 10 random bytes, base58,
 * left-padded so that lexical order follows creation order.
 */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  return `${prefix}_${base58(bytes).padStart(22, "1")}`;
}
