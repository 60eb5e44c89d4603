import type { Endpoint, GatewayContext, GatewayResponse, Mount } from "@/lib/gateway/types";
import { CONSENSUS_ENDPOINTS, isConsensusMethod, type ConsensusMethod } from "./catalog";
import { runMethod } from "./handlers";
import { stringifyWithRaw } from "./raw-json";
import { parseParams, type RawParams } from "./params";
import { invalidParams, RpcError } from "./rpc-error";

type Id = string | number | null;
type RpcAnswer = { jsonrpc: "2.0"; id: Id } & ({ result: unknown } | { error: { code: number; message: string; data: string } });

/**
 * Runs one method and meters it: the catalog's CU on success; a failed call counts as a request
 * and an error but costs nothing (the same rule as every public endpoint).
 */
async function execute(ctx: GatewayContext, method: ConsensusMethod, raw: RawParams, id: Id): Promise<RpcAnswer> {
  const cu = CONSENSUS_ENDPOINTS[method].cu;
  try {
    const params = parseParams(method, raw);
    ctx.charge(cu);
    const result = await runMethod(method, ctx.network, params);
    ctx.meter(method, cu, false);
    return { jsonrpc: "2.0", id, result };
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    ctx.meter(method, 0, true);
    return { jsonrpc: "2.0", id, error: { code: e.code, message: e.message, data: e.data } };
  }
}

const ok = (body: unknown): GatewayResponse => ({ status: 200, body: stringifyWithRaw(body) });

/** `GET /rpc/<network>/<method>?…`: the URI form, with the optional integer `id` echoed (−1 when absent). */
function uriEndpoint(method: ConsensusMethod): Endpoint {
  return {
    methods: ["GET"],
    async handle(ctx) {
      const raw: RawParams = {};
      for (const [k, v] of ctx.url.searchParams) raw[k] = v;
      const idText = raw.id;
      if (idText !== undefined && !/^-?\d{1,15}$/.test(idText)) {
        ctx.meter(method, 0, true);
        const e = invalidParams(`id must be an integer, got ${JSON.stringify(idText.slice(0, 40))}`);
        return ok({ jsonrpc: "2.0", id: -1, error: { code: e.code, message: e.message, data: e.data } });
      }
      return ok(await execute(ctx, method, raw, idText === undefined ? -1 : Number(idText)));
    },
  };
}

function rpcError(id: Id, code: number, message: string): RpcAnswer {
  return { jsonrpc: "2.0", id, error: { code, message, data: message } };
}

/** Named JSON-RPC params as strings, the way the URI form carries them. */
function namedParams(params: unknown): RawParams | null {
  if (params === undefined || params === null) return {};
  if (typeof params !== "object" || Array.isArray(params)) return null;
  const raw: RawParams = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof v === "string") raw[k] = v;
    else if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") raw[k] = String(v);
    else if (v !== null && v !== undefined) return null;
  }
  return raw;
}

async function callOne(ctx: GatewayContext, item: unknown): Promise<RpcAnswer> {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return rpcError(null, -32600, "Invalid Request: expected a JSON-RPC 2.0 request object");
  const req = item as Record<string, unknown>;
  const id: Id = typeof req.id === "string" || typeof req.id === "number" ? req.id : null;
  if (req.jsonrpc !== "2.0") return rpcError(id, -32600, 'Invalid Request: "jsonrpc" must be "2.0"');
  if (typeof req.method !== "string" || !isConsensusMethod(req.method)) {
    ctx.meter("invalid", 0, true);
    return rpcError(id, -32601, `Method not found: ${String(req.method).slice(0, 64)} (available: ${Object.keys(CONSENSUS_ENDPOINTS).join(", ")})`);
  }
  const raw = namedParams(req.params);
  if (!raw) {
    ctx.meter(req.method, 0, true);
    return rpcError(id, -32602, "Invalid params: params must be an object of named parameters with string, number or boolean values");
  }
  return execute(ctx, req.method, raw, id);
}

/** `POST /rpc/<network>`: the same methods as JSON-RPC 2.0 with named params, as CometBFT serves them. */
const jsonRpcEndpoint: Endpoint = {
  methods: ["POST"],
  async handle(ctx) {
    const body = await ctx.body();
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      ctx.meter("invalid", 0, true);
      return ok(rpcError(null, -32700, "Parse error: the body is not valid JSON"));
    }
    if (!Array.isArray(parsed)) return ok(await callOne(ctx, parsed));
    if (parsed.length === 0 || parsed.length > 100) {
      ctx.meter("invalid", 0, true);
      return ok(rpcError(null, -32600, parsed.length === 0 ? "Invalid Request: the batch is empty" : "Invalid Request: a batch holds at most 100 requests"));
    }
    return ok(await Promise.all(parsed.map((item) => callOne(ctx, item))));
  },
};

const uriEndpoints = Object.fromEntries(Object.keys(CONSENSUS_ENDPOINTS).map((m) => [m, uriEndpoint(m as ConsensusMethod)])) as Record<ConsensusMethod, Endpoint>;

/** `/rpc/<protocol>-<network>/<method>` (GET) and `/rpc/<protocol>-<network>` (POST JSON-RPC). */
export const rpcMount: Mount = {
  prefix: "rpc",
  families: ["consensus"],
  match(segments) {
    const [slug, method] = segments;
    if (slug === undefined || segments.length > 2) return undefined;
    if (method === undefined) return { network: { slug }, endpoint: jsonRpcEndpoint };
    return isConsensusMethod(method) ? { network: { slug }, endpoint: uriEndpoints[method] } : undefined;
  },
};
