/** What the browser knows of the Move family (the Aptos fullnode REST read API): see lib/chains/descriptor.ts. */
import type { ClientFamily } from "@/lib/chains/descriptor";

const apiBase = (origin: string, network: string) => `${origin}/aptos/${network}`;

export const aptosClient: ClientFamily = {
  id: "move",
  label: "Aptos",
  overview: {
    title: "Move (Aptos)",
    description:
      "Aptos fullnode REST read API: send your key in the X-API-KEY header or as Authorization: Bearer, or put it in the path for tools that take only a URL. Transaction webhooks.",
    endpoints: (n, origin) => [
      { label: "Read API (header)", url: `${apiBase(origin, n.network)}/v1`, copyLabel: `Copy ${n.displayName} read API URL` },
      { label: "Read API (key in path)", url: (key) => `${apiBase(origin, n.network)}/${key}/v1`, copyLabel: `Copy ${n.displayName} read API URL with key` },
    ],
  },
};
