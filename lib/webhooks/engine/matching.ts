/**
 * What the follower, replay and preview share: when a BLOCK_PERIOD subscription fires, the matches
 * of a range of blocks through any chain source, and the buckets the families' matchers index
 * subscriptions in.
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

/** An entry of Buckets: a subscription's id, the key it is filed under and its place in that key's list (Buckets keeps it). */
export interface Filed {
  readonly id: string;
  key: string;
  at: number;
}

/**
 * Subscriptions filed by key for a matcher: the list under a key is what an item of a block with
 * that key is checked against. Filing or taking out one costs the same whatever the number filed
 * (the last of its list takes a removed entry's place: the order within a list is not kept), so
 * a follower applies a changed subscription without building its matcher again.
 */
export class Buckets<V extends Filed> {
  private readonly lists = new Map<string, V[]>();
  private readonly byId = new Map<string, V>();

  /** How many keys have entries. */
  get size(): number {
    return this.lists.size;
  }

  get(key: string): readonly V[] | undefined {
    return this.lists.get(key);
  }

  keys(): MapIterator<string> {
    return this.lists.keys();
  }

  /** Files `entry` under entry.key, in place of any entry of its id. */
  add(entry: V): void {
    this.remove(entry.id);
    const list = this.lists.get(entry.key);
    if (list) {
      // One copy of the key per list, however many entries share it.
      entry.key = list[0]!.key;
      entry.at = list.length;
      list.push(entry);
    } else {
      entry.at = 0;
      this.lists.set(entry.key, [entry]);
    }
    this.byId.set(entry.id, entry);
  }

  /** Takes out the entry of this id, and answers it (undefined when there is none). */
  remove(id: string): V | undefined {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    this.byId.delete(id);
    const list = this.lists.get(entry.key)!;
    const last = list.pop()!;
    if (last !== entry) {
      list[entry.at] = last;
      last.at = entry.at;
    }
    if (list.length === 0) this.lists.delete(entry.key);
    return entry;
  }
}
