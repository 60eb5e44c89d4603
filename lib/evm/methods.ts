import type { Plan } from "@/lib/db/generated/enums";

/**
 * The EVM method catalog: every JSON-RPC method the node endpoint serves, what it costs and
 * whether its result may come from the head cache. Methods not listed are refused.
 * CU costs follow the usual public-gateway scale: cheap reads, heavier state and log queries,
 * expensive writes and traces; failed calls are free.
 */
export interface MethodInfo {
  cu: number;
  /**
   * never: always ask the node; head: without parameters, valid until the next block (cached for
   * a fraction of the block time).
   */
  cache: "never" | "head";
  /** Answered from the network catalog, never sent to a node. */
  local?: "chainId" | "netVersion" | "accounts";
  /** Sends a transaction: never retried on another node once it may have reached one (and always sent alone). */
  write?: boolean;
  /**
   * Can take long on the node (log queries, receipts of a whole block, gas estimates, traces):
   * never sent in one batch with other callers' calls, whose answers would wait for it.
   */
  alone?: boolean;
  /** Plans allowed to call it (all when absent). */
  plans?: readonly Plan[];
}

const TRACE_PLANS: readonly Plan[] = ["BUSINESS", "ENTERPRISE"];

export const EVM_METHODS: Readonly<Record<string, MethodInfo>> = {
  // Answered from the catalog.
  eth_chainId: { cu: 5, cache: "never", local: "chainId" },
  net_version: { cu: 5, cache: "never", local: "netVersion" },
  // A gateway holds no accounts: sign locally and send with eth_sendRawTransaction.
  eth_accounts: { cu: 5, cache: "never", local: "accounts" },
  // Node and network.
  net_listening: { cu: 5, cache: "never" },
  net_peerCount: { cu: 5, cache: "never" },
  web3_clientVersion: { cu: 5, cache: "never" },
  web3_sha3: { cu: 10, cache: "never" },
  eth_syncing: { cu: 5, cache: "never" },
  eth_protocolVersion: { cu: 5, cache: "never" },
  // Head and fees.
  eth_blockNumber: { cu: 10, cache: "head" },
  eth_gasPrice: { cu: 10, cache: "head" },
  eth_maxPriorityFeePerGas: { cu: 10, cache: "head" },
  eth_blobBaseFee: { cu: 10, cache: "head" },
  eth_feeHistory: { cu: 20, cache: "never" },
  // State.
  eth_getBalance: { cu: 20, cache: "never" },
  eth_getCode: { cu: 20, cache: "never" },
  eth_getStorageAt: { cu: 20, cache: "never" },
  eth_getTransactionCount: { cu: 20, cache: "never" },
  eth_getProof: { cu: 21, cache: "never" },
  eth_call: { cu: 26, cache: "never" },
  eth_estimateGas: { cu: 87, cache: "never", alone: true },
  eth_createAccessList: { cu: 50, cache: "never", alone: true },
  // Blocks and transactions.
  eth_getBlockByNumber: { cu: 16, cache: "never" },
  eth_getBlockByHash: { cu: 16, cache: "never" },
  eth_getBlockTransactionCountByNumber: { cu: 20, cache: "never" },
  eth_getBlockTransactionCountByHash: { cu: 20, cache: "never" },
  eth_getUncleCountByBlockNumber: { cu: 5, cache: "never" },
  eth_getUncleCountByBlockHash: { cu: 5, cache: "never" },
  eth_getUncleByBlockNumberAndIndex: { cu: 20, cache: "never" },
  eth_getUncleByBlockHashAndIndex: { cu: 20, cache: "never" },
  eth_getTransactionByHash: { cu: 17, cache: "never" },
  eth_getTransactionByBlockNumberAndIndex: { cu: 15, cache: "never" },
  eth_getTransactionByBlockHashAndIndex: { cu: 15, cache: "never" },
  eth_getTransactionReceipt: { cu: 15, cache: "never" },
  eth_getBlockReceipts: { cu: 500, cache: "never", alone: true },
  // Logs and filters.
  eth_getLogs: { cu: 75, cache: "never", alone: true },
  eth_newFilter: { cu: 20, cache: "never" },
  eth_newBlockFilter: { cu: 20, cache: "never" },
  eth_newPendingTransactionFilter: { cu: 20, cache: "never" },
  eth_getFilterChanges: { cu: 20, cache: "never" },
  eth_getFilterLogs: { cu: 75, cache: "never", alone: true },
  eth_uninstallFilter: { cu: 10, cache: "never" },
  // Writes.
  eth_sendRawTransaction: { cu: 250, cache: "never", write: true },
  // Traces, on plans that include them.
  debug_traceTransaction: { cu: 309, cache: "never", plans: TRACE_PLANS, alone: true },
  debug_traceCall: { cu: 309, cache: "never", plans: TRACE_PLANS, alone: true },
  debug_traceBlockByNumber: { cu: 497, cache: "never", plans: TRACE_PLANS, alone: true },
  debug_traceBlockByHash: { cu: 497, cache: "never", plans: TRACE_PLANS, alone: true },
};

/** Families of node-admin and devnet-control methods that are never served. */
const REFUSED_METHOD_PREFIXES = ["admin_", "personal_", "miner_", "anvil_", "evm_", "hardhat_", "debug_", "txpool_", "engine_", "trace_"] as const;

/** Why a method is refused, in words for the caller; undefined when it is served for this plan. */
export function refusal(method: string, plan: Plan): string | undefined {
  const info = Object.hasOwn(EVM_METHODS, method) ? EVM_METHODS[method] : undefined;
  const name = method.slice(0, 64);
  if (info) {
    if (info.plans && !info.plans.includes(plan)) return `The method ${name} is not available on this project's plan (traces need Business or Enterprise).`;
    return undefined;
  }
  if (/^eth_(sendTransaction|sign|signTransaction|signTypedData)/.test(method)) {
    return `The method ${name} is not available: the gateway holds no keys. Sign the transaction locally and send it with eth_sendRawTransaction.`;
  }
  if (method === "eth_subscribe" || method === "eth_unsubscribe") return `The method ${name} needs a WebSocket connection, which this endpoint does not offer; poll with filters or use webhooks.`;
  if (REFUSED_METHOD_PREFIXES.some((p) => method.startsWith(p))) {
    return `The method ${name} is not available on this endpoint (node administration and devnet control are not served).`;
  }
  return `The method ${name} does not exist or is not available.`;
}

/**
 * The methods the console playground offers, in its order, with what each answers. Every one is
 * in EVM_METHODS and served on every plan (the playground tests say so).
 */
export const EVM_METHOD_SUMMARIES = {
  eth_blockNumber: "Number of the latest block.",
  eth_chainId: "The chain id, as transactions are signed for it.",
  eth_getBalance: "Native balance of an address at a block.",
  eth_getBlockByNumber: "A block by number or tag, with hashes or full transactions.",
  eth_getTransactionByHash: "A transaction by its hash.",
  eth_getTransactionReceipt: "Status, gas used and logs of a mined transaction.",
  eth_getLogs: "Event logs matching an address, topics and a block range.",
  eth_call: "Runs a contract call without a transaction.",
  eth_estimateGas: "Gas a transaction would use.",
  eth_gasPrice: "Current gas price.",
  eth_feeHistory: "Base fees and priority-fee percentiles of recent blocks.",
  net_version: "The network id, in decimal.",
  web3_clientVersion: "The node software's version.",
} as const satisfies Record<string, string>;
