/**
 * A CometBFT JSON-RPC client (URI form: `GET <base>/<method>?height=H`) over the network's
 * upstream pool, every answer checked against the schema of what we read.
 */
import type { z } from "zod";
import { clientPerNetwork, NodeFailure, UpstreamPool, UpstreamUnavailable, type CallOptions, type UpstreamResponse } from "@/lib/upstream/pool";
import { INTERNAL_ERROR, RpcError, STANDARD_CODES } from "@/lib/jsonrpc/errors";
import { blockResultsSchema, cometBlockSchema, consensusParamsSchema, netInfoSchema, statusSchema } from "./comet";

/** No configured node answered: network errors, timeouts, HTTP errors or malformed answers. */
export class UpstreamUnavailableError extends Error {
  override name = "UpstreamUnavailableError";
  constructor(
    readonly method: string,
    readonly failures: readonly string[],
  ) {
    super(`${method}: no upstream node answered (${failures.join("; ")})`);
  }
}

/** CometBFT serves the same methods over HTTP as over its websocket endpoint. */
function httpUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // refused by the pool, whose error does not repeat the URL (it may hold a key)
  }
  if (u.protocol !== "ws:" && u.protocol !== "wss:") return url;
  u.protocol = u.protocol === "ws:" ? "http:" : "https:";
  u.pathname = u.pathname.replace(/\/websocket\/?$/, "");
  return u.toString();
}

/** The result of a URI-form answer; a JSON-RPC error is the node's answer, thrown as RpcError. */
function cometResult(method: string, schema: z.ZodType, keepRaw = false) {
  return (res: UpstreamResponse): unknown => {
    let envelope: unknown;
    try {
      envelope = JSON.parse(res.text);
    } catch {
      throw new NodeFailure(`HTTP ${res.status}, not a JSON-RPC answer`);
    }
    if (typeof envelope !== "object" || envelope === null) throw new NodeFailure(`HTTP ${res.status}, not a JSON-RPC answer`);
    // CometBFT answers errors of the URI form with HTTP 500 and a JSON-RPC error body.
    const { error, result } = envelope as { error?: unknown; result?: unknown };
    if (typeof error === "object" && error !== null) {
      const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
      if (typeof code === "number" && typeof message === "string") {
        const detail = typeof data === "string" ? data : data === undefined ? message : JSON.stringify(data);
        throw new RpcError(STANDARD_CODES.has(code) ? code : INTERNAL_ERROR, message, detail);
      }
    }
    if (res.status < 200 || res.status > 299 || result === undefined) throw new NodeFailure(`HTTP ${res.status}, no result`);
    const parsed = schema.safeParse(result);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new NodeFailure(`malformed ${method} answer${issue ? ` at ${issue.path.join(".") || "result"}: ${issue.message}` : ""}`);
    }
    return keepRaw ? { value: parsed.data as unknown, raw: result } : parsed.data;
  };
}

export interface CometClientOptions {
  /** The network's slug, on the pool's log lines. */
  network?: string;
  timeoutMs?: number;
  unhealthyMs?: number;
  now?: () => number;
}

type Params = Record<string, bigint | number | undefined>;

export class CometClient {
  private readonly pool: UpstreamPool;

  constructor(urls: readonly string[], opts: CometClientOptions = {}) {
    if (urls.length === 0) throw new Error("CometClient: no node URL given");
    this.pool = new UpstreamPool(urls.map(httpUrl), {
      network: opts.network ?? "consensus",
      timeoutMs: opts.timeoutMs,
      unhealthyMs: opts.unhealthyMs,
      now: opts.now,
    });
  }

  /** The nodes, by origin only (safe to log), numbered when there are several. */
  get labels(): string[] {
    return this.pool.labels();
  }

  /** Labels of the nodes that are currently passed over. */
  unhealthy(): string[] {
    return this.pool.health().flatMap((n, i) => (n.unhealthy ? [this.pool.label(i)] : []));
  }

  /**
   * Calls `method` on the first node that answers: healthy nodes in the configured order, then
   * the ones marked unhealthy (so a single node is never locked out). A JSON-RPC error from a node
   * is its answer and is thrown as an RpcError with the node's code, message and data; when no
   * node answers, UpstreamUnavailableError. Aborting `signal` rejects with its reason.
   */
  async call<S extends z.ZodType>(method: string, params: Params, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
    return (await this.request(method, params, cometResult(method, schema), signal)) as z.output<S>;
  }

  /** As call, with the result as the node sent it (every field, unparsed) beside the checked one. */
  async callWithRaw<S extends z.ZodType>(method: string, params: Params, schema: S, signal?: AbortSignal): Promise<{ value: z.output<S>; raw: unknown }> {
    return (await this.request(method, params, cometResult(method, schema, true), signal)) as { value: z.output<S>; raw: unknown };
  }

  private async request(method: string, params: Params, check: (res: UpstreamResponse) => unknown, signal?: AbortSignal): Promise<unknown> {
    const query = Object.entries(params)
      .filter((e): e is [string, bigint | number] => e[1] !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${v}`)
      .join("&");
    return this.poolCall(method, {
      method: "GET",
      path: query ? `${method}?${query}` : method,
      headers: { accept: "application/json" },
      retryable: true,
      signal,
      check,
    });
  }

  /** One call through the pool; no node answering is UpstreamUnavailableError naming each node's failure. */
  private async poolCall<T>(method: string, opts: CallOptions<T>): Promise<T> {
    try {
      return await this.pool.call(opts);
    } catch (e) {
      if (e instanceof UpstreamUnavailable) throw new UpstreamUnavailableError(method, e.failures.map((f) => `${this.pool.label(f.index)}: ${f.reason}`));
      throw e;
    }
  }

  status(signal?: AbortSignal) {
    return this.call("status", {}, statusSchema, signal);
  }

  block(height: bigint, signal?: AbortSignal) {
    return this.call("block", { height }, cometBlockSchema, signal);
  }

  blockResults(height: bigint, signal?: AbortSignal) {
    return this.call("block_results", { height }, blockResultsSchema, signal);
  }

  /** /block and /block_results of a height, checked, and as the node sent them (kept for the native interface). */
  async blockWithResults(height: bigint, signal?: AbortSignal) {
    const [block, results] = await Promise.all([this.callWithRaw("block", { height }, cometBlockSchema, signal), this.callWithRaw("block_results", { height }, blockResultsSchema, signal)]);
    return { block: block.value, results: results.value, raw: { block: block.raw, results: results.raw } };
  }

  /**
   * Forwards one JSON-RPC call (named params in CometBFT's JSON) to the nodes, POSTed to the root
   * as CometBFT takes it, and returns the node's result as it sent it; a node's JSON-RPC error is
   * thrown as RpcError. `retryable`: may another node be asked after one failed (never for writes).
   */
  async forward(method: string, params: Record<string, unknown>, retryable: boolean, signal?: AbortSignal): Promise<unknown> {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
    return this.poolCall(method, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body,
      retryable,
      signal,
      check: (res) => {
        let envelope: { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
        try {
          envelope = JSON.parse(res.text) as typeof envelope;
        } catch {
          throw new NodeFailure(`HTTP ${res.status}, not a JSON-RPC answer`);
        }
        const error = envelope?.error;
        if (typeof error === "object" && error !== null && typeof error.code === "number" && typeof error.message === "string") {
          throw new RpcError(error.code, error.message, error.data);
        }
        if (res.status < 200 || res.status > 299 || envelope?.result === undefined) throw new NodeFailure(`HTTP ${res.status}, no result`);
        return envelope.result;
      },
    });
  }

  netInfo(signal?: AbortSignal) {
    return this.call("net_info", {}, netInfoSchema, signal);
  }

  consensusParams(height: bigint, signal?: AbortSignal) {
    return this.call("consensus_params", { height }, consensusParamsSchema, signal);
  }
}

/** The client of a network's upstream nodes, one per process (so every caller shares its health marks). */
export const upstreamClient = clientPerNetwork((network, urls) => new CometClient(urls, { network: network.slug }));
