import { randomBytes } from "node:crypto";
import { base58 } from "@scure/base";

export type IdPrefix = "usr" | "prj" | "key" | "wh" | "msg" | "att" | "inb" | "req" | "pch";

/**
 * Prefixed, time-sortable id: 6 bytes of milliseconds then 10 random bytes, base58,
 * left-padded so that lexical order follows creation order.
 */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  return `${prefix}_${base58.encode(bytes).padStart(22, "1")}`;
}
