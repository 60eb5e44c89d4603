/** Load generation with autocannon, with sub-millisecond latency percentiles. */
import autocannon from "autocannon";
import { cleanup } from "./cleanup";

export interface LoadOptions {
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationSec: number;
  /** Fixed offered load: requests per second over all connections (autocannon's overallRate); unset: as fast as answered. */
  overallRate?: number;
  /** Headers each request adds in turn (every connection cycles through them: autocannon's `requests`); unset: every request alike. */
  rotateHeaders?: ReadonlyArray<Record<string, string>>;
}

export interface LoadResult {
  connections: number;
  durationSec: number;
  /** Mean of autocannon's per-second request counts. */
  rps: number;
  /** Completed requests / elapsed seconds (a cross-check of rps). */
  rpsOverall: number;
  requests: number;
  ok2xx: number;
  non2xx: number;
  /** Connection errors, including timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Latency of 2xx responses in ms, from per-response timings (autocannon's own histogram has 1 ms resolution). */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Growable array of doubles (a 10 s run can record a few hundred thousand latencies). */
class Samples {
  private data = new Float64Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/**
 * One autocannon run in this process (keep-alive connections, pipelining 1). Latency percentiles
 * come from the `response` event's per-request timing in ms (hrtime), because autocannon's
 * histogram stores whole milliseconds, too coarse for sub-millisecond servers.
 */
export function runLoad(opts: LoadOptions): Promise<LoadResult> {
  return new Promise<LoadResult>((resolve, reject) => {
    const latencies = new Samples();
    let unregister = () => {};
    const instance = autocannon(
      {
        url: opts.url,
        method: opts.method,
        headers: opts.headers,
        body: opts.body,
        connections: opts.connections,
        pipelining: 1,
        duration: opts.durationSec,
        timeout: 10,
        ...(opts.overallRate !== undefined ? { overallRate: opts.overallRate } : {}),
        ...(opts.rotateHeaders ? { requests: opts.rotateHeaders.map((h) => ({ headers: { ...opts.headers, ...h } })) } : {}),
      },
      (err: unknown, result: autocannon.Result) => {
        unregister();
        if (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        const sorted = latencies.sorted();
        let sum = 0;
        for (const v of sorted) sum += v;
        const statusCodes: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
        const elapsedSec = (result.finish.getTime() - result.start.getTime()) / 1000;
        resolve({
          connections: opts.connections,
          durationSec: opts.durationSec,
          rps: result.requests.average,
          rpsOverall: elapsedSec > 0 ? result.requests.total / elapsedSec : 0,
          requests: result.requests.total,
          ok2xx: result["2xx"],
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes,
          latency: {
            mean: sorted.length > 0 ? sum / sorted.length : NaN,
            p50: percentile(sorted, 50),
            p90: percentile(sorted, 90),
            p99: percentile(sorted, 99),
            max: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
          },
        });
      },
    );
    unregister = cleanup.add("stop autocannon", () => instance.stop());
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}
