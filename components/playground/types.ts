import type { ClientNetwork } from "@/lib/chains/descriptor";

/** What the picker needs about a network (never its upstream URLs). */
export type PlaygroundNetwork = Pick<ClientNetwork, "slug" | "displayName" | "chainId" | "source">;

export const examplesQueryKey = (projectId: string, network: string) => ["playground-examples", projectId, network] as const;

/** The network's example values, from its family (any family: GET …/playground/examples?network=). */
export const examplesPath = (projectId: string, network: string) =>
  `/api/projects/${encodeURIComponent(projectId)}/playground/examples?network=${encodeURIComponent(network)}`;
