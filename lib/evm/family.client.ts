/** What the browser knows of the EVM family (JSON-RPC at /node): see lib/chains/descriptor.ts. */
import type { ClientFamily } from "@/lib/chains/descriptor";

const nodeUrl = (origin: string, slug: string) => `${origin}/node/${slug}`;

export const evmClient: ClientFamily = {
  id: "evm",
  label: "EVM",
  overview: {
    title: "EVM JSON-RPC",
    description: "Ethereum JSON-RPC. Send your key in the X-API-KEY header, or append it to the URL path for clients that cannot set headers.",
    endpoints: (n, origin) => [
      { label: "Node (header)", url: nodeUrl(origin, n.slug), copyLabel: `Copy ${n.displayName} node URL` },
      { label: "Node (key in path)", url: (key) => `${nodeUrl(origin, n.slug)}/${key}`, copyLabel: `Copy ${n.displayName} node URL with key` },
    ],
    quickStart: {
      asks: "for its chain id",
      command: (origin, n, key) =>
        `curl -X POST ${nodeUrl(origin, n.slug)} -H 'Content-Type: application/json' -H 'X-API-KEY: ${key}' -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'`,
    },
  },
};
