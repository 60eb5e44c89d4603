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
}

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

  constructor(
    urls: readonly string[],
    private readonly log: (m: string) => void = () => undefined,
    private readonly timeoutMs = UPSTREAM_TIMEOUT_MS,
  ) {
    this.targets = urls.map((url) => ({ url, unhealthyUntil: 0 }));
  }

  get urls(): string[] {
    return this.targets.map((t) => t.url);
  }

  /** Healthy targets first (in configured order), then the unhealthy ones as a last resort. */
  private order(now: number): Target[] {
    return [...this.targets.filter((t) => t.unhealthyUntil <= now), ...this.targets.filter((t) => t.unhealthyUntil > now)];
  }

  /** POSTs a JSON-RPC body and returns the node's JSON answer, parsed. */
  async send(body: string, opts: { retryable: boolean }): Promise<unknown> {
    let lastError: unknown;
    for (const target of this.order(performance.now())) {
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
