/**
 * The webhook API on the public gateway: `/v1/<protocol>/<network>/webhooks…` with the key in
 * X-API-KEY (the gateway authenticates, resolves the network and limits), the test inboxes at
 * `/v1/inbox/<token>` and the OpenAPI document at `/v1/openapi.json` (neither needs a key).
 * Each call is charged and metered by the catalog's CU (lib/webhooks/catalog.ts), plus
 * WEBHOOK_DELIVERY_CU per message it queues (test, resend, replay); failures cost 0.
 */
import type { Endpoint, GatewayContext, GatewayResponse, Mount, OpenRoute, RouteMatch } from "@/lib/gateway/types";
import { toAppError } from "@/lib/errors";
import { parseJsonBody } from "@/lib/text";
import { queryInput } from "@/lib/validation";
import type { MessageBilling } from "./actions";
import { WEBHOOK_ROUTES, webhookUsageLabel, type WebhookRouteId } from "./catalog";
import { INBOX_BODY_LIMIT, recordInboxRequest } from "./inbox";
import { openApiJson } from "./openapi";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  previewWebhook,
  replayWebhook,
  resendWebhookMessage,
  testWebhook,
  updateWebhook,
  webhookHistory,
  type WebhookScope,
} from "./service";

/** Webhook requests are small; anything bigger is refused before parsing. */
const BODY_LIMIT = 64 * 1024;

async function jsonBody(ctx: GatewayContext): Promise<unknown> {
  return parseJsonBody(await ctx.body(BODY_LIMIT));
}

const scopeOf = (ctx: GatewayContext): WebhookScope => ({ projectId: ctx.principal.projectId, network: ctx.network });
const ok = (body: unknown, status = 200): GatewayResponse => ({ status, body });

/** Messages a call queues: paid from the key's project's allowance, with the call's own CU. */
class CallBilling implements MessageBilling {
  cu = 0;
  constructor(private readonly ctx: GatewayContext) {}
  async check(cu: number): Promise<void> {
    this.ctx.allowance(cu);
  }
  charge(cu: number): void {
    this.cu += cu;
  }
}

/**
 * Charges the route's CU (throughput), runs it, and meters it with the CU of the messages it
 * queued (0 CU and an error when it fails).
 */
async function metered(ctx: GatewayContext, route: WebhookRouteId, work: (billing: MessageBilling) => Promise<GatewayResponse>): Promise<GatewayResponse> {
  const { cu } = WEBHOOK_ROUTES[route];
  ctx.charge(cu);
  const label = webhookUsageLabel(route);
  const billing = new CallBilling(ctx);
  let response: GatewayResponse;
  try {
    response = await work(billing);
  } catch (e) {
    ctx.meter(label, 0, true, toAppError(e, () => undefined).status);
    throw e;
  }
  ctx.meter(label, cu + billing.cu, false);
  return response;
}

type Handlers = Partial<Record<"GET" | "POST" | "PATCH" | "DELETE", [WebhookRouteId, (ctx: GatewayContext, billing: MessageBilling) => Promise<GatewayResponse>]>>;

/** One path: its methods, each with its catalog route. */
function endpoint(handlers: Handlers): Endpoint {
  return {
    methods: Object.keys(handlers),
    handle(ctx) {
      const [route, run] = handlers[ctx.req.method as keyof Handlers]!;
      return metered(ctx, route, (billing) => run(ctx, billing));
    },
  };
}

const collection = endpoint({
  GET: ["list", async (ctx) => ok(await listWebhooks(scopeOf(ctx), queryInput(ctx.url.searchParams)))],
  POST: ["create", async (ctx) => ok(await createWebhook(ctx.principal.projectId, ctx.network, await jsonBody(ctx)), 201)],
});
const history = endpoint({ GET: ["history", async (ctx) => ok(await webhookHistory(scopeOf(ctx), queryInput(ctx.url.searchParams)))] });
const preview = endpoint({ POST: ["preview", async (ctx) => ok(await previewWebhook(ctx.network, await jsonBody(ctx)))] });

function subscriptionEndpoints(id: string, rest: string[]): Endpoint | undefined {
  if (rest.length === 0) {
    return endpoint({
      GET: ["get", async (ctx) => ok(await getWebhook(scopeOf(ctx), id))],
      PATCH: [
        "update",
        async (ctx) => {
          await updateWebhook(scopeOf(ctx), id, await jsonBody(ctx));
          return ok({ result: true });
        },
      ],
      DELETE: [
        "delete",
        async (ctx) => {
          await deleteWebhook(scopeOf(ctx), id);
          return ok({ result: true });
        },
      ],
    });
  }
  if (rest.length === 1 && rest[0] === "test") {
    return endpoint({ POST: ["test", async (ctx, billing) => ok({ result: true, ...(await testWebhook(scopeOf(ctx), id, billing)) })] });
  }
  if (rest.length === 1 && rest[0] === "replay") {
    return endpoint({ POST: ["replay", async (ctx, billing) => ok(await replayWebhook(scopeOf(ctx), id, await jsonBody(ctx), billing))] });
  }
  if (rest.length === 3 && rest[0] === "messages" && rest[2] === "resend") {
    const messageId = rest[1]!;
    return endpoint({ POST: ["resend", async (ctx, billing) => ok({ result: true, ...(await resendWebhookMessage(scopeOf(ctx), id, messageId, billing)) })] });
  }
  return undefined;
}

const openApi: OpenRoute = { open: { methods: ["GET"], handle: async () => ok(openApiJson()) } };

function inbox(token: string): OpenRoute {
  return {
    open: {
      methods: ["POST"],
      async handle(ctx) {
        const body = await ctx.body(INBOX_BODY_LIMIT);
        const { id } = await recordInboxRequest(token, { method: ctx.req.method ?? "POST", headers: ctx.req.headers, body });
        return ok({ result: true, id });
      },
    },
  };
}

/**
 * `/v1/<protocol>/<network>/webhooks`, `…/webhooks/history`, `…/webhooks/preview`,
 * `…/webhooks/<id>`, `…/webhooks/<id>/test`, `…/webhooks/<id>/replay`,
 * `…/webhooks/<id>/messages/<messageId>/resend`; `/v1/inbox/<token>`; `/v1/openapi.json`.
 */
export const webhookMount: Mount = {
  prefix: "v1",
  interface: "webhooks",
  // Every network with an event type: its family has a chain source (lib/chains/registry.ts).
  serves: (network) => network.eventTypes.length > 0,
  match(segments): RouteMatch | OpenRoute | undefined {
    if (segments.length === 1 && segments[0] === "openapi.json") return openApi;
    if (segments.length === 2 && segments[0] === "inbox") return inbox(segments[1]!);
    const [protocol, network, webhooks, id, ...rest] = segments;
    if (protocol === undefined || network === undefined || webhooks !== "webhooks") return undefined;
    const at = { protocol, network };
    if (id === undefined) return { network: at, endpoint: collection };
    if (rest.length === 0 && id === "history") return { network: at, endpoint: history };
    if (rest.length === 0 && id === "preview") return { network: at, endpoint: preview };
    const found = subscriptionEndpoints(id, rest);
    return found ? { network: at, endpoint: found } : undefined;
  },
};
