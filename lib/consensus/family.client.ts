/** What the browser knows of the consensus family (CometBFT RPC): see lib/chains/descriptor.ts. */
import type { ClientFamily } from "@/lib/chains/descriptor";

export const consensusClient: ClientFamily = {
  id: "consensus",
  label: "Consensus",
  overview: {
    title: "Consensus chain (CometBFT RPC)",
    description: "RPC is the documented API (key in the X-API-KEY header); the CometBFT tools URL answers as a CometBFT node does, for cosmjs, explorers and relayers.",
    endpoints: (n, origin) => [
      { label: "RPC", url: `${origin}/rpc/${n.slug}`, copyLabel: `Copy ${n.displayName} RPC URL` },
      { label: "CometBFT tools", url: (key) => `${origin}/cometbft/${n.slug}/${key}`, copyLabel: `Copy ${n.displayName} CometBFT URL with key` },
    ],
  },
};
