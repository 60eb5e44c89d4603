import { AppError } from "@/lib/errors";
import type { Endpoint, GatewayContext, GatewayResponse, Mount } from "@/lib/gateway/types";
import { EVM_METHODS, REFUSED_METHOD_PREFIXES } from "./methods";

export const MAX_BATCH = 100;

type Id = string | number | null;
interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}
type RpcResponse = { jsonrpc: "2.0"; id: Id } & ({ result: unknown } | { error: RpcError });

const rpcError = (id: Id, code: number, message: string): RpcResponse => ({ jsonrpc: "2.0", id, error: { code, message } });

function isValidId(id: unknown): id is Id {
  return id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/** One JSON-RPC call. Synchronous for methods answered from the catalog. */
function call(ctx: GatewayContext, item: unknown): RpcResponse {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    return rpcError(null, -32600, "Invalid Request: expected a JSON-RPC 2.0 request object");
  }
  const req = item as Record<string, unknown>;
  const id: Id = isValidId(req.id) ? req.id : null;
  if (req.jsonrpc !== "2.0") return rpcError(id, -32600, 'Invalid Request: "jsonrpc" must be "2.0"');
  if (req.id !== undefined && !isValidId(req.id)) return rpcError(null, -32600, 'Invalid Request: "id" must be a string, a number or null');
  if (typeof req.method !== "string" || req.method === "") return rpcError(id, -32600, 'Invalid Request: "method" must be a non-empty string');
  if (req.params !== undefined && (typeof req.params !== "object" || req.params === null)) {
    return rpcError(id, -32600, 'Invalid Request: "params" must be an array or an object');
  }
  const method = req.method;
  const info = Object.hasOwn(EVM_METHODS, method) ? EVM_METHODS[method] : undefined;
  if (!info) {
    ctx.meter(method.slice(0, 64), 0, true);
    const refused = REFUSED_METHOD_PREFIXES.some((p) => method.startsWith(p));
    return rpcError(
      id,
      -32601,
      refused
        ? `The method ${method.slice(0, 64)} is not available on this endpoint (node administration and devnet control are not served).`
        : `The method ${method.slice(0, 64)} does not exist or is not available on ${ctx.network.slug}.`,
    );
  }
  try {
    ctx.charge(info.cu);
  } catch (e) {
    ctx.meter(method, 0, true);
    if (e instanceof AppError) return { jsonrpc: "2.0", id, error: { code: -32005, message: e.message } };
    throw e;
  }
  const chainId = ctx.network.activeChainId;
  const result = info.local === "chainId" ? `0x${Number(chainId).toString(16)}` : String(chainId);
  ctx.meter(method, info.cu, false);
  return { jsonrpc: "2.0", id, result };
}

async function handle(ctx: GatewayContext): Promise<GatewayResponse> {
  const raw = await ctx.body();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    ctx.meter("invalid", 0, true);
    return { status: 200, body: rpcError(null, -32700, "Parse error: the body is not valid JSON") };
  }
  if (!Array.isArray(parsed)) return { status: 200, body: call(ctx, parsed) };
  if (parsed.length === 0) {
    ctx.meter("invalid", 0, true);
    return { status: 200, body: rpcError(null, -32600, "Invalid Request: the batch is empty") };
  }
  if (parsed.length > MAX_BATCH) {
    ctx.meter("invalid", 0, true);
    return { status: 200, body: rpcError(null, -32600, `Invalid Request: a batch holds at most ${MAX_BATCH} requests`) };
  }
  return { status: 200, body: parsed.map((item) => call(ctx, item)) };
}

const nodeEndpoint: Endpoint = { methods: ["POST"], handle };

/** `/node/<protocol>-<network>` and `/node/<protocol>-<network>/<API_KEY>`. */
export const nodeMount: Mount = {
  prefix: "node",
  families: ["evm"],
  match(segments) {
    if (segments.length === 1) return { network: { slug: segments[0]! }, endpoint: nodeEndpoint };
    if (segments.length === 2) return { network: { slug: segments[0]! }, endpoint: nodeEndpoint, pathKey: segments[1]! };
    return undefined;
  },
};
