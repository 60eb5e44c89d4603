import { base58 } from "@scure/base";
import { describe, expect, it } from "vitest";
import { decrypt, deriveKey, encrypt } from "@/lib/crypto";
import { newId } from "@/lib/ids";
import { maskSecrets } from "@/lib/log";
import { maskExcerpt } from "@/lib/usage/request-log";
import { generateKeyMaterial, hashKey, looksLikeKey } from "./secret";

process.env.APP_SECRET ??= "test-secret-that-is-at-least-32-characters";

describe("API key material", () => {
  it("has the bg_ prefix, 192 random bits in base58, and a SHA-256 hash", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = generateKeyMaterial();
      expect(k.secret).toMatch(/^bg_[1-9A-HJ-NP-Za-km-z]{30,36}$/);
      expect(looksLikeKey(k.secret)).toBe(true);
      expect(k.hash).toBe(hashKey(k.secret));
      expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(k.start).toBe(k.secret.slice(0, 7));
      seen.add(k.secret);
    }
    expect(seen.size).toBe(200);
  });

  it("refuses junk before any lookup", () => {
    for (const junk of ["", "bg_", "bg_' OR 1=1 --", "bg_" + "a".repeat(10_000), "bg_0OIl" + "1".repeat(30), "bg_abc\u0000def" + "1".repeat(30)]) {
      expect(looksLikeKey(junk)).toBe(false);
    }
  });

  it("is hidden in text by one shape, whole or cut short, in log lines and request-log excerpts alike", () => {
    const key = generateKeyMaterial().secret;
    for (const text of [`GET /node/eth/${key}/x`, `key=${key.slice(0, 7)}`, `{"params":["${key.slice(0, 20)}`]) {
      expect(maskSecrets(text), text).not.toMatch(/bg_[1-9A-HJ-NP-Za-km-z]/);
      expect(maskExcerpt(text), text).not.toMatch(/bg_[1-9A-HJ-NP-Za-km-z]/);
    }
    expect(maskSecrets(`closing ${key.slice(0, 7)}`)).toBe("closing bg_[redacted]");
    // The prefix and three characters say too little to hide anything.
    expect(maskSecrets("bg_abc")).toBe("bg_abc");
    expect(maskExcerpt("bg_abc")).toBe("bg_abc");
  });

  it("encrypts with AES-256-GCM: round trip, fresh IV each time, tampering detected, wrong key refused", () => {
    const key = deriveKey("s".repeat(32), "api-key-reveal");
    const a = encrypt(key, "bg_secret");
    expect(a).not.toBe(encrypt(key, "bg_secret"));
    expect(decrypt(key, a)).toBe("bg_secret");
    const parts = a.split(".");
    const flipped = Buffer.from(parts[3]!, "base64url");
    flipped[0] = flipped[0]! ^ 1;
    expect(() => decrypt(key, [...parts.slice(0, 3), flipped.toString("base64url")].join("."))).toThrow();
    expect(() => decrypt(deriveKey("t".repeat(32), "api-key-reveal"), a)).toThrow();
  });

  it("makes prefixed ids that sort by creation time", async () => {
    const a = newId("prj");
    await new Promise((r) => setTimeout(r, 5));
    const b = newId("prj");
    expect(a).toMatch(/^prj_[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(a < b).toBe(true);
    expect(base58.encode(Uint8Array.from([0, 0, 1]))).toBe("112");
  });
});
