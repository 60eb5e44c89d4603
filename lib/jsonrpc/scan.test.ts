import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { containerEnd, idStart, idStarts, nestedDeeperThan, numberEnd, objectItems, objectSpan } from "./scan";

/** The reference: how deep arrays and objects nest in a parsed value. */
function depth(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depth));
  if (typeof v === "object" && v !== null) return 1 + Math.max(0, ...Object.values(v).map(depth));
  return 0;
}

describe("nestedDeeperThan", () => {
  it("agrees with the parsed value's depth, compact or indented", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 7 }), fc.boolean(), (value, limit, indent) => {
        const text = JSON.stringify(value, null, indent ? 2 : undefined);
        expect(nestedDeeperThan(text, limit)).toBe(depth(value) > limit);
      }),
      { numRuns: 500 },
    );
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ a: "[[[[{{{{", b: ['\\"[[[[', "\\\\", "\"{{{{"] });
    expect(nestedDeeperThan(text, 2)).toBe(false);
    expect(nestedDeeperThan(text, 1)).toBe(true);
  });

  it("stops at the first level over the limit, whatever follows", () => {
    expect(nestedDeeperThan("[".repeat(1_000_000), 64)).toBe(true);
    expect(nestedDeeperThan(`${"[".repeat(64)}${"]".repeat(64)}`, 64)).toBe(false);
    expect(nestedDeeperThan(`${"[".repeat(65)}${"]".repeat(65)}`, 64)).toBe(true);
    expect(nestedDeeperThan(`{"a":${"{\"a\":".repeat(10_000)}1${"}".repeat(10_001)}`, 64)).toBe(true);
  });
});

describe("idStart and idStarts", () => {
  const at = (text: string, start: number) => (start === -1 ? undefined : text.slice(start, numberEnd(text, start)));

  it("find the top-level id, not one in params, in a string or in a nested object", () => {
    const text = '{"params":[{"id":1},{"x":{"id":2}}],"note":"\\"id\\":3, {\\"id\\":4}","jsonrpc":"2.0", "id" :\t-12.50e+3 ,"method":"m"}';
    expect(at(text, idStart(text))).toBe("-12.50e+3");
    expect(idStart('{"jsonrpc":"2.0","method":"m","params":{"id":5}}')).toBe(-1);
    expect(idStart('{"id":"7","method":"m"}')).toBe(-1); // a string needs no raw text
    expect(idStart('{"id":null}')).toBe(-1);
    expect(idStart('{"ids":1,"i":2,"d":3}')).toBe(-1);
  });

  it("find each batch item's id by position, -1 where there is none", () => {
    const text = '[{"id":1.0},{"method":"x","params":[{"id":9}]},7,[{"id":8}],{"params":{"id":6},"id":1e400},{"id":"s"},{"a":"],{\\"id\\":5"}]';
    expect([...idStarts(text, 7)].map((s) => at(text, s))).toEqual(["1.0", undefined, undefined, undefined, "1e400", undefined, undefined]);
  });

  it("take the first of repeated id members", () => {
    expect(at('{"id":1,"id":2}', idStart('{"id":1,"id":2}'))).toBe("1");
  });
});

describe("objectItems, objectSpan and containerEnd", () => {
  const objects = fc.array(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), { maxLength: 8 });

  it("cut an array of objects into the objects' texts, compact or indented", () => {
    fc.assert(
      fc.property(objects, fc.boolean(), (items, indent) => {
        const text = JSON.stringify(items, null, indent ? 2 : undefined);
        const spans = objectItems(text);
        expect(spans).toBeDefined();
        expect(spans!.map(([a, b]) => JSON.parse(text.slice(a, b)) as unknown)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it("find one object, with whitespace around it", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), (value) => {
        const text = ` \n${JSON.stringify(value)}\n`;
        const span = objectSpan(text);
        expect(span).toBeDefined();
        expect(JSON.parse(text.slice(span![0], span![1]))).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("ignore brackets in strings, escaped quotes and backslashes included", () => {
    const items = [{ a: '"]}', b: "\\" }, { c: ["\\\"[", "{"] }];
    const text = JSON.stringify(items);
    expect(objectItems(text)!.map(([a, b]) => text.slice(a, b))).toEqual(items.map((i) => JSON.stringify(i)));
    expect(containerEnd(text, 0)).toBe(text.length);
  });

  it("refuse what does not close, is not an array of objects, or goes on after the end", () => {
    for (const text of ['[{"a":1}', '[{"a":"1}]', "[1,2]", '[{"a":1},]', '[{"a":1}] x', '{"a":1}', "", "[", '[{"a":1}{"b":2}]', "null"]) {
      expect(objectItems(text), text).toBeUndefined();
    }
    expect(objectItems(" [ ] ")).toEqual([]);
    for (const text of ['{"a":1', '{"a":1}}', '{"a":1} {"b":2}', '[{"a":1}]', '"x"', '{"a":"}']) {
      expect(objectSpan(text), text).toBeUndefined();
    }
    expect(containerEnd('{"a":[1,2}', 0)).toBe(-1);
  });
});
