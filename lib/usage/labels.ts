/** Names the console shows for the usage data's columns; no server imports (the browser loads this file). */

/** The public interfaces, by the `api` column's value (usage buckets and the request log). */
export const INTERFACE_LABELS = {
  node: "EVM JSON-RPC (/node)",
  rpc: "Consensus RPC (/rpc)",
  cometbft: "Native CometBFT (/cometbft)",
  aptos: "Aptos REST (/aptos)",
  v1: "Webhook API (/v1)",
} as const;

/** Status classes, by the `status` column's value. */
export const STATUS_LABELS = { "2xx": "Success (2xx)", "4xx": "Client error (4xx)", "5xx": "Server error (5xx)", rpc_error: "JSON-RPC error" } as const;
