/**
 * `npm run bench -- webhook-matching`: time to match one block's logs against 1, 100 and 10,000
 * active LOG subscriptions with the engine's index (lib/evm/webhooks.ts LogIndex), in
 * process, no chain or database. The block carries 500 logs of 50 contracts; each subscription
 * watches one (address, topic0) pair, some with a topics[1] filter; only the first 100 watch the
 * block's contracts. Matching must cost about the block's size and its matches: from 100 to 10,000
 * subscriptions the time should stay flat.
 */
import { LogIndex, type RpcLog } from "@/lib/evm/webhooks";
import type { MatchableSubscription } from "@/lib/webhooks/engine/source";
import { markdownTable } from "./results";

const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, "0")}`;
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** A block of `logs` Transfer logs spread over `contracts` contracts. */
export function syntheticBlockLogs(logs = 500, contracts = 50): RpcLog[] {
  return Array.from({ length: logs }, (_, i) => ({
    address: hex(1 + (i % contracts), 20),
    topics: [TRANSFER, hex(i % 97, 32), hex(i % 89, 32)],
    data: hex(i, 32),
    blockNumber: "0x10",
    blockHash: hex(16, 32),
    blockTimestamp: "0x6500",
    transactionHash: hex(1000 + i, 32),
    transactionIndex: hex(i, 1),
    logIndex: hex(i, 2),
  }));
}

/**
 * `n` LOG subscriptions: the first 100 on the block's contracts (every third with a topics[1]
 * filter), the others on contracts with no log in the block: more subscriptions, same matches.
 */
export function syntheticSubscriptions(n: number, contracts = 50): MatchableSubscription[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `wh_${i}`,
    eventType: "LOG" as const,
    condition: {
      address: hex(i < 100 ? 1 + (i % contracts) : 100_000 + i, 20),
      topics: i % 3 === 0 ? [TRANSFER, hex(i % 97, 32)] : [TRANSFER],
    },
  }));
}

/** Median and p99 time (ms) of matching one block, and the matches found, per subscription count. */
export function measureLogMatching(counts = [1, 100, 10_000], rounds = 200): Array<{ subscriptions: number; p50: number; p99: number; matches: number }> {
  const logs = syntheticBlockLogs();
  return counts.map((n) => {
    const index = new LogIndex(syntheticSubscriptions(n));
    let matches = 0;
    const times: number[] = [];
    for (let r = 0; r < 20; r++) index.match(logs, () => 0x6500); // warm-up
    for (let r = 0; r < rounds; r++) {
      const t = performance.now();
      const found = index.match(logs, () => 0x6500);
      times.push(performance.now() - t);
      matches = found.reduce((s, m) => s + m.messages.length, 0);
    }
    times.sort((a, b) => a - b);
    return { subscriptions: n, p50: times[Math.floor(rounds / 2)]!, p99: times[Math.floor(rounds * 0.99)]!, matches };
  });
}

export async function webhookMatchingBench(): Promise<number> {
  const rows = measureLogMatching();
  console.log(
    markdownTable(
      ["subscriptions", "match p50 (ms/block)", "match p99 (ms/block)", "log messages matched"],
      rows.map((r) => [r.subscriptions.toLocaleString("en-US"), r.p50.toFixed(3), r.p99.toFixed(3), String(r.matches)]),
    ),
  );
  return Promise.resolve(0);
}
