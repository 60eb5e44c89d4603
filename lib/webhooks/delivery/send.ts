/**
 * One POST of a webhook message to its receiver, and what came of it. The URL is checked again
 * (lib/webhooks/url-guard.ts) and the connection goes to the address that check resolved, never to
 * a second lookup (DNS rebinding). Connections are kept alive in one undici pool per (receiver,
 * address), closed after a while unused: a receiver is what the per-host bound counts (the
 * claim's key; each test inbox of this service its own), so a pool's perHost connections never
 * serve two receivers' turns. Redirects are not followed (a 3xx is a failure).
 */
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import type { Readable } from "node:stream";
import { Pool } from "undici";
import { errorMessage } from "@/lib/log";
import { storableExcerpt } from "@/lib/text";
import { pinnedLookup, resolveDeliveryTarget, UnsafeUrlError, type DeliveryTarget } from "../url-guard";

/** The User-Agent of every delivery. */
export const USER_AGENT = "Blockgate-Webhooks/1.0";
/** How much of the receiver's answer the history keeps. */
export const RESPONSE_BODY_KEPT = 1024;
/** More of an answer than this is not read: the connection is dropped instead. */
const RESPONSE_BODY_READ = 64 * 1024;
const POOL_IDLE_MS = 5 * 60_000;
/** A URL's check and address are reused this long (a host's DNS changes reach deliveries within it). */
const TARGET_TTL_MS = 5_000;
const TARGETS_KEPT = 10_000;

export interface SendRequest {
  /** The receiver's key (ClaimedMessage.host): requests of one receiver share a pool of connections. */
  receiver: string;
  url: string;
  body: string;
  /** Every header but those this module adds (content-type, user-agent, authorization from the URL). */
  headers: Record<string, string>;
  timeoutMs: number;
  /** Aborted: the attempt is given up at once (a worker stopped without finishing). */
  signal: AbortSignal;
}

export interface SendResult {
  httpStatus: number | null;
  /** The answer's Retry-After header, if any. */
  retryAfter?: string;
  /** Why no answer came, or what the answer was, for the history. */
  error: string | null;
  /** The first RESPONSE_BODY_KEPT bytes of the answer (UTF-8). */
  responseBody: string | null;
  /** Headers as sent, credentials from the URL masked. */
  requestHeaders: Record<string, string>;
  /** True when the attempt was given up because `signal` was aborted (not a receiver's failure). */
  abandoned: boolean;
}

interface PoolEntry {
  pool: Pool;
  usedAt: number;
}

/** Keeps the pools; one per worker (closed with it). */
export class DeliveryClient {
  private pools = new Map<string, PoolEntry>();
  private targets = new Map<string, { target: DeliveryTarget; at: number }>();
  private sweeper: NodeJS.Timeout;

  constructor(
    private readonly perHost: number,
    private readonly resolve: (url: string) => Promise<DeliveryTarget> = (url) => resolveDeliveryTarget(url),
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), 60_000);
    this.sweeper.unref();
  }

  private pool(receiver: string, target: DeliveryTarget, timeoutMs: number): Pool {
    const key = `${receiver}|${target.url.origin}|${target.address}`;
    let entry = this.pools.get(key);
    if (!entry) {
      const pool = new Pool(target.url.origin, {
        connections: this.perHost,
        keepAliveTimeout: 4_000,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connect: { lookup: pinnedLookup(target) as never, timeout: timeoutMs },
      });
      entry = { pool, usedAt: Date.now() };
      this.pools.set(key, entry);
    }
    entry.usedAt = Date.now();
    return entry.pool;
  }

  private closeIdle(now = Date.now()): void {
    for (const [key, entry] of this.pools) {
      if (now - entry.usedAt > POOL_IDLE_MS) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => undefined);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.pool.destroy().catch(() => undefined)));
  }

  /**
   * One attempt, bounded as a whole by `timeoutMs` from its start: resolving the URL, waiting for
   * a connection, connecting, sending, the answer's head and its body. One timer per attempt: when
   * it fires the attempt is over (a timeout) and undici's request is aborted through an event
   * emitter (undici accepts one as the request's signal), which drops the connection. The pool's
   * own connect, headers and body timeouts, each measured from a later start, never come first.
   */
  send(req: SendRequest): Promise<SendResult> {
    const headers: Record<string, string> = { "content-type": "application/json", "user-agent": USER_AGENT, ...req.headers };
    const recorded = { ...headers };
    const failed = (error: string): SendResult => ({ httpStatus: null, error, responseBody: null, requestHeaders: recorded, abandoned: req.signal.aborted });
    return new Promise<SendResult>((resolve) => {
      const cancel = new EventEmitter();
      let over = false;
      const finish = (result: SendResult) => {
        if (over) return;
        over = true;
        clearTimeout(timer);
        req.signal.removeEventListener("abort", onAbandon);
        resolve(result);
      };
      const stop = (result: SendResult) => {
        finish(result);
        cancel.emit("abort");
      };
      const onAbandon = () => stop(failed("the attempt was given up: the delivery worker stopped"));
      const timer = setTimeout(() => stop(failed(`timed out: no complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
      if (req.signal.aborted) return onAbandon();
      req.signal.addEventListener("abort", onAbandon, { once: true });
      const started = this.target(req.url);
      const exchange = started instanceof Promise ? started.then((target) => this.exchange(req, target, headers, recorded, cancel, () => over)) : this.exchange(req, started, headers, recorded, cancel, () => over);
      exchange.then(finish, (e: unknown) => {
        if (over) return;
        if (e instanceof UnsafeUrlError) finish(failed(`not sent: the URL ${e.message}`));
        else if (e instanceof TargetError) finish(failed(`not sent: ${errorMessage(e.cause)}`));
        else finish(failed(errorMessage(e)));
      });
    });
  }

  /** The exchange with the receiver once the URL is resolved; `over()` says the attempt already ended (the deadline). */
  private async exchange(req: SendRequest, target: DeliveryTarget, headers: Record<string, string>, recorded: Record<string, string>, cancel: EventEmitter, over: () => boolean): Promise<SendResult> {
    if (target.url.username || target.url.password) {
      const credentials = `${decodeURIComponent(target.url.username)}:${decodeURIComponent(target.url.password)}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
      recorded.authorization = "Basic [credentials from the URL]";
    }
    const failed = (error: string): SendResult => ({ httpStatus: null, error, responseBody: null, requestHeaders: recorded, abandoned: false });
    // The deadline passed while the URL was being resolved: nothing is sent (the result is not used).
    if (over()) return failed("not sent");
    try {
      const res = await this.pool(req.receiver, target, req.timeoutMs).request({
        method: "POST",
        path: target.url.pathname + target.url.search,
        headers: { ...headers, host: target.url.host },
        body: req.body,
        signal: cancel,
      });
      const { kept, read, complete } = await readAnswer(res.body);
      if (!complete) return failed("the connection was closed before the whole answer");
      const retryAfter = res.headers["retry-after"];
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return {
        httpStatus: res.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        error: ok ? null : `the receiver answered HTTP ${res.statusCode}${res.statusCode >= 300 && res.statusCode < 400 ? " (redirects are not followed)" : ""}`,
        responseBody: read > 0 ? storableExcerpt(Buffer.concat(kept).toString("utf8")) : null,
        requestHeaders: recorded,
        abandoned: false,
      };
    } catch (e) {
      return failed(describeNetworkError(e, target));
    }
  }

  /** The URL checked and resolved (url-guard), reused for TARGET_TTL_MS: the address stays the one checked. Not a promise when reused. */
  private target(url: string): DeliveryTarget | Promise<DeliveryTarget> {
    const now = performance.now();
    const hit = this.targets.get(url);
    if (hit && now - hit.at < TARGET_TTL_MS) return hit.target;
    return this.resolve(url).then(
      (target) => {
        if (this.targets.size >= TARGETS_KEPT) this.targets.clear();
        this.targets.set(url, { target, at: now });
        return target;
      },
      (e: unknown) => {
        throw e instanceof UnsafeUrlError ? e : new TargetError(e);
      },
    );
  }
}

/** The URL could not be resolved (other than refused by the guard). */
class TargetError extends Error {
  constructor(override readonly cause: unknown) {
    super(errorMessage(cause));
  }
}

/**
 * Reads an answer's body: the first RESPONSE_BODY_KEPT bytes kept, at most RESPONSE_BODY_READ read
 * (the rest dropped with the connection). `complete` is false when the body failed (the attempt's
 * deadline destroyed it, or the connection closed).
 */
function readAnswer(body: Readable): Promise<{ kept: Buffer[]; read: number; complete: boolean }> {
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let read = 0;
    const done = (complete: boolean) => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
      if (!complete || read >= RESPONSE_BODY_READ) body.on("error", () => undefined).destroy();
      resolve({ kept, read, complete });
    };
    const onData = (chunk: Buffer) => {
      if (read < RESPONSE_BODY_KEPT) kept.push(chunk.subarray(0, RESPONSE_BODY_KEPT - read));
      read += chunk.length;
      if (read >= RESPONSE_BODY_READ) done(true);
    };
    const onEnd = () => done(true);
    const onError = () => done(false);
    body.on("data", onData);
    body.on("end", onEnd);
    body.on("error", onError);
  });
}

/** A connection failure in words: refused, reset, TLS, timeouts by phase. */
function describeNetworkError(e: unknown, target: DeliveryTarget): string {
  const err = e as { code?: string; cause?: { code?: string; message?: string } };
  const code = err.cause?.code ?? err.code;
  const where = `${target.address}:${target.url.port || (target.url.protocol === "https:" ? 443 : 80)}`;
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused by ${where}`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `the connection to ${where} was closed before a complete answer`;
    case "UND_ERR_CONNECT_TIMEOUT":
      return `timed out connecting to ${where}`;
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return "timed out waiting for the receiver's answer";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} is unreachable`;
    default:
      return `${code ? `${code}: ` : ""}${err.cause?.message ?? errorMessage(e)}`;
  }
}
