/**
 * One call of the native CometBFT interface, as the JSON-RPC endpoint, the URI form and the
 * WebSocket (websocket.ts) answer it, and its errors as CometBFT writes them.
 */
import type { GatewayContext } from "@/lib/gateway/types";
import { failure, type Answer, type Body } from "@/lib/jsonrpc/envelope";
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, InvalidRequest, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, type Id } from "@/lib/jsonrpc/errors";
import { callCu, COMETBFT_ENDPOINTS, isCometbftMethod, type CometbftMethod } from "../catalog";
import { meteredCall } from "../endpoint";
import { runNative } from "./handlers";
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

/** Checks and charges one call of `method`, then runs it: answered at once when refused, else the call to run. */
export function prepareCall(ctx: GatewayContext, method: CometbftMethod, raw: Record<string, unknown> | unknown[], form: Form, id: Id): Answer | (() => Promise<Answer>) {
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

/** Item `i` of a JSON-RPC body, as the interface answers it. */
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
  return prepareCall(ctx, req.method, req.params ?? {}, "json", id);
}
