import type { Endpoint, GatewayContext, Mount } from "@/lib/gateway/types";
import { chargeItem, failure, parseBody, refuseBody, respondOne, type Answer, type Body, type Dialect, type RequestObject } from "@/lib/jsonrpc/envelope";
import { InvalidRequest, invalidParams, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, type Id } from "@/lib/jsonrpc/errors";
import { CONSENSUS_ENDPOINTS, isConsensusMethod, type ConsensusMethod } from "./catalog";
import { runMethod } from "./handlers";
import { parseParams, type RawParams } from "./params";

/** CometBFT gives every error a data string; results may hold stored JSON (RawJson). */
const COMET: Dialect = { messageAsData: true, rawResults: true };

const cometError = (code: number, message: string) => new RpcError(code, message, message);

/**
 * Runs one method and meters it: the catalog's CU on success; a failed call, or one the rate limit
 * refused (charged before it runs), counts as a request and an error but costs nothing (the same
 * rule as every public endpoint).
 */
async function execute(ctx: GatewayContext, method: ConsensusMethod, raw: RawParams, id: Id): Promise<Answer> {
  const cu = CONSENSUS_ENDPOINTS[method].cu;
  try {
    const params = parseParams(method, raw);
    const limited = chargeItem(ctx, cu);
    if (limited) throw limited;
    const result = await runMethod(method, ctx.network, params);
    ctx.meter(method, cu, false);
    return { jsonrpc: "2.0", id, result };
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    ctx.meter(method, 0, true);
    return failure(id, e);
  }
}

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
        return respondOne(failure(-1, invalidParams(`id must be an integer, got ${JSON.stringify(idText.slice(0, 40))}`)), COMET);
      }
      return respondOne(await execute(ctx, method, raw, idText === undefined ? -1 : Number(idText)), COMET);
    },
  };
}

/** Named JSON-RPC params as strings, the way the URI form carries them. */
function namedParams(params: RequestObject["params"]): RawParams | null {
  if (params === undefined) return {};
  if (Array.isArray(params)) return null;
  const raw: RawParams = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof v === "string") raw[k] = v;
    else if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") raw[k] = String(v);
    else if (v !== null && v !== undefined) return null;
  }
  return raw;
}

function callOne(ctx: GatewayContext, body: Body, i: number): Promise<Answer> | Answer {
  const req = body.request(i);
  if (req instanceof InvalidRequest) {
    ctx.meter("invalid", 0, true);
    return failure(req.id, req);
  }
  const id = body.id(i, req);
  if (!isConsensusMethod(req.method)) {
    ctx.meter("invalid", 0, true);
    return failure(id, cometError(METHOD_NOT_FOUND, `Method not found: ${req.method.slice(0, 64)} (available: ${Object.keys(CONSENSUS_ENDPOINTS).join(", ")})`));
  }
  const raw = namedParams(req.params);
  if (!raw) {
    ctx.meter(req.method, 0, true);
    return failure(id, cometError(INVALID_PARAMS, "Invalid params: params must be an object of named parameters with string, number or boolean values"));
  }
  return execute(ctx, req.method, raw, id);
}

/** `POST /rpc/<network>`: the same methods as JSON-RPC 2.0 with named params, as CometBFT serves them. */
const jsonRpcEndpoint: Endpoint = {
  methods: ["POST"],
  async handle(ctx) {
    const body = parseBody(await ctx.body(), COMET);
    if (body instanceof RpcError) {
      ctx.meter("invalid", 0, true);
      return refuseBody(body);
    }
    // Each item is charged before its first await: in order, before any of them runs.
    const pending: Array<Promise<Answer> | Answer> = [];
    for (let i = 0; i < body.size; i++) pending.push(callOne(ctx, body, i));
    return body.respond(await Promise.all(pending));
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
