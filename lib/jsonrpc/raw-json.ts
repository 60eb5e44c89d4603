import { randomBytes } from "node:crypto";

/**
 * JSON text written into a response as it is: a document stored as JSON (a block body) goes out
 * without being parsed and serialised again, which for a page of 100 blocks (~800 kB) is most of
 * the server's work.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

// Stands for a RawJson while the rest is serialised. Random per process: no string of a response
// (all of them come from the index or the caller) can contain it by chance or by design.
const MARK = `raw-${randomBytes(12).toString("hex")}-`;
const MARKED = new RegExp(`"${MARK}(\\d+)"`, "g");

/** JSON.stringify, writing each RawJson inside `value` as its text. */
export function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof RawJson)) return v;
    raws.push(v.text);
    return `${MARK}${raws.length - 1}`;
  });
  return raws.length === 0 ? text : text.replace(MARKED, (_m, i: string) => raws[Number(i)]!);
}
