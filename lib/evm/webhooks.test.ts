// The LOG matcher's index against a plain scan of every subscription: same matches, same order,
// with 10,000 subscriptions, wildcards, upper-case input and logs with fewer topics than a filter.
import { describe, expect, it } from "vitest";
import type { MatchableSubscription } from "@/lib/webhooks/engine/source";
import type { LogCondition } from "@/lib/webhooks/types";
import { LogIndex, logMessage, type RpcLog } from "./webhooks";

const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, "0")}`;
const T0 = [hex(0xaa, 32), hex(0xbb, 32), hex(0xcc, 32)];

/** A deterministic pseudo-random sequence. */
function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
}

function subscriptions(n: number, seed = 7): MatchableSubscription[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const topics: (string | null)[] = [T0[r(3)]!];
    const extra = r(4);
    for (let k = 0; k < extra; k++) topics.push(r(3) === 0 ? null : hex(r(5), 32));
    return { id: `wh_${i}`, eventType: "LOG", condition: { address: hex(r(40), 20), topics } };
  });
}

function logs(n: number): RpcLog[] {
  const r = rng(11);
  return Array.from({ length: n }, (_, i) => ({
    address: hex(r(40), 20).toUpperCase().replace("0X", "0x"),
    topics: [T0[r(3)]!, ...Array.from({ length: r(4) }, () => hex(r(5), 32))],
    data: "0x",
    blockNumber: "0x5",
    blockHash: hex(5, 32),
    transactionHash: hex(100 + i, 32),
    transactionIndex: hex(i, 1),
    logIndex: hex(i, 2),
  }));
}

/** What a subscription matches, by the plain definition: every subscription against every log. */
function scan(subs: MatchableSubscription[], all: RpcLog[]) {
  const out = new Map<string, number[]>();
  for (const s of subs) {
    const c = s.condition as LogCondition;
    all.forEach((log, i) => {
      if (log.address.toLowerCase() !== c.address) return;
      if (log.topics.length < c.topics.length) return;
      if (!c.topics.every((t, k) => t === null || t === log.topics[k]!.toLowerCase())) return;
      out.set(s.id, [...(out.get(s.id) ?? []), i]);
    });
  }
  return out;
}

describe("LogIndex", () => {
  it("matches exactly what a scan of 10,000 subscriptions does, in chain order, one entry per subscription", () => {
    const subs = subscriptions(10_000);
    const block = logs(300);
    const found = new LogIndex(subs).match(block, () => 1_700_000_000);
    const expected = scan(subs, block);
    expect(found.length).toBeGreaterThan(100);
    expect(new Map(found.map((m) => [m.subscriptionId, m.messages.map((x) => (x as { log_index: number }).log_index)]))).toEqual(expected);
    for (const m of found) {
      const indexes = m.messages.map((x) => (x as { log_index: number }).log_index);
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    }
  });

  it("matches what a scan does while subscriptions are added, changed and removed one at a time", () => {
    const block = logs(300);
    const all = subscriptions(6000);
    const index = new LogIndex(all.slice(0, 4000));
    const current = new Map(all.slice(0, 4000).map((s) => [s.id, s]));
    const put = (s: MatchableSubscription) => {
      index.put(s);
      current.set(s.id, s);
    };
    const remove = (id: string) => {
      index.remove(id);
      current.delete(id);
    };
    all.slice(4000).forEach(put);
    // New conditions for every third one (another seed: other addresses and topics).
    subscriptions(1000, 13).forEach((s, i) => put({ ...s, id: `wh_${i * 3}` }));
    for (let i = 1; i < 6000; i += 4) remove(`wh_${i}`);
    // Put twice, turned into another kind, and an unknown id removed: nothing left behind.
    put(all[6]!);
    put(all[6]!);
    index.put({ id: "wh_2", eventType: "BLOCK_PERIOD", condition: { period: 1 } });
    current.delete("wh_2");
    remove("wh_unknown");

    const subs = [...current.values()];
    const found = index.match(block, () => 1_700_000_000);
    expect(found.length).toBeGreaterThan(50);
    expect(new Map(found.map((m) => [m.subscriptionId, m.messages.map((x) => (x as { log_index: number }).log_index)]))).toEqual(scan(subs, block));
    const rebuilt = new LogIndex(subs);
    expect(index.size).toBe(rebuilt.size);
    const sorted = (f: { addresses: string[]; topic0s: string[] }) => ({ addresses: [...f.addresses].sort(), topic0s: [...f.topic0s].sort() });
    expect(sorted(index.rangeFilter())).toEqual(sorted(rebuilt.rangeFilter()));

    for (const s of subs) index.remove(s.id);
    expect(index.size).toBe(0);
    expect(index.match(block, () => 1)).toEqual([]);
  });

  it("builds one entry per (address, topic0) and gives each log its SPEC message", () => {
    const index = new LogIndex([
      { id: "a", eventType: "LOG", condition: { address: hex(1, 20), topics: [T0[0]!] } },
      { id: "b", eventType: "LOG", condition: { address: hex(1, 20), topics: [T0[0]!, null, hex(2, 32)] } },
      { id: "c", eventType: "BLOCK_PERIOD", condition: { period: 1 } },
    ]);
    expect(index.size).toBe(1);
    const log: RpcLog = { address: hex(1, 20), topics: [T0[0]!, hex(9, 32)], data: "0xAB", blockNumber: "0x10", blockHash: hex(3, 32), transactionHash: hex(4, 32), transactionIndex: "0x2", logIndex: "0x7", removed: false };
    // b needs three topics: this log has two.
    expect(index.match([log], () => 1234).map((m) => m.subscriptionId)).toEqual(["a"]);
    expect(logMessage(log, 1234)).toEqual({
      address: hex(1, 20),
      topics: [T0[0], hex(9, 32)],
      data: "0xab",
      block_number: 16,
      transaction_hash: hex(4, 32),
      transaction_index: 2,
      log_index: 7,
      block_hash: hex(3, 32),
      block_timestamp: 1234,
      removed: false,
      type: "log",
    });
  });
});
