import type { Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import { EvmUpstream } from "./upstream";

/** Where a devnet network's node is: the cluster's directory (lib/evm/devnet/cluster.ts), or an in-process supervisor in tests. */
export interface DevnetLocator {
  url(network: Network): Promise<string>;
  /** `url` did not answer: the next call reads where the devnet is again. */
  unreachable?(network: Network, url: string): void;
}

/**
 * Where each EVM network's requests go: its configured upstreams, or the network's anvil devnet
 * (the cluster's, lib/evm/devnet/cluster.ts). One per process (lib/services.ts), configured by the
 * EVM family's worker.
 */
export class EvmBackends {
  private devnets?: DevnetLocator;
  /** By network slug; `urls` tells when the catalog pointed the network elsewhere. */
  private readonly pools = new Map<string, { urls: string; upstream: EvmUpstream }>();
  private blockTimeMs = 2000;
  /** Most single calls sent to a node together (EvmUpstream's batchMax). */
  private batchMax = 1;
  /** Parent of the pools' loggers (tests read what the pools say). */
  private logger?: Logger;

  configure(opts: { devnets?: DevnetLocator; blockTimeMs: number; batchMax?: number; logger?: Logger }): void {
    this.devnets = opts.devnets;
    this.blockTimeMs = opts.blockTimeMs;
    this.batchMax = opts.batchMax ?? 1;
    this.logger = opts.logger;
    for (const { upstream } of this.pools.values()) void upstream.close();
    this.pools.clear();
  }

  /** The nodes of a network: its configured URLs (whose chain id is checked), or its devnet's URL. */
  async poolFor(network: Network): Promise<EvmUpstream> {
    let urls: readonly string[];
    const devnets = this.devnets;
    if (network.source.kind === "upstream") urls = network.source.urls;
    else if (devnets) urls = [await devnets.url(network)];
    else throw new NoBackend(`no node is configured for ${network.slug}: set ${network.upstreamVariable} or enable devnets (DEVNETS=on)`);
    const key = urls.join(" ");
    const cached = this.pools.get(network.slug);
    if (cached?.urls === key) return cached.upstream;
    // New, or rebuilt when the catalog (or a restarted devnet) points the network at other URLs.
    void cached?.upstream.close();
    const upstream = new EvmUpstream(urls, {
      network: network.slug,
      chainId: network.source.kind === "upstream" ? network.activeChainId : undefined,
      logger: this.logger,
      batchMax: this.batchMax,
      onUnavailable: devnets && network.source.kind === "devnet" ? () => devnets.unreachable?.(network, urls[0]!) : undefined,
    });
    this.pools.set(network.slug, { urls: key, upstream });
    return upstream;
  }

  /** How long a head-dependent answer (eth_blockNumber, gas price) may be reused. */
  headCacheMs(network: Network): number {
    return network.source.kind === "devnet" ? Math.max(100, this.blockTimeMs / 4) : 250;
  }
}

export class NoBackend extends Error {
  override name = "NoBackend";
}
