import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeUtf8, invalidUtf8Offset, parseJsonBody, storableExcerpt, unstorableText, unstorableTextIn } from "./text";

const bytes = (...b: number[]) => Uint8Array.from(b);
const utf8 = (s: string) => new TextEncoder().encode(s);
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return { ...(e as { toJSON(): object }).toJSON(), status: (e as { status: number }).status };
  }
  throw new Error("not refused");
};

describe("text PostgreSQL cannot store", () => {
  it("is NUL or an unpaired surrogate, and nothing else", () => {
    expect(unstorableText("a\u0000b")).toBe("must not contain the NUL character (U+0000)");
    expect(unstorableText("a\ud800")).toBe("must not contain an unpaired surrogate (\\ud800)");
    expect(unstorableText("\udfff a")).toBe("must not contain an unpaired surrogate (\\udfff)");
    expect(unstorableText("\ud83d\ude00 \u0001 \uFFFF é \t")).toBeUndefined();
  });

  it("becomes U+FFFD in an excerpt, pairs kept", () => {
    expect(storableExcerpt("\u0000a\ud800\ud83d\ude00\udfff\u0000")).toBe("\uFFFDa\uFFFD\ud83d\ude00\uFFFD\uFFFD");
    const plain = "nothing to replace";
    expect(storableExcerpt(plain)).toBe(plain);
  });

  it("is found anywhere in a parsed body, key or value, and named by its path", () => {
    expect(unstorableTextIn({ description: "a\u0000b" })).toBe("description: must not contain the NUL character (U+0000).");
    expect(unstorableTextIn({ notification: { webhookUrl: "http://a.test/\u0000x" } })).toBe("notification.webhookUrl: must not contain the NUL character (U+0000).");
    expect(unstorableTextIn({ condition: { eventData: { a: { b: ["x", "\ud800"] } } } })).toBe("condition.eventData.a.b[1]: must not contain an unpaired surrogate (\\ud800).");
    expect(unstorableTextIn({ condition: { eventData: { "x\u0000": "a" } } })).toBe('condition.eventData: the key "x\\u0000" must not contain the NUL character (U+0000).');
    expect(unstorableTextIn({ "\udc00": 1 })).toBe('The request body: the key "\\udc00" must not contain an unpaired surrogate (\\udc00).');
    expect(unstorableTextIn("\u0000")).toBe("The request body: must not contain the NUL character (U+0000).");
    // The first in the document's order.
    expect(unstorableTextIn({ a: ["ok", { b: "\u0000" }], c: "\ud800" })).toBe("a[1].b: must not contain the NUL character (U+0000).");
    expect(unstorableTextIn({ a: [1, null, true, { b: "fine" }], "😀": "é" })).toBeUndefined();
  });

  it("is found however deep a body nests", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableTextIn(deep)).toBe(`${"[0]".repeat(66)}[0…: must not contain the NUL character (U+0000).`);
  });
});

describe("strict UTF-8", () => {
  it("names the offset of the first byte that is not UTF-8", () => {
    expect(refusal(() => decodeUtf8(bytes(0x61, 0xff, 0x62)))).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "The request body is not valid UTF-8 (byte offset 1)." });
    // Overlong, surrogate, above U+10FFFF, cut short.
    for (const [b, at] of [
      [bytes(0x61, 0x62, 0xc0, 0x80), 2],
      [bytes(0xed, 0xa0, 0x80), 0],
      [bytes(0xf4, 0x90, 0x80, 0x80), 0],
      [bytes(0x61, 0xe2, 0x82), 1],
      [bytes(0xe0, 0x80, 0x80), 0],
    ] as const) {
      expect(invalidUtf8Offset(b)).toBe(at);
    }
    expect(decodeUtf8(utf8("\ufeffa\u0000€😀"))).toBe("a\u0000€😀");
  });

  it("agrees with the platform's decoder on any bytes", () => {
    const fatal = new TextDecoder("utf-8", { fatal: true });
    const near = fc.constantFrom(0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x9f, 0xa0, 0x8f, 0x90);
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 12 }), fc.array(near, { maxLength: 12 }).map((a) => Uint8Array.from(a)), fc.string({ unit: "binary" }).map(utf8)), (b) => {
        const at = invalidUtf8Offset(b);
        let valid = true;
        try {
          fatal.decode(b);
        } catch {
          valid = false;
        }
        expect(at === -1).toBe(valid);
        if (at !== -1) {
          // Everything before the offset decodes, and the sequence that starts there does not.
          expect(() => fatal.decode(b.subarray(0, at))).not.toThrow();
          expect(() => fatal.decode(b.subarray(at, at + 4))).toThrow();
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe("a JSON body to store", () => {
  it("is refused when it is not UTF-8, empty, not JSON or holds text PostgreSQL cannot store", () => {
    const bad = (b: Uint8Array) => refusal(() => parseJsonBody(b));
    expect(bad(Buffer.from('{"description":"a\xff"}', "latin1"))).toMatchObject({ status: 400, message: "The request body is not valid UTF-8 (byte offset 17)." });
    expect(bad(utf8(" \n"))).toMatchObject({ status: 400, message: "The request body is empty: send a JSON object with Content-Type: application/json." });
    expect(bad(utf8("{x"))).toMatchObject({ status: 400, message: expect.stringMatching(/^The request body is not valid JSON \(/) });
    expect(bad(utf8('{"description":"a\\u0000b"}'))).toEqual({ status: 400, code: "INVALID_PARAMETER", message: "description: must not contain the NUL character (U+0000)." });
    expect(bad(utf8('{"d":["\\uD800"]}'))).toMatchObject({ message: "d[0]: must not contain an unpaired surrogate (\\ud800)." });
  });

  it("is taken as it is otherwise: escaped backslashes, pairs, control characters", () => {
    const body = { a: "\\u0000 is six characters", b: "😀", c: "\u0001", "k\\ud800": 1 };
    expect(parseJsonBody(utf8(JSON.stringify(body)))).toEqual(body);
    expect(parseJsonBody(utf8('{"e":"\\ud83d\\ude00"}'))).toEqual({ e: "😀" });
  });
});
