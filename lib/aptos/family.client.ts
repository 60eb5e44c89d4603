/** What the browser knows of the Move family (the Aptos fullnode REST read API): see lib/chains/descriptor.ts. */
import { abbreviate, headerAndPathUrls, type ClientFamily, type ExampleRow } from "@/lib/chains/descriptor";
import { APTOS_ROUTES, type AptosRoute } from "./catalog";
import type { AptosExamples } from "./examples";
import { APTOS_PLAYGROUND_ROUTES, aptosDefaultValue, aptosExampleFor, aptosFieldSpec, aptosPlaceholder, aptosRequest, aptosTypeSummary, checkAptosForm } from "./playground";

const apiBase = (origin: string, network: string) => `${origin}/aptos/${network}`;
const route = (r: string) => APTOS_ROUTES[r as AptosRoute];
/** `GET /v1/…` as the route is written. */
const routePath = (r: string) => `GET /v1${route(r).path === "/" ? "" : route(r).path}`;

function ledgerValues(data: AptosExamples): ExampleRow[] {
  const tx = data.transaction;
  const rows: ExampleRow[] = [
    { term: "Latest block height", value: data.blockHeight ?? "" },
    { term: "Ledger version", value: data.ledgerVersion ?? "" },
    tx ? { term: "Recent transaction", value: `${abbreviate(tx.hash, 22)} (version ${tx.version})`, title: tx.hash } : { term: "Recent transaction", value: "none stored yet", look: "muted" },
  ];
  if (tx?.sender) rows.push({ term: "Its sender", value: tx.sender, look: "wrap" });
  return rows;
}

export const aptosClient: ClientFamily = {
  id: "move",
  label: "Aptos",
  overview: {
    title: "Move (Aptos)",
    description:
      "Aptos fullnode REST read API: send your key in the X-API-KEY header or as Authorization: Bearer, or put it in the path for tools that take only a URL. Transaction webhooks.",
    endpoints: (n, origin) => headerAndPathUrls(n, "Read API", "read API URL", `${apiBase(origin, n.network)}/v1`, (key) => `${apiBase(origin, n.network)}/${key}/v1`),
  },
  playground: {
    tab: "Aptos (fullnode REST)",
    idPrefix: "pg-aptos",
    description: "Requests go from this browser to the Aptos read API (fullnode REST) with the project's API key, and are metered like any other call.",
    devnetTitle: "Served by the built-in Aptos devnet, which uses its own chain id",
    legend: "Route",
    columns: 2,
    choices: APTOS_PLAYGROUND_ROUTES.map((r) => ({ method: r, title: APTOS_ROUTES[r].title, description: routePath(r), cu: APTOS_ROUTES[r].cu })),
    // Ledger information needs no parameters and answers as soon as the index has a block.
    firstMethod: "ledger_info",
    examples: {
      title: (n) => `Ledger of ${n.displayName}`,
      refreshLabel: "Refresh values",
      loading: () => ({ label: "Loading values from the index" }),
      errorLead: "Could not read values from the index.",
      poll: (data: AptosExamples) => data.blockHeight === null,
      view: (data: AptosExamples, n) =>
        data.blockHeight === null
          ? {
              empty: {
                testId: "aptos-examples-empty",
                title: n.source === "devnet" ? "The devnet has not produced blocks yet." : "No blocks from the upstream fullnode have been stored yet.",
                body: "Values appear here as soon as there are blocks; this checks again every few seconds. Requests can be sent meanwhile.",
              },
            }
          : { testId: "aptos-examples", rows: ledgerValues(data), note: "Required parameters are filled from these values until you edit them." },
    },
    editor: {
      kind: "form",
      legend: routePath,
      noParams: "This route takes no parameters.",
      fields: (r) =>
        route(r).params.map((p) => ({ spec: aptosFieldSpec(p), wide: p.name === "txn_hash" || p.name === "address", summary: aptosTypeSummary(p), placeholder: aptosPlaceholder(p) })),
      initial: (r, field, examples: AptosExamples | undefined) => {
        const p = route(r).params.find((q) => q.name === field.spec.name);
        return p ? aptosDefaultValue(p, examples) : "";
      },
      check: (r, values) => checkAptosForm(r as AptosRoute, values),
      request: (n, r, values) => aptosRequest(n.network, r as AptosRoute, values),
      example: (_r, param, examples: AptosExamples | undefined) => aptosExampleFor(param, examples),
    },
    snippetPlaceholder: "Fill in the parameters to get a command.",
  },
};
