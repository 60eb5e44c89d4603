/**
 * Signing keys of webhook subscriptions: `whsec_` + base64 of 32 random bytes, the secret format of
 * the Standard Webhooks specification (https://www.standardwebhooks.com), so receivers verify with
 * its libraries as they are. Stored encrypted (AES-256-GCM under a key derived from APP_SECRET for
 * this purpose only); the engine decrypts it to sign, the API to show it to the project.
 */
import { randomBytes } from "node:crypto";
import { decrypt, deriveKey, encrypt } from "@/lib/crypto";
import { getEnv } from "@/lib/env";

export const SIGNING_KEY_PREFIX = "whsec_";
const SIGNING_KEY_BYTES = 32;

function encryptionKey(): Buffer {
  return deriveKey(getEnv().APP_SECRET, "webhook-signing");
}

/** A new signing key and its ciphertext for the database. */
export function generateSigningKey(): { signingKey: string; ciphertext: string } {
  const signingKey = SIGNING_KEY_PREFIX + randomBytes(SIGNING_KEY_BYTES).toString("base64");
  return { signingKey, ciphertext: encrypt(encryptionKey(), signingKey) };
}

/** The `whsec_…` key from its stored ciphertext (WebhookSubscription.signingKey). */
export function decryptSigningKey(ciphertext: string): string {
  return decrypt(encryptionKey(), ciphertext);
}
