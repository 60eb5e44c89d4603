import type { Network } from "@/lib/networks";
import type { AnvilSupervisor } from "./devnet/anvil";
import { UpstreamPool } from "./upstream";

/**
 * Where each EVM network's requests go: its configured upstreams, or the local anvil devnet
 * (started on first use). Registered by the launcher; shared through globalThis.
 */
interface Backends {
  supervisor?: AnvilSupervisor;
  pools: Map<string, UpstreamPool>;
  devnetPools: Map<string, { url: string; pool: UpstreamPool }>;
  blockTimeMs: number;
  log: (m: string) => void;
}

const g = globalThis as unknown as { __blockgateEvmBackends?: Backends };

function backends(): Backends {
  g.__blockgateEvmBackends ??= { pools: new Map(), devnetPools: new Map(), blockTimeMs: 2000, log: (m) => console.error(m) };
  return g.__blockgateEvmBackends;
}

export function configureEvmBackends(opts: { supervisor?: AnvilSupervisor; blockTimeMs: number; log: (m: string) => void }): void {
  const b = backends();
  b.supervisor = opts.supervisor;
  b.blockTimeMs = opts.blockTimeMs;
  b.log = opts.log;
  b.pools.clear();
  b.devnetPools.clear();
}

export class NoBackend extends Error {
  override name = "NoBackend";
}

/** The upstream pool for a network: configured URLs, or its devnet's URL. */
export async function poolFor(network: Network): Promise<UpstreamPool> {
  const b = backends();
  if (network.source.kind === "upstream") {
    let pool = b.pools.get(network.slug);
    // Rebuilt when the catalog points the network at other URLs.
    if (!pool || pool.urls.join(",") !== network.source.urls.join(",")) {
      pool = new UpstreamPool(network.source.urls, (m) => b.log(`[evm] ${network.slug}: ${m}`), undefined, network.activeChainId);
      b.pools.set(network.slug, pool);
    }
    return pool;
  }
  if (!b.supervisor) throw new NoBackend(`no node is configured for ${network.slug}: set ${network.upstreamVariable} or enable devnets (DEVNETS=on)`);
  const url = await b.supervisor.url(network);
  const cached = b.devnetPools.get(network.slug);
  if (cached?.url === url) return cached.pool;
  const pool = new UpstreamPool([url], (m) => b.log(`[evm] ${network.slug}: ${m}`));
  b.devnetPools.set(network.slug, { url, pool });
  return pool;
}

/** How long a head-dependent answer (eth_blockNumber, gas price) may be reused. */
export function headCacheMs(network: Network): number {
  return network.source.kind === "devnet" ? Math.max(100, backends().blockTimeMs / 4) : 250;
}
