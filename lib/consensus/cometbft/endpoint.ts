/**
 * The native CometBFT interface: `/cometbft/<protocol>-<network>` answers as a CometBFT 0.38 node
 * does, for the tools that speak to one (cosmjs, explorers, relayers). The key is in X-API-KEY, or
 * in the path (`/cometbft/<network>/<KEY>`), since most tools take only a URL. JSON-RPC 2.0 POST
 * (named or positional params, batches) at the root; the URI form (GET `<root>/<method>?…`) beside it.
 */
import type { Endpoint, Mount } from "@/lib/gateway/types";
import { respondOne } from "@/lib/jsonrpc/envelope";
import { COMETBFT_ENDPOINTS, isCometbftMethod, type CometbftMethod } from "../catalog";
import { batchEndpoint, COMET } from "../endpoint";
import { callOne, cometError, prepareCall } from "./call";
import { cometbftSocket } from "./websocket";

/** `GET …/<method>?…`: the URI form; the optional integer `id` is echoed (−1 when absent). */
function uriEndpoint(method: CometbftMethod): Endpoint {
  return {
    methods: ["GET"],
    async handle(ctx) {
      const raw: Record<string, unknown> = {};
      for (const [k, v] of ctx.url.searchParams) if (k !== "id") raw[k] = v;
      const idText = ctx.url.searchParams.get("id");
      const id = idText !== null && /^-?\d{1,15}$/.test(idText) ? Number(idText) : -1;
      const call = prepareCall(ctx, method, raw, "uri", id);
      return respondOne(typeof call === "function" ? await call() : call, COMET);
    },
  };
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
