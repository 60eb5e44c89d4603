import { randomBytes } from "node:crypto";
import { base58 } from "@scure/base";
import { decrypt, deriveKey, encrypt, sha256Hex } from "@/lib/crypto";
import { getEnv } from "@/lib/env";

export const KEY_PREFIX = "bg_";
/** bg_ + base58 of 24 random bytes (192 bits). */
const KEY_PATTERN = /^bg_[1-9A-HJ-NP-Za-km-z]{30,36}$/;

export interface KeyMaterial {
  secret: string;
  hash: string;
  ciphertext: string;
  start: string;
}

/** A cheap shape check that rejects junk (SQL, control characters, huge values) before any lookup. */
export function looksLikeKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

export function hashKey(secret: string): string {
  return sha256Hex(secret);
}

function encryptionKey(): Buffer {
  return deriveKey(getEnv().APP_SECRET, "api-key-reveal");
}

export function generateKeyMaterial(): KeyMaterial {
  const secret = KEY_PREFIX + base58.encode(randomBytes(24));
  return {
    secret,
    hash: hashKey(secret),
    ciphertext: encrypt(encryptionKey(), secret),
    start: secret.slice(0, 7),
  };
}

export function decryptKey(ciphertext: string): string {
  return decrypt(encryptionKey(), ciphertext);
}

export function maskKey(start: string): string {
  return `${start}${"•".repeat(12)}`;
}
