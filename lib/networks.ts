/**
 * The network catalog: the one list every layer (gateway, console, webhooks, docs) reads.
 * A network without an upstream URL runs on a built-in devnet, which never uses the real
 * chain id, so that a transaction signed for a real chain cannot be replayed on ours.
 */

export type Family = "consensus" | "evm" | "move";
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
  /** Blocks after which a block is treated as final (isInstant: false waits for this). */
  finalityDepth: number;
  eventTypes: readonly EventType[];
}

export interface Network extends NetworkDefinition {
  /** Environment variable that holds the upstream URL(s). */
  upstreamVariable: string;
  source: { kind: "devnet" } | { kind: "upstream"; urls: string[] };
  /** The chain id this deployment answers with. */
  activeChainId: number | string;
}

type Def = Omit<NetworkDefinition, "slug" | "recordCase" | "eventTypes">;

const evm = (d: Omit<Def, "family">): NetworkDefinition => ({
  ...d,
  family: "evm",
  slug: `${d.protocol}-${d.network}`,
  recordCase: "upper",
  eventTypes: ["LOG", "BLOCK_PERIOD"],
});

const DEFINITIONS: readonly NetworkDefinition[] = [
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
      eventTypes: [],
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
      eventTypes: ["TRANSACTION"],
    }),
  ),
];

export function upstreamVariable(d: Pick<NetworkDefinition, "protocol" | "network">): string {
  return `UPSTREAM_${d.protocol.toUpperCase()}_${d.network.toUpperCase()}`;
}

/** Resolves every network's source from the given environment (process.env by default). */
export function buildCatalog(source: Record<string, string | undefined> = process.env): readonly Network[] {
  return DEFINITIONS.map((d) => {
    const variable = upstreamVariable(d);
    const urls = (source[variable] ?? "")
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean);
    // The EVM gateway forwards over HTTP; a consensus follower also takes a ws(s) URL.
    const schemes = d.family === "evm" ? /^https?:\/\//i : /^(https?|wss?):\/\//i;
    for (const url of urls) {
      if (!schemes.test(url)) throw new Error(`${variable}: "${url}" is not an ${d.family === "evm" ? "http(s)" : "http(s) or ws(s)"} URL`);
    }
    const upstream = urls.length > 0;
    return {
      ...d,
      upstreamVariable: variable,
      source: upstream ? { kind: "upstream", urls } : { kind: "devnet" },
      activeChainId: upstream ? d.chainId : d.devnetChainId,
    };
  });
}

const globalForCatalog = globalThis as unknown as { __blockgateCatalog?: readonly Network[] };

/**
 * Rebuilds the catalog from the given environment: for tests that point a network at their own
 * upstream, and for callers that changed the environment after the catalog was first read.
 */
export function configureNetworks(source: Record<string, string | undefined> = process.env): readonly Network[] {
  globalForCatalog.__blockgateCatalog = buildCatalog(source);
  return globalForCatalog.__blockgateCatalog;
}

export function networks(): readonly Network[] {
  globalForCatalog.__blockgateCatalog ??= buildCatalog();
  return globalForCatalog.__blockgateCatalog;
}

export function networkBySlug(slug: string): Network | undefined {
  return networks().find((n) => n.slug === slug);
}

export function networkByPath(protocol: string, network: string): Network | undefined {
  return networks().find((n) => n.protocol === protocol && n.network === network);
}

/** How a webhook record spells the protocol and network of this network. */
export function recordNames(n: NetworkDefinition): { protocol: string; network: string } {
  return n.recordCase === "upper"
    ? { protocol: n.protocol.toUpperCase(), network: n.network.toUpperCase() }
    : { protocol: n.protocol, network: n.network };
}
