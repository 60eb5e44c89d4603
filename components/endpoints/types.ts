import type { Family } from "@/lib/networks";

/** What the browser needs about a network (never the upstream URLs, which may hold provider keys). */
export interface EndpointNetwork {
  slug: string;
  family: Family;
  displayName: string;
  protocol: string;
  network: string;
  chainId: string;
  source: "devnet" | "upstream";
}

export const FAMILY_TITLES: Record<Family, { title: string; description: string }> = {
  consensus: {
    title: "Consensus chain (CometBFT RPC)",
    description: "RPC is the documented API (key in the X-API-KEY header); the CometBFT tools URL answers as a CometBFT node does, for cosmjs, explorers and relayers.",
  },
  evm: {
    title: "EVM JSON-RPC",
    description: "Ethereum JSON-RPC. Send your key in the X-API-KEY header, or append it to the URL path for clients that cannot set headers.",
  },
  move: {
    title: "Move (Aptos)",
    description:
      "Aptos fullnode REST read API: send your key in the X-API-KEY header or as Authorization: Bearer, or put it in the path for tools that take only a URL. Transaction webhooks.",
  },
};

export const FAMILY_ORDER: readonly Family[] = ["consensus", "evm", "move"];

export function curlExample(origin: string, slug: string, key: string): string {
  return `curl -X POST ${origin}/node/${slug} -H 'Content-Type: application/json' -H 'X-API-KEY: ${key}' -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'`;
}
