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
 *
 * The key is verified at the upgrade and again whenever the key verifier drops its cached answer
 * (a reset, revocation or allowlist change, here or in another process; lib/keys/verifier.ts): one
 * database lookup for all of the key's connections. Still valid and allowed, the connections go on
 * with the new principal (plan, overage, allowlists); refused, they are closed with 1008 and
 * nothing more is answered, delivered or metered on them. When the server stops, they are closed
 * with 1001 (Going Away) and "server shutting down", likewise.
 */
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { databaseUrl } from "@/lib/env";
import { AppError } from "@/lib/errors";
import type { GatewayContext, SocketContext } from "@/lib/gateway/types";
import { keyVerifier, type KeyPrincipal, type KeyVerifier, type Verification } from "@/lib/keys/verifier";
import { chargeItem, failure, parseBody, type Answer } from "@/lib/jsonrpc/envelope";
import { INTERNAL_ERROR, InvalidRequest, RpcError, type Id } from "@/lib/jsonrpc/errors";
import { stringifyWithRaw } from "@/lib/jsonrpc/raw-json";
import { componentLogger, errorMessage } from "@/lib/log";
import { isCometbftMethod } from "../catalog";
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
  /** First wait before a re-verification the database could not answer is tried again (doubling up to recheckRetryMaxMs). */
  recheckRetryMs: 1_000,
  recheckRetryMaxMs: 60_000,
};

export const SUBSCRIBE_CU = 10;
export const EVENT_CU = 1;

/** CometBFT's reason when a subscriber's buffer is full (libs/pubsub ErrOutOfCapacity). */
export const SLOW_CLIENT_REASON = "client is not pulling messages fast enough";
const SERVER_ERROR = -32000;
/** WebSocket close code for a connection whose key no longer admits it (RFC 6455: policy violation). */
export const POLICY_VIOLATION = 1008;
/** WebSocket close code and reason for the connections open when the server stops (RFC 6455: going away). */
export const GOING_AWAY = 1001;
export const SHUTDOWN_REASON = "server shutting down";
const SOCKET_METHODS = new Set(["subscribe", "unsubscribe", "unsubscribe_all"]);

/** A method's name as metered: one the interface serves, else "invalid" (as callOne meters it), so callers cannot create usage rows at will. */
function meteredName(method: string): string {
  return isCometbftMethod(method) || SOCKET_METHODS.has(method) ? method : "invalid";
}

const log = componentLogger("cometbft-ws");
const feed = new BlockFeed(() => databaseUrl() ?? "");
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: SOCKET_LIMITS.maxMessageBytes });

const connectionsByKey = new Map<string, number>();
const subscriptionsByKey = new Map<string, number>();
const open = new Set<Connection>();
let pinger: NodeJS.Timeout | undefined;

/** Open connections by the SHA-256 of their key (what the verifier's invalidations name). */
const byKeyHash = new Map<string, Set<Connection>>();
/** Re-verifications in flight, by key hash; messages on the key's connections wait for `done`. */
interface Recheck {
  /** The key was forgotten again meanwhile: the answer may predate the change; ask again. */
  again: boolean;
  done: Promise<void>;
}
const rechecks = new Map<string, Recheck>();
/** Re-verifications the database could not answer, tried again later: failures so far and the timer. */
const retries = new Map<string, { failures: number; timer: NodeJS.Timeout }>();
/** The verifier whose invalidations are followed, while any connection is open. */
let following: { verifier: KeyVerifier; stop: () => void } | undefined;

function keyForgotten(hash: string | undefined): void {
  if (hash === undefined) for (const h of [...byKeyHash.keys()]) recheck(h);
  else if (byKeyHash.has(hash)) recheck(hash);
}

/**
 * Verifies a key again for all its open connections (one verification, one database lookup), then
 * updates or closes them. `started`: a verification already under way for it.
 */
function recheck(hash: string, started?: Verification | Promise<Verification>): void {
  // Not used below when a check is running: its failure is that check's to handle (once asked again).
  if (started instanceof Promise) started.catch(() => undefined);
  const running = rechecks.get(hash);
  if (running) {
    running.again = true;
    return;
  }
  const retry = retries.get(hash);
  if (retry) clearTimeout(retry.timer);
  const connections = byKeyHash.get(hash);
  const first = connections?.values().next();
  if (!following || !first || first.done) {
    dropRetry(hash);
    return;
  }
  const verifier = following.verifier;
  let settle!: () => void;
  const state: Recheck = { again: false, done: new Promise<void>((resolve) => (settle = resolve)) };
  rechecks.set(hash, state);
  const finish = () => {
    rechecks.delete(hash);
    settle();
  };
  const apply = (v: Verification) => {
    finish();
    if (state.again) {
      recheck(hash);
      return;
    }
    retries.delete(hash);
    for (const c of [...(byKeyHash.get(hash) ?? [])]) c.reverified(v);
  };
  const failed = (e: unknown) => {
    finish();
    if (state.again) {
      recheck(hash);
      return;
    }
    // The key may be fine: the database did not answer. The connections go on as they were (as an
    // expired cached answer is served during an outage) and the key is asked about again later.
    const failures = (retries.get(hash)?.failures ?? 0) + 1;
    const wait = Math.min(SOCKET_LIMITS.recheckRetryMs * 2 ** (failures - 1), SOCKET_LIMITS.recheckRetryMaxMs);
    log.warn({ err: errorMessage(e), connections: byKeyHash.get(hash)?.size ?? 0, retryInMs: wait }, "cannot verify an API key of open WebSocket connections again; they stay open meanwhile");
    retries.set(hash, { failures, timer: setTimeout(() => recheck(hash), wait).unref() });
  };
  try {
    const verified = started ?? verifier.verifyAgain(first.value.principal);
    if (verified instanceof Promise) verified.then(apply, failed);
    else apply(verified);
  } catch (e) {
    failed(e);
  }
}

function track(c: Connection): void {
  let set = byKeyHash.get(c.keyHash);
  if (!set) byKeyHash.set(c.keyHash, (set = new Set()));
  set.add(c);
}

function untrack(c: Connection): void {
  const set = byKeyHash.get(c.keyHash);
  if (!set) return;
  set.delete(c);
  if (set.size > 0) return;
  byKeyHash.delete(c.keyHash);
  dropRetry(c.keyHash);
}

/** Forgets a key's pending retry of its re-verification. */
function dropRetry(hash: string): void {
  const retry = retries.get(hash);
  if (retry) clearTimeout(retry.timer);
  retries.delete(hash);
}

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
  /** Its key no longer admits it, or the server is stopping: it is closing, and nothing more is answered, sent or metered. */
  private closing = false;
  /** Forgets how the connection ends when the server stops (once it closed). */
  private readonly forgetShutdown: () => void;

  constructor(
    private readonly ws: WebSocket,
    private readonly ctx: SocketContext,
    /** SHA-256 of the key (lib/keys/verifier.ts). */
    readonly keyHash: string,
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
  }

  get keyId(): string {
    return this.ctx.principal.keyId;
  }

  get principal(): KeyPrincipal {
    return this.ctx.principal;
  }

  /** The answer of verifying the key again: go on with the new principal, or close. */
  reverified(v: Verification): void {
    if (this.closing) return;
    if (typeof v === "string") {
      this.refuse(v === "REVOKED" ? "API key revoked" : "API key reset or no longer valid", v);
      return;
    }
    if (v.allow) {
      // As at the upgrade (lib/gateway/router.ts): the Origin header and the client's address it recorded.
      let askedAddress = false;
      const refusal = v.allow.refusal(this.ctx.req.headers.origin, () => {
        askedAddress = true;
        const ip = this.ctx.req.headers[CLIENT_IP_HEADER];
        return (Array.isArray(ip) ? ip[0] : ip) ?? "";
      });
      if (refusal !== undefined) {
        // The origins are checked first: the address is asked for only once the origin passed.
        this.refuse(askedAddress ? "address no longer allowed by this key's allowlist" : "origin no longer allowed by this key's allowlist", refusal);
        return;
      }
    }
    this.ctx.principal = v;
  }

  /** Closes the connection for its key (1008): subscriptions end at once, nothing more is sent. */
  private refuse(reason: string, detail: string): void {
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
    const recheck = rechecks.get(this.keyHash);
    if (recheck) await recheck.done;
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
      } else if (!(req instanceof InvalidRequest) && SOCKET_METHODS.has(req.method)) {
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
      await feed.add(this.ctx.network, sub.listener);
    } catch (e) {
      this.drop(text);
      log.error({ err: e }, "cannot follow stored blocks for a subscription");
      return fail(internal("cannot subscribe now: try again shortly"));
    }
    ctx.meter(method, SUBSCRIBE_CU, false);
    return { jsonrpc: "2.0", id, result: {} };
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
    bump(subscriptionsByKey, this.keyId, -1);
    feed.remove(this.ctx.network, sub.listener);
  }

  private closed(): void {
    this.forgetShutdown();
    for (const text of [...this.subs.keys()]) this.drop(text);
    bump(connectionsByKey, this.keyId, -1);
    open.delete(this);
    untrack(this);
    if (open.size === 0) {
      clearInterval(pinger);
      pinger = undefined;
      following?.stop();
      following = undefined;
    }
  }
}

/** Takes over an authenticated upgrade request to the WebSocket. */
export function cometbftSocket(ctx: SocketContext, socket: Duplex, head: Buffer): void {
  const keyId = ctx.principal.keyId;
  if ((connectionsByKey.get(keyId) ?? 0) >= SOCKET_LIMITS.connectionsPerKey) {
    throw new AppError("TOO_MANY_REQUESTS", `This API key already has ${SOCKET_LIMITS.connectionsPerKey} WebSocket connections open; close one first.`);
  }
  const verifier = keyVerifier();
  const keyHash = verifier.keyHashOf(ctx.principal);
  // Every principal the gateway gets comes from the verifier; one that does not could never be refused later.
  if (keyHash === undefined) throw new AppError("INTERNAL_SERVER_ERROR", "The server failed to process the request. Please try again.");
  wss.handleUpgrade(ctx.req, socket, head, (ws) => {
    bump(connectionsByKey, keyId, 1);
    if (following?.verifier !== verifier) {
      following?.stop();
      following = { verifier, stop: verifier.onForget(keyForgotten) };
    }
    const c = new Connection(ws, ctx, keyHash);
    open.add(c);
    track(c);
    pinger ??= setInterval(() => {
      for (const c of open) c.ping();
    }, SOCKET_LIMITS.pingMs).unref();
    // The key was verified before the upgrade (perhaps before waiting on the allowance): when the
    // verifier has dropped that answer since, this connection missed the invalidation; check now.
    const current = verifier.verifyAgain(ctx.principal);
    if (current !== ctx.principal) recheck(keyHash, current);
  });
}
