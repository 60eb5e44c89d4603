import { base58 } from "@scure/base";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newId } from "./ids";

/** Bitcoin Core's base58 vectors (src/test/data/base58_encode_decode.json), hex → base58. */
const BITCOIN_VECTORS: [string, string][] = [
  ["", ""],
  ["61", "2g"],
  ["626262", "a3gV"],
  ["636363", "aPEr"],
  ["73696d706c792061206c6f6e6720737472696e67", "2cFupjhnEsSn59qHXstmK2ffpLv2"],
  ["00eb15231dfceb60925886b67d065299925915aeb172c06647", "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"],
  ["516b6fcd0f", "ABnLTmg"],
  ["bf4f89001e670274dd", "3SEo3LWLoPntC"],
  ["572e4794", "3EFU7m"],
  ["ecac89cad93923c02321", "EJDM8drfXA6uyA"],
  ["10c8511e", "Rt5zm"],
  ["00000000000000000000", "1111111111"],
  ["000111d38e5fc9071ffcd20b4a763cc9ae4f252bb4e48fd66a835e252ada93ff480d6dd43dc62a641155a5", "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"],
];

const compareBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("base58 (Bitcoin alphabet), as API keys and ids use it", () => {
  it.each(BITCOIN_VECTORS)("encodes 0x%s as %j", (hex, text) => {
    expect(base58.encode(Buffer.from(hex, "hex"))).toBe(text);
  });

  it("keeps each leading zero byte as a 1", () => {
    expect(base58.encode(Uint8Array.from([0, 0, 1]))).toBe("112");
    expect(base58.encode(new Uint8Array(16))).toBe("1".repeat(16));
  });

  it("orders 16-byte ids padded to 22 characters as it orders their bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ minLength: 16, maxLength: 16 }), (a, b) => {
        const ta = base58.encode(a).padStart(22, "1");
        const tb = base58.encode(b).padStart(22, "1");
        expect(ta).toHaveLength(22);
        expect(compareText(ta, tb)).toBe(compareBytes(a, b));
      }),
    );
  });

  it("makes ids whose first 6 bytes are the creation time in milliseconds", () => {
    const before = Date.now();
    const id = newId("usr");
    const after = Date.now();
    expect(id).toMatch(/^usr_[1-9A-HJ-NP-Za-km-z]{22}$/);
    // Padding only adds leading 1s, which decode to leading zero bytes: the id is the last 16.
    const decoded = base58.decode(id.slice(4));
    const bytes = decoded.subarray(decoded.length - 16);
    const ms = bytes.subarray(0, 6).reduce((n, b) => n * 256 + b, 0);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });
});
