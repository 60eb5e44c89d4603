/** What the browser knows of the EVM family (JSON-RPC at /node): see lib/chains/descriptor.ts. */
import { abbreviate, headerAndPathUrls, type ClientFamily, type ClientNetwork, type ExampleRow } from "@/lib/chains/descriptor";
import type { EvmExamples } from "./examples";
import { EVM_METHOD_SUMMARIES } from "./methods";
import { EVM_PLAYGROUND_METHODS, evmCu, evmRequest, evmTemplate, viemSnippet, walletRpcUrl, type EvmPlaygroundMethod } from "./playground";

const nodeUrl = (origin: string, slug: string) => `${origin}/node/${slug}`;

function chainValues(data: EvmExamples, devnet: boolean): ExampleRow[] {
  const block = data.latestBlock;
  const rows: ExampleRow[] = [
    { term: "Latest block", value: block ? `${BigInt(block.number).toString()} (${block.number})` : "—" },
    data.txHash ? { term: "Recent transaction", value: abbreviate(data.txHash, 22), title: data.txHash } : { term: "Recent transaction", value: "none in the latest blocks", look: "muted" },
  ];
  if (data.token) {
    rows.push({ term: `Token (${data.token.symbol})`, value: data.token.address, look: "wrap" }, { term: "Holder", value: data.token.holder, look: "wrap" });
  } else if (devnet) {
    rows.push({ term: "Token", value: "Not deployed yet; the devnet's traffic generator deploys it shortly. This checks again every few seconds.", look: "muted", testId: "evm-token-pending" });
  } else if (data.account) {
    rows.push({ term: "An address", value: `${data.account} (latest block's miner)`, look: "wrap" });
  }
  return rows;
}

export const evmClient: ClientFamily = {
  id: "evm",
  label: "EVM",
  overview: {
    title: "EVM JSON-RPC",
    description: "Ethereum JSON-RPC. Send your key in the X-API-KEY header, or append it to the URL path for clients that cannot set headers.",
    endpoints: (n, origin) => headerAndPathUrls(n, "Node", "node URL", nodeUrl(origin, n.slug), (key) => `${nodeUrl(origin, n.slug)}/${key}`),
    quickStart: {
      asks: "for its chain id",
      command: (origin, n, key) =>
        `curl -X POST ${nodeUrl(origin, n.slug)} -H 'Content-Type: application/json' -H 'X-API-KEY: ${key}' -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'`,
    },
  },
  playground: {
    tab: "EVM JSON-RPC",
    idPrefix: "pg-evm",
    description: "JSON-RPC 2.0 requests go from this browser to the public node endpoint with the project's API key, and are metered like any other call.",
    devnetTitle: "Served by a built-in anvil devnet, which uses its own chain id",
    legend: "Method",
    columns: 3,
    choices: EVM_PLAYGROUND_METHODS.map((m) => ({ method: m, description: EVM_METHOD_SUMMARIES[m], cu: evmCu(m) })),
    // eth_blockNumber needs no parameters.
    firstMethod: "eth_blockNumber",
    examples: {
      title: (n) => `Values from ${n.displayName}`,
      refreshLabel: "Refresh values",
      loading: (n) => ({ label: "Loading values from the chain", note: n.source === "devnet" ? "The devnet starts on first use; this can take a few seconds." : undefined }),
      errorLead: "Could not read values from the chain.",
      // A devnet's token comes once the traffic generator has deployed it.
      poll: (data: EvmExamples, n) => n.source === "devnet" && data.token === null,
      view: (data: EvmExamples, n) => ({ testId: "evm-examples", rows: chainValues(data, n.source === "devnet"), note: "The params below are filled from these values until you edit them." }),
    },
    editor: {
      kind: "json",
      template: (method, examples: EvmExamples | undefined) => evmTemplate(method as EvmPlaygroundMethod, examples),
      request: (n, method, params) => evmRequest(n.slug, method, params),
      cu: (method) => evmCu(method as EvmPlaygroundMethod),
    },
    snippetPlaceholder: "Fix the params to get a snippet.",
    snippets: [
      {
        title: "viem",
        testId: "viem-snippet",
        copyLabel: "Copy as viem",
        text: ({ origin, network, method, key, input }: { origin: string; network: ClientNetwork; method: string; key: string; input: unknown[] | null }) =>
          input === null ? null : viemSnippet(walletRpcUrl(origin, network.slug, key), method, input),
      },
    ],
    settings: {
      id: "wallet",
      title: "Wallet settings",
      description: "Add this network to a wallet with these values; the RPC URL holds the project's key.",
      testId: "wallet-settings",
      rows: (n) => [
        { term: "Network name", value: `${n.displayName}${n.source === "devnet" ? " (Blockgate devnet)" : ""}`, mono: false },
        { term: "RPC URL", keyUrl: { url: (origin, network, key) => walletRpcUrl(origin, network.slug, key), testId: "wallet-rpc-url", copyLabel: "Copy RPC URL" } },
        {
          term: "Chain ID",
          value: n.chainId,
          testId: "wallet-chain-id",
          detail: /^\d+$/.test(n.chainId) ? `(0x${BigInt(n.chainId).toString(16)})` : undefined,
          note: n.source === "devnet" ? "the devnet's own id, not the real chain's" : undefined,
        },
        { term: "Currency symbol", value: n.currency },
      ],
    },
  },
};
