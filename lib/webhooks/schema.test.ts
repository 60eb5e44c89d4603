import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { normalizeMoveAddress, normalizeMoveFunction, normalizeMoveStructType } from "./move-names";

describe("Move names", () => {
  it("writes addresses as AIP-40 does: special addresses short, the rest 64 hex digits, lower case", () => {
    expect(normalizeMoveAddress("0x1")).toBe("0x1");
    expect(normalizeMoveAddress("0x0000000000000000000000000000000000000000000000000000000000000001")).toBe("0x1");
    expect(normalizeMoveAddress("0x0")).toBe("0x0");
    expect(normalizeMoveAddress("0xF")).toBe("0xf");
    expect(normalizeMoveAddress("0x10")).toBe("0x" + "0".repeat(62) + "10");
    expect(normalizeMoveAddress("0xABC")).toBe("0x" + "0".repeat(61) + "abc");
    for (const bad of ["0x", "1", "0xg", "0x" + "1".repeat(65), " 0x1"]) expect(normalizeMoveAddress(bad), bad).toBeNull();
  });

  it("checks entry functions and event types, type arguments included", () => {
    expect(normalizeMoveFunction("0x1::aptos_account::transfer")).toBe("0x1::aptos_account::transfer");
    expect(normalizeMoveFunction("0xCAFE::Pool::swap_exact")).toBe(`0x${"0".repeat(60)}cafe::Pool::swap_exact`);
    for (const bad of ["0x1::coin", "0x1::coin::transfer::x", "coin::transfer", "0x1::1coin::transfer", "0x1::coin::transfer<u8>"]) expect(normalizeMoveFunction(bad), bad).toBeNull();

    expect(normalizeMoveStructType("0x1::coin::CoinDeposit")).toBe("0x1::coin::CoinDeposit");
    expect(normalizeMoveStructType("0x1::coin::CoinStore< 0x1::aptos_coin::AptosCoin >")).toBe("0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>");
    expect(normalizeMoveStructType("0x1::pool::Pair<u64,vector<vector<u8>>, 0xAB::m::T<address>, 0xA::m::U>")).toBe(`0x1::pool::Pair<u64, vector<vector<u8>>, 0x${"0".repeat(62)}ab::m::T<address>, 0xa::m::U>`);
    for (const bad of ["u64", "vector<u8>", "0x1::coin::CoinStore<", "0x1::coin::CoinStore<>", "0x1::coin::CoinStore<u8>>", "0x1::coin::X<vector<u8, u8>>", "0x1::m::T" + "<vector".repeat(12) + "<u8" + ">".repeat(13)]) {
      expect(normalizeMoveStructType(bad), bad).toBeNull();
    }
  });
});

describe("the shared schema", () => {
  it("bundles for the browser: no server-only imports", async () => {
    const result = await build({
      entryPoints: [path.join(import.meta.dirname, "schema.ts"), path.join(import.meta.dirname, "catalog.ts")],
      bundle: true,
      write: false,
      platform: "browser",
      outdir: "out",
      alias: { "@": path.resolve(import.meta.dirname, "../..") },
      logLevel: "silent",
    });
    expect(result.errors).toEqual([]);
    expect(result.outputFiles.map((f) => f.text).join("")).not.toMatch(/node:|process\.env/);
  });
});
