/**
 * Ingestion (insertBlocks) on the test run's real PostgreSQL, and the total_counts answered from
 * the counters it keeps (query/sql.ts compileTxCount) checked against the transactions themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { connectTestDatabase } from "@/lib/testing/harness";
import { devnetChain, buildBlock, type PreviousBlock } from "./devnet/chain";
import { parseQuery } from "./query/parse";
import { compileTxCount, compileTxQuery } from "./query/sql";
import { deleteNetworkIndex, insertBlocks } from "./store";
import type { IngestBlock, Tag } from "./types";

const NET = "store-test-1";
const OTHER = "store-test-2";

const tag = (key: string, value: string, index = true): Tag => ({ key, value, index });

// Attributes per transaction, [height][tx]: a controlled mix of single- and multi-valued keys.
const TAGS: Tag[][][] = [
  [
    [tag("transfer.sender", "bbn1alice"), tag("transfer.amount", "100ubbn"), tag("message.action", "/babylon.Delegate")],
    [tag("transfer.sender", "bbn1bob"), tag("transfer.amount", "2500ubbn"), tag("transfer.amount", "7ubbn"), tag("message.action", "/babylon.Undelegate")],
  ],
  [
    // One tx holding the same value twice counts once; a value tab/newline/backslash survives COPY.
    [tag("transfer.sender", "bbn1alice"), tag("transfer.sender", "bbn1alice"), tag("memo.text", "a\tb\\c\nd"), tag("unbond.at", "2026-01-02T23:59:59Z")],
    [tag("transfer.sender", "bbn1carol"), tag("message.action", "/babylon.Delegate"), tag("hidden.key", "not indexed", false)],
    [tag("unbond.at", "2026-01-03T10:00:00+02:00"), tag("unbond.at", "2026-01-05T00:00:00Z"), tag("transfer.amount", "abc")],
  ],
  [[], [tag("message.action", "/babylon.Delegate"), tag("transfer.amount", "300ubbn"), tag("long.value", "x".repeat(3000)), tag("nul.value", "a\u0000b"), tag("long.key".repeat(40), "x")]],
];

function blocksFor(network: string, tags: Tag[][][]): IngestBlock[] {
  const chain = devnetChain(network, "store-test");
  let prev: PreviousBlock | null = null;
  return tags.map((txs, i) => {
    const { block, next } = buildBlock(chain, prev, new Date(Date.UTC(2026, 0, 1, 0, 0, i)), txs.length);
    prev = next;
    block.txs.forEach((tx, j) => (tx.result = { ...tx.result, tags: txs[j]! }));
    return block;
  });
}

/** What tx_search must count for a predicate on a tx's indexed attributes, from TAGS itself. */
function expected(pred: (attrs: Tag[]) => boolean): number {
  return TAGS.flat().filter((tags) => pred(tags.filter((t) => t.index && t.value.length <= 2048 && t.key.length <= 256))).length;
}

async function counts(network: string, input: string): Promise<{ counters: number | null | undefined; counted: number }> {
  const parsed = parseQuery(input);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const params: unknown[] = [network];
  const where = compileTxQuery(parsed.query, params);
  const [real] = await db().$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM consensus_txs t WHERE t.network = $1 AND ${where}`, ...params);
  const countParams: unknown[] = [network];
  const sql = compileTxCount(parsed.query, countParams);
  if (!sql) return { counters: undefined, counted: Number(real!.n) };
  const [row] = await db().$queryRawUnsafe<{ n: bigint | null }[]>(sql, ...countParams);
  return { counters: row!.n === null ? null : Number(row!.n), counted: Number(real!.n) };
}

const has = (key: string, test: (v: string) => boolean) => (attrs: Tag[]) => attrs.some((t) => t.key === key && test(t.value));

beforeAll(async () => {
  await connectTestDatabase();
  await Promise.all([deleteNetworkIndex(NET), deleteNetworkIndex(OTHER)]);
  await insertBlocks(NET, blocksFor(NET, TAGS));
  // Another network with the same keys and values must not leak into the counts.
  await insertBlocks(OTHER, blocksFor(OTHER, TAGS));
});

afterAll(async () => {
  await Promise.all([deleteNetworkIndex(NET), deleteNetworkIndex(OTHER)]);
  await disconnectDb();
});

describe("insertBlocks", () => {
  it("stores blocks, txs and indexed attributes in order, values byte for byte", async () => {
    const txs = await db().consensusTx.findMany({ where: { network: NET }, orderBy: [{ height: "asc" }, { txIndex: "asc" }] });
    expect(txs.map((t) => `${t.height}:${t.txIndex}`)).toEqual(["1:0", "1:1", "2:0", "2:1", "2:2", "3:0", "3:1"]);
    const attrs = await db().consensusTxAttr.findMany({ where: { network: NET, height: 2n, txIndex: 0 }, orderBy: { ord: "asc" } });
    expect(attrs.map((a) => [a.ord, a.key, a.value])).toEqual([
      [0, "transfer.sender", "bbn1alice"],
      [1, "transfer.sender", "bbn1alice"],
      [2, "memo.text", "a\tb\\c\nd"],
      [3, "unbond.at", "2026-01-02T23:59:59Z"],
    ]);
    expect(attrs[3]!.time?.toISOString()).toBe("2026-01-02T23:59:59.000Z");
    // Not indexed, or too long for an index entry: kept in the tx result, never searchable.
    expect(await db().consensusTxAttr.count({ where: { network: NET, key: { in: ["hidden.key", "long.value", "long.key".repeat(40)] } } })).toBe(0);
    const stored = (await db().consensusTx.findUnique({ where: { network_height_txIndex: { network: NET, height: 3n, txIndex: 1 } } }))!.result as unknown as { tags: Tag[] };
    expect(stored.tags.map((t) => t.key)).toEqual(["message.action", "transfer.amount", "long.value", "nul.value", "long.key".repeat(40)]);
    // A NUL (PostgreSQL text cannot hold it) is kept in the tx result and indexed as U+FFFD.
    expect(stored.tags[3]!.value).toBe("a\u0000b");
    expect((await db().consensusTxAttr.findFirst({ where: { network: NET, key: "nul.value" } }))?.value).toBe("a\uFFFDb");
    const amount = await db().consensusTxAttr.findFirst({ where: { network: NET, key: "transfer.amount", value: "2500ubbn" } });
    expect(amount?.num?.toString()).toBe("2500");
  });

  it("skips blocks already stored: re-ingesting changes no row and no count", async () => {
    const before = await db().consensusAttrValue.findMany({ where: { network: NET }, orderBy: [{ key: "asc" }, { value: "asc" }] });
    await insertBlocks(NET, blocksFor(NET, TAGS));
    expect(await db().consensusTx.count({ where: { network: NET } })).toBe(7);
    expect(await db().consensusAttrValue.findMany({ where: { network: NET }, orderBy: [{ key: "asc" }, { value: "asc" }] })).toEqual(before);
    expect((await counts(NET, "transfer.sender EXISTS")).counters).toBe(4);
  });

  it("rolls a failing batch back whole: no block, tx, attribute or count of it remains", async () => {
    const blocks = blocksFor(NET, [...TAGS, [[tag("rollback.key", "x")], [tag("other.key", "y")]]]);
    // PostgreSQL text cannot hold NUL: the batch fails at the txs, once the block's row was sent.
    blocks[3]!.txs[1]!.hash = "AB\u0000CD";
    await expect(insertBlocks(NET, blocks.slice(3))).rejects.toThrow();
    expect(await db().consensusBlock.count({ where: { network: NET } })).toBe(3);
    expect(await db().consensusTxAttr.count({ where: { network: NET, key: "rollback.key" } })).toBe(0);
    expect(await db().consensusAttrKey.count({ where: { network: NET, key: "rollback.key" } })).toBe(0);
  });
});

describe("total_count from the ingestion's counters", () => {
  const cases: Array<[string, (attrs: Tag[]) => boolean, "counters" | "fallback"]> = [
    ["transfer.sender EXISTS", has("transfer.sender", () => true), "counters"],
    ["transfer.sender = 'bbn1alice'", has("transfer.sender", (v) => v === "bbn1alice"), "counters"],
    ["transfer.sender = 'nobody'", () => false, "counters"],
    ["nothing.here EXISTS", () => false, "counters"],
    ["message.action CONTAINS 'Delegate'", has("message.action", (v) => v.includes("Delegate")), "counters"],
    ["message.action CONTAINS 'deleg'", has("message.action", (v) => v.includes("deleg")), "counters"],
    // transfer.amount: one tx holds two different amounts, so a sum per value would count it twice.
    ["transfer.amount > 5", has("transfer.amount", (v) => parseFloat(v) > 5), "fallback"],
    ["transfer.amount = '7ubbn'", has("transfer.amount", (v) => v === "7ubbn"), "counters"],
    ["unbond.at >= TIME 2026-01-03T00:00:00Z", has("unbond.at", (v) => Date.parse(v) >= Date.parse("2026-01-03T00:00:00Z")), "fallback"],
    ["transfer.sender CONTAINS 'bbn1'", has("transfer.sender", (v) => v.includes("bbn1")), "counters"],
    // The index holds U+FFFD in place of the NUL (as the searches send a query's operands).
    ["nul.value = 'a\uFFFDb'", has("nul.value", (v) => v === "a\u0000b"), "counters"],
  ];

  it.each(cases)("%s", async (input, pred, source) => {
    const { counters, counted } = await counts(NET, input);
    expect(counted).toBe(expected(pred));
    if (source === "counters") expect(counters).toBe(counted);
    else expect(counters).toBeNull();
  });

  it("leaves queries of several conditions or reserved keys to counting", async () => {
    for (const input of ["tx.height = 1", "tx.hash = 'AB'", "transfer.sender EXISTS AND tx.height > 1", "a.b EXISTS AND c.d EXISTS"]) {
      expect((await counts(NET, input)).counters, input).toBeUndefined();
    }
  });

  it("counts per network, and forgets a network's counts with its index", async () => {
    await insertBlocks(OTHER, blocksFor(OTHER, [...TAGS, [[tag("transfer.sender", "bbn1alice")]]]));
    expect((await counts(OTHER, "transfer.sender = 'bbn1alice'")).counters).toBe(3);
    expect((await counts(NET, "transfer.sender = 'bbn1alice'")).counters).toBe(2);
    await deleteNetworkIndex(OTHER);
    expect(await counts(OTHER, "transfer.sender EXISTS")).toEqual({ counters: 0, counted: 0 });
    expect(await db().consensusAttrValue.count({ where: { network: OTHER } })).toBe(0);
    expect((await counts(NET, "transfer.sender EXISTS")).counters).toBe(4);
  });
});
