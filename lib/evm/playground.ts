/**
 * The EVM family's playground tab, free of React: the methods it offers (from the gateway's
 * catalog), their parameter templates filled from the chain's own data, the request, and the viem
 * snippet that repeats it.
 */
import type { PlaygroundRequest } from "@/lib/chains/descriptor";
import type { EvmExamples } from "./examples";
import { EVM_METHOD_SUMMARIES, EVM_METHODS } from "./methods";

export type EvmPlaygroundMethod = keyof typeof EVM_METHOD_SUMMARIES;

/** The methods the playground offers, from the gateway's catalog, in its order. */
export const EVM_PLAYGROUND_METHODS = Object.keys(EVM_METHOD_SUMMARIES) as EvmPlaygroundMethod[];

export function isEvmPlaygroundMethod(m: string): m is EvmPlaygroundMethod {
  return Object.hasOwn(EVM_METHOD_SUMMARIES, m);
}

/** CU of a method, from the gateway's catalog (which has every method the playground offers). */
export function evmCu(method: EvmPlaygroundMethod): number {
  return EVM_METHODS[method]!.cu;
}

/** Blocks covered by the eth_getLogs template. */
export const LOG_RANGE = 100n;

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

const hex = (n: bigint) => `0x${n.toString(16)}`;

/** The params of a method, filled from the examples where it needs a value from the chain. */
export function evmTemplate(method: EvmPlaygroundMethod, ex: EvmExamples | undefined): unknown[] {
  const account = ex?.account ?? ZERO_ADDRESS;
  const token = ex?.token ?? null;
  const txHash = ex?.txHash ?? "0x" + "0".repeat(64);
  switch (method) {
    case "eth_getBalance":
      return [account, "latest"];
    case "eth_getBlockByNumber":
      return [ex?.latestBlock?.number ?? "latest", false];
    case "eth_getTransactionByHash":
    case "eth_getTransactionReceipt":
      return [txHash];
    case "eth_getLogs": {
      const latest = ex?.latestBlock ? BigInt(ex.latestBlock.number) : null;
      const range = latest === null ? { fromBlock: "latest", toBlock: "latest" } : { fromBlock: hex(latest >= LOG_RANGE - 1n ? latest - (LOG_RANGE - 1n) : 0n), toBlock: hex(latest) };
      return token ? [{ ...range, address: token.address, topics: [token.transferTopic] }] : [range];
    }
    case "eth_call":
      return token ? [{ to: token.address, data: token.balanceOfData }, "latest"] : [{ to: account, data: "0x" }, "latest"];
    case "eth_estimateGas":
      return token ? [{ from: token.holder, to: token.address, data: token.transferData }] : [{ from: account, to: account, value: "0x0" }];
    case "eth_feeHistory":
      return ["0x5", "latest", [25, 75]];
    case "eth_blockNumber":
    case "eth_chainId":
    case "eth_gasPrice":
    case "net_version":
    case "web3_clientVersion":
      return [];
  }
}

export const nodePath = (slug: string) => `/node/${slug}`;

/** A JSON-RPC 2.0 request, POSTed to the network's node endpoint. */
export function evmRequest(slug: string, method: string, params: unknown[]): PlaygroundRequest {
  return { method: "POST", path: nodePath(slug), headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) };
}

/** The RPC URL with the key in the path, as a wallet takes it. */
export const walletRpcUrl = (origin: string, slug: string, key: string) => `${origin}${nodePath(slug)}/${key}`;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isHex = (v: unknown): v is string => typeof v === "string" && /^0x[0-9a-fA-F]*$/.test(v);
const BLOCK_TAGS = ["latest", "earliest", "pending", "safe", "finalized"];

/** A block parameter as viem arguments: `blockTag: "latest"` or `blockNumber: 123n`; null when neither. */
function blockArg(v: unknown): string | null {
  if (v === undefined) return "";
  if (typeof v === "string" && BLOCK_TAGS.includes(v)) return `blockTag: ${JSON.stringify(v)}`;
  if (isHex(v) && v.length > 2 && v.length <= 18) return `blockNumber: ${BigInt(v).toString()}n`;
  return null;
}

const join = (parts: string[]) => parts.filter((p) => p !== "").join(", ");

/** The viem action that makes the same request, when the params have the shape it takes. */
function viemCall(method: string, params: unknown[]): string | null {
  const [a, b] = params;
  switch (method) {
    case "eth_blockNumber":
      return params.length === 0 ? "await client.getBlockNumber()" : null;
    case "eth_chainId":
      return params.length === 0 ? "await client.getChainId()" : null;
    case "eth_gasPrice":
      return params.length === 0 ? "await client.getGasPrice()" : null;
    case "eth_getBalance": {
      const block = blockArg(b);
      return isHex(a) && block !== null && params.length <= 2 ? `await client.getBalance({ ${join([`address: ${JSON.stringify(a)}`, block])} })` : null;
    }
    case "eth_getTransactionByHash":
      return isHex(a) && params.length === 1 ? `await client.getTransaction({ hash: ${JSON.stringify(a)} })` : null;
    case "eth_getTransactionReceipt":
      return isHex(a) && params.length === 1 ? `await client.getTransactionReceipt({ hash: ${JSON.stringify(a)} })` : null;
    case "eth_getBlockByNumber": {
      const block = blockArg(a);
      if (block === null || block === "" || (b !== undefined && typeof b !== "boolean") || params.length > 2) return null;
      return `await client.getBlock({ ${join([block, b === true ? "includeTransactions: true" : ""])} })`;
    }
    case "eth_call": {
      const block = blockArg(b);
      if (!isRecord(a) || block === null || params.length > 2) return null;
      const known = ["to", "data", "from"];
      if (!Object.keys(a).every((k) => known.includes(k) && isHex(a[k]))) return null;
      return `await client.call({ ${join([...known.filter((k) => k in a).map((k) => `${k}: ${JSON.stringify(a[k])}`), block])} })`;
    }
    default:
      return null;
  }
}

/** A viem snippet that repeats the request: the matching action, or `client.request` generically. */
export function viemSnippet(url: string, method: string, params: unknown[]): string {
  const call = viemCall(method, params) ?? `await client.request({\n  method: ${JSON.stringify(method)},\n  params: ${JSON.stringify(params)},\n})`;
  return [
    `import { createPublicClient, http } from "viem";`,
    ``,
    `const client = createPublicClient({ transport: http(${JSON.stringify(url)}) });`,
    ``,
    `const result = ${call};`,
    `console.log(result);`,
  ].join("\n");
}
