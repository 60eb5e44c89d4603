import http from "node:http";
import https from "node:https";
/**
 * A set of JSON-RPC upstream URLs for one network. Requests go to the first healthy one; a
 * failed or timed-out upstream is skipped for a while and the next is tried, for requests that
 * are safe to retry. A write is retried only when it certainly never reached the node.
 */
export const UPSTREAM_TIMEOUT_MS = 15_000;
const UNHEALTHY_FOR_MS = 30_000;

export class UpstreamUnavailable extends Error {
  override name = "UpstreamUnavailable";
}

interface Target {
  url: string;
  unhealthyUntil: number;
  /** The node answered eth_chainId with the expected chain id. */
  chainChecked: boolean;
  /** In flight: the eth_chainId check (one per target at a time). */
  checking?: Promise<void>;
  /** Set when the node serves another chain: it is never used (until the catalog changes). */
  wrongChain?: string;
}

const CHAIN_ID_REQUEST = JSON.stringify({ jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] });

const errorCode = (e: unknown): string | undefined => (e as { code?: string })?.code ?? (e as { cause?: { code?: string } })?.cause?.code;

/** Errors raised before any byte of the request left: another node may safely be tried. */
function neverSent(e: unknown): boolean {
  const code = errorCode(e);
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN";
}

// Kept-alive connections to the nodes. Plain node:http rather than fetch: fetch with a per-request
// AbortSignal.timeout cost ~1 ms of CPU per forwarded call here and kept every timer alive for the
// full timeout (memory grew with the request rate).
const agents = { "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }), "https:": new https.Agent({ keepAlive: true, maxSockets: 256 }) };

function postJson(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const lib = u.protocol === "https:" ? https : http;
    const req = lib.request(
      u,
      {
        method: "POST",
        agent: agents[u.protocol as "http:" | "https:"],
        headers: { "Content-Type": "application/json", Accept: "application/json", "Content-Length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("timed out"), { name: "TimeoutError" })));
    req.on("error", reject);
    req.end(body);
  });
}

export class UpstreamPool {
  private targets: Target[];

  /**
   * `chainId`: the chain the nodes must serve. Each node's eth_chainId is checked before its first
   * use (a node that cannot answer yet is used anyway and checked again next time); a node of
   * another chain is left out, loudly: its answers would contradict the catalog's chain id.
   */
  constructor(
    urls: readonly string[],
    private readonly log: (m: string) => void = () => undefined,
    private readonly timeoutMs = UPSTREAM_TIMEOUT_MS,
    private readonly chainId?: number | string,
  ) {
    this.targets = urls.map((url) => ({ url, unhealthyUntil: 0, chainChecked: chainId === undefined }));
  }

  get urls(): string[] {
    return this.targets.map((t) => t.url);
  }

  /** Healthy targets first (in configured order), then the unhealthy ones as a last resort. */
  private order(now: number): Target[] {
    const usable = this.targets.filter((t) => !t.wrongChain);
    return [...usable.filter((t) => t.unhealthyUntil <= now), ...usable.filter((t) => t.unhealthyUntil > now)];
  }

  /** Asks a node for its chain id once; leaves it unchecked when it cannot answer now. */
  private checkChain(target: Target): Promise<void> {
    target.checking ??= postJson(target.url, CHAIN_ID_REQUEST, this.timeoutMs)
      .then(({ text }) => {
        const answer = JSON.parse(text) as { result?: unknown };
        if (typeof answer.result !== "string" || !/^0x[0-9a-fA-F]+$/.test(answer.result)) return;
        const served = BigInt(answer.result);
        if (served === BigInt(this.chainId!)) target.chainChecked = true;
        else {
          target.wrongChain = `it serves chain ${served}, not ${this.chainId}`;
          this.log(`upstream ${redact(target.url)} is left out: ${target.wrongChain} (check the network's UPSTREAM_ variable)`);
        }
      })
      .catch(() => undefined)
      .finally(() => (target.checking = undefined));
    return target.checking;
  }

  /** POSTs a JSON-RPC body and returns the node's JSON answer, parsed. */
  async send(body: string, opts: { retryable: boolean }): Promise<unknown> {
    let lastError: unknown;
    const order = this.order(performance.now());
    if (order.length === 0) throw new UpstreamUnavailable(`no node serves the right chain (${this.targets.map((t) => t.wrongChain).join("; ")})`);
    for (const target of order) {
      if (!target.chainChecked) await this.checkChain(target);
      if (target.wrongChain) {
        lastError = new Error(target.wrongChain);
        continue;
      }
      try {
        const res = await postJson(target.url, body, this.timeoutMs);
        const text = res.text;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new Error(`upstream answered HTTP ${res.status} with a body that is not JSON`);
        }
        // Some nodes answer JSON-RPC errors with HTTP 4xx/5xx; the JSON body is what the caller gets.
        if (res.status >= 500 && !(typeof parsed === "object" && parsed !== null)) throw new Error(`upstream answered HTTP ${res.status}`);
        if (target.unhealthyUntil > 0) this.log(`upstream ${redact(target.url)} is healthy again`);
        target.unhealthyUntil = 0;
        return parsed;
      } catch (e) {
        lastError = e;
        if (target.unhealthyUntil <= performance.now()) this.log(`upstream ${redact(target.url)} failed (${describe(e)}); skipping it for ${UNHEALTHY_FOR_MS / 1000} s`);
        target.unhealthyUntil = performance.now() + UNHEALTHY_FOR_MS;
        if (!opts.retryable && !neverSent(e)) break;
      }
    }
    throw new UpstreamUnavailable(`the node is unreachable (${describe(lastError)})`);
  }
}

function describe(e: unknown): string {
  if (e instanceof Error && e.name === "TimeoutError") return "timed out";
  return errorCode(e) ?? (e instanceof Error ? e.message : String(e));
}

/** Upstream URLs often carry API keys in their path or query: log only the origin. */
export function redact(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid url)";
  }
}
