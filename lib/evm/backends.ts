import type { Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import type { AnvilSupervisor } from "./devnet/anvil";
import { EvmUpstream } from "./upstream";

/**
 * Where each EVM network's requests go: its configured upstreams, or the local anvil devnet
 * (started on first use). One per process (lib/services.ts), configured by the EVM family's worker.
 */
export class EvmBackends {
  private supervisor?: AnvilSupervisor;
  /** By network slug; `urls` tells when the catalog pointed the network elsewhere. */
  private readonly pools = new Map<string, { urls: string; upstream: EvmUpstream }>();
  private blockTimeMs = 2000;
  /** Most single calls sent to a node together (EvmUpstream's batchMax). */
  private batchMax = 1;
  /** Parent of the pools' loggers (tests read what the pools say). */
  private logger?: Logger;

  configure(opts: { supervisor?: AnvilSupervisor; blockTimeMs: number; batchMax?: number; logger?: Logger }): void {
    this.supervisor = opts.supervisor;
    this.blockTimeMs = opts.blockTimeMs;
    this.batchMax = opts.batchMax ?? 1;
    this.logger = opts.logger;
    for (const { upstream } of this.pools.values()) void upstream.close();
    this.pools.clear();
  }

  /** The nodes of a network: its configured URLs (whose chain id is checked), or its devnet's URL. */
  async poolFor(network: Network): Promise<EvmUpstream> {
    let urls: readonly string[];
    if (network.source.kind === "upstream") urls = network.source.urls;
    else if (this.supervisor) urls = [await this.supervisor.url(network)];
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
