/**
 * Which chain source serves a network: its family's (lib/chains/registry.ts), kept per network
 * (sources cache recent blocks). The followers, replay, preview and "Send test" all go through here.
 */
import { familyOf } from "@/lib/chains/registry";
import { AppError } from "@/lib/errors";
import type { Network } from "@/lib/networks";
import type { ChainSource } from "./source";

const g = globalThis as unknown as { __blockgateChainSources?: Map<string, ChainSource> };

/** The chain source of a network; AppError UNAVAILABLE when its family has none. */
export function chainSourceFor(network: Network): ChainSource {
  g.__blockgateChainSources ??= new Map();
  const known = g.__blockgateChainSources.get(network.slug);
  // A source is rebuilt when the catalog changed the network (an upstream configured since).
  if (known && known.network === network) return known;
  const webhooks = familyOf(network)?.webhooks;
  if (!webhooks) throw new AppError("UNAVAILABLE", `Webhooks on ${network.displayName} are not delivered: no chain source follows this family.`);
  const source = webhooks.source(network);
  g.__blockgateChainSources.set(network.slug, source);
  return source;
}

/** Whether chainSourceFor answers for this network. */
export function hasChainSource(network: Network): boolean {
  return familyOf(network)?.webhooks !== undefined;
}
