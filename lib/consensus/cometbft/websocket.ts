/**
 * The WebSocket of the native CometBFT interface (`/cometbft/<slug>[/<KEY>]/websocket`), as a
 * CometBFT 0.38 node serves it (https://docs.cometbft.com/v0.38/rpc/#/Websocket): JSON-RPC 2.0
 * messages with the interface's read methods, and `subscribe` / `unsubscribe` / `unsubscribe_all`
 * for the events of the blocks as they are stored (events.ts). Each event is answered with the
 * subscribe request's id: `{ query, data: { type, value }, events }`.
 *
 * Limits (SOCKET_LIMITS): subscriptions per connection (CometBFT's max_subscriptions_per_client)
 * and per key, connections per key (counted per process), message size, a ping every 30 s (a
 * connection that has not answered the previous one is closed), and a send buffer: a subscriber
 * whose unsent events exceed it is dropped with CometBFT's error, as a node drops a client that
 * does not read its events.
 *
 * CU: `subscribe` costs SUBSCRIBE_CU like a call, each event delivered EVENT_CU (metered as
 * `event:<Name>`); unsubscribing is free.
 */
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { databaseUrl } from "@/lib/env";
import { AppError } from "@/lib/errors";
import type { GatewayContext, SocketContext } from "@/lib/gateway/types";
import { chargeItem, failure, parseBody, type Answer } from "@/lib/jsonrpc/envelope";
import { INTERNAL_ERROR, InvalidRequest, RpcError, type Id } from "@/lib/jsonrpc/errors";
import { stringifyWithRaw } from "@/lib/jsonrpc/raw-json";
import { componentLogger } from "@/lib/log";
import { COMET, runBatch } from "../endpoint";
import { MAX_QUERY_LENGTH, parseQuery, type Query } from "../query/parse";
import { matchesEvents } from "../query/match";
import { callOne, cometError } from "./endpoint";
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
};

export const SUBSCRIBE_CU = 10;
export const EVENT_CU = 1;

/** CometBFT's reason when a subscriber's buffer is full (libs/pubsub ErrOutOfCapacity). */
export const SLOW_CLIENT_REASON = "client is not pulling messages fast enough";
const SERVER_ERROR = -32000;

const log = componentLogger("cometbft-ws");
const feed = new BlockFeed(() => databaseUrl() ?? "");
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: SOCKET_LIMITS.maxMessageBytes });

const connectionsByKey = new Map<string, number>();
const subscriptionsByKey = new Map<string, number>();
const open = new Set<Connection>();
let pinger: NodeJS.Timeout | undefined;

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

const internal = (detail: string) => new RpcError(INTERNAL_ERROR, "Internal error", detail);

interface Subscription {
  id: Id;
  query: Query;
  text: string;
  listener: (events: FeedEvent[]) => void;
}

class Connection {
  private readonly subs = new Map<string, Subscription>();
  alive = true;

  constructor(
    private readonly ws: WebSocket,
    private readonly ctx: SocketContext,
  ) {
    ws.on("message", (data: RawData, isBinary) => {
      if (isBinary) return;
      this.message(Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)])).catch((e: unknown) => {
        log.error({ err: e, requestId: ctx.requestId }, "a WebSocket message failed");
        this.send(stringifyWithRaw(failure(null, internal("the message could not be answered"))));
      });
    });
    ws.on("pong", () => (this.alive = true));
    ws.on("close", () => this.closed());
    ws.on("error", () => ws.terminate());
  }

  get keyId(): string {
    return this.ctx.principal.keyId;
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
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }

  private async message(raw: Buffer): Promise<void> {
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
    const calls: Array<Answer | (() => Promise<Answer>)> = [];
    const ids: Id[] = [];
    for (let i = 0; i < body.size; i++) {
      const req = body.request(i);
      const id = req instanceof InvalidRequest ? req.id : body.id(i, req);
      ids.push(id);
      const ctx = this.ctx.call();
      if (overQuota && !(req instanceof InvalidRequest)) {
        ctx.meter(req.method.slice(0, 64), 0, true, overQuota.status);
        calls.push(failure(id, internal(overQuota.message)));
      } else if (!(req instanceof InvalidRequest) && (req.method === "subscribe" || req.method === "unsubscribe" || req.method === "unsubscribe_all")) {
        calls.push(() => this.socketMethod(ctx, req.method, req.params ?? {}, id));
      } else calls.push(callOne(ctx, body, i));
    }
    const answers = await runBatch(calls, ids);
    const response = body.respond(answers);
    if (response.status === 204) return;
    // A refusal that HTTP answers with its status (429, 503) is the JSON-RPC errors themselves here.
    if (response.status !== 200) this.send(stringifyWithRaw(body.batch ? answers : answers[0]));
    else this.send(typeof response.body === "string" ? response.body : stringifyWithRaw(response.body));
  }

  private async socketMethod(ctx: GatewayContext, method: string, params: Record<string, unknown> | unknown[], id: Id): Promise<Answer> {
    const fail = (e: RpcError) => {
      ctx.meter(method, 0, true);
      return failure(id, e);
    };
    if (method === "unsubscribe_all") {
      for (const text of [...this.subs.keys()]) this.drop(text);
      ctx.meter(method, 0, false);
      return { jsonrpc: "2.0", id, result: {} };
    }
    const text = Array.isArray(params) ? params[0] : params.query;
    if (typeof text !== "string" || text === "") return fail(new RpcError(-32602, "Invalid params", "error converting json params to arguments: query is required"));
    if (text.length > MAX_QUERY_LENGTH) return fail(internal("maximum query length exceeded"));
    const parsed = parseQuery(text);
    if (!parsed.ok) return fail(internal(`failed to parse query: ${parsed.error.message}`));
    if (method === "unsubscribe") {
      if (!this.subs.has(text)) return fail(internal("subscription not found"));
      this.drop(text);
      ctx.meter(method, 0, false);
      return { jsonrpc: "2.0", id, result: {} };
    }
    if (this.subs.has(text)) return fail(internal("already subscribed"));
    if (this.subs.size >= SOCKET_LIMITS.subscriptionsPerConnection) return fail(internal(`max_subscriptions_per_client ${SOCKET_LIMITS.subscriptionsPerConnection} reached`));
    if ((subscriptionsByKey.get(this.keyId) ?? 0) >= SOCKET_LIMITS.subscriptionsPerKey) {
      return fail(internal(`max_subscriptions_per_key ${SOCKET_LIMITS.subscriptionsPerKey} reached: this API key holds that many subscriptions on open connections`));
    }
    const limited = chargeItem(ctx, SUBSCRIBE_CU);
    if (limited) return fail(limited);
    const sub: Subscription = { id, query: parsed.query, text, listener: (events) => this.deliver(sub, events) };
    this.subs.set(text, sub);
    bump(subscriptionsByKey, this.keyId, 1);
    try {
      await feed.add(this.ctx.network.slug, sub.listener);
    } catch (e) {
      this.drop(text);
      log.error({ err: e }, "cannot follow stored blocks for a subscription");
      return fail(internal("cannot subscribe now: try again shortly"));
    }
    ctx.meter(method, SUBSCRIBE_CU, false);
    return { jsonrpc: "2.0", id, result: {} };
  }

  private deliver(sub: Subscription, events: FeedEvent[]): void {
    if (this.subs.get(sub.text) !== sub) return;
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
    bump(subscriptionsByKey, this.keyId, -1);
    feed.remove(this.ctx.network.slug, sub.listener);
  }

  private closed(): void {
    for (const text of [...this.subs.keys()]) this.drop(text);
    bump(connectionsByKey, this.keyId, -1);
    open.delete(this);
    if (open.size === 0) {
      clearInterval(pinger);
      pinger = undefined;
    }
  }
}

/** Takes over an authenticated upgrade request to the WebSocket. */
export function cometbftSocket(ctx: SocketContext, socket: Duplex, head: Buffer): void {
  const keyId = ctx.principal.keyId;
  if ((connectionsByKey.get(keyId) ?? 0) >= SOCKET_LIMITS.connectionsPerKey) {
    throw new AppError("TOO_MANY_REQUESTS", `This API key already has ${SOCKET_LIMITS.connectionsPerKey} WebSocket connections open; close one first.`);
  }
  wss.handleUpgrade(ctx.req, socket, head, (ws) => {
    bump(connectionsByKey, keyId, 1);
    open.add(new Connection(ws, ctx));
    pinger ??= setInterval(() => {
      for (const c of open) c.ping();
    }, SOCKET_LIMITS.pingMs).unref();
  });
}
