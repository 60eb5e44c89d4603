/**
 * The WebSocket of the native CometBFT interface (`/cometbft/<slug>[/<KEY>]/websocket`), as a
 * CometBFT 0.38 node serves it (https://docs.cometbft.com/v0.38/rpc/#/Websocket): JSON-RPC 2.0
 * messages with the interface's read methods, and `subscribe` / `unsubscribe` / `unsubscribe_all`
 * for the events of the blocks as they are stored (events.ts). Each event is answered with the
 * subscribe request's id: `{ query, data: { type, value }, events }`.
 *
 * Limits (SOCKET_LIMITS): subscriptions per connection (CometBFT's max_subscriptions_per_client)
 * and per key, connections per key (per key for every web process together, through the shared
 * limits: lib/limits/shared.ts SharedCounts), message size, a ping every 30 s (a
 * connection that has not answered the previous one is closed), and a send buffer: a subscriber
 * whose unsent events exceed it is dropped with CometBFT's error, as a node drops a client that
 * does not read its events.
 *
 * CU: the catalog's (SOCKET_METHODS and EVENT_CU, ../catalog.ts): `subscribe` costs like a call,
 * each event delivered EVENT_CU (metered as `event:<Name>`); unsubscribing is free.
 *
 * The key is verified at the upgrade and held by the connection (lib/keys/holders.ts): verified
 * again whenever the key verifier drops its cached answer, the connection goes on with the new
 * principal (plan, overage, allowlists), or is closed with 1008 and nothing more is answered,
 * delivered or metered on it. When the server stops, connections are closed with 1001 (Going Away)
 * and "server shutting down", likewise.
 */
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { databaseUrl } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { SharedCounts } from "@/lib/limits/shared";
import type { GatewayContext, SocketContext } from "@/lib/gateway/types";
import { KeyHolders, type KeyHolder } from "@/lib/keys/holders";
import type { KeyPrincipal } from "@/lib/keys/verifier";
import { chargeItem, failure, parseBody, type Answer } from "@/lib/jsonrpc/envelope";
import { internalError, InvalidRequest, invalidParams, RpcError, SERVER_ERROR, type Id } from "@/lib/jsonrpc/errors";
import { stringifyWithRaw } from "@/lib/jsonrpc/raw-json";
import { componentLogger } from "@/lib/log";
import { sharedLimits } from "@/lib/services";
import { EVENT_CU, isCometbftMethod, isSocketMethod, SOCKET_METHODS, type SocketMethod } from "../catalog";
import { COMET, runBatch } from "../endpoint";
import { MAX_QUERY_LENGTH, parseQuery, type Query } from "../query/parse";
import { matchesEvents } from "../query/match";
import { callOne, cometError } from "./call";
import { BlockFeed, type FeedEvent } from "./events";

export const SOCKET_LIMITS = {
  /** CometBFT's default max_subscriptions_per_client. */
  subscriptionsPerConnection: 5,
  subscriptionsPerKey: 50,
  connectionsPerKey: 20,
  /** A message larger than this closes the connection (1009), as CometBFT's max_body_bytes. */
  maxMessageBytes: 1_000_000,
  /** Unsent bytes past which a subscriber is dropped. */
  sendBufferBytes: 4 * 1024 * 1024,
  pingMs: 30_000,
  /** First wait before a re-verification the database could not answer is tried again (doubling up to recheckRetryMaxMs). */
  recheckRetryMs: 1_000,
  recheckRetryMaxMs: 60_000,
};

/** CometBFT's reason when a subscriber's buffer is full (libs/pubsub ErrOutOfCapacity). */
export const SLOW_CLIENT_REASON = "client is not pulling messages fast enough";
/** WebSocket close code for a connection whose key no longer admits it (RFC 6455: policy violation). */
export const POLICY_VIOLATION = 1008;
/** WebSocket close code and reason for the connections open when the server stops (RFC 6455: going away). */
export const GOING_AWAY = 1001;
export const SHUTDOWN_REASON = "server shutting down";

/** A method's name as metered: one the interface serves, else "invalid" (as callOne meters it), so callers cannot create usage rows at will. */
function meteredName(method: string): string {
  return isCometbftMethod(method) || isSocketMethod(method) ? method : "invalid";
}

const log = componentLogger("cometbft-ws");
const feed = new BlockFeed(() => databaseUrl() ?? "");
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: SOCKET_LIMITS.maxMessageBytes });

/** What each key holds, on the shared limits the gateway hands over (SocketContext.limits): capped for the whole cluster. */
interface Held {
  connections: SharedCounts;
  subscriptions: SharedCounts;
}
const heldOn = sharedLimits("cometbft-socket-caps", (shared): Held => ({ connections: new SharedCounts("ws-connections", shared), subscriptions: new SharedCounts("ws-subscriptions", shared) }));

const open = new Set<Connection>();
let pinger: NodeJS.Timeout | undefined;

/** The keys of open connections, verified again when the key verifier drops their cached answers. */
const holders = new KeyHolders(log, SOCKET_LIMITS);

/** A failure of a method, as CometBFT writes it: −32603 "Internal error" with the detail as data. */
const internal = (detail: string) => cometError(internalError(detail));

interface Subscription {
  id: Id;
  query: Query;
  text: string;
  listener: (events: FeedEvent[]) => void;
}

class Connection implements KeyHolder {
  private readonly subs = new Map<string, Subscription>();
  alive = true;
  /** Its key no longer admits it, or the server is stopping: it is closing, and nothing more is answered, sent or metered. */
  private closing = false;
  /** Forgets how the connection ends when the server stops (once it closed). */
  private readonly forgetShutdown: () => void;
  /** Stops following its key (once it closed). */
  private readonly release: () => void;

  constructor(
    private readonly ws: WebSocket,
    private readonly ctx: SocketContext,
    /** SHA-256 of the key (lib/keys/holders.ts). */
    private readonly keyHash: string,
    private readonly held: Held,
  ) {
    ws.on("message", (data: RawData, isBinary) => {
      if (isBinary || this.closing) return;
      this.message(Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)])).catch((e: unknown) => {
        log.error({ err: e, requestId: ctx.requestId }, "a WebSocket message failed");
        this.send(stringifyWithRaw(failure(null, internal("the message could not be answered"))));
      });
    });
    ws.on("pong", () => (this.alive = true));
    ws.on("close", () => this.closed());
    ws.on("error", () => ws.terminate());
    this.forgetShutdown = ctx.onShutdown(() => this.goAway());
    this.release = holders.hold(this, keyHash);
  }

  get keyId(): string {
    return this.ctx.principal.keyId;
  }

  get principal(): KeyPrincipal {
    return this.ctx.principal;
  }

  /** As at the upgrade (lib/gateway/router.ts): the Origin header, and the client's address it recorded. */
  get origin(): string | undefined {
    return this.ctx.req.headers.origin;
  }

  address(): string {
    const ip = this.ctx.req.headers[CLIENT_IP_HEADER];
    return (Array.isArray(ip) ? ip[0] : ip) ?? "";
  }

  renewed(principal: KeyPrincipal): void {
    if (!this.closing) this.ctx.principal = principal;
  }

  /** Closes the connection for its key (1008): subscriptions end at once, nothing more is sent. */
  refused(reason: string, detail: string): void {
    if (this.closing) return;
    this.closing = true;
    for (const text of [...this.subs.keys()]) this.drop(text);
    log.info({ requestId: this.ctx.requestId, projectId: this.ctx.principal.projectId, keyId: this.keyId, detail }, `closing a WebSocket connection: ${reason}`);
    this.ws.close(POLICY_VIOLATION, reason);
  }

  /** The server is stopping: subscriptions end and the client is told so (1001 Going Away) instead of being cut off (1006). */
  private goAway(): void {
    if (this.closing) return;
    this.closing = true;
    for (const text of [...this.subs.keys()]) this.drop(text);
    this.ws.close(GOING_AWAY, SHUTDOWN_REASON);
  }

  ping(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  private send(text: string): void {
    if (!this.closing && this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }

  private async message(raw: Buffer): Promise<void> {
    // The key is being verified again: answer (and meter) by its outcome.
    const recheck = holders.pending(this.keyHash);
    if (recheck) await recheck;
    if (this.closing) return;
    const body = parseBody(raw, COMET);
    if (body instanceof RpcError) {
      this.ctx.call().meter("invalid", 0, true);
      this.send(stringifyWithRaw(failure(null, cometError(body))));
      return;
    }
    let overQuota: AppError | undefined;
    try {
      await this.ctx.quota();
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      overQuota = e;
    }
    if (this.closing) return;
    const calls: Array<Answer | (() => Promise<Answer>)> = [];
    const ids: Id[] = [];
    for (let i = 0; i < body.size; i++) {
      const req = body.request(i);
      const id = req instanceof InvalidRequest ? req.id : body.id(i, req);
      ids.push(id);
      const ctx = this.ctx.call();
      if (overQuota && !(req instanceof InvalidRequest)) {
        ctx.meter(meteredName(req.method), 0, true, overQuota.status);
        calls.push(failure(id, internal(overQuota.message)));
      } else if (!(req instanceof InvalidRequest) && isSocketMethod(req.method)) {
        const method = req.method;
        calls.push(() => this.socketMethod(ctx, method, req.params ?? {}, id));
      } else calls.push(callOne(ctx, body, i));
    }
    const answers = await runBatch(calls, ids);
    const response = body.respond(answers);
    if (response.status === 204) return;
    // A refusal that HTTP answers with its status (429, 503) is the JSON-RPC errors themselves here.
    if (response.status !== 200) this.send(stringifyWithRaw(body.batch ? answers : answers[0]));
    else this.send(typeof response.body === "string" ? response.body : stringifyWithRaw(response.body));
  }

  private async socketMethod(ctx: GatewayContext, method: SocketMethod, params: Record<string, unknown> | unknown[], id: Id): Promise<Answer> {
    const fail = (e: RpcError) => {
      ctx.meter(method, 0, true);
      return failure(id, cometError(e));
    };
    if (method === "unsubscribe_all") {
      for (const text of [...this.subs.keys()]) this.drop(text);
      ctx.meter(method, SOCKET_METHODS[method].cu, false);
      return { jsonrpc: "2.0", id, result: {} };
    }
    const text = Array.isArray(params) ? params[0] : params.query;
    if (typeof text !== "string" || text === "") return fail(invalidParams("error converting json params to arguments: query is required"));
    if (text.length > MAX_QUERY_LENGTH) return fail(internalError("maximum query length exceeded"));
    const parsed = parseQuery(text);
    if (!parsed.ok) return fail(internalError(`failed to parse query: ${parsed.error.message}`));
    if (method === "unsubscribe") {
      if (!this.subs.has(text)) return fail(internalError("subscription not found"));
      this.drop(text);
      ctx.meter(method, 0, false);
      return { jsonrpc: "2.0", id, result: {} };
    }
    const taken = this.subscriptionRefusal(text);
    if (taken) return fail(taken);
    if (!(await this.held.subscriptions.acquire(this.keyId, SOCKET_LIMITS.subscriptionsPerKey))) {
      return fail(internalError(`max_subscriptions_per_key ${SOCKET_LIMITS.subscriptionsPerKey} reached: this API key holds that many subscriptions on open connections`));
    }
    // While the cluster's count was read, the connection may have ended or taken the query (pipelined subscribes).
    if (this.closing || this.ws.readyState !== this.ws.OPEN) {
      this.held.subscriptions.release(this.keyId);
      return failure(id, internal("the connection is closing"));
    }
    const limited = this.subscriptionRefusal(text) ?? chargeItem(ctx, SOCKET_METHODS[method].cu);
    if (limited) {
      this.held.subscriptions.release(this.keyId);
      return fail(limited);
    }
    const sub: Subscription = { id, query: parsed.query, text, listener: (events) => this.deliver(sub, events) };
    this.subs.set(text, sub);
    try {
      await feed.add(this.ctx.network, sub.listener);
    } catch (e) {
      this.drop(text);
      log.error({ err: e }, "cannot follow stored blocks for a subscription");
      return fail(internalError("cannot subscribe now: try again shortly"));
    }
    ctx.meter(method, SOCKET_METHODS[method].cu, false);
    return { jsonrpc: "2.0", id, result: {} };
  }

  /** Why the connection cannot take a subscription to `text`, if it cannot. */
  private subscriptionRefusal(text: string): RpcError | undefined {
    if (this.subs.has(text)) return internalError("already subscribed");
    if (this.subs.size >= SOCKET_LIMITS.subscriptionsPerConnection) return internalError(`max_subscriptions_per_client ${SOCKET_LIMITS.subscriptionsPerConnection} reached`);
    return undefined;
  }

  private deliver(sub: Subscription, events: FeedEvent[]): void {
    if (this.closing || this.subs.get(sub.text) !== sub) return;
    for (const e of events) {
      if (!matchesEvents(sub.query, e.events)) continue;
      if (this.ws.bufferedAmount > SOCKET_LIMITS.sendBufferBytes) {
        this.cancel(sub, SLOW_CLIENT_REASON);
        return;
      }
      try {
        // A check that must read the database first applies from the next event on.
        this.ctx.quota()?.catch(() => undefined);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        this.cancel(sub, err.message);
        return;
      }
      const query = JSON.stringify(sub.text);
      this.send(`{"jsonrpc":"2.0","id":${stringifyWithRaw(sub.id)},"result":{"query":${query},"data":${e.dataJson},"events":${e.eventsJson}}}`);
      this.ctx.call().meter(`event:${e.name}`, EVENT_CU, false);
    }
  }

  /** Ends a subscription with CometBFT's error, sent with the subscribe request's id. */
  private cancel(sub: Subscription, reason: string): void {
    this.drop(sub.text);
    this.send(stringifyWithRaw(failure(sub.id, new RpcError(SERVER_ERROR, "Server error", `subscription was canceled (reason: ${reason})`))));
  }

  private drop(text: string): void {
    const sub = this.subs.get(text);
    if (!sub) return;
    this.subs.delete(text);
    this.held.subscriptions.release(this.keyId);
    feed.remove(this.ctx.network, sub.listener);
  }

  private closed(): void {
    this.forgetShutdown();
    for (const text of [...this.subs.keys()]) this.drop(text);
    this.held.connections.release(this.keyId);
    open.delete(this);
    this.release();
    if (open.size === 0) {
      clearInterval(pinger);
      pinger = undefined;
    }
  }
}

/** Takes over an authenticated upgrade request to the WebSocket. */
export async function cometbftSocket(ctx: SocketContext, socket: Duplex, head: Buffer): Promise<void> {
  const keyId = ctx.principal.keyId;
  const keyHash = holders.admit(ctx.principal);
  const held = heldOn(ctx.limits);
  if (!(await held.connections.acquire(keyId, SOCKET_LIMITS.connectionsPerKey))) {
    throw new AppError("TOO_MANY_REQUESTS", `This API key already has ${SOCKET_LIMITS.connectionsPerKey} WebSocket connections open; close one first.`);
  }
  let upgraded = false;
  try {
    // ws calls back before handleUpgrade returns, or not at all (the client went away meanwhile, or its request was not a valid upgrade).
    wss.handleUpgrade(ctx.req, socket, head, (ws) => {
      upgraded = true;
      open.add(new Connection(ws, ctx, keyHash, held));
      pinger ??= setInterval(() => {
        for (const c of open) c.ping();
      }, SOCKET_LIMITS.pingMs).unref();
    });
  } finally {
    if (!upgraded) held.connections.release(keyId);
  }
}
