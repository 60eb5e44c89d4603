/**
 * The chain families, in the order the console lists them: the one table every reader takes them
 * from (the runtime's workers, the gateway's mounts, the webhook engine's chain sources, the
 * playground's examples; the Overview and the playground through their client descriptors,
 * lib/chains/client.ts). A family is added here and nowhere else.
 */
import { aptosFamily } from "@/lib/aptos/family";
import { consensusFamily } from "@/lib/consensus/family";
import { evmFamily } from "@/lib/evm/family";
import type { Network } from "@/lib/networks";
import { registerClientFamily } from "./client";
import type { ChainFamily } from "./family";

const FAMILIES: readonly ChainFamily[] = [consensusFamily, evmFamily, aptosFamily];

/** Families registered by tests, after the built-in ones. */
const registered: ChainFamily[] = [];

export function families(): readonly ChainFamily[] {
  return registered.length === 0 ? FAMILIES : [...FAMILIES, ...registered];
}

/** The family of a network; undefined for a family nobody registered. */
export function familyOf(network: Pick<Network, "family">): ChainFamily | undefined {
  return families().find((f) => f.id === network.family);
}

/**
 * For tests only: adds a family (with its client descriptor) after the built-in ones, as if it
 * were listed above; returns how to remove it. Production's table is the constant above.
 */
export function registerFamily(family: ChainFamily): () => void {
  registered.push(family);
  const forgetClient = registerClientFamily(family.client);
  return () => {
    registered.splice(registered.indexOf(family), 1);
    forgetClient();
  };
}
