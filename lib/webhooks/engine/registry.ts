/**
 * Which chain source serves a network: one per family, kept per network (sources cache recent
 * blocks). The followers, replay, preview and "Send test" all go through here, so a family plugs
 * in by adding its case below.
 */
import { AppError } from "@/lib/errors";
import type { Network } from "@/lib/networks";
import { aptosChainSource } from "./aptos";
import { EvmChainSource } from "./evm";
import type { ChainSource } from "./source";

const g = globalThis as unknown as { __blockgateChainSources?: Map<string, ChainSource> };

/** The chain source of a network; AppError UNAVAILABLE when its family has none yet. */
export function chainSourceFor(network: Network): ChainSource {
  g.__blockgateChainSources ??= new Map();
  const known = g.__blockgateChainSources.get(network.slug);
  // A source is rebuilt when the catalog changed the network (an upstream configured since).
  if (known && known.network === network) return known;
  let source: ChainSource;
  switch (network.family) {
    case "evm":
      source = new EvmChainSource(network);
      break;
    case "move":
      source = aptosChainSource(network);
      break;
    default:
      throw new AppError("UNAVAILABLE", `Webhooks on ${network.displayName} are not delivered: no chain source follows this family.`);
  }
  g.__blockgateChainSources.set(network.slug, source);
  return source;
}

/** Whether chainSourceFor answers for this network. */
export function hasChainSource(network: Network): boolean {
  return network.family === "evm" || network.family === "move";
}
