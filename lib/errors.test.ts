import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "./errors";

/** The rows of README.md's "Errors" table as code → status. */
function documentedCodes(): Map<string, number> {
  const readme = readFileSync(path.join(__dirname, "..", "README.md"), "utf8");
  const section = readme.split(/^### Errors$/m)[1]?.split(/^#/m)[0] ?? "";
  const codes = new Map<string, number>();
  for (const row of section.matchAll(/^\| (\d{3}) \| ([^|]+) \|/gm)) {
    for (const [, code] of row[2]!.matchAll(/`([A-Z_]+)`/g)) codes.set(code!, Number(row[1]));
  }
  return codes;
}

describe("README's error table", () => {
  it("lists every code lib/errors.ts defines, with its status, and no other", () => {
    expect(Object.fromEntries(documentedCodes())).toEqual(ERROR_STATUS);
  });
});
