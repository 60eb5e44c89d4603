/**
 * What the follower, replay and preview share: when a BLOCK_PERIOD subscription fires, and the
 * matches of a range of blocks through any chain source.
 */
import type { ChainSource, Matcher, RangeMatch } from "./source";

/**
 * BLOCK_PERIOD fires on the first block after startBlock, then every `period` blocks:
 * startBlock + 1, startBlock + 1 + period, … (for a replay, blocks before startBlock keep the same
 * phase).
 */
export function periodFires(block: bigint, startBlock: bigint, period: number): boolean {
  const p = BigInt(period);
  const offset = (((block - startBlock - 1n) % p) + p) % p;
  return offset === 0n;
}

/** Blocks fetched at once when a range is matched block by block. */
const PARALLEL = 8;

/**
 * The matches of blocks from..to in chain order: the matcher's own range query when it has one,
 * otherwise block by block.
 */
export async function matchRange(source: ChainSource, matcher: Matcher, from: bigint, to: bigint, signal: AbortSignal): Promise<RangeMatch[]> {
  if (matcher.matchRange) return matcher.matchRange(from, to, signal);
  const out: RangeMatch[] = [];
  for (let a = from; a <= to; a += BigInt(PARALLEL)) {
    const heights: bigint[] = [];
    for (let h = a; h <= to && h < a + BigInt(PARALLEL); h++) heights.push(h);
    const found = await Promise.all(
      heights.map(async (h) => {
        const block = await source.block(h, signal);
        if (!block) return undefined;
        const matches = await matcher.match(block, signal);
        return matches.length > 0 ? { number: block.number, hash: block.hash, matches } : undefined;
      }),
    );
    for (const f of found) if (f) out.push(f);
  }
  return out;
}

/** Runs `work` on each item with at most `parallel` at a time; results in the items' order. */
export async function mapLimit<T, R>(items: readonly T[], parallel: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return out;
}
