/**
 * Latency histogram of the usage tables: request counts per bucket, bucket i holding latencies
 * up to LATENCY_BOUNDS_MS[i] milliseconds (and above the previous bound); the last bucket holds
 * everything above the last bound.
 */
export const LATENCY_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const;
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

export function latencyBucket(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= LATENCY_BOUNDS_MS[i]!) return i;
  return LATENCY_BOUNDS_MS.length;
}

export const emptyHistogram = (): number[] => new Array<number>(LATENCY_BUCKETS).fill(0);

/**
 * The q-quantile (0 < q ≤ 1) of a histogram in milliseconds, interpolated linearly within its
 * bucket; null when the histogram is empty. A quantile in the open last bucket reads as its
 * lower bound (the histogram says only "more than 5000 ms").
 */
export function percentile(hist: readonly number[], q: number): number | null {
  let total = 0;
  for (const n of hist) total += n;
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i]!;
    if (n > 0 && seen + n >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      if (i >= LATENCY_BOUNDS_MS.length) return lower;
      const upper = LATENCY_BOUNDS_MS[i]!;
      return Math.round((lower + ((rank - seen) / n) * (upper - lower)) * 10) / 10;
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}
