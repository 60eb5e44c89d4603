import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { randomBytes } from "node:crypto";
import { CLIENT_IP_HEADER, clientKey, socketClientIp } from "@/lib/client-ip";
import { AppError, toAppError } from "@/lib/errors";
import { componentLogger, type Logger } from "@/lib/log";
import { keyVerifier, type KeyPrincipal, type KeyRefusal } from "@/lib/keys/verifier";
import { networkByPath, networkBySlug, type Network } from "@/lib/networks";
import { retryAfterSeconds, TokenBuckets, type BucketLimit } from "@/lib/rate-limit";
import { statusClass, type StatusClass, type UsageMeter } from "@/lib/usage/meter";
import type { RequestLog } from "@/lib/usage/request-log";
import { RateLimiter } from "./limits";
import { QuotaTracker, RATE_LIMIT_HEADERS } from "./quota";
import type { GatewayContext, GatewayResponse, Mount, OpenRoute, RouteMatch, SocketContext } from "./types";

export const MAX_URL_LENGTH = 8192;
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
const EXPOSE_HEADERS = ["X-Request-Id", "Retry-After", ...RATE_LIMIT_HEADERS].join(", ");

/**
 * Unknown keys that cost a database lookup, per client address (IPv6: per /64): 30 at once, then
 * one every 200 ms. Past that, a key that was not found valid in the last 24 hours is refused from
 * that address with 429 and Retry-After, without a lookup; keys found valid (lib/keys/verifier.ts)
 * keep working from it, whatever else comes from there.
 */
export const FAILED_AUTH_LIMIT: BucketLimit = { burst: 30, refillMs: 200 };

export interface GatewayOptions {
  mounts: readonly Mount[];
  meter: UsageMeter;
  /**
   * false: no usage is metered and no plan limit (CU per second, allowance) is enforced or
   * announced in headers (USAGE_METERING=off). Default true.
   */
  metering?: boolean;
  /** Where each authenticated request is logged for the console (none: not logged). */
  requestLog?: RequestLog;
  /** Default: the "gateway" component logger. */
  logger?: Logger;
  /** Proxies in front whose X-Forwarded-For entries name the client (TRUSTED_PROXY_HOPS; default 0). */
  trustedProxyHops?: number;
  /** Wall-clock milliseconds for the plan allowance's periods (default Date.now; tests move it across a reset). */
  now?: () => number;
}

export type GatewayHandler = ((req: IncomingMessage, res: ServerResponse) => boolean) & {
  /** An `Upgrade` request (WebSocket) on a public API path: true when taken (answered or accepted). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /**
   * The server is stopping: ends every connection taken over by an upgrade as its endpoint does
   * (SocketContext.onShutdown). Answers their sockets, which close by themselves once ended.
   */
  shutdown(): ReadonlySet<Duplex>;
};

// Request ids: a random per-process prefix and a counter; unique across processes and cheap
// on the hot path (no randomness or big-number arithmetic per request).
const processTag = randomBytes(6).toString("base64url");
let requestCounter = 0;
const nextRequestId = () => `req_${processTag}${(++requestCounter).toString(36).padStart(6, "0")}`;

// Responses are written together at the end of the event loop's poll phase (setImmediate), not
// one by one as each is ready. Under load the loop reads many requests per turn; writing each answer
// at once interleaves reads with writes, and every write to a client that went idle in between
// pays for waking it. Writing the turn's answers in one burst halves the server's CPU per request
// at 32 connections (bench/RESULTS.md) and adds microseconds to a lone request's latency.
let outbox: { res: ServerResponse; status: number; headers: Record<string, string | number>; body: string | Buffer }[] = [];

function flushOutbox(): void {
  const batch = outbox;
  outbox = [];
  for (const w of batch) {
    if (w.res.destroyed) continue;
    w.res.writeHead(w.status, w.headers);
    w.res.end(w.body);
  }
}

/**
 * Refusals (429) in a row on one keep-alive connection past which the client is taken to ignore
 * Retry-After: the last of them is held back for REFUSAL_HOLD_MS and goes out with Connection:
 * close. A flood of refused calls on a few connections is then held to about that many answers a
 * second per connection, instead of taking every turn of the event loop from other projects' calls
 * (closing alone does not: a client connects again in microseconds). A client that waits as told
 * never meets it.
 */
export const REFUSALS_BEFORE_CLOSE = 10;
/** The least Retry-After a refusal says: by then the client may send again anyway. */
export const REFUSAL_HOLD_MS = 1000;
const refusedInARow = Symbol("refusedInARow");

/** Counts the connection's refusals in a row; true when this answer ends a run of REFUSALS_BEFORE_CLOSE. */
function endsRefusals(res: ServerResponse, status: number): boolean {
  const socket = res.socket as (Duplex & { [refusedInARow]?: number }) | null;
  if (!socket) return false;
  if (status !== 429) {
    if (socket[refusedInARow]) socket[refusedInARow] = 0;
    return false;
  }
  const refused = (socket[refusedInARow] ?? 0) + 1;
  socket[refusedInARow] = refused;
  return refused >= REFUSALS_BEFORE_CLOSE;
}

function queue(w: (typeof outbox)[number]): void {
  if (outbox.push(w) === 1) setImmediate(flushOutbox);
}

/** Queues the answer, with `extra` headers (the allowance's) under the response's own; returns the body as sent. */
function send(res: ServerResponse, requestId: string, response: GatewayResponse, extra?: Readonly<Record<string, string>>): string | Buffer {
  if (response.status === 204) {
    // No Content (JSON-RPC notifications): neither a body nor its headers.
    const headers = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSE_HEADERS, "X-Request-Id": requestId, ...extra, ...response.headers };
    queue({ res, status: 204, headers, body: "" });
    return "";
  }
  const body = typeof response.body === "string" || Buffer.isBuffer(response.body) ? response.body : JSON.stringify(response.body);
  const headers: Record<string, string | number> = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": EXPOSE_HEADERS,
    "X-Request-Id": requestId,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  };
  if (extra) Object.assign(headers, extra);
  if (response.headers) Object.assign(headers, response.headers);
  const w = { res, status: response.status, headers, body };
  if (endsRefusals(res, response.status)) {
    res.shouldKeepAlive = false;
    setTimeout(() => queue(w), REFUSAL_HOLD_MS);
  } else queue(w);
  return body;
}

function sendError(res: ServerResponse, requestId: string, error: AppError, extra?: Readonly<Record<string, string>>): void {
  send(res, requestId, { status: error.status, body: error.json, headers: error.headers }, extra);
}

function tooLarge(limit: number): AppError {
  return new AppError("CONTENTS_TOO_LARGE", `The request body is larger than ${limit} bytes.`);
}

/** Reads the body; `keep.requestBody` is set to it when complete (for the request log). */
function readBody(req: IncomingMessage, limit: number, keep?: { requestBody: Buffer | undefined }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"]) > limit) {
      req.resume();
      reject(tooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (keep) keep.requestBody = body;
      resolve(body);
    });
    req.on("error", () => reject(new AppError("INTERRUPTED", "The request was interrupted while its body was being read.")));
  });
}

function refused(reason: KeyRefusal): AppError {
  return new AppError(
    "AUTHENTICATION_FAILED",
    reason === "MALFORMED" ? "The API key is invalid." : reason === "REVOKED" ? "The API key has been revoked." : "The API key is invalid or has been reset.",
  );
}

/** The key of `Authorization: Bearer <key>`, when the header has that form. */
function bearerKey(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  return match?.[1];
}

function keyFromRequest(req: IncomingMessage, pathKey: string | undefined, mount: Mount): string {
  const header = req.headers["x-api-key"];
  const apiKeyHeader = Array.isArray(header) ? header.join(",") : header;
  const bearer = mount.bearerKey ? bearerKey(req) : undefined;
  if (apiKeyHeader !== undefined && bearer !== undefined && apiKeyHeader !== bearer) {
    throw new AppError("AUTHENTICATION_FAILED", "The X-API-KEY header and the Authorization header carry different keys.");
  }
  const headerKey = apiKeyHeader ?? bearer;
  if (headerKey !== undefined && pathKey !== undefined) {
    throw new AppError("AUTHENTICATION_FAILED", "Give the API key either in the X-API-KEY header or in the path, not both.");
  }
  const key = headerKey ?? pathKey;
  if (key === undefined || key === "") {
    throw new AppError("NO_AUTHENTICATION_FOUND", "No API key was given. Send it in the X-API-KEY header.");
  }
  return key;
}

function resolveNetwork(mount: Mount, match: Pick<RouteMatch, "network">): Network {
  const n = "slug" in match.network ? networkBySlug(match.network.slug) : networkByPath(match.network.protocol, match.network.network);
  if (!n || !mount.serves(n)) {
    const name = "slug" in match.network ? match.network.slug : `${match.network.protocol}/${match.network.network}`;
    throw new AppError("NOT_SUPPORTED_CHAIN", `The network "${name.slice(0, 100)}" is not supported on /${mount.prefix}.`);
  }
  return n;
}

interface Shared {
  limiter: RateLimiter;
  quota: QuotaTracker;
  meter: UsageMeter;
  metering: boolean;
  requestLog: RequestLog | undefined;
}

/** What a handler gets; methods live on the prototype so a request allocates no closures. */
class RequestContext implements GatewayContext {
  metered = false;
  private parsedUrl: URL | undefined;
  private readonly started = performance.now();
  /** Wall-clock time (ms since the epoch) read once per request, at `wallFrom` on the performance clock: later times derive from it. */
  private wallAt = 0;
  private wallFrom = 0;
  // What the request log needs of the metered calls.
  private calls = 0;
  private cuTotal = 0;
  private endpoint = "rejected";
  private rpcError = false;
  /** The request's body once read, when the request log is on. */
  requestBody: Buffer | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly requestId: string,
    readonly network: Network,
    readonly principal: KeyPrincipal,
    private readonly shared: Shared,
    private readonly api: string,
  ) {}

  get url(): URL {
    return (this.parsedUrl ??= new URL(this.req.url ?? "/", "http://gateway"));
  }

  body(limit = DEFAULT_BODY_LIMIT): Promise<Buffer> {
    return readBody(this.req, limit, this.shared.requestLog ? this : undefined);
  }

  charge(cu: number): void {
    if (this.shared.metering) this.shared.limiter.take(this.principal, cu);
  }

  allowance(cu: number): void {
    const p = this.principal;
    if (this.shared.metering) this.shared.quota.affords(p.projectId, p.plan, p.overage, cu);
  }

  /** Wall-clock ms at performance-clock time `t` (one Date.now() per request, not one per use). */
  private wall(t: number): number {
    if (this.wallAt === 0) {
      this.wallAt = Date.now();
      this.wallFrom = t;
    }
    return this.wallAt + Math.floor(t - this.wallFrom);
  }

  meter(endpoint: string, cu: number, error: boolean, httpStatus?: number): void {
    this.metered = true;
    const p = this.principal;
    const status = !error ? "2xx" : httpStatus === undefined ? "rpc_error" : statusClass(httpStatus);
    if (++this.calls === 1) this.endpoint = endpoint;
    if (!error) this.cuTotal += cu;
    if (status === "rpc_error") this.rpcError = true;
    if (!this.shared.metering) return;
    if (!error) this.shared.quota.add(p.projectId, cu);
    const t = performance.now();
    this.shared.meter.record(
      {
        projectId: p.projectId,
        keyId: p.keyId,
        subscriptionId: "",
        network: this.network.slug,
        api: this.api,
        endpoint,
        status,
        cu: error ? 0 : cu,
        error,
        latencyMs: t - this.started,
      },
      this.wall(t),
    );
  }

  /** Logs the finished request (its answer queued with `status` and `body`). */
  finished(status: number, body: string | Buffer | undefined): void {
    const log = this.shared.requestLog;
    if (!log) return;
    const p = this.principal;
    const cls: StatusClass = status >= 400 ? statusClass(status) : this.rpcError ? "rpc_error" : "2xx";
    const t = performance.now();
    log.record({
      projectId: p.projectId,
      keyId: p.keyId,
      requestId: this.requestId,
      at: this.wall(t),
      api: this.api,
      network: this.network.slug,
      method: this.calls > 1 ? "batch" : this.endpoint,
      calls: Math.max(this.calls, 1),
      status,
      statusClass: cls,
      latencyMs: t - this.started,
      cu: this.cuTotal,
      httpMethod: this.req.method ?? "GET",
      url: this.req.url ?? "/",
      params: this.requestBody,
      result: body,
    });
  }
}

/** An HTTP answer written on a socket whose upgrade is refused. */
function refuseUpgrade(socket: Duplex, requestId: string, error: AppError): void {
  if (socket.destroyed) return;
  const body = error.json;
  const headers: Record<string, string | number> = {
    "Access-Control-Allow-Origin": "*",
    "X-Request-Id": requestId,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    Connection: "close",
    ...error.headers,
  };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ""}\r\n${head}\r\n${body}`);
}

function splitPath(url: string): string[] {
  const q = url.indexOf("?");
  const parts = (q === -1 ? url : url.slice(0, q)).split("/");
  const segments: string[] = [];
  // parts[0] is "" and parts[1] the mount prefix.
  for (let i = 2; i < parts.length; i++) {
    const s = parts[i]!;
    if (s === "") continue;
    if (!s.includes("%")) segments.push(s);
    else {
      try {
        segments.push(decodeURIComponent(s));
      } catch {
        segments.push(s);
      }
    }
  }
  return segments;
}

/**
 * The public API router: `/rpc/...`, `/cometbft/...`, `/node/...`, `/v1/...` and `/aptos/...`. Returns false for any other path,
 * which the caller hands to Next.js. Every route goes through the same steps: match, CORS,
 * method, key, network, limits, handler, metering; every failure is `{ code, message }`.
 * The common case (a cached key) runs without waiting on anything but the request body.
 */
export function createGateway(options: GatewayOptions): GatewayHandler {
  const mounts = new Map(options.mounts.map((m) => [m.prefix, m]));
  const shared: Shared = { limiter: new RateLimiter(), quota: new QuotaTracker(options.now), meter: options.meter, metering: options.metering ?? true, requestLog: options.requestLog };
  const keys = keyVerifier();
  const log = options.logger ?? componentLogger("gateway");
  const failedAuth = new TokenBuckets(FAILED_AUTH_LIMIT);
  const clientIpOf = (req: IncomingMessage) => socketClientIp(req, options.trustedProxyHops ?? 0);
  const clientOf = (req: IncomingMessage) => clientKey(clientIpOf(req));

  /** The allowance's X-RateLimit-* headers for a response to the principal's request. */
  const limitHeaders = (p: KeyPrincipal) => (shared.metering ? shared.quota.headers(p.projectId, p.plan) : undefined);
  const checkQuota = (p: KeyPrincipal) => (shared.metering ? shared.quota.check(p.projectId, p.plan, p.overage) : undefined);

  const fail = (req: IncomingMessage, res: ServerResponse, requestId: string, e: unknown, principal?: KeyPrincipal): AppError => {
    const error = toAppError(e, (err) => log.error({ err, requestId, projectId: principal?.projectId, method: req.method }, "request failed"));
    if (res.headersSent) {
      res.destroy();
      return error;
    }
    req.resume();
    sendError(res, requestId, error, principal && limitHeaders(principal));
    return error;
  };

  async function run(ctx: RequestContext, res: ServerResponse, match: RouteMatch) {
    let response: GatewayResponse;
    try {
      response = await match.endpoint.handle(ctx);
    } catch (e) {
      // Failures after authentication count as requests (errors are free of CU). Never label them
      // with a path segment: on /node/<network>/<API_KEY> that would be the key.
      if (!ctx.metered) ctx.meter("rejected", 0, true, toAppError(e, () => undefined).status);
      throw e;
    }
    const body = send(res, ctx.requestId, response, limitHeaders(ctx.principal));
    ctx.finished(response.status, body);
  }

  function serveOpen(req: IncomingMessage, res: ServerResponse, requestId: string, route: OpenRoute) {
    const ctx = { req, requestId, url: new URL(req.url ?? "/", "http://gateway"), body: (limit = DEFAULT_BODY_LIMIT) => readBody(req, limit) };
    route.open
      .handle(ctx)
      .then((response) => send(res, requestId, response))
      .catch((e: unknown) => fail(req, res, requestId, e));
  }

  function authorized(req: IncomingMessage, res: ServerResponse, requestId: string, mount: Mount, match: RouteMatch, principal: KeyPrincipal) {
    let network: Network;
    try {
      network = resolveNetwork(mount, match);
    } catch (e) {
      // A network this interface does not serve: answered with the allowance's headers, as every refusal of a known key.
      fail(req, res, requestId, e, principal);
      return;
    }
    const ctx = new RequestContext(req, requestId, network, principal, shared, mount.prefix);
    const failed = (e: unknown) => {
      const error = fail(req, res, requestId, e, principal);
      if (shared.requestLog) ctx.finished(error.status, error.json);
    };
    let quota: Promise<void> | undefined;
    try {
      checkAllowlist(req, principal, ctx);
      quota = checkQuota(principal);
    } catch (e) {
      // Refused by the key's allowlists, or over the allowance, known without waiting: answered
      // with the allowance's headers, and logged, as any refusal of a known key.
      failed(e);
      return;
    }
    const done = quota ? quota.then(() => run(ctx, res, match)) : run(ctx, res, match);
    done.catch(failed);
  }

  /** The key's allowlists (origins, client addresses): 403 PERMISSION_DENIED, metered as `rejected` at 0 CU. */
  function checkAllowlist(req: IncomingMessage, principal: KeyPrincipal, ctx: { meter: RequestContext["meter"] }): void {
    if (!principal.allow) return;
    const refusal = principal.allow.refusal(req.headers.origin, () => clientIpOf(req));
    if (refusal === undefined) return;
    ctx.meter("rejected", 0, true, 403);
    throw new AppError("PERMISSION_DENIED", refusal);
  }

  /**
   * The principal of a key, synchronously when the cache knows it; throws (or rejects) with the
   * refusal. Unknown keys are limited per client address (FAILED_AUTH_LIMIT).
   */
  function verifyKey(req: IncomingMessage, secret: string): KeyPrincipal | Promise<KeyPrincipal> {
    let client: string | undefined;
    const verified = keys.verify(secret, () => {
      client = clientOf(req);
      const wait = failedAuth.waitMs(client);
      if (wait > 0) {
        const seconds = retryAfterSeconds(wait);
        throw new AppError("TOO_MANY_REQUESTS", `Too many requests with unknown API keys from your address. Try again in ${seconds} s.`, { "Retry-After": String(seconds) });
      }
      // Taken before the lookup, so concurrent requests cannot all pass while the bucket has
      // room; a key found valid gives it back.
      failedAuth.take(client);
    });
    if (verified instanceof Promise) {
      return verified.then(
        (v) => {
          if (typeof v === "string") throw refused(v);
          if (client !== undefined) failedAuth.giveBack(client);
          return v;
        },
        (e: unknown) => {
          // The database failed, not the key: the client keeps its turn.
          if (client !== undefined) failedAuth.giveBack(client);
          throw e;
        },
      );
    }
    if (typeof verified === "string") throw refused(verified);
    return verified;
  }

  const handler = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? "/";
    const end = url.indexOf("/", 1);
    const prefix = url.slice(1, end === -1 ? url.search(/[?#]|$/) : end);
    const mount = mounts.get(prefix);
    if (!mount) return false;
    const requestId = nextRequestId();
    /** The route, for a routing refusal's answer (failRouting). */
    let matched: RouteMatch | OpenRoute | undefined;
    try {
      if (url.length > MAX_URL_LENGTH) throw new AppError("TOO_LONG_URI", `The URL is longer than ${MAX_URL_LENGTH} characters.`);
      const segments = splitPath(url);
      const match = mount.match(segments);
      matched = match;
      if (!match) throw new AppError("WRONG_ENDPOINT", `There is no endpoint at ${url.split("?")[0]?.slice(0, 200)}.`);
      const allowed = "open" in match ? match.open.methods : match.endpoint.methods;
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "Access-Control-Allow-Origin": "*",
          "Access-Control-Expose-Headers": EXPOSE_HEADERS,
          "X-Request-Id": requestId,
          "Access-Control-Allow-Methods": [...allowed, "OPTIONS"].join(", "),
          "Access-Control-Allow-Headers": ["Content-Type", "X-API-KEY", ...(mount.corsHeaders ?? [])].join(", "),
          "Access-Control-Max-Age": "86400",
        });
        res.end();
        return true;
      }
      if (!allowed.includes(req.method ?? "")) {
        throw new AppError("METHOD_NOT_ALLOWED", `Use ${allowed.join(" or ")} on this endpoint.`, { Allow: allowed.join(", ") });
      }
      if ("open" in match) {
        serveOpen(req, res, requestId, match);
        return true;
      }
      const verified = verifyKey(req, keyFromRequest(req, match.pathKey, mount));
      if (verified instanceof Promise) {
        verified.then((principal) => authorized(req, res, requestId, mount, match, principal)).catch((e: unknown) => fail(req, res, requestId, e));
      } else {
        authorized(req, res, requestId, mount, match, verified);
      }
    } catch (e) {
      if (e instanceof AppError && (e.code === "WRONG_ENDPOINT" || e.code === "METHOD_NOT_ALLOWED")) failRouting(req, res, requestId, e, mount, matched);
      else fail(req, res, requestId, e);
    }
    return true;
  };

  /**
   * A request refused by routing (no such endpoint, or a wrong HTTP method) that carries a valid
   * key gets the allowance's headers too, as every answer to a known key does. The key is verified
   * as for any call (an unknown one counts against the client's failed-key limit); without a valid
   * key the refusal is sent as it is.
   */
  function failRouting(req: IncomingMessage, res: ServerResponse, requestId: string, error: AppError, mount: Mount, match: RouteMatch | OpenRoute | undefined) {
    let principal: KeyPrincipal | Promise<KeyPrincipal> | undefined;
    // An open route takes no key.
    if (!(match && "open" in match)) {
      try {
        principal = verifyKey(req, keyFromRequest(req, match?.pathKey, mount));
      } catch {
        // No key, or not a valid one: the refusal goes out as it is.
      }
    }
    if (principal instanceof Promise) principal.then((p) => fail(req, res, requestId, error, p)).catch(() => fail(req, res, requestId, error));
    else fail(req, res, requestId, error, principal);
  }

  /** The connections taken over by an upgrade, by socket: how each ends when the server stops. */
  const taken = new Map<Duplex, () => void>();

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const url = req.url ?? "/";
    const end = url.indexOf("/", 1);
    const mount = mounts.get(url.slice(1, end === -1 ? url.search(/[?#]|$/) : end));
    if (!mount) return false;
    const requestId = nextRequestId();
    const refuse = (e: unknown, projectId?: string) => refuseUpgrade(socket, requestId, toAppError(e, (err) => log.error({ err, requestId, projectId }, "upgrade failed")));
    try {
      if (url.length > MAX_URL_LENGTH) throw new AppError("TOO_LONG_URI", `The URL is longer than ${MAX_URL_LENGTH} characters.`);
      const route = mount.upgrade?.(splitPath(url));
      if (!route) throw new AppError("WRONG_ENDPOINT", `There is no WebSocket endpoint at ${url.split("?")[0]?.slice(0, 200)}.`);
      const accept = (principal: KeyPrincipal) => {
        const network = resolveNetwork(mount, route);
        try {
          checkAllowlist(req, principal, new RequestContext(req, requestId, network, principal, shared, mount.prefix));
        } catch (e) {
          refuse(e, principal.projectId);
          return;
        }
        // The endpoint may check the allowlists again later (a long-lived socket): the address
        // as checked here, overwriting whatever the client sent under this name.
        req.headers[CLIENT_IP_HEADER] = clientIpOf(req);
        // ctx.principal, not principal: a socket replaces it when its key is verified again.
        const ctx: SocketContext = {
          req,
          requestId,
          network,
          principal,
          call: () => new RequestContext(req, requestId, network, ctx.principal, shared, mount.prefix),
          quota: () => checkQuota(ctx.principal),
          onShutdown: (end) => {
            taken.set(socket, end);
            return () => taken.delete(socket);
          },
        };
        const quota = ctx.quota();
        if (quota) quota.then(() => route.accept(ctx, socket, head)).catch((e: unknown) => refuse(e, principal.projectId));
        else route.accept(ctx, socket, head);
      };
      const verified = verifyKey(req, keyFromRequest(req, route.pathKey, mount));
      if (verified instanceof Promise) verified.then(accept).catch(refuse);
      else accept(verified);
    } catch (e) {
      refuse(e);
    }
    return true;
  };

  const shutdown = (): ReadonlySet<Duplex> => {
    const sockets = new Set(taken.keys());
    for (const end of [...taken.values()]) end();
    return sockets;
  };

  return Object.assign(handler, { upgrade, shutdown });
}
