import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { NETWORK_DEFINITIONS } from "@/lib/network-definitions";
import { clientFamilies } from "./client";
import { families, familyOf } from "./registry";

const root = path.resolve(import.meta.dirname, "../..");

describe("the families' table", () => {
  it("lists each family once, with its client descriptor in the client table in the same order", () => {
    const ids = families().map((f) => f.id);
    expect(ids).toEqual(["consensus", "evm", "move"]);
    expect(families().every((f) => f.client.id === f.id)).toBe(true);
    expect(clientFamilies()).toEqual(families().map((f) => f.client));
  });

  it("knows the family of every network of the catalog", () => {
    for (const d of NETWORK_DEFINITIONS) expect(familyOf(d)?.id, d.slug).toBe(d.family);
  });
});

describe("the client side", () => {
  it("bundles for the browser without server code: no node: module, PostgreSQL or Prisma", async () => {
    // A browser bundle cannot resolve node: modules; a server package would show among the inputs.
    const result = await build({
      entryPoints: [path.join(root, "lib/chains/client.ts")],
      bundle: true,
      write: false,
      metafile: true,
      platform: "browser",
      format: "esm",
      tsconfig: path.join(root, "tsconfig.json"),
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((i) => /(^|\/)node_modules\/(pg|@prisma|pino|undici|viem)\//.test(i) || i.startsWith("node:"))).toEqual([]);
    expect(inputs.filter((i) => /^lib\/(db|gateway|upstream|workers)\//.test(i) || /(^|\/)(store|endpoint|family)\.ts$/.test(i))).toEqual([]);
  });
});
