/**
 * Which chain source serves a network: its family's (lib/chains/registry.ts), kept per network
 * (sources cache recent blocks). The followers, replay, preview and "Send test" all go through here.
 */
import { familyOf } from "@/lib/chains/registry";
import { AppError } from "@/lib/errors";
import type { Network } from "@/lib/networks";
import { services } from "@/lib/services";
import type { ChainSource } from "./source";

function makeSource(network: Network): ChainSource {
  const webhooks = familyOf(network)?.webhooks;
  if (!webhooks) throw new AppError("UNAVAILABLE", `Webhooks on ${network.displayName} are not delivered: no chain source follows this family.`);
  return webhooks.source(network);
}

/** The chain source of a network (the process's, lib/services.ts); AppError UNAVAILABLE when its family has none. */
export function chainSourceFor(network: Network): ChainSource {
  return services().chainSources.get(network, makeSource);
}

/** Whether chainSourceFor answers for this network. */
export function hasChainSource(network: Network): boolean {
  return familyOf(network)?.webhooks !== undefined;
}
