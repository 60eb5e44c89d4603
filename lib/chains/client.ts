/**
 * The client descriptors of the chain families, in the order the console lists them: the
 * browser's side of lib/chains/registry.ts (which holds the same families, with their server
 * parts). No server imports: client components read this file.
 */
import { aptosClient } from "@/lib/aptos/family.client";
import { consensusClient } from "@/lib/consensus/family.client";
import { evmClient } from "@/lib/evm/family.client";
import type { ClientFamily, ClientNetwork, EndpointEntry } from "./descriptor";

const CLIENT_FAMILIES: readonly ClientFamily[] = [consensusClient, evmClient, aptosClient];

/** Families registered by tests (registerFamily in lib/chains/registry.ts), after the built-in ones. */
const registered: ClientFamily[] = [];

export function clientFamilies(): readonly ClientFamily[] {
  return registered.length === 0 ? CLIENT_FAMILIES : [...CLIENT_FAMILIES, ...registered];
}

export function clientFamily(id: string): ClientFamily | undefined {
  return clientFamilies().find((f) => f.id === id);
}

/** A filter for the networks (or anything naming a family) of one family. */
export function inFamily(id: string): (n: { family: string }) => boolean {
  return (n) => n.family === id;
}

/** For tests only, through registerFamily: adds a family after the built-in ones; returns how to remove it. */
export function registerClientFamily(family: ClientFamily): () => void {
  registered.push(family);
  return () => {
    registered.splice(registered.indexOf(family), 1);
  };
}

/** The Overview's sections: each family that has networks, with its networks, in the families' order. */
export function endpointSections(networks: readonly ClientNetwork[]): Array<{ family: ClientFamily; networks: ClientNetwork[] }> {
  return clientFamilies().flatMap((family) => {
    const items = networks.filter(inFamily(family.id));
    return items.length === 0 ? [] : [{ family, networks: items }];
  });
}

/** The URLs of a network on the Overview: its family's, then the webhook API's when it has webhooks. */
export function endpointEntries(network: ClientNetwork, origin: string): EndpointEntry[] {
  const entries = clientFamily(network.family)?.overview.endpoints(network, origin) ?? [];
  if (!network.webhooks) return entries;
  const url = `${origin}/v1/${network.protocol}/${network.network}/webhooks`;
  return [...entries, { label: "Webhooks", url, copyLabel: `Copy ${network.displayName} webhooks URL` }];
}

/** The Overview's first request: the first network of the first family that has one. */
export function quickStartOf(networks: readonly ClientNetwork[]): { network: ClientNetwork; quickStart: NonNullable<ClientFamily["overview"]["quickStart"]> } | undefined {
  for (const { family, networks: items } of endpointSections(networks)) {
    const quickStart = family.overview.quickStart;
    if (quickStart && items[0]) return { network: items[0], quickStart };
  }
  return undefined;
}
