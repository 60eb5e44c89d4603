/**
 * The Aptos read API's catalog: one table of the fullnode REST routes this service answers, with
 * their parameters and CU cost, read by the endpoint, the meter and the docs.
 */

export type AptosRoute = "ledger_info" | "transactions" | "transaction_by_hash" | "transaction_by_version" | "block_by_height" | "block_by_version" | "account_transactions";

export interface AptosParamSpec {
  name: string;
  in: "path" | "query";
  description: string;
}

export interface AptosRouteSpec {
  route: AptosRoute;
  /** Path under `/v1`, parameters in braces. */
  path: string;
  title: string;
  cu: number;
  params: readonly AptosParamSpec[];
}

/** The fullnode's largest page of transactions. */
export const APTOS_PAGE_MAX = 100;
/** The fullnode's page when `limit` is omitted. */
export const APTOS_PAGE_DEFAULT = 25;

const start = (what: string): AptosParamSpec => ({ name: "start", in: "query", description: `${what} to start from; the latest page when omitted.` });
const limit: AptosParamSpec = { name: "limit", in: "query", description: `Transactions to return: 1 to ${APTOS_PAGE_MAX} (default ${APTOS_PAGE_DEFAULT}).` };
const withTransactions: AptosParamSpec = { name: "with_transactions", in: "query", description: "true to include the block's transactions." };

export const APTOS_ROUTES: Record<AptosRoute, AptosRouteSpec> = {
  ledger_info: { route: "ledger_info", path: "/", title: "Ledger information", cu: 10, params: [] },
  transactions: { route: "transactions", path: "/transactions", title: "Transactions", cu: 40, params: [start("Ledger version"), limit] },
  transaction_by_hash: {
    route: "transaction_by_hash",
    path: "/transactions/by_hash/{txn_hash}",
    title: "Transaction by hash",
    cu: 20,
    params: [{ name: "txn_hash", in: "path", description: "Transaction hash, 0x and 64 hex digits." }],
  },
  transaction_by_version: {
    route: "transaction_by_version",
    path: "/transactions/by_version/{txn_version}",
    title: "Transaction by version",
    cu: 20,
    params: [{ name: "txn_version", in: "path", description: "Ledger version of the transaction." }],
  },
  block_by_height: {
    route: "block_by_height",
    path: "/blocks/by_height/{block_height}",
    title: "Block by height",
    cu: 25,
    params: [{ name: "block_height", in: "path", description: "Block height, from 0." }, withTransactions],
  },
  block_by_version: {
    route: "block_by_version",
    path: "/blocks/by_version/{version}",
    title: "Block by version",
    cu: 25,
    params: [{ name: "version", in: "path", description: "A ledger version inside the block." }, withTransactions],
  },
  account_transactions: {
    route: "account_transactions",
    path: "/accounts/{address}/transactions",
    title: "Account transactions",
    cu: 40,
    params: [{ name: "address", in: "path", description: "Account address, with or without 0x." }, start("Account sequence number"), limit],
  },
};

/** The route of the path segments after `v1`, or undefined. */
export function matchAptosRoute(rest: readonly string[]): { route: AptosRoute; args: string[] } | undefined {
  const [a, b, c, ...more] = rest;
  if (more.length > 0) return undefined;
  if (a === undefined) return { route: "ledger_info", args: [] };
  if (a === "transactions") {
    if (b === undefined) return { route: "transactions", args: [] };
    if (c !== undefined && b === "by_hash") return { route: "transaction_by_hash", args: [c] };
    if (c !== undefined && b === "by_version") return { route: "transaction_by_version", args: [c] };
    return undefined;
  }
  if (a === "blocks" && c !== undefined) {
    if (b === "by_height") return { route: "block_by_height", args: [c] };
    if (b === "by_version") return { route: "block_by_version", args: [c] };
    return undefined;
  }
  if (a === "accounts" && b !== undefined && c === "transactions") return { route: "account_transactions", args: [b] };
  return undefined;
}
