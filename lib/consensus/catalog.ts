/**
 * The consensus-chain endpoint catalog: one table that the route handlers, the CU meter, the
 * playground forms and the docs all read. Parameters arrive as strings (query string, or named
 * JSON-RPC params) and are normalised the way CometBFT clients send them.
 */
import { BLOCK_HEIGHT_KEY, TX_HASH_KEY, TX_HEIGHT_KEY, type Query } from "./query/parse";

export type ConsensusMethod = "block" | "block_search" | "status" | "tx_search" | "tx" | "consensus_params" | "net_info";

export type ParamType =
  /** Positive integer height; omitted means latest. */
  | "height"
  /** Positive integer (page, per_page). */
  | "int"
  /** CometBFT query language (lib/consensus/query). */
  | "query"
  | "bool"
  /** Transaction hash: hex, any case, with or without 0x. */
  | "hash"
  | "order";

export interface ParamSpec {
  name: string;
  type: ParamType;
  required: boolean;
  description: string;
  /** Upper bound for integers (per_page). */
  max?: number;
  /** Default applied when omitted, as CometBFT does. */
  default?: string;
}

export interface EndpointSpec {
  method: ConsensusMethod;
  title: string;
  description: string;
  /** CU of a call; for a search, of a query with at most one event condition (see callCu). */
  cu: number;
  /** Searches: what each further event condition adds, and the keys answered from the row's own columns. */
  search?: SearchCu;
  params: readonly ParamSpec[];
}

export interface SearchCu {
  /** CU added by each distinct event-attribute condition after the first. */
  perCondition: number;
  /** Keys answered from the row's own columns (lib/consensus/query/sql.ts): they narrow the search and add nothing. */
  columnKeys: readonly string[];
}

export const PER_PAGE_DEFAULT = 30;
export const PER_PAGE_MAX = 100;

const height = (what: string): ParamSpec => ({ name: "height", type: "height", required: false, description: `Height of the ${what}; the latest when omitted.` });
const paging = (defaultOrder: "asc" | "desc"): ParamSpec[] => [
  { name: "page", type: "int", required: false, description: "Page number, from 1.", default: "1" },
  { name: "per_page", type: "int", required: false, description: `Items per page (default ${PER_PAGE_DEFAULT}, at most ${PER_PAGE_MAX}).`, max: PER_PAGE_MAX, default: String(PER_PAGE_DEFAULT) },
  { name: "order_by", type: "order", required: false, description: `asc or desc (default ${defaultOrder}).`, default: defaultOrder },
];
const prove: ParamSpec = { name: "prove", type: "bool", required: false, description: "Include the Merkle inclusion proof.", default: "false" };

/**
 * A search's planning and running time grow with its event-attribute conditions (each is one more
 * index lookup for every candidate row, and the query has at most MAX_CONDITIONS of them), so each
 * after the first adds this many CU: 40 CU for one, 85 for ten.
 */
const SEARCH_CU_PER_CONDITION = 5;

export const CONSENSUS_ENDPOINTS: Record<ConsensusMethod, EndpointSpec> = {
  block: { method: "block", title: "Block", description: "A block with its header, transactions, evidence and last commit.", cu: 25, params: [height("block")] },
  block_search: {
    method: "block_search",
    title: "Block search",
    description: "Blocks whose block events match a query, such as block.height > 100.",
    cu: 40,
    search: { perCondition: SEARCH_CU_PER_CONDITION, columnKeys: [BLOCK_HEIGHT_KEY] },
    params: [{ name: "query", type: "query", required: true, description: "Query, for example block.height > 5 AND block.height <= 10." }, ...paging("desc")],
  },
  status: { method: "status", title: "Status", description: "Node information, sync state and validator.", cu: 10, params: [] },
  tx_search: {
    method: "tx_search",
    title: "Transaction search",
    description: "Transactions whose events match a query, such as transfer.sender = 'bbn1…'.",
    cu: 40,
    search: { perCondition: SEARCH_CU_PER_CONDITION, columnKeys: [TX_HEIGHT_KEY, TX_HASH_KEY] },
    params: [{ name: "query", type: "query", required: true, description: "Query, for example tx.height = 5 AND message.action = 'send'." }, prove, ...paging("asc")],
  },
  tx: {
    method: "tx",
    title: "Transaction",
    description: "One transaction by hash, with its result.",
    cu: 20,
    params: [{ name: "hash", type: "hash", required: true, description: "Transaction hash (hex, with or without 0x)." }, prove],
  },
  consensus_params: { method: "consensus_params", title: "Consensus parameters", description: "Block, evidence and validator parameters at a height.", cu: 14, params: [height("parameters")] },
  net_info: { method: "net_info", title: "Network info", description: "Listening state, listeners and peers of the node.", cu: 10, params: [] },
};

export const CONSENSUS_METHODS = Object.keys(CONSENSUS_ENDPOINTS) as ConsensusMethod[];

export function isConsensusMethod(name: string): name is ConsensusMethod {
  return Object.hasOwn(CONSENSUS_ENDPOINTS, name);
}

/**
 * The CU of one call of `method`: the catalog's `cu`, and for a search `perCondition` more for each
 * distinct event-attribute condition of `query` after the first (repeated conditions were merged
 * by the parser; tests of the row's own columns add nothing).
 */
export function callCu(method: ConsensusMethod, query?: Query): number {
  const spec = CONSENSUS_ENDPOINTS[method];
  if (!spec.search || !query) return spec.cu;
  const columnKeys = spec.search.columnKeys;
  const events = query.conditions.filter((c) => !columnKeys.includes(c.key)).length;
  return spec.cu + spec.search.perCondition * Math.max(0, events - 1);
}

/**
 * The native CometBFT interface (`/cometbft/<network>`): the methods of a CometBFT 0.38 node, each
 * with its CU, its parameters in the order of CometBFT's positional form, and where the answer
 * comes from: the index, the network's node (upstream networks; on a devnet the built-in chain
 * answers), or the node only (writes and ABCI queries: refused on a devnet).
 */
export type CometbftParamType =
  | "height"
  | "int"
  | "query"
  | "bool"
  | "order"
  /** A 32-byte hash: base64 in JSON-RPC (as cosmjs sends it), 0x-hex in the URI form; hex accepted in both. */
  | "hash"
  /** Bytes (a transaction): base64 in JSON-RPC, 0x-hex or a quoted string in the URI form. */
  | "bytes"
  /** HexBytes (abci_query data): hex in both forms. */
  | "hexbytes"
  | "string";

export interface CometbftSpec {
  cu: number;
  source: "index" | "node" | "write";
  params: ReadonlyArray<{ name: string; type: CometbftParamType }>;
}

const P = (name: string, type: CometbftParamType) => ({ name, type });
const nativePaging = [P("page", "int"), P("per_page", "int"), P("order_by", "order")];

export const COMETBFT_ENDPOINTS = {
  status: { cu: CONSENSUS_ENDPOINTS.status.cu, source: "node", params: [] },
  health: { cu: 5, source: "node", params: [] },
  net_info: { cu: CONSENSUS_ENDPOINTS.net_info.cu, source: "node", params: [] },
  abci_info: { cu: 10, source: "node", params: [] },
  genesis: { cu: 25, source: "node", params: [] },
  genesis_chunked: { cu: 25, source: "node", params: [P("chunk", "int")] },
  consensus_params: { cu: CONSENSUS_ENDPOINTS.consensus_params.cu, source: "node", params: [P("height", "height")] },
  validators: { cu: 15, source: "node", params: [P("height", "height"), P("page", "int"), P("per_page", "int")] },
  num_unconfirmed_txs: { cu: 5, source: "node", params: [] },
  unconfirmed_txs: { cu: 10, source: "node", params: [P("limit", "int")] },
  block: { cu: CONSENSUS_ENDPOINTS.block.cu, source: "index", params: [P("height", "height")] },
  block_by_hash: { cu: CONSENSUS_ENDPOINTS.block.cu, source: "index", params: [P("hash", "hash")] },
  header: { cu: 15, source: "index", params: [P("height", "height")] },
  header_by_hash: { cu: 15, source: "index", params: [P("hash", "hash")] },
  blockchain: { cu: 25, source: "index", params: [P("minHeight", "height"), P("maxHeight", "height")] },
  commit: { cu: 20, source: "index", params: [P("height", "height")] },
  block_results: { cu: 30, source: "index", params: [P("height", "height")] },
  block_search: { cu: CONSENSUS_ENDPOINTS.block_search.cu, source: "index", params: [P("query", "query"), ...nativePaging] },
  tx: { cu: CONSENSUS_ENDPOINTS.tx.cu, source: "index", params: [P("hash", "hash"), P("prove", "bool")] },
  tx_search: { cu: CONSENSUS_ENDPOINTS.tx_search.cu, source: "index", params: [P("query", "query"), P("prove", "bool"), ...nativePaging] },
  broadcast_tx_sync: { cu: 250, source: "write", params: [P("tx", "bytes")] },
  broadcast_tx_async: { cu: 250, source: "write", params: [P("tx", "bytes")] },
  broadcast_tx_commit: { cu: 500, source: "write", params: [P("tx", "bytes")] },
  check_tx: { cu: 100, source: "write", params: [P("tx", "bytes")] },
  abci_query: { cu: 40, source: "write", params: [P("path", "string"), P("data", "hexbytes"), P("height", "height"), P("prove", "bool")] },
} satisfies Record<string, CometbftSpec>;

export type CometbftMethod = keyof typeof COMETBFT_ENDPOINTS;

export function isCometbftMethod(name: string): name is CometbftMethod {
  return Object.hasOwn(COMETBFT_ENDPOINTS, name);
}

/**
 * The native interface's WebSocket methods (cometbft/websocket.ts) beside the calls above, with
 * their CU: subscribing costs like a call, unsubscribing is free. Each event delivered to a
 * subscription costs EVENT_CU (metered as `event:<Name>`).
 */
export const SOCKET_METHODS = { subscribe: { cu: 10 }, unsubscribe: { cu: 0 }, unsubscribe_all: { cu: 0 } } as const;
export const EVENT_CU = 1;

export type SocketMethod = keyof typeof SOCKET_METHODS;

export function isSocketMethod(name: string): name is SocketMethod {
  return Object.hasOwn(SOCKET_METHODS, name);
}
