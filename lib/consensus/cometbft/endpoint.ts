/**
 * The native CometBFT interface: `/cometbft/<protocol>-<network>` answers as a CometBFT 0.38 node
 * does, for the tools that speak to one (cosmjs, explorers, relayers). The key is in X-API-KEY, or
 * in the path (`/cometbft/<network>/<KEY>`), since most tools take only a URL. JSON-RPC 2.0 POST
 * (named or positional params, batches) at the root; the URI form (GET `<root>/<method>?…`) beside it.
 */
import type { Endpoint, GatewayContext, Mount } from "@/lib/gateway/types";
import { failure, respondOne, type Answer, type Body } from "@/lib/jsonrpc/envelope";
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, InvalidRequest, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, type Id } from "@/lib/jsonrpc/errors";
import { callCu, COMETBFT_ENDPOINTS, isCometbftMethod, type CometbftMethod } from "../catalog";
import { batchEndpoint, COMET, meteredCall } from "../endpoint";
import { runNative } from "./handlers";
import { cometbftSocket } from "./websocket";
import { parseNativeParams, type Form } from "./params";

/** CometBFT's messages for the standard codes; the detail goes in data. */
const MESSAGES: Record<number, string> = {
  [PARSE_ERROR]: "Parse error. Invalid JSON",
  [INVALID_REQUEST]: "Invalid Request",
  [METHOD_NOT_FOUND]: "Method not found",
  [INVALID_PARAMS]: "Invalid params",
  [INTERNAL_ERROR]: "Internal error",
};

/** An error as CometBFT writes it: `{ code, message: "<standard>", data: "<detail>" }`; the gateway's own codes as they are. */
export function cometError(e: RpcError): RpcError {
  const message = MESSAGES[e.code];
  if (message === undefined || e.message === message) return e;
  const detail = typeof e.data === "string" && e.data !== "" ? e.data : e.message;
  return e instanceof InvalidRequest ? new InvalidRequest(e.id, message, detail) : new RpcError(e.code, message, detail);
}

const fail = (id: Id, e: RpcError): Answer => failure(id, cometError(e));

function prepare(ctx: GatewayContext, method: CometbftMethod, raw: Record<string, unknown> | unknown[], form: Form, id: Id): Answer | (() => Promise<Answer>) {
  return meteredCall(
    ctx,
    method,
    id,
    () => {
      const params = parseNativeParams(method, raw, form);
      // A search costs what it does on /rpc: more for each event condition after the first.
      const cu = method === "tx_search" || method === "block_search" ? callCu(method, params.parsed.query) : COMETBFT_ENDPOINTS[method].cu;
      return { params, cu };
    },
    (params) => runNative(method, ctx.network, params),
    fail,
  );
}

/** `GET …/<method>?…`: the URI form; the optional integer `id` is echoed (−1 when absent). */
function uriEndpoint(method: CometbftMethod): Endpoint {
  return {
    methods: ["GET"],
    async handle(ctx) {
      const raw: Record<string, unknown> = {};
      for (const [k, v] of ctx.url.searchParams) if (k !== "id") raw[k] = v;
      const idText = ctx.url.searchParams.get("id");
      const id = idText !== null && /^-?\d{1,15}$/.test(idText) ? Number(idText) : -1;
      const call = prepare(ctx, method, raw, "uri", id);
      return respondOne(typeof call === "function" ? await call() : call, COMET);
    },
  };
}

export function callOne(ctx: GatewayContext, body: Body, i: number): Answer | (() => Promise<Answer>) {
  const req = body.request(i);
  if (req instanceof InvalidRequest) {
    ctx.meter("invalid", 0, true);
    return fail(req.id, req);
  }
  const id = body.id(i, req);
  if (!isCometbftMethod(req.method)) {
    ctx.meter("invalid", 0, true);
    return fail(id, new RpcError(METHOD_NOT_FOUND, "Method not found", `method ${JSON.stringify(req.method.slice(0, 64))} is not served here (available: ${Object.keys(COMETBFT_ENDPOINTS).join(", ")})`));
  }
  return prepare(ctx, req.method, req.params ?? {}, "json", id);
}

/** `POST /cometbft/<network>[/<KEY>]`: JSON-RPC 2.0, one call or a batch. */
const jsonRpcEndpoint = batchEndpoint(callOne, cometError);

const uriEndpoints = Object.fromEntries(Object.keys(COMETBFT_ENDPOINTS).map((m) => [m, uriEndpoint(m as CometbftMethod)])) as Record<CometbftMethod, Endpoint>;

/**
 * `/cometbft/<slug>` (POST), `/cometbft/<slug>/<method>` (GET), and with the key in the path
 * `/cometbft/<slug>/<KEY>` (POST) and `/cometbft/<slug>/<KEY>/<method>` (GET). A second segment
 * that names a method is the method (no key is a method name). The WebSocket (JSON-RPC with
 * subscriptions, websocket.ts) is at `/cometbft/<slug>/websocket` and `/cometbft/<slug>/<KEY>/websocket`.
 */
export const cometbftMount: Mount = {
  prefix: "cometbft",
  serves: (network) => network.family === "consensus",
  match(segments) {
    const [slug, second, third] = segments;
    if (slug === undefined || segments.length > 3) return undefined;
    const network = { slug };
    if (second === undefined) return { network, endpoint: jsonRpcEndpoint };
    if (third === undefined) return isCometbftMethod(second) ? { network, endpoint: uriEndpoints[second] } : { network, endpoint: jsonRpcEndpoint, pathKey: second };
    return isCometbftMethod(third) ? { network, endpoint: uriEndpoints[third], pathKey: second } : undefined;
  },
  upgrade(segments) {
    const [slug, second, third] = segments;
    if (slug === undefined || segments.length < 2 || segments.length > 3 || segments.at(-1) !== "websocket") return undefined;
    if (third === undefined) return { network: { slug }, accept: cometbftSocket };
    return { network: { slug }, pathKey: second, accept: cometbftSocket };
  },
};
