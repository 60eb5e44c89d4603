import { describe, expect, it } from "vitest";
import { RawJson, stringifyWithRaw } from "./raw-json";

describe("stringifyWithRaw", () => {
  it("is JSON.stringify when there is nothing raw", () => {
    const value = { a: [1, "two", null, { b: true }], c: "raw-00-0", d: undefined };
    expect(stringifyWithRaw(value)).toBe(JSON.stringify(value));
  });

  it("writes each raw text where it stands, in objects, arrays and batches", () => {
    const block = { block_id: { hash: "AB" }, block: { data: ["eA=="], header: { height: "5" } } };
    const text = JSON.stringify(block);
    const out = stringifyWithRaw([
      { jsonrpc: "2.0", id: 1, result: { blocks: [new RawJson(text), new RawJson("[]"), new RawJson('"s"')], total_count: 3 } },
      { jsonrpc: "2.0", id: 2, result: new RawJson("null") },
    ]);
    expect(out).toBe(`[{"jsonrpc":"2.0","id":1,"result":{"blocks":[${text},[],"s"],"total_count":3}},{"jsonrpc":"2.0","id":2,"result":null}]`);
    expect(JSON.parse(out)[0].result.blocks[0]).toEqual(block);
  });

  it("leaves strings that merely look like its marks alone", () => {
    const out = stringifyWithRaw({ x: new RawJson("1"), y: "raw-0123456789abcdef01234567-0", z: '"raw-0-0"' });
    expect(JSON.parse(out)).toEqual({ x: 1, y: "raw-0123456789abcdef01234567-0", z: '"raw-0-0"' });
  });
});
