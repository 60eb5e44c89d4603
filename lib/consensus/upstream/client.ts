/**
 * A CometBFT JSON-RPC client (URI form: `GET <base>/<method>?height=H`) over one or more node
 * URLs: tried in the configured order, a node that fails is passed over for a while, and every
 * answer is checked against the schema of what we read.
 */
import type { z } from "zod";
import type { Network } from "@/lib/networks";
import { INTERNAL_ERROR, RpcError, STANDARD_CODES } from "@/lib/jsonrpc/errors";
import { blockResultsSchema, cometBlockSchema, consensusParamsSchema, netInfoSchema, statusSchema } from "./comet";

export const REQUEST_TIMEOUT_MS = 10_000;
export const UNHEALTHY_FOR_MS = 30_000;

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

/** One node failed to give an answer; the next one is tried. */
class NodeFailure extends Error {
  override name = "NodeFailure";
}

interface Node {
  /** Base URL without a trailing slash, credentials moved to `headers`. */
  base: string;
  headers: Record<string, string>;
  /** Origin only: URLs may carry provider keys in their path or credentials. */
  label: string;
  unhealthyUntil: number;
}

function toNode(url: string, index: number, count: number): Node {
  const u = new URL(url);
  // CometBFT serves the same methods over HTTP as over its websocket endpoint.
  if (u.protocol === "ws:" || u.protocol === "wss:") {
    u.protocol = u.protocol === "ws:" ? "http:" : "https:";
    u.pathname = u.pathname.replace(/\/websocket\/?$/, "");
  }
  const headers: Record<string, string> = { Accept: "application/json" };
  if (u.username || u.password) {
    // fetch refuses URLs with credentials: send them as Basic authentication instead.
    const credentials = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    headers.Authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
    u.username = "";
    u.password = "";
  }
  const label = count > 1 ? `#${index + 1} ${u.origin}` : u.origin;
  return { base: u.toString().replace(/\/+$/, ""), headers, label, unhealthyUntil: 0 };
}

function describe(e: unknown): string {
  if (e instanceof NodeFailure) return e.message;
  if (e instanceof Error && e.name === "TimeoutError") return "timed out";
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: unknown }).cause;
    if (cause instanceof Error) return cause.message;
    return e.message;
  }
  return String(e);
}

export interface CometClientOptions {
  timeoutMs?: number;
  unhealthyMs?: number;
  now?: () => number;
}

type Params = Record<string, bigint | number | undefined>;

export class CometClient {
  private readonly nodes: Node[];
  private readonly timeoutMs: number;
  private readonly unhealthyMs: number;
  private readonly now: () => number;

  constructor(urls: readonly string[], opts: CometClientOptions = {}) {
    if (urls.length === 0) throw new Error("CometClient: no node URL given");
    this.nodes = urls.map((u, i) => toNode(u, i, urls.length));
    this.timeoutMs = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.unhealthyMs = opts.unhealthyMs ?? UNHEALTHY_FOR_MS;
    this.now = opts.now ?? Date.now;
  }

  /** The nodes, by origin only (safe to log). */
  get labels(): string[] {
    return this.nodes.map((n) => n.label);
  }

  /** Labels of the nodes that are currently passed over. */
  unhealthy(): string[] {
    const now = this.now();
    return this.nodes.filter((n) => n.unhealthyUntil > now).map((n) => n.label);
  }

  /**
   * Calls `method` on the first node that answers: healthy nodes in the configured order, then
   * the ones marked unhealthy (so a single node is never locked out). A JSON-RPC error from a node
   * is its answer and is thrown as an RpcError with the node's code, message and data; when no
   * node answers, UpstreamUnavailableError. Aborting `signal` rejects with its reason.
   */
  async call<S extends z.ZodType>(method: string, params: Params, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
    const now = this.now();
    const order = [...this.nodes.filter((n) => n.unhealthyUntil <= now), ...this.nodes.filter((n) => n.unhealthyUntil > now)];
    const failures: string[] = [];
    for (const node of order) {
      signal?.throwIfAborted();
      try {
        const result = await this.request(node, method, params, signal);
        node.unhealthyUntil = 0;
        const parsed = schema.safeParse(result);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new NodeFailure(`malformed ${method} answer${issue ? ` at ${issue.path.join(".") || "result"}: ${issue.message}` : ""}`);
        }
        return parsed.data;
      } catch (e) {
        if (e instanceof RpcError) throw e;
        signal?.throwIfAborted();
        node.unhealthyUntil = this.now() + this.unhealthyMs;
        failures.push(`${node.label}: ${describe(e)}`);
      }
    }
    throw new UpstreamUnavailableError(method, failures);
  }

  private async request(node: Node, method: string, params: Params, signal: AbortSignal | undefined): Promise<unknown> {
    const query = Object.entries(params)
      .filter((e): e is [string, bigint | number] => e[1] !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${v}`)
      .join("&");
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const res = await fetch(`${node.base}/${method}${query ? `?${query}` : ""}`, {
      headers: node.headers,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const body = await res.text();
    let envelope: unknown;
    try {
      envelope = JSON.parse(body);
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
    if (!res.ok || result === undefined) throw new NodeFailure(`HTTP ${res.status}, no result`);
    return result;
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

  netInfo(signal?: AbortSignal) {
    return this.call("net_info", {}, netInfoSchema, signal);
  }

  consensusParams(height: bigint, signal?: AbortSignal) {
    return this.call("consensus_params", { height }, consensusParamsSchema, signal);
  }
}

const clients = new Map<string, CometClient>();

/** The client of a network's upstream nodes, one per process (so every caller shares its health marks). */
export function upstreamClient(network: Network): CometClient {
  if (network.source.kind !== "upstream") throw new Error(`${network.slug} has no upstream (set ${network.upstreamVariable})`);
  const key = `${network.slug} ${network.source.urls.join(" ")}`;
  let client = clients.get(key);
  if (!client) {
    client = new CometClient(network.source.urls);
    clients.set(key, client);
  }
  return client;
}
