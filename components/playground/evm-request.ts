/**
 * The EVM playground's request logic, free of React: the methods it offers, their parameter
 * templates filled from the chain's own data, checking the params JSON, and the curl and viem
 * snippets that repeat a request.
 */
import type { EvmExamples } from "@/lib/evm/examples";
import { EVM_METHODS } from "@/lib/evm/methods";

export type { EvmExamples };

export const EVM_PLAYGROUND_METHODS = [
  "eth_blockNumber",
  "eth_chainId",
  "eth_getBalance",
  "eth_getBlockByNumber",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
  "eth_getLogs",
  "eth_call",
  "eth_estimateGas",
  "eth_gasPrice",
  "eth_feeHistory",
  "net_version",
  "web3_clientVersion",
] as const;

export type EvmPlaygroundMethod = (typeof EVM_PLAYGROUND_METHODS)[number];

export function isEvmPlaygroundMethod(m: string): m is EvmPlaygroundMethod {
  return (EVM_PLAYGROUND_METHODS as readonly string[]).includes(m);
}

export const EVM_METHOD_DESCRIPTIONS: Record<EvmPlaygroundMethod, string> = {
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
};

/** CU of a method, from the gateway's catalog. */
export function evmCu(method: EvmPlaygroundMethod): number {
  return EVM_METHODS[method]?.cu ?? 0;
}

/** What the browser needs about an EVM network (never its upstream URLs). */
export interface EvmPlaygroundNetwork {
  slug: string;
  displayName: string;
  /** The chain id this deployment answers with (the devnet's own on a devnet), in decimal. */
  chainId: string;
  currency: string;
  source: "devnet" | "upstream";
}

export const evmExamplesQueryKey = (projectId: string, network: string) => ["playground-evm-examples", projectId, network] as const;

export const evmExamplesPath = (projectId: string, network: string) =>
  `/api/projects/${encodeURIComponent(projectId)}/playground/evm-examples?network=${encodeURIComponent(network)}`;

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

export const formatParams = (params: unknown[]): string => (params.length === 0 ? "[]" : JSON.stringify(params, null, 2));

export type ParamsCheck = { ok: true; params: unknown[] } | { ok: false; error: string };

/** The params text must be JSON and an array (JSON-RPC's positional params). */
export function checkParams(text: string): ParamsCheck {
  if (text.trim() === "") return { ok: false, error: "Enter the params as a JSON array, such as []." };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!Array.isArray(parsed)) return { ok: false, error: "The params must be a JSON array, such as [] or [\"latest\", false]." };
  return { ok: true, params: parsed };
}

export const nodePath = (slug: string) => `/node/${slug}`;

export function requestBody(method: string, params: unknown[]): string {
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
}

/** Single-quotes a string for a POSIX shell. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function evmCurlCommand(origin: string, slug: string, key: string, body: string): string {
  return `curl -s ${shellQuote(`${origin}${nodePath(slug)}`)} \\\n  -H 'Content-Type: application/json' -H ${shellQuote(`X-API-KEY: ${key}`)} \\\n  -d ${shellQuote(body)}`;
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
