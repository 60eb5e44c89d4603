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
