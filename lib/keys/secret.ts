import { randomBytes } from "node:crypto";
import { base58 } from "@scure/base";
import { decrypt, deriveKey, encrypt, sha256Hex } from "@/lib/crypto";
import { getEnv } from "@/lib/env";

export const KEY_PREFIX = "bg_";
/** The characters of a key after its prefix: base58 (no 0, O, I or l). */
const KEY_CHARS = "[1-9A-HJ-NP-Za-km-z]";
/** bg_ + base58 of 24 random bytes (192 bits): 32 or 33 characters, with room either side. */
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}${KEY_CHARS}{30,36}$`);

/**
 * A key anywhere in a text, or what is left of one cut short (an excerpt, a clipped message): the
 * prefix and 4 characters of the alphabet are enough to hide, wherever the match starts. What log
 * redaction (lib/log.ts) and request-log masking (lib/usage/request-log) replace.
 */
export const KEY_IN_TEXT = new RegExp(`${KEY_PREFIX}${KEY_CHARS}{4,}`, "g");

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
