/** What the browser knows of the consensus family (CometBFT RPC): see lib/chains/descriptor.ts. */
import { abbreviate, type ClientFamily, type ExampleRow } from "@/lib/chains/descriptor";
import { CONSENSUS_ENDPOINTS, CONSENSUS_METHODS, type ConsensusMethod } from "./catalog";
import type { RecentExamples } from "./examples";
import { checkForm, consensusRequest, exampleFor, initialValue, requestParams } from "./playground";

const endpoint = (method: string) => CONSENSUS_ENDPOINTS[method as ConsensusMethod];

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
  playground: {
    tab: "Consensus (CometBFT RPC)",
    idPrefix: "pg",
    description: "Requests go from this browser to the public endpoint with the project's API key, and are metered like any other call.",
    devnetTitle: "Served by the built-in devnet, which uses its own chain id",
    legend: "Endpoint",
    columns: 2,
    choices: CONSENSUS_METHODS.map((m) => ({ method: m, title: CONSENSUS_ENDPOINTS[m].title, description: CONSENSUS_ENDPOINTS[m].description, cu: CONSENSUS_ENDPOINTS[m].cu })),
    // status needs no parameters and answers before the chain has data.
    firstMethod: "status",
    examples: {
      title: (n) => `Recent data on ${n.displayName}`,
      refreshLabel: "Refresh examples",
      loading: () => ({ label: "Loading examples" }),
      errorLead: "Could not load the examples.",
      poll: (data: RecentExamples) => data.latestHeight === null,
      view(data: RecentExamples, n) {
        if (data.latestHeight === null) {
          return {
            empty: {
              testId: "examples-empty",
              title: n.source === "devnet" ? "The devnet has not produced blocks yet." : "No blocks from the upstream node have been stored yet.",
              body: "Examples appear here as soon as there are blocks; this checks again every few seconds. Requests can be sent meanwhile.",
            },
          };
        }
        const rows: ExampleRow[] = [
          { term: "Latest height", value: String(data.latestHeight) },
          data.txHash ? { term: "Recent transaction", value: abbreviate(data.txHash, 20), title: data.txHash } : { term: "Recent transaction", value: "none in the latest blocks", look: "muted" },
        ];
        if (data.sender) rows.push({ term: "Its sender", value: data.sender, look: "wrap" });
        return { testId: "examples", rows, note: "Each parameter with an example has a “Use example” button." };
      },
    },
    editor: {
      kind: "form",
      legend: (method) => method,
      noParams: "This endpoint takes no parameters.",
      fields: (method) => endpoint(method).params.map((p) => ({ spec: p, wide: p.type === "query" || p.type === "hash" })),
      initial: (_method, field) => initialValue(field.spec),
      check: (method, values) => checkForm(endpoint(method), values),
      request: (n, method, values) => consensusRequest(n.slug, method as ConsensusMethod, requestParams(endpoint(method), values)),
      example: (method, param, examples: RecentExamples | undefined) => exampleFor(method as ConsensusMethod, param, examples),
    },
    snippetPlaceholder: "Fill in the parameters to get a command.",
    snippets: [
      {
        title: "CometBFT tools URL",
        testId: "cometbft-url",
        copyLabel: "Copy CometBFT URL",
        text: ({ origin, network, key }) => `${origin}/cometbft/${network.slug}/${key}`,
        note: [{ code: "/rpc" }, " is the documented API; ", { code: "/cometbft" }, " is the URL for CometBFT tools (cosmjs, explorers, relayers)"],
        noteTestId: "cometbft-url-note",
      },
    ],
  },
};
