/**
 * What the service knows about each network, before configuration: ids, names, how records spell
 * them, and the variable that points a network at an upstream node. Plain data with no imports, so
 * the configuration (lib/env.ts) can validate UPSTREAM_* and the catalog (lib/networks.ts) can
 * build on it without depending on each other in a cycle.
 */

/** A chain family's id, as lib/chains/registry.ts lists the families: consensus, evm, move. */
export type Family = string;
export type EventType = "TRANSACTION" | "LOG" | "BLOCK_PERIOD";

export interface NetworkDefinition {
  /** Path segments: `/v1/<protocol>/<network>/webhooks`. Always lower case. */
  protocol: string;
  network: string;
  /** `<protocol>-<network>`, used in `/rpc/<slug>` and `/node/<slug>`. */
  slug: string;
  family: Family;
  displayName: string;
  /** The real chain's id (EVM: integer; CometBFT: chain-id string; Aptos: integer). */
  chainId: number | string;
  /** The id our built-in devnet uses instead. */
  devnetChainId: number | string;
  currency: string;
  /** How webhook records spell protocol and network. */
  recordCase: "upper" | "lower";
  /**
   * Blocks after which a block of the real chain is treated as final (isInstant: false waits for
   * this many blocks on top of it).
   */
  finalityDepth: number;
  /**
   * The same on the built-in devnet: one node that nobody else mines against never reorganises by
   * itself, so waiting 64 blocks there would only make webhooks slow to try. See finalityDepthOf.
   */
  devnetFinalityDepth: number;
  eventTypes: readonly EventType[];
  /** Whether UPSTREAM_* may also name ws(s) URLs (a CometBFT node's, which its client reads over HTTP). */
  upstreamWebSockets: boolean;
}

type Def = Omit<NetworkDefinition, "slug" | "recordCase" | "eventTypes" | "devnetFinalityDepth" | "upstreamWebSockets">;

/**
 * Finality depth of the EVM devnets (anvil; Kaia's 1 stays 1): deep enough that isInstant false
 * visibly waits and that a reorganisation of the last block (anvil_reorg, evm_revert) changes only
 * what isInstant true delivered, short enough that a webhook under test delivers within seconds.
 */
export const EVM_DEVNET_FINALITY_DEPTH = 2;

const evm = (d: Omit<Def, "family">): NetworkDefinition => ({
  ...d,
  family: "evm",
  slug: `${d.protocol}-${d.network}`,
  recordCase: "upper",
  eventTypes: ["LOG", "BLOCK_PERIOD"],
  devnetFinalityDepth: Math.min(EVM_DEVNET_FINALITY_DEPTH, d.finalityDepth),
  upstreamWebSockets: false,
});

/** Every network the service knows, in the order the console lists them. */
export const NETWORK_DEFINITIONS: readonly NetworkDefinition[] = [
  ...(["mainnet", "testnet"] as const).map(
    (network, i): NetworkDefinition => ({
      protocol: "babylon",
      network,
      slug: `babylon-${network}`,
      family: "consensus",
      displayName: `Babylon ${network === "mainnet" ? "Mainnet" : "Testnet"}`,
      chainId: network === "mainnet" ? "bbn-1" : "bbn-test-5",
      devnetChainId: `bbn-devnet-${i + 1}`,
      currency: "BBN",
      recordCase: "lower",
      finalityDepth: 0,
      devnetFinalityDepth: 0,
      eventTypes: [],
      upstreamWebSockets: true,
    }),
  ),
  evm({ protocol: "ethereum", network: "mainnet", displayName: "Ethereum Mainnet", chainId: 1, devnetChainId: 990001, currency: "ETH", finalityDepth: 64 }),
  evm({ protocol: "ethereum", network: "sepolia", displayName: "Ethereum Sepolia", chainId: 11155111, devnetChainId: 990002, currency: "ETH", finalityDepth: 64 }),
  evm({ protocol: "ethereum", network: "holesky", displayName: "Ethereum Holesky", chainId: 17000, devnetChainId: 990003, currency: "ETH", finalityDepth: 64 }),
  evm({ protocol: "arbitrum", network: "mainnet", displayName: "Arbitrum One", chainId: 42161, devnetChainId: 990004, currency: "ETH", finalityDepth: 20 }),
  evm({ protocol: "arbitrum", network: "sepolia", displayName: "Arbitrum Sepolia", chainId: 421614, devnetChainId: 990005, currency: "ETH", finalityDepth: 20 }),
  evm({ protocol: "base", network: "mainnet", displayName: "Base Mainnet", chainId: 8453, devnetChainId: 990006, currency: "ETH", finalityDepth: 20 }),
  evm({ protocol: "base", network: "sepolia", displayName: "Base Sepolia", chainId: 84532, devnetChainId: 990007, currency: "ETH", finalityDepth: 20 }),
  evm({ protocol: "optimism", network: "mainnet", displayName: "OP Mainnet", chainId: 10, devnetChainId: 990008, currency: "ETH", finalityDepth: 20 }),
  evm({ protocol: "optimism", network: "sepolia", displayName: "OP Sepolia", chainId: 11155420, devnetChainId: 990009, currency: "ETH", finalityDepth: 20 }),
  evm({ protocol: "polygon", network: "mainnet", displayName: "Polygon PoS", chainId: 137, devnetChainId: 990010, currency: "POL", finalityDepth: 128 }),
  evm({ protocol: "polygon", network: "amoy", displayName: "Polygon Amoy", chainId: 80002, devnetChainId: 990011, currency: "POL", finalityDepth: 128 }),
  evm({ protocol: "kaia", network: "mainnet", displayName: "Kaia Mainnet", chainId: 8217, devnetChainId: 990012, currency: "KAIA", finalityDepth: 1 }),
  evm({ protocol: "kaia", network: "kairos", displayName: "Kaia Kairos", chainId: 1001, devnetChainId: 990013, currency: "KAIA", finalityDepth: 1 }),
  ...(["mainnet", "testnet"] as const).map(
    (network, i): NetworkDefinition => ({
      protocol: "aptos",
      network,
      slug: `aptos-${network}`,
      family: "move",
      displayName: `Aptos ${network === "mainnet" ? "Mainnet" : "Testnet"}`,
      chainId: network === "mainnet" ? 1 : 2,
      devnetChainId: 104 + i,
      currency: "APT",
      recordCase: "lower",
      finalityDepth: 0,
      devnetFinalityDepth: 0,
      eventTypes: ["TRANSACTION", "BLOCK_PERIOD"],
      upstreamWebSockets: false,
    }),
  ),
];

export function upstreamVariable(d: Pick<NetworkDefinition, "protocol" | "network">): string {
  return `UPSTREAM_${d.protocol.toUpperCase()}_${d.network.toUpperCase()}`;
}

/**
 * The URLs of `UPSTREAM_<PROTOCOL>_<NETWORK>`: comma-separated, blanks ignored. The EVM gateway
 * and the Aptos follower (fullnode REST API) speak HTTP; a consensus follower also takes a ws(s)
 * URL. Returns the problem in words when a URL has another scheme.
 */
function parseUpstreamUrls(d: Pick<NetworkDefinition, "upstreamWebSockets">, raw: string | undefined): { urls: string[] } | { error: string } {
  const urls = (raw ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean);
  const websockets = d.upstreamWebSockets;
  const schemes = websockets ? /^(https?|wss?):\/\//i : /^https?:\/\//i;
  const bad = urls.find((url) => !schemes.test(url));
  if (bad !== undefined) return { error: `"${bad}" is not an ${websockets ? "http(s) or ws(s)" : "http(s)"} URL` };
  return { urls };
}

/**
 * The upstream URLs of every network in `source`, by slug (networks without one are left out),
 * and each bad variable with what is wrong with it.
 */
export function parseUpstreams(source: Readonly<Record<string, string | undefined>>): {
  upstreams: Record<string, string[]>;
  problems: Array<{ variable: string; message: string }>;
} {
  const upstreams: Record<string, string[]> = {};
  const problems: Array<{ variable: string; message: string }> = [];
  for (const d of NETWORK_DEFINITIONS) {
    const variable = upstreamVariable(d);
    const parsed = parseUpstreamUrls(d, source[variable]);
    if ("error" in parsed) problems.push({ variable, message: parsed.error });
    else if (parsed.urls.length > 0) upstreams[d.slug] = parsed.urls;
  }
  return { upstreams, problems };
}
