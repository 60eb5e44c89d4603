import type { ConsensusMethod } from "@/lib/consensus/catalog";
import type { RecentExamples } from "@/lib/consensus/examples";

export type { RecentExamples };

/** What the browser needs about a consensus network (never its upstream URLs). */
export interface PlaygroundNetwork {
  slug: string;
  displayName: string;
  chainId: string;
  source: "devnet" | "upstream";
}

export const examplesQueryKey = (projectId: string, network: string) => ["playground-examples", projectId, network] as const;

export const examplesPath = (projectId: string, network: string) =>
  `/api/projects/${encodeURIComponent(projectId)}/playground/examples?network=${encodeURIComponent(network)}`;

/** An example value for one parameter, with the words that say where it comes from. */
export interface ParamExample {
  value: string;
  description: string;
}

/** The example for a parameter of an endpoint, from the network's recent data. */
export function exampleFor(method: ConsensusMethod, param: string, ex: RecentExamples | undefined): ParamExample | null {
  if (!ex) return null;
  const h = ex.latestHeight;
  switch (param) {
    case "height":
      return h === null ? null : { value: String(h), description: "latest height" };
    case "hash":
      return ex.txHash === null ? null : { value: ex.txHash, description: "a recent transaction" };
    case "query":
      if (method === "block_search") {
        if (h === null) return null;
        const from = Math.max(1, h - 9);
        return { value: `block.height >= ${from} AND block.height <= ${h}`, description: "latest ten blocks" };
      }
      return ex.query === null ? null : { value: ex.query, description: ex.sender ? "a recent sender" : "a recent block" };
    default:
      return null;
  }
}
