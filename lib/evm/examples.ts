/**
 * Example values for the console's EVM playground, read from the network itself so that the
 * request templates find something: the latest block and a transaction in it, and on a devnet
 * the BlockgateToken, a holder and the calldata of `balanceOf(holder)`.
 */
import { encodeFunctionData, getAddress, isAddress, type Address, type Hex } from "viem";
import { AppError } from "@/lib/errors";
import type { Network } from "@/lib/networks";
import { services } from "@/lib/services";
import { NoBackend } from "./backends";
import { BlockgateToken, DEVNET_CONTRACTS, devnetContractAddresses } from "./devnet/contracts";
import type { EvmUpstream } from "./upstream";

export interface EvmExamples {
  network: string;
  source: "devnet" | "upstream";
  /** The latest block; null only if the node has none (never on a running chain). */
  latestBlock: { number: Hex; hash: Hex } | null;
  /** A transaction of the latest block (or, when it has none, of one of the few before it). */
  txHash: Hex | null;
  /** An address with a balance: the token's first holder on a devnet, the latest block's miner upstream. */
  account: Address | null;
  /** Devnet only, once the traffic generator has deployed it. */
  token: {
    address: Address;
    symbol: string;
    decimals: number;
    /** The first holder (the deployer, `eth_accounts[0]`). */
    holder: Address;
    /** Another holder, as the recipient of an estimated transfer. */
    recipient: Address;
    /** topic0 of `Transfer(address,address,uint256)`. */
    transferTopic: Hex;
    /** Calldata of `balanceOf(holder)`. */
    balanceOfData: Hex;
    /** Calldata of `transfer(recipient, 1)`, for eth_estimateGas. */
    transferData: Hex;
  } | null;
}

/** How many blocks back from the latest one a transaction is looked for. */
const TX_LOOKBACK = 5;

class RpcFailed extends Error {
  override name = "RpcFailed";
}

let nextId = 1;

async function rpc<T>(pool: EvmUpstream, method: string, params: unknown[]): Promise<T> {
  const answer = (await pool.send(JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }), { retryable: true })) as {
    result?: T;
    error?: { message?: string };
  } | null;
  if (!answer || typeof answer !== "object") throw new RpcFailed(`${method}: the node's answer is not a JSON-RPC response`);
  if (answer.error) throw new RpcFailed(`${method}: ${answer.error.message ?? "the node answered with an error"}`);
  return answer.result as T;
}

interface RpcBlock {
  number: Hex;
  hash: Hex;
  miner?: Hex;
  transactions?: Hex[];
}

async function latestWithTx(pool: EvmUpstream): Promise<{ block: RpcBlock | null; txHash: Hex | null }> {
  const latest = await rpc<RpcBlock | null>(pool, "eth_getBlockByNumber", ["latest", false]);
  if (!latest) return { block: null, txHash: null };
  let block: RpcBlock | null = latest;
  for (let i = 0; block && i < TX_LOOKBACK; i++) {
    const tx = block.transactions?.[0];
    if (tx) return { block: latest, txHash: tx };
    const n: bigint = BigInt(block.number);
    if (n === 0n) break;
    block = await rpc<RpcBlock | null>(pool, "eth_getBlockByNumber", [`0x${(n - 1n).toString(16)}`, false]);
  }
  return { block: latest, txHash: null };
}

async function devnetToken(pool: EvmUpstream): Promise<EvmExamples["token"]> {
  const accounts = (await rpc<string[]>(pool, "eth_accounts", [])).filter((a) => isAddress(a)).map((a) => getAddress(a));
  const [holder, recipient] = accounts;
  if (!holder || !recipient) return null;
  const { token } = devnetContractAddresses(holder);
  const code = await rpc<Hex>(pool, "eth_getCode", [token, "latest"]);
  if (!code || code === "0x") return null; // not deployed yet: the traffic generator is still starting
  const t = DEVNET_CONTRACTS.token;
  return {
    address: token,
    symbol: t.symbol,
    decimals: t.decimals,
    holder,
    recipient,
    transferTopic: t.events.Transfer.topic0,
    balanceOfData: encodeFunctionData({ abi: BlockgateToken.abi, functionName: "balanceOf", args: [holder] }),
    transferData: encodeFunctionData({ abi: BlockgateToken.abi, functionName: "transfer", args: [recipient, 1n] }),
  };
}

/** Examples for an EVM network; throws AppError UNAVAILABLE when its node cannot be reached. */
export async function evmExamples(network: Network): Promise<EvmExamples> {
  const source = network.source.kind;
  try {
    const pool = await services().evm.poolFor(network);
    const [{ block, txHash }, token] = await Promise.all([latestWithTx(pool), source === "devnet" ? devnetToken(pool) : Promise.resolve(null)]);
    const miner = block?.miner && isAddress(block.miner) ? getAddress(block.miner) : null;
    return {
      network: network.slug,
      source,
      latestBlock: block ? { number: block.number, hash: block.hash } : null,
      txHash,
      account: token?.holder ?? miner,
      token,
    };
  } catch (e) {
    if (e instanceof NoBackend || e instanceof RpcFailed || (e instanceof Error && e.name === "UpstreamUnavailable")) {
      throw new AppError("UNAVAILABLE", `${network.displayName}: ${e.message}`);
    }
    throw e;
  }
}
