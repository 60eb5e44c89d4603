import type { Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { AnvilSupervisor } from "./devnet/anvil";
import { EvmUpstream } from "./upstream";

/**
 * Where each EVM network's requests go: its configured upstreams, or the local anvil devnet
 * (started on first use). Registered by the launcher; shared through globalThis.
 */
interface Backends {
  supervisor?: AnvilSupervisor;
  /** By network slug; `urls` tells when the catalog pointed the network elsewhere. */
  pools: Map<string, { urls: string; upstream: EvmUpstream }>;
  blockTimeMs: number;
  /** Most single calls sent to a node together (EvmUpstream's batchMax). */
  batchMax: number;
  /** Parent of the pools' loggers (tests read what the pools say). */
  logger?: Logger;
}

const g = globalThis as unknown as { __blockgateEvmBackends?: Backends };

function backends(): Backends {
  g.__blockgateEvmBackends ??= { pools: new Map(), blockTimeMs: 2000, batchMax: 1 };
  return g.__blockgateEvmBackends;
}

function dropPools(b: Backends): void {
  for (const { upstream } of b.pools.values()) void upstream.close();
  b.pools.clear();
}

export function configureEvmBackends(opts: { supervisor?: AnvilSupervisor; blockTimeMs: number; batchMax?: number; logger?: Logger }): void {
  const b = backends();
  b.supervisor = opts.supervisor;
  b.blockTimeMs = opts.blockTimeMs;
  b.batchMax = opts.batchMax ?? 1;
  b.logger = opts.logger;
  dropPools(b);
}

export class NoBackend extends Error {
  override name = "NoBackend";
}

/** The nodes of a network: its configured URLs (whose chain id is checked), or its devnet's URL. */
export async function poolFor(network: Network): Promise<EvmUpstream> {
  const b = backends();
  let urls: readonly string[];
  if (network.source.kind === "upstream") urls = network.source.urls;
  else if (b.supervisor) urls = [await b.supervisor.url(network)];
  else throw new NoBackend(`no node is configured for ${network.slug}: set ${network.upstreamVariable} or enable devnets (DEVNETS=on)`);
  const key = urls.join(" ");
  const cached = b.pools.get(network.slug);
  if (cached?.urls === key) return cached.upstream;
  // New, or rebuilt when the catalog (or a restarted devnet) points the network at other URLs.
  void cached?.upstream.close();
  const upstream = new EvmUpstream(urls, {
    network: network.slug,
    chainId: network.source.kind === "upstream" ? network.activeChainId : undefined,
    logger: b.logger,
    batchMax: b.batchMax,
  });
  b.pools.set(network.slug, { urls: key, upstream });
  return upstream;
}

/** How long a head-dependent answer (eth_blockNumber, gas price) may be reused. */
export function headCacheMs(network: Network): number {
  return network.source.kind === "devnet" ? Math.max(100, backends().blockTimeMs / 4) : 250;
}
