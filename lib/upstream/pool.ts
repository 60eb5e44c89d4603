/**
 * The upstream nodes of one network, shared by every caller in the process: kept-alive
 * connections, a deadline per call, health marks and one retry policy, for any HTTP API (CometBFT's
 * URI form, EVM JSON-RPC over POST, REST GETs). What an answer means is the caller's: a `check`
 * turns each response into a value, or into a failure of the node.
 *
 * Node URLs often carry provider keys (in the path, the query or as credentials): only their
 * origin ever appears in a log line or an error.
 */
import { Pool, type Dispatcher } from "undici";
import { componentLogger, type Logger } from "@/lib/log";
import { networkLabel, trackUpstreams, upstreamCallSeries, type UpstreamOutcome } from "@/lib/metrics";
import { networkBySlug, type Network } from "@/lib/networks";
import { endClientSpan, startClientSpan, tracingOn, withTraceHeaders, type Attributes, type Link, type Span } from "@/lib/tracing";

const DEFAULT_TIMEOUT_MS = 10_000;
const UNHEALTHY_FOR_MS = 30_000;
/** Concurrent connections to one node at most; further calls queue. */
const MAX_CONNECTIONS = 256;

/** No node gave a usable answer. The message names no node (it may reach API callers); `failures` does, by origin. */
export class UpstreamUnavailable extends Error {
  override name = "UpstreamUnavailable";
  constructor(
    message: string,
    /** Each node tried (or left out) and why it gave no answer, in the order tried. */
    readonly failures: readonly TargetFailure[],
  ) {
    super(message);
  }
}

export interface TargetFailure {
  /** Position of the node in the configured list. */
  index: number;
  /** The node's URL's origin (safe to log). */
  origin: string;
  reason: string;
}

/**
 * Thrown by a `check` (or a `verify`) when the node's answer is not one: not JSON, a server
 * error without a body, a malformed result. The node is marked and, when the call allows it,
 * another one is asked.
 */
export class NodeFailure extends Error {
  override name = "NodeFailure";
}

class TimeoutError extends Error {
  override name = "TimeoutError";
  constructor() {
    super("timed out");
  }
}

export interface UpstreamRequest {
  method: "GET" | "POST";
  /** Appended to the node URL's path, with an optional query: "status?height=5". None: the URL itself. */
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** With tracing on: what the request's client span adds to the HTTP ones (what was asked), and links to the work it serves. */
  trace?: { attributes?: Attributes; links?: Link[] };
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, decoded as UTF-8. */
  text: string;
}

export interface CallOptions<T> extends UpstreamRequest {
  /**
   * May another node be asked after one failed? Reads: yes. Writes: no, unless the failure
   * certainly happened before any byte was sent (connection refused, name not resolved).
   */
  retryable: boolean;
  /** Deadline of the call on each node (the pool's default when omitted). */
  timeoutMs?: number;
  /** Aborting rejects the call with the signal's reason, without blaming the node. */
  signal?: AbortSignal;
  /**
   * What the response means: return the call's value; throw NodeFailure when it is no answer (the
   * node is marked and, if allowed, the next one asked). Anything else thrown is the node's answer
   * (a JSON-RPC error, say) and reaches the caller as it is: the node stays healthy.
   */
  check: (response: UpstreamResponse) => T;
}

/** "ok": the node may be used; "unknown": it cannot tell now (used anyway, asked again next time); leftOut: never used. */
export type Verdict = "ok" | "unknown" | { leftOut: string };

export interface PoolOptions {
  /** The network's slug, on every log line. */
  network: string;
  /** Default deadline of a call on one node. */
  timeoutMs?: number;
  /** How long a failed node is passed over. */
  unhealthyMs?: number;
  /** The clock of the health marks (ms). */
  now?: () => number;
  /** Parent of the pool's logger (`componentLogger("upstream")` when omitted). */
  logger?: Logger;
  /**
   * Asked of each node before its first use, through `ask` (one request to that node, with the
   * pool's default deadline): is it the node it should be? A node that cannot tell is used anyway;
   * a node left out is never used and said so once.
   */
  verify?: (ask: (request: UpstreamRequest) => Promise<UpstreamResponse>) => Promise<Verdict>;
}

interface Target {
  index: number;
  origin: string;
  /** Its upstream label on metrics (never its URL): its place in the configured list, or `devnet`. */
  name: string;
  /** For log lines: the origin, numbered when two nodes share one (two keys of one provider). */
  label: string;
  client: Pool;
  /** Path (no trailing slash) and query of the URL, without credentials. */
  basePath: string;
  baseQuery: string;
  /** Basic authentication from the URL's credentials. */
  headers: Record<string, string>;
  unhealthyUntil: number;
  /** In a failure streak: its start was logged, its end will be. */
  failing: boolean;
  verified: boolean;
  /** The verification in flight (one per node at a time). */
  verifying?: Promise<void>;
  leftOut?: string;
}

function toTarget(url: string, index: number, origins: string[], connectTimeoutMs: number, devnet: boolean): Target {
  const u = new URL(url);
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`upstream #${index + 1} (${u.protocol}//${u.host}): only http and https URLs are supported`);
  const shared = origins.indexOf(u.origin) !== origins.lastIndexOf(u.origin);
  const headers: Record<string, string> = {};
  if (u.username || u.password) {
    const credentials = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
  }
  return {
    index,
    origin: u.origin,
    name: devnet ? "devnet" : String(index + 1),
    label: shared ? `#${index + 1} ${u.origin}` : u.origin,
    client: new Pool(u.origin, { connections: MAX_CONNECTIONS, connect: { timeout: connectTimeoutMs } }),
    basePath: u.pathname.replace(/\/+$/, ""),
    baseQuery: u.search.slice(1),
    headers,
    unhealthyUntil: 0,
    failing: false,
    verified: false,
  };
}

function originsOf(urls: readonly string[]): string[] {
  return urls.map((url, i) => {
    try {
      return new URL(url).origin;
    } catch {
      throw new Error(`upstream #${i + 1} is not a valid URL`);
    }
  });
}

function requestPath(target: Target, path: string | undefined): string {
  const [p = "", q = ""] = path === undefined ? [] : splitOnce(path, "?");
  const query = [target.baseQuery, q].filter((s) => s !== "").join("&");
  const joined = p === "" ? target.basePath : `${target.basePath}/${p.replace(/^\/+/, "")}`;
  return `${joined === "" ? "/" : joined}${query ? `?${query}` : ""}`;
}

function splitOnce(s: string, sep: string): [string, string] {
  const at = s.indexOf(sep);
  return at === -1 ? [s, ""] : [s.slice(0, at), s.slice(at + 1)];
}

const errorCode = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
};

/** Failures before any byte of the request left: another node may be tried even for a write. */
function neverSent(e: unknown): boolean {
  const code = errorCode(e);
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "UND_ERR_CONNECT_TIMEOUT";
}

/** The outcome label of a request that got no answer. */
function failureOutcome(e: unknown): UpstreamOutcome {
  if (e instanceof NodeFailure) return "bad_answer";
  return e instanceof TimeoutError || errorCode(e) === "UND_ERR_CONNECT_TIMEOUT" ? "timeout" : "unreachable";
}

/** Why a node gave no answer, without its address: system errors by syscall and code ("connect ECONNREFUSED"). */
function reasonOf(e: unknown): string {
  if (e instanceof NodeFailure || e instanceof TimeoutError) return e.message;
  const code = errorCode(e);
  if (code === "UND_ERR_CONNECT_TIMEOUT") return "timed out";
  const syscall = (e as { syscall?: unknown } | null)?.syscall;
  if (typeof syscall === "string" && code) return `${syscall} ${code}`;
  if (code?.startsWith("E")) return code;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The calls in flight under each caller's signal. One listener per signal, however many calls
 * share it (a follower fetching a batch of blocks under its stop signal).
 */
const linked = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/** Calls `end` with the signal's reason when it aborts; returns the undo. */
function link(signal: AbortSignal, end: (reason: unknown) => void): () => void {
  let calls = linked.get(signal);
  if (!calls) {
    const set = new Set<(reason: unknown) => void>();
    signal.addEventListener(
      "abort",
      () => {
        for (const call of set) call(signal.reason);
      },
      { once: true },
    );
    linked.set(signal, set);
    calls = set;
  }
  calls.add(end);
  return () => void calls.delete(end);
}

export class UpstreamPool {
  private readonly targets: Target[];
  private readonly timeoutMs: number;
  private readonly unhealthyMs: number;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly verify: PoolOptions["verify"];
  /** The network label of the pool's metrics. */
  private readonly network: string;
  private readonly untrack: () => void;

  constructor(urls: readonly string[], opts: PoolOptions) {
    if (urls.length === 0) throw new Error(`${opts.network}: no upstream URL given`);
    this.network = opts.network;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const origins = originsOf(urls);
    const devnet = networkBySlug(opts.network)?.source.kind === "devnet";
    this.targets = urls.map((url, i) => toTarget(url, i, origins, this.timeoutMs, devnet));
    this.network = networkLabel(opts.network);
    this.unhealthyMs = opts.unhealthyMs ?? UNHEALTHY_FOR_MS;
    this.now = opts.now ?? (() => performance.now());
    this.log = (opts.logger ?? componentLogger("upstream")).child({ network: opts.network });
    this.verify = opts.verify;
    this.untrack = trackUpstreams({ nodes: () => this.health().map((n, i) => ({ network: this.network, upstream: this.targets[i]!.name, healthy: !n.unhealthy && n.leftOut === undefined })) });
  }

  /** Each node in the configured order: its origin, whether it is passed over now, why it is left out. */
  health(): Array<{ origin: string; unhealthy: boolean; leftOut?: string }> {
    const now = this.now();
    return this.targets.map((t) => ({ origin: t.origin, unhealthy: t.unhealthyUntil > now, ...(t.leftOut ? { leftOut: t.leftOut } : {}) }));
  }

  /** A node for log lines and errors: its origin (safe to log), numbered when there are several. */
  label(index: number): string {
    const origin = this.targets[index]?.origin ?? "?";
    return this.targets.length > 1 ? `#${index + 1} ${origin}` : origin;
  }

  /** Every node, as label() names it. */
  labels(): string[] {
    return this.targets.map((t) => this.label(t.index));
  }

  /** Closes the kept-alive connections (calls in flight finish first). */
  async close(): Promise<void> {
    this.untrack();
    await Promise.all(this.targets.map((t) => t.client.close()));
  }

  /**
   * Asks the nodes in turn until one answers: healthy ones in the configured order, then those
   * passed over (so a single node is never locked out); a call that is not retryable goes on only
   * after a failure before sending. Throws UpstreamUnavailable when none answered.
   */
  async call<T>(opts: CallOptions<T>): Promise<T> {
    const now = this.now();
    const usable = this.targets.filter((t) => !t.leftOut);
    const order = [...usable.filter((t) => t.unhealthyUntil <= now), ...usable.filter((t) => t.unhealthyUntil > now)];
    const failures: TargetFailure[] = this.targets.filter((t) => t.leftOut).map((t) => ({ index: t.index, origin: t.origin, reason: t.leftOut! }));
    for (const target of order) {
      opts.signal?.throwIfAborted();
      if (!target.verified && this.verify) {
        await this.verifyTarget(target);
        if (target.leftOut) {
          failures.push({ index: target.index, origin: target.origin, reason: target.leftOut });
          continue;
        }
      }
      opts.signal?.throwIfAborted();
      const started = performance.now();
      let response: UpstreamResponse;
      try {
        response = await this.send(target, opts, opts.timeoutMs ?? this.timeoutMs, opts.signal);
      } catch (e) {
        opts.signal?.throwIfAborted();
        this.observe(target, failureOutcome(e), started);
        failures.push(this.failed(target, e));
        if (opts.retryable || neverSent(e)) continue;
        break;
      }
      let value: T;
      try {
        value = opts.check(response);
      } catch (e) {
        if (!(e instanceof NodeFailure)) {
          this.observe(target, "error", started);
          this.answered(target);
          throw e;
        }
        this.observe(target, "bad_answer", started);
        failures.push(this.failed(target, e));
        if (opts.retryable) continue;
        break;
      }
      this.observe(target, "ok", started);
      this.answered(target);
      return value;
    }
    const tried = failures.filter((f) => !this.targets[f.index]!.leftOut);
    const message =
      tried.length === 0 && failures.length > 0
        ? `every upstream node is left out (${failures.map((f) => f.reason).join("; ")})`
        : `no upstream node answered (${failures.map((f) => f.reason).join("; ")})`;
    throw new UpstreamUnavailable(message, failures);
  }

  /** One request to a node in the upstream metrics: its outcome and seconds since `started`. */
  private observe(target: Target, outcome: UpstreamOutcome, started: number): void {
    upstreamCallSeries(this.network, target.name, outcome).observe((performance.now() - started) / 1000);
  }

  private answered(target: Target): void {
    target.unhealthyUntil = 0;
    if (target.failing) {
      target.failing = false;
      this.log.info(`upstream ${target.label} is healthy again`);
    }
  }

  private failed(target: Target, e: unknown): TargetFailure {
    const reason = reasonOf(e);
    target.unhealthyUntil = this.now() + this.unhealthyMs;
    if (!target.failing) {
      target.failing = true;
      this.log.warn(`upstream ${target.label} failed (${reason}); passing over it for ${Math.round(this.unhealthyMs / 1000)} s`);
    }
    return { index: target.index, origin: target.origin, reason };
  }

  private verifyTarget(target: Target): Promise<void> {
    const verify = this.verify!;
    target.verifying ??= verify((request) => this.send(target, request, this.timeoutMs, undefined))
      .catch((): Verdict => "unknown")
      .then((verdict) => {
        if (verdict === "ok") target.verified = true;
        else if (verdict !== "unknown" && !target.leftOut) {
          target.leftOut = verdict.leftOut;
          this.log.error(`upstream ${target.label} is left out: ${verdict.leftOut} (check the network's UPSTREAM_ variable)`);
        }
      })
      .finally(() => (target.verifying = undefined));
    return target.verifying;
  }

  /** The client span of one request to `target` (a child of the active span; none outside one): the node by its origin only. */
  private clientSpan(target: Target, request: UpstreamRequest): Span | undefined {
    const url = new URL(target.origin);
    return startClientSpan(
      `upstream ${request.method}`,
      {
        "http.request.method": request.method,
        "server.address": url.hostname,
        "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
        "blockgate.network": this.network,
        "blockgate.upstream": target.label,
        ...request.trace?.attributes,
      },
      request.trace?.links,
    );
  }

  /**
   * One request to one node, ended after `timeoutMs` (waiting for a connection, sending and
   * reading the whole answer) or when `signal` aborts. undici's dispatch API rather than
   * `request()`: no body stream and no AbortSignal of our own per call (measured: a third less CPU
   * per forwarded call than `request()` with an AbortSignal for the deadline).
   */
  private send(target: Target, request: UpstreamRequest, timeoutMs: number, signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      /** Why the call ended before its request reached a connection: it is aborted there. */
      let ended: Error | undefined;
      let settled = false;
      let status = 0;
      let headers: UpstreamResponse["headers"] = {};
      let chunks: Buffer[] = [];
      const span = tracingOn() ? this.clientSpan(target, request) : undefined;
      const settle = (error: unknown, response?: UpstreamResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unlink?.();
        endClientSpan(span, response?.status, response ? undefined : reasonOf(error));
        if (response) resolve(response);
        else reject(error);
      };
      const end = (reason: unknown) => {
        if (settled) return;
        ended = reason instanceof Error ? reason : new Error(String(reason));
        controller?.abort(ended);
        settle(reason);
      };
      const timer = setTimeout(() => end(new TimeoutError()), timeoutMs);
      const unlink = signal ? link(signal, end) : undefined;
      target.client.dispatch(
        {
          method: request.method,
          path: requestPath(target, request.path),
          headers: withTraceHeaders(span, { ...request.headers, ...target.headers }),
          body: request.body,
          // The deadline above covers the whole call.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        {
          onRequestStart(c) {
            if (ended) return c.abort(ended);
            controller = c;
            chunks = [];
          },
          onResponseStart(_c, statusCode, responseHeaders) {
            status = statusCode;
            headers = responseHeaders;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            settle(undefined, { status, headers, text: Buffer.concat(chunks).toString("utf8") });
          },
          onResponseError(_c, error) {
            settle(error);
          },
        },
      );
    });
  }
}

/** The body as JSON, or NodeFailure: an answer that is not JSON is no answer. */
export function parseJson(response: UpstreamResponse): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    throw new NodeFailure(`HTTP ${response.status} with a body that is not JSON`);
  }
}

/**
 * One client per network's upstream nodes in the process, so that every caller shares its health
 * marks: `build` makes it from the network's URLs, again when the catalog names other URLs.
 */
export function clientPerNetwork<C>(build: (network: Network, urls: readonly string[]) => C): (network: Network) => C {
  const clients = new Map<string, C>();
  return (network) => {
    if (network.source.kind !== "upstream") throw new Error(`${network.slug} has no upstream (set ${network.upstreamVariable})`);
    const key = `${network.slug} ${network.source.urls.join(" ")}`;
    let client = clients.get(key);
    if (!client) {
      client = build(network, network.source.urls);
      clients.set(key, client);
    }
    return client;
  };
}
