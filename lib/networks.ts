/**
 * The network catalog: the one list every layer (gateway, console, webhooks, docs) reads.
 * A network without an upstream URL runs on a built-in devnet, which never uses the real
 * chain id, so that a transaction signed for a real chain cannot be replayed on ours.
 */
import type { ClientNetwork } from "@/lib/chains/descriptor";
import { getEnv } from "@/lib/env";
import { NETWORK_DEFINITIONS, parseUpstreams, upstreamVariable, type NetworkDefinition } from "@/lib/network-definitions";
import { perProcess } from "@/lib/per-process";

export { upstreamVariable, type EventType, type NetworkDefinition } from "@/lib/network-definitions";

export interface Network extends NetworkDefinition {
  /** Environment variable that holds the upstream URL(s). */
  upstreamVariable: string;
  source: { kind: "devnet" } | { kind: "upstream"; urls: string[] };
  /** The chain id this deployment answers with. */
  activeChainId: number | string;
}

function catalogFrom(upstreams: Readonly<Record<string, readonly string[]>>): readonly Network[] {
  return NETWORK_DEFINITIONS.map((d) => {
    const urls = upstreams[d.slug];
    return {
      ...d,
      upstreamVariable: upstreamVariable(d),
      source: urls ? { kind: "upstream", urls: [...urls] } : { kind: "devnet" },
      activeChainId: urls ? d.chainId : d.devnetChainId,
    };
  });
}

/** The catalog for the given UPSTREAM_* variables; throws naming each bad one. */
export function buildCatalog(source: Readonly<Record<string, string | undefined>>): readonly Network[] {
  const { upstreams, problems } = parseUpstreams(source);
  if (problems.length > 0) throw new Error(problems.map((p) => `${p.variable}: ${p.message}`).join("; "));
  return catalogFrom(upstreams);
}

// Per process (lib/per-process.ts): the catalog a test configured is the one its server's Next.js bundle sees.
const catalog = perProcess("networks", (): { networks?: readonly Network[] } => ({}));

/**
 * Replaces the catalog with one built from the given variables: for tests that point a network at
 * their own upstream.
 */
export function configureNetworks(source: Readonly<Record<string, string | undefined>>): readonly Network[] {
  catalog.networks = buildCatalog(source);
  return catalog.networks;
}

/** The catalog of this process, from the configuration (UPSTREAM_* validated by lib/env.ts). */
export function networks(): readonly Network[] {
  catalog.networks ??= catalogFrom(getEnv().UPSTREAMS);
  return catalog.networks;
}

/** Adds networks to the catalog: for tests that serve private copies of catalog networks. */
export function addNetworks(...extra: Network[]): void {
  catalog.networks = [...networks(), ...extra];
}

export function networkBySlug(slug: string): Network | undefined {
  return networks().find((n) => n.slug === slug);
}

export function networkByPath(protocol: string, network: string): Network | undefined {
  return networks().find((n) => n.protocol === protocol && n.network === network);
}

/**
 * Blocks this many below the head are final on this deployment: the catalog's finalityDepth for a
 * real chain (an upstream), devnetFinalityDepth for the built-in devnet.
 */
export function finalityDepthOf(n: Network): number {
  return n.source.kind === "devnet" ? n.devnetFinalityDepth : n.finalityDepth;
}

/** How a webhook record spells the protocol and network of this network. */
export function recordNames(n: NetworkDefinition): { protocol: string; network: string } {
  return n.recordCase === "upper"
    ? { protocol: n.protocol.toUpperCase(), network: n.network.toUpperCase() }
    : { protocol: n.protocol, network: n.network };
}

/** What the browser is told about a network: never its upstream URLs, which may hold provider keys. */
export function clientNetwork(n: Network): ClientNetwork {
  return {
    slug: n.slug,
    family: n.family,
    displayName: n.displayName,
    protocol: n.protocol,
    network: n.network,
    chainId: String(n.activeChainId),
    source: n.source.kind,
    currency: n.currency,
    webhooks: n.eventTypes.length > 0,
  };
}
