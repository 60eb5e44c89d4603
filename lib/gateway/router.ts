import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { randomBytes } from "node:crypto";
import { CLIENT_IP_HEADER, clientKey, socketClientIp } from "@/lib/client-ip";
import { AppError, toAppError } from "@/lib/errors";
import { componentLogger, type Logger } from "@/lib/log";
import type { KeyPrincipal, KeyRefusal } from "@/lib/keys/verifier";
import { services } from "@/lib/services";
import { networkByPath, networkBySlug, type Network } from "@/lib/networks";
import { SharedBuckets, type SharedLimits } from "@/lib/limits/shared";
import { retryAfterSeconds, type BucketLimit } from "@/lib/rate-limit";
import { annotate, serveInSpan, tracingOn } from "@/lib/tracing";
import { countRefusal, NONE, requestSeries, UNKNOWN } from "@/lib/metrics";
import { statusClass } from "@/lib/usage/meter";
import type { RequestLogEntry } from "@/lib/usage/request-log";
import { RateLimiter, throughputRefusal, type ThroughputLimiter } from "./limits";
import { QuotaTracker, RATE_LIMIT_HEADERS } from "./quota";
import type { GatewayContext, GatewayParts, GatewayResponse, Mount, OpenRoute, PlanAllowance, RouteMatch, SocketContext, SocketRoute, UsageRecorder } from "./types";

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

/**
 * Parts left out (GatewayParts) are in-memory ones: the process's key verifier, and a
 * CU-per-second limiter and an allowance tracker of this gateway's own.
 */
export interface GatewayOptions extends Partial<GatewayParts> {
  mounts: readonly Mount[];
  meter: UsageRecorder;
  /**
   * false: no usage is metered and no plan limit (CU per second, allowance) is enforced or
   * announced in headers (USAGE_METERING=off): the limiter, allowance and meter are not used. Default true.
   */
  metering?: boolean;
  /** Default: the "gateway" component logger. */
  logger?: Logger;
  /** Proxies in front whose X-Forwarded-For entries name the client (TRUSTED_PROXY_HOPS; default 0). */
  trustedProxyHops?: number;
  /** Wall-clock milliseconds for the default allowance's periods (default Date.now; tests move it across a reset). */
  now?: () => number;
  /** What the failed-key limit per client address and the WebSockets' caps per key are shared through (default: the process's, lib/services.ts). */
  limits?: SharedLimits;
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

/** The catalog's network a route names, when the mount serves it. */
function servedNetwork(mount: Mount, match: Pick<RouteMatch, "network">): Network | undefined {
  const n = "slug" in match.network ? networkBySlug(match.network.slug) : networkByPath(match.network.protocol, match.network.network);
  return n && mount.serves(n) ? n : undefined;
}

function resolveNetwork(mount: Mount, match: Pick<RouteMatch, "network">): Network {
  const n = servedNetwork(mount, match);
  if (!n) {
    const name = "slug" in match.network ? match.network.slug : `${match.network.protocol}/${match.network.network}`;
    throw new AppError("NOT_SUPPORTED_CHAIN", `The network "${name.slice(0, 100)}" is not supported on /${mount.prefix}.`);
  }
  return n;
}

// The parts standing in for the limiter, the allowance and the meter with metering off.
const UNLIMITED: ThroughputLimiter = { take: () => 0 };
const NO_ALLOWANCE: PlanAllowance = { check: () => undefined, affords: () => undefined, add: () => undefined, headers: () => undefined };
const NOT_METERED: UsageRecorder = { record: () => undefined };

/** A mount's interface label on metrics. */
const interfaceOf = (mount: Mount) => mount.interface ?? mount.prefix;

/** Counts a refusal of the plan's allowance (anything else thrown is not one). */
function countQuotaRefusal(e: unknown, mount: Mount, network: Network): void {
  if (e instanceof AppError && e.code === "EXCEEDED_QUOTA_LIMIT") countRefusal(interfaceOf(mount), network.slug, "quota");
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
    private readonly parts: GatewayParts,
    private readonly mount: Mount,
    /** A call on a WebSocket: observed in the request metrics as it is metered (a request is, as it is answered). */
    private readonly socketCall = false,
  ) {}

  get url(): URL {
    return (this.parsedUrl ??= new URL(this.req.url ?? "/", "http://gateway"));
  }

  body(limit = DEFAULT_BODY_LIMIT): Promise<Buffer> {
    return readBody(this.req, limit, this.parts.requestLog ? this : undefined);
  }

  charge(cu: number): void {
    const wait = this.parts.limiter.take(this.principal, cu);
    if (wait > 0) {
      countRefusal(interfaceOf(this.mount), this.network.slug, "rate_limit");
      throw throughputRefusal(this.principal.plan, wait);
    }
  }

  allowance(cu: number): void {
    const p = this.principal;
    try {
      this.parts.allowance.affords(p.projectId, p.plan, p.overage, cu);
    } catch (e) {
      countQuotaRefusal(e, this.mount, this.network);
      throw e;
    }
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
    if (!error) this.parts.allowance.add(p.projectId, cu);
    const t = performance.now();
    if (this.socketCall) requestSeries(interfaceOf(this.mount), this.network.slug, endpoint, status).observe((t - this.started) / 1000, error ? 0 : cu);
    this.parts.meter.record(
      {
        projectId: p.projectId,
        keyId: p.keyId,
        subscriptionId: "",
        network: this.network.slug,
        api: this.mount.prefix,
        endpoint,
        status,
        cu: error ? 0 : cu,
        error,
        latencyMs: t - this.started,
      },
      this.wall(t),
    );
  }

  /** The request's method: its one call's, or `batch`. */
  private get method(): string {
    return this.calls > 1 ? "batch" : this.endpoint;
  }

  /** The status class of the finished request answered with `status`: a JSON-RPC error in a 2xx answer is `rpc_error`. */
  private statusClass(status: number): RequestLogEntry["statusClass"] {
    return status >= 400 ? statusClass(status) : this.rpcError ? "rpc_error" : "2xx";
  }

  /** Observes the finished request (arrived at `started`, answered with `status`) in the request metrics, with the CU its calls cost. */
  observe(started: number, status: number): void {
    requestSeries(interfaceOf(this.mount), this.network.slug, this.method, this.statusClass(status)).observe((performance.now() - started) / 1000, this.cuTotal);
  }

  /** The request log's entry for the finished request (its answer queued with `status` and `body`). */
  logEntry(status: number, body: string | Buffer | undefined): RequestLogEntry {
    const p = this.principal;
    const t = performance.now();
    return {
      projectId: p.projectId,
      keyId: p.keyId,
      requestId: this.requestId,
      at: this.wall(t),
      api: this.mount.prefix,
      network: this.network.slug,
      method: this.method,
      calls: Math.max(this.calls, 1),
      status,
      statusClass: this.statusClass(status),
      latencyMs: t - this.started,
      cu: this.cuTotal,
      httpMethod: this.req.method ?? "GET",
      url: this.req.url ?? "/",
      params: this.requestBody,
      result: body,
    };
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

/** The mount prefix of a path (`node` of `/node/...`). */
function prefixOf(url: string): string {
  const end = url.indexOf("/", 1);
  return url.slice(1, end === -1 ? url.search(/[?#]|$/) : end);
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

function checkUrlLength(url: string): void {
  if (url.length > MAX_URL_LENGTH) throw new AppError("TOO_LONG_URI", `The URL is longer than ${MAX_URL_LENGTH} characters.`);
}

/** Where a request's answer goes, and what its request metrics need: when it arrived, where it went. */
interface Reply {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** performance.now() as the gateway took the request. */
  started: number;
  mount: Mount;
  /** The route the path names, once `read` found it. */
  route?: RouteMatch | OpenRoute;
}

/** A request `read` found a keyed endpoint for: where it goes, before its key is looked at. */
interface Incoming extends Reply {
  route: RouteMatch;
}

/** An upgrade request `read` found a WebSocket endpoint for. */
interface IncomingSocket {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  requestId: string;
  mount: Mount;
  route: SocketRoute;
}

/**
 * The public API: `/rpc/...`, `/cometbft/...`, `/node/...`, `/v1/...` and `/aptos/...`. A request
 * goes through named steps, each answering its own refusals (every failure is `{ code, message }`):
 * read (the path's endpoint and the HTTP method) → authenticate (the key, through the key
 * verifier) → route (the network, the key's allowlists: the call's context) → charge (the plan
 * allowance; the CU per second is taken by the endpoint, per call, through the context) → answer
 * (the endpoint's response) → account (the request log; each call is metered as it runs). The
 * common case (a cached key, a known allowance) waits on nothing but the request body.
 */
class Gateway {
  private readonly mounts: Map<string, Mount>;
  private readonly parts: GatewayParts;
  private readonly log: Logger;
  private readonly limits: SharedLimits;
  private readonly failedAuth: SharedBuckets;
  private readonly trustedProxyHops: number;
  /** The connections taken over by an upgrade, by socket: how each ends when the server stops. */
  private readonly taken = new Map<Duplex, () => void>();

  constructor(options: GatewayOptions) {
    this.mounts = new Map(options.mounts.map((m) => [m.prefix, m]));
    const keys = options.keys ?? services().keyVerifier;
    this.parts =
      (options.metering ?? true)
        ? { keys, limiter: options.limiter ?? new RateLimiter(), allowance: options.allowance ?? new QuotaTracker(options.now), meter: options.meter, requestLog: options.requestLog }
        : { keys, limiter: UNLIMITED, allowance: NO_ALLOWANCE, meter: NOT_METERED, requestLog: options.requestLog };
    this.log = options.logger ?? componentLogger("gateway");
    this.trustedProxyHops = options.trustedProxyHops ?? 0;
    this.limits = options.limits ?? services().limits;
    this.failedAuth = new SharedBuckets("failed-auth", FAILED_AUTH_LIMIT, this.limits);
  }

  /** A request on a public API path: true when taken (answered, or being answered). */
  request(req: IncomingMessage, res: ServerResponse): boolean {
    const mount = this.mounts.get(prefixOf(req.url ?? "/"));
    if (!mount) return false;
    if (tracingOn()) serveInSpan(req, res, `${req.method} /${mount.prefix}`, { "blockgate.api": mount.prefix }, () => this.serve(req, res, mount));
    else this.serve(req, res, mount);
    return true;
  }

  /** The request's steps, from read on. */
  private serve(req: IncomingMessage, res: ServerResponse, mount: Mount): void {
    const incoming = this.read({ req, res, requestId: nextRequestId(), started: performance.now(), mount });
    if (!incoming) return;
    let principal: KeyPrincipal | Promise<KeyPrincipal>;
    try {
      principal = this.authenticate(req, mount, incoming.route.pathKey);
    } catch (e) {
      this.fail(incoming, e);
      return;
    }
    if (principal instanceof Promise) principal.then((p) => this.call(incoming, p)).catch((e: unknown) => this.fail(incoming, e));
    else this.call(incoming, principal);
  }

  /** The steps after authentication, for a key found valid. */
  private call(incoming: Incoming, principal: KeyPrincipal): void {
    const ctx = this.route(incoming, principal);
    if (!ctx) return;
    const charged = this.charge(incoming, ctx);
    if (!charged) return;
    const answered = charged === true ? this.answer(incoming, ctx) : charged.then(() => this.answer(incoming, ctx));
    answered.catch((e: unknown) => this.refuse(incoming, ctx, e));
  }

  /**
   * read: the endpoint the path names and whether it takes the HTTP method. Answers preflights,
   * routes that take no key, and routing refusals; undefined when the request is answered.
   */
  private read(reply: Reply): Incoming | undefined {
    const { req, res, requestId, mount } = reply;
    annotate("blockgate.request_id", requestId);
    const url = req.url ?? "/";
    let route: RouteMatch | OpenRoute | undefined;
    try {
      checkUrlLength(url);
      route = reply.route = mount.match(splitPath(url));
      if (!route) throw new AppError("WRONG_ENDPOINT", `There is no endpoint at ${url.split("?")[0]?.slice(0, 200)}.`);
      const allowed = "open" in route ? route.open.methods : route.endpoint.methods;
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
        return undefined;
      }
      if (!allowed.includes(req.method ?? "")) {
        throw new AppError("METHOD_NOT_ALLOWED", `Use ${allowed.join(" or ")} on this endpoint.`, { Allow: allowed.join(", ") });
      }
    } catch (e) {
      if (e instanceof AppError && (e.code === "WRONG_ENDPOINT" || e.code === "METHOD_NOT_ALLOWED")) this.failRouting(reply, e, mount, route);
      else this.fail(reply, e);
      return undefined;
    }
    if ("open" in route) {
      this.serveOpen(reply, route);
      return undefined;
    }
    return { ...reply, route };
  }

  /** A route without a key: no project, no network, no limits, no metering. */
  private serveOpen(reply: Reply, route: OpenRoute): void {
    const { req, res, requestId } = reply;
    const ctx = { req, requestId, url: new URL(req.url ?? "/", "http://gateway"), body: (limit = DEFAULT_BODY_LIMIT) => readBody(req, limit) };
    route.open
      .handle(ctx)
      .then((response) => {
        send(res, requestId, response);
        this.observe(reply, response.status);
      })
      .catch((e: unknown) => this.fail(reply, e));
  }

  /**
   * authenticate: the principal of the request's key, synchronously when the verifier knows it;
   * throws (or rejects) with the refusal. Unknown keys are limited per client address
   * (FAILED_AUTH_LIMIT).
   */
  private authenticate(req: IncomingMessage, mount: Mount, pathKey: string | undefined): KeyPrincipal | Promise<KeyPrincipal> {
    const secret = keyFromRequest(req, pathKey, mount);
    let client: string | undefined;
    const verified = this.parts.keys.verify(secret, () => {
      client = clientKey(this.clientIp(req));
      const wait = this.failedAuth.waitMs(client);
      if (wait > 0) {
        const seconds = retryAfterSeconds(wait);
        throw new AppError("TOO_MANY_REQUESTS", `Too many requests with unknown API keys from your address. Try again in ${seconds} s.`, { "Retry-After": String(seconds) });
      }
      // Taken before the lookup, so concurrent requests cannot all pass while the bucket has
      // room; a key found valid gives it back.
      this.failedAuth.take(client);
    });
    if (verified instanceof Promise) {
      return verified.then(
        (v) => {
          if (typeof v === "string") throw refused(v);
          if (client !== undefined) this.failedAuth.giveBack(client);
          return v;
        },
        (e: unknown) => {
          // The database failed, not the key: the client keeps its turn.
          if (client !== undefined) this.failedAuth.giveBack(client);
          throw e;
        },
      );
    }
    if (typeof verified === "string") throw refused(verified);
    return verified;
  }

  /**
   * route: the network the call is for and whether the key may be used from where the request
   * came (its allowlists; a refusal is metered as `rejected` at 0 CU): the call's context, or
   * undefined when refused (answered).
   */
  private route(incoming: Incoming, principal: KeyPrincipal): RequestContext | undefined {
    let network: Network;
    try {
      network = resolveNetwork(incoming.mount, incoming.route);
    } catch (e) {
      // A network this interface does not serve: answered with the allowance's headers, as every refusal of a known key.
      this.fail(incoming, e, principal);
      return undefined;
    }
    annotate("blockgate.network", network.slug);
    annotate("blockgate.project_id", principal.projectId);
    const ctx = new RequestContext(incoming.req, incoming.requestId, network, principal, this.parts, incoming.mount);
    const refusal = this.allowlistRefusal(incoming.req, principal);
    if (refusal) {
      ctx.meter("rejected", 0, true, refusal.status);
      this.refuse(incoming, ctx, refusal);
      return undefined;
    }
    return ctx;
  }

  /**
   * charge: the plan allowance, before the endpoint runs (the CU per second is taken per call as
   * it runs: ctx.charge). True to go on, a promise when the allowance must be read first, false
   * when refused (answered).
   */
  private charge(incoming: Incoming, ctx: RequestContext): boolean | Promise<void> {
    try {
      return this.quota(ctx.principal, incoming.mount, ctx.network) ?? true;
    } catch (e) {
      this.refuse(incoming, ctx, e);
      return false;
    }
  }

  /** answer: the endpoint's response, sent with the allowance's headers; rejects with what the endpoint threw. */
  private async answer(incoming: Incoming, ctx: RequestContext): Promise<void> {
    let response: GatewayResponse;
    try {
      response = await incoming.route.endpoint.handle(ctx);
    } catch (e) {
      // Failures after authentication count as requests (errors are free of CU). Never label them
      // with a path segment: on /node/<network>/<API_KEY> that would be the key.
      if (!ctx.metered) ctx.meter("rejected", 0, true, toAppError(e, () => undefined).status);
      throw e;
    }
    this.account(incoming, ctx, response.status, send(incoming.res, incoming.requestId, response, this.limitHeaders(ctx.principal)));
  }

  /** account: the finished request into the request log and the request metrics (its calls were metered as they ran: ctx.meter). */
  private account(incoming: Incoming, ctx: RequestContext, status: number, body: string | Buffer | undefined): void {
    this.parts.requestLog?.record(ctx.logEntry(status, body));
    ctx.observe(incoming.started, status);
  }

  /** A refusal of a request with a valid key: answered with the allowance's headers, and logged. */
  private refuse(incoming: Incoming, ctx: RequestContext, e: unknown): void {
    const error = this.answerFailure(incoming, e, ctx.principal);
    this.account(incoming, ctx, error.status, error.json);
  }

  /** A request refused before it had a context (no valid key, no such endpoint or network): answered, and observed in the request metrics. */
  private fail(reply: Reply, e: unknown, principal?: KeyPrincipal): void {
    this.observe(reply, this.answerFailure(reply, e, principal).status);
  }

  /**
   * Observes a request answered without a context: under the network its route names (the
   * catalog's, `unknown` for another, `none` for a route of no network), as `open` (a route that
   * takes no key) or `rejected` (no call ran).
   */
  private observe(reply: Reply, status: number): void {
    const route = reply.route;
    const open = route !== undefined && "open" in route;
    const network = route === undefined || open ? NONE : (servedNetwork(reply.mount, route)?.slug ?? UNKNOWN);
    requestSeries(interfaceOf(reply.mount), network, open ? "open" : "rejected", statusClass(status)).observe((performance.now() - reply.started) / 1000);
  }

  /** Answers a failure as `{ code, message }`, with the allowance's headers when the key is known (a connection already answering is cut). */
  private answerFailure(reply: Reply, e: unknown, principal?: KeyPrincipal): AppError {
    const { req, res, requestId } = reply;
    const error = toAppError(e, (err) => this.log.error({ err, requestId, projectId: principal?.projectId, method: req.method }, "request failed"));
    if (res.headersSent) {
      res.destroy();
      return error;
    }
    req.resume();
    sendError(res, requestId, error, principal && this.limitHeaders(principal));
    return error;
  }

  /**
   * A request refused by routing (no such endpoint, or a wrong HTTP method) that carries a valid
   * key gets the allowance's headers too, as every answer to a known key does. The key is verified
   * as for any call (an unknown one counts against the client's failed-key limit); without a valid
   * key the refusal is sent as it is.
   */
  private failRouting(reply: Reply, error: AppError, mount: Mount, route: RouteMatch | OpenRoute | undefined): void {
    let principal: KeyPrincipal | Promise<KeyPrincipal> | undefined;
    // An open route takes no key.
    if (!(route && "open" in route)) {
      try {
        principal = this.authenticate(reply.req, mount, route?.pathKey);
      } catch {
        // No key, or not a valid one: the refusal goes out as it is.
      }
    }
    if (principal instanceof Promise) principal.then((p) => this.fail(reply, error, p)).catch(() => this.fail(reply, error));
    else this.fail(reply, error, principal);
  }

  /** The allowance's X-RateLimit-* headers for an answer to the principal's request. */
  private limitHeaders(p: KeyPrincipal): Readonly<Record<string, string>> | undefined {
    return this.parts.allowance.headers(p.projectId, p.plan);
  }

  /** Throws EXCEEDED_QUOTA_LIMIT when the project used its allowance; a promise when it must read its usage first. */
  private quota(p: KeyPrincipal, mount: Mount, network: Network): Promise<void> | undefined {
    let reading: Promise<void> | undefined;
    try {
      reading = this.parts.allowance.check(p.projectId, p.plan, p.overage);
    } catch (e) {
      countQuotaRefusal(e, mount, network);
      throw e;
    }
    return reading?.catch((e: unknown) => {
      countQuotaRefusal(e, mount, network);
      throw e;
    });
  }

  /** The key's allowlists (origins, client addresses): 403 PERMISSION_DENIED naming what is not listed. */
  private allowlistRefusal(req: IncomingMessage, principal: KeyPrincipal): AppError | undefined {
    if (!principal.allow) return undefined;
    const refusal = principal.allow.refusal(req.headers.origin, () => this.clientIp(req));
    return refusal === undefined ? undefined : new AppError("PERMISSION_DENIED", refusal);
  }

  private clientIp(req: IncomingMessage): string {
    return socketClientIp(req, this.trustedProxyHops);
  }

  /**
   * An `Upgrade` request (WebSocket) on a public API path, through the same steps as a request:
   * read, authenticate, route, charge (the allowance), answer (the endpoint takes the socket
   * over). Refusals are HTTP answers written on the socket. True when taken.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = req.url ?? "/";
    const mount = this.mounts.get(prefixOf(url));
    if (!mount) return false;
    const requestId = nextRequestId();
    try {
      checkUrlLength(url);
      const route = mount.upgrade?.(splitPath(url));
      if (!route) throw new AppError("WRONG_ENDPOINT", `There is no WebSocket endpoint at ${url.split("?")[0]?.slice(0, 200)}.`);
      const incoming: IncomingSocket = { req, socket, head, requestId, mount, route };
      const verified = this.authenticate(req, mount, route.pathKey);
      if (verified instanceof Promise) verified.then((p) => this.accept(incoming, p)).catch((e: unknown) => this.refuseSocket(socket, requestId, e));
      else this.accept(incoming, verified);
    } catch (e) {
      this.refuseSocket(socket, requestId, e);
    }
    return true;
  }

  /** An upgrade whose key is verified: routed and charged, then handed to the endpoint. Throws what refuses it before its key's allowlists are read. */
  private accept(incoming: IncomingSocket, principal: KeyPrincipal): void {
    const { req, socket, head, requestId, mount, route } = incoming;
    const network = resolveNetwork(mount, route);
    const refusal = this.allowlistRefusal(req, principal);
    if (refusal) {
      new RequestContext(req, requestId, network, principal, this.parts, mount, true).meter("rejected", 0, true, refusal.status);
      this.refuseSocket(socket, requestId, refusal, principal.projectId);
      return;
    }
    // The endpoint may check the allowlists again later (a long-lived socket): the address
    // as checked here, overwriting whatever the client sent under this name.
    req.headers[CLIENT_IP_HEADER] = this.clientIp(req);
    // ctx.principal, not principal: a socket replaces it when its key is verified again.
    const ctx: SocketContext = {
      req,
      requestId,
      network,
      principal,
      call: () => new RequestContext(req, requestId, network, ctx.principal, this.parts, mount, true),
      quota: () => this.quota(ctx.principal, mount, network),
      limits: this.limits,
      onShutdown: (end) => {
        this.taken.set(socket, end);
        return () => this.taken.delete(socket);
      },
    };
    const taken = async () => {
      await ctx.quota();
      await route.accept(ctx, socket, head);
    };
    taken().catch((e: unknown) => this.refuseSocket(socket, requestId, e, principal.projectId));
  }

  private refuseSocket(socket: Duplex, requestId: string, e: unknown, projectId?: string): void {
    refuseUpgrade(socket, requestId, toAppError(e, (err) => this.log.error({ err, requestId, projectId }, "upgrade failed")));
  }

  /**
   * The server is stopping: ends every connection taken over by an upgrade as its endpoint does
   * (SocketContext.onShutdown). Answers their sockets, which close by themselves once ended.
   */
  shutdown(): ReadonlySet<Duplex> {
    const sockets = new Set(this.taken.keys());
    for (const end of [...this.taken.values()]) end();
    return sockets;
  }
}

/** The public API router (Gateway): returns false for a path outside its mounts, which the caller hands to Next.js. */
export function createGateway(options: GatewayOptions): GatewayHandler {
  const gateway = new Gateway(options);
  return Object.assign((req: IncomingMessage, res: ServerResponse) => gateway.request(req, res), {
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => gateway.upgrade(req, socket, head),
    shutdown: () => gateway.shutdown(),
  });
}
