import { describe, expect, it } from "vitest";
import { inFamily } from "@/lib/chains/client";
import { buildCatalog, recordNames } from "./networks";

describe("network catalog", () => {
  const catalog = buildCatalog({});

  it("has the 17 networks of the design: 2 consensus, 13 EVM, 2 Move", () => {
    expect(catalog).toHaveLength(17);
    expect(catalog.filter(inFamily("consensus")).map((n) => n.slug)).toEqual(["babylon-mainnet", "babylon-testnet"]);
    expect(catalog.filter(inFamily("evm"))).toHaveLength(13);
    expect(catalog.filter(inFamily("move")).map((n) => n.slug)).toEqual(["aptos-mainnet", "aptos-testnet"]);
    expect(new Set(catalog.map((n) => n.slug)).size).toBe(17);
  });

  it("knows the real EVM chain ids and never uses one for a devnet", () => {
    const ids = Object.fromEntries(catalog.filter(inFamily("evm")).map((n) => [n.slug, n.chainId]));
    expect(ids).toEqual({
      "ethereum-mainnet": 1, "ethereum-sepolia": 11155111, "ethereum-holesky": 17000,
      "arbitrum-mainnet": 42161, "arbitrum-sepolia": 421614, "base-mainnet": 8453, "base-sepolia": 84532,
      "optimism-mainnet": 10, "optimism-sepolia": 11155420, "polygon-mainnet": 137, "polygon-amoy": 80002,
      "kaia-mainnet": 8217, "kaia-kairos": 1001,
    });
    const real = new Set(catalog.map((n) => String(n.chainId)));
    const devnet = catalog.map((n) => String(n.devnetChainId));
    expect(devnet.filter((id) => real.has(id))).toEqual([]);
    expect(new Set(devnet).size).toBe(devnet.length);
    expect(catalog.every((n) => n.source.kind === "devnet" && n.activeChainId === n.devnetChainId)).toBe(true);
  });

  it("takes upstreams from UPSTREAM_<PROTOCOL>_<NETWORK>, comma-separated, and then answers the real chain id", () => {
    const c = buildCatalog({ UPSTREAM_BASE_SEPOLIA: " https://a.example/rpc , https://b.example/rpc ,", UPSTREAM_KAIA_MAINNET: "" });
    const base = c.find((n) => n.slug === "base-sepolia")!;
    expect(base.source).toEqual({ kind: "upstream", urls: ["https://a.example/rpc", "https://b.example/rpc"] });
    expect(base.activeChainId).toBe(84532);
    expect(c.find((n) => n.slug === "kaia-mainnet")!.source.kind).toBe("devnet");
    expect(() => buildCatalog({ UPSTREAM_ETHEREUM_MAINNET: "ftp://nope" })).toThrow(/UPSTREAM_ETHEREUM_MAINNET/);
  });

  it("spells webhook records upper case for EVM and lower case for Aptos, and lists supported events", () => {
    const eth = catalog.find((n) => n.slug === "ethereum-mainnet")!;
    const aptos = catalog.find((n) => n.slug === "aptos-testnet")!;
    expect(recordNames(eth)).toEqual({ protocol: "ETHEREUM", network: "MAINNET" });
    expect(recordNames(aptos)).toEqual({ protocol: "aptos", network: "testnet" });
    expect(eth.eventTypes).toEqual(["LOG", "BLOCK_PERIOD"]);
    expect(aptos.eventTypes).toEqual(["TRANSACTION", "BLOCK_PERIOD"]);
  });
});
