/**
 * The EVM method catalog: which JSON-RPC methods the node endpoint serves and what each costs.
 * `local` methods are answered from the network catalog without an upstream call.
 */
export interface MethodInfo {
  cu: number;
  local?: "chainId" | "netVersion";
}

export const EVM_METHODS: Record<string, MethodInfo> = {
  eth_chainId: { cu: 5, local: "chainId" },
  net_version: { cu: 5, local: "netVersion" },
};

/** Families of node-admin and devnet-control methods that are never served. */
export const REFUSED_METHOD_PREFIXES = ["admin_", "personal_", "miner_", "anvil_", "evm_", "hardhat_", "debug_"] as const;
