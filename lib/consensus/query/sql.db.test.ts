/**
 * Runs compiled queries against the test run's real PostgreSQL, on TEMP tables
 * shaped like the consensus schema (temp tables shadow any real ones for this
 * session only), to check that the SQL is valid, that the parameter types
 * resolve, that the semantics documented in sql.ts hold, and that every query
 * shape can be answered without a sequential scan.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { attributeTime, leadingNumber } from "./literals";
import { parseQuery } from "./parse";
import { compileBlockQuery, compileTxQuery } from "./sql";

const NET = "testnet-1";
const HASH = (n: number) => n.toString(16).toUpperCase().padStart(64, "0");

// [height, tx_index, [key, value][]]
const TXS: [number, number, [string, string][]][] = [
  [1, 0, [["transfer.amount", "8stake"], ["transfer.sender", "cosmos1alice"], ["message.action", "send"]]],
  [1, 1, [["transfer.amount", "12.5uatom"], ["transfer.amount", "3stake"], ["transfer.sender", "cosmos1bob"]]],
  [2, 0, [["transfer.amount", "abc"], ["unbond.at", "2026-01-02T23:59:59.999999Z"], ["memo.text", "a = b; DROP TABLE x; --"]]],
  [3, 0, [["unbond.at", "2026-01-03T00:00:00Z"], ["unbond.at", "not a time"], ["block.height", "7"]]],
  [4, 0, [["unbond.at", "2026-01-03T01:30:00+02:00"]]], // 2026-01-02T23:30Z
  [5, 0, [["bond.at", "2026-01-03T15:30:00.5+16:00"]]], // 2026-01-02T23:30:00.5Z: an offset PostgreSQL itself refuses
];

let client: pg.Client;

async function exec(sql: string, params: unknown[] = []) {
  return (await client.query(sql, params)).rows;
}

/** The (height:tx_index) pairs tx_search finds. */
async function txSearch(input: string): Promise<string[]> {
  const parsed = parseQuery(input);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const params: unknown[] = [NET];
  const where = compileTxQuery(parsed.query, params);
  const rows = await exec(`SELECT t.height, t.tx_index FROM consensus_txs t WHERE t.network = $1 AND ${where} ORDER BY t.height, t.tx_index`, params);
  return rows.map((r: { height: string; tx_index: number }) => `${r.height}:${r.tx_index}`);
}

async function blockSearch(input: string): Promise<number[]> {
  const parsed = parseQuery(input);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const params: unknown[] = [NET];
  const where = compileBlockQuery(parsed.query, params);
  const rows = await exec(`SELECT b.height FROM consensus_blocks b WHERE b.network = $1 AND ${where} ORDER BY b.height`, params);
  return rows.map((r: { height: string }) => Number(r.height));
}

beforeAll(async () => {
  client = new pg.Client({ connectionString: inject("databaseUrl") });
  await client.connect();
  // A session time zone far from UTC, so anything relying on it would show.
  await exec("SET TIME ZONE 'Pacific/Kiritimati'");
  await exec(`
    CREATE TEMP TABLE consensus_txs (network text, height bigint, tx_index int, hash text, PRIMARY KEY (network, height, tx_index));
    CREATE TEMP TABLE consensus_tx_attrs (network text, height bigint, tx_index int, ord int, key text, value text, num numeric, time timestamptz,
      PRIMARY KEY (network, key, height, tx_index, ord));
    CREATE TEMP TABLE consensus_blocks (network text, height bigint, time timestamptz, PRIMARY KEY (network, height));
    CREATE TEMP TABLE consensus_block_attrs (network text, height bigint, ord int, key text, value text, num numeric, time timestamptz,
      PRIMARY KEY (network, key, height, ord));
    CREATE INDEX ON consensus_txs (network, hash);
    CREATE INDEX ON consensus_tx_attrs (network, key, value, height, tx_index);
    CREATE INDEX ON consensus_tx_attrs (network, key, num) WHERE num IS NOT NULL;
    CREATE INDEX ON consensus_tx_attrs (network, key, time) WHERE time IS NOT NULL;
    CREATE INDEX ON consensus_block_attrs (network, key, value, height);
    CREATE INDEX ON consensus_block_attrs (network, key, num) WHERE num IS NOT NULL;
    CREATE INDEX ON consensus_block_attrs (network, key, time) WHERE time IS NOT NULL;
  `);
  for (const [height, index, attrs] of TXS) {
    await exec("INSERT INTO consensus_txs VALUES ($1, $2, $3, $4)", [NET, height, index, HASH(height * 16 + index + 0xab)]);
    for (const [ord, [key, value]] of attrs.entries()) {
      await exec("INSERT INTO consensus_tx_attrs VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", [NET, height, index, ord, key, value, leadingNumber(value), attributeTime(value)]);
    }
  }
  for (const height of [1, 2, 3, 4]) {
    await exec("INSERT INTO consensus_blocks VALUES ($1, $2, now())", [NET, height]);
    await exec("INSERT INTO consensus_block_attrs VALUES ($1, $2, 0, 'mint.amount', $3, $4, NULL)", [NET, height, `${height * 10}stake`, String(height * 10)]);
  }
  // Another network's rows must never leak in.
  await exec("INSERT INTO consensus_txs VALUES ('other', 1, 0, 'X')");
  await exec("INSERT INTO consensus_tx_attrs VALUES ('other', 1, 0, 0, 'message.action', 'send', NULL, NULL)");
});

afterAll(async () => {
  await client?.end();
});

describe("compiled queries on PostgreSQL", () => {
  it("matches when any attribute with the key matches", async () => {
    expect(await txSearch("transfer.amount < 5")).toEqual(["1:1"]);
    expect(await txSearch("transfer.amount > 10")).toEqual(["1:1"]);
    expect(await txSearch("transfer.amount > 10 AND transfer.amount < 5")).toEqual(["1:1"]);
  });

  it("compares the leading number of values; values without one never match", async () => {
    expect(await txSearch("transfer.amount = 8")).toEqual(["1:0"]);
    expect(await txSearch("transfer.amount >= 8.0")).toEqual(["1:0", "1:1"]);
    expect(await txSearch("transfer.amount = 12.50")).toEqual(["1:1"]);
    expect(await txSearch("transfer.amount >= 0")).toEqual(["1:0", "1:1"]);
  });

  it("compares strings exactly and by substring, EXISTS by key", async () => {
    expect(await txSearch("transfer.amount = '8stake'")).toEqual(["1:0"]);
    expect(await txSearch("transfer.amount = '8'")).toEqual([]);
    expect(await txSearch("transfer.sender CONTAINS 'cosmos1'")).toEqual(["1:0", "1:1"]);
    expect(await txSearch("transfer.sender CONTAINS 'BOB'")).toEqual([]);
    expect(await txSearch("memo.text = 'a = b; DROP TABLE x; --'")).toEqual(["2:0"]);
    expect(await txSearch("memo.text CONTAINS '%'")).toEqual([]);
    expect(await txSearch("message.action EXISTS")).toEqual(["1:0"]);
    expect(await txSearch("message.action EXISTS AND transfer.sender EXISTS")).toEqual(["1:0"]);
  });

  it("compares TIME as an instant and DATE by UTC day, whatever the session time zone", async () => {
    expect(await txSearch("unbond.at = DATE 2026-01-02")).toEqual(["2:0", "4:0"]);
    expect(await txSearch("unbond.at <= DATE 2026-01-02")).toEqual(["2:0", "4:0"]);
    expect(await txSearch("unbond.at < DATE 2026-01-03")).toEqual(["2:0", "4:0"]);
    expect(await txSearch("unbond.at > DATE 2026-01-02")).toEqual(["3:0"]);
    expect(await txSearch("unbond.at >= DATE 2026-01-03")).toEqual(["3:0"]);
    expect(await txSearch("unbond.at < DATE 2026-01-02")).toEqual([]);
    // A query's TIME is whole seconds (as CometBFT's); stored values keep their fraction.
    expect(await txSearch("unbond.at >= TIME 2026-01-02T23:59:59Z")).toEqual(["2:0", "3:0"]);
    expect(await txSearch("unbond.at > TIME 2026-01-02T23:59:59Z")).toEqual(["2:0", "3:0"]);
    expect(await txSearch("unbond.at = TIME 2026-01-02T23:59:59Z")).toEqual([]);
    expect(await txSearch("unbond.at = TIME 2026-01-03T00:30:00+01:00")).toEqual(["4:0"]);
    // Offsets past PostgreSQL's ±15:59 (Go takes up to 23:59), in a query and in a stored value.
    expect(await txSearch("unbond.at = TIME 2026-01-03T15:30:00+16:00")).toEqual(["4:0"]);
    expect(await txSearch("unbond.at < TIME 2026-01-01T00:00:00-23:59")).toEqual([]);
    expect(await txSearch("bond.at > TIME 2026-01-02T23:30:00Z AND bond.at < TIME 2026-01-02T23:30:01Z")).toEqual(["5:0"]);
    expect(await txSearch("bond.at = DATE 2026-01-02")).toEqual(["5:0"]);
  });

  it("answers tx.height, tx.hash and block.height from columns", async () => {
    expect(await txSearch("tx.height = 1")).toEqual(["1:0", "1:1"]);
    expect(await txSearch("tx.height > 1.5 AND tx.height <= 3.9")).toEqual(["2:0", "3:0"]);
    expect(await txSearch("tx.height = '2'")).toEqual(["2:0"]);
    expect(await txSearch("tx.height < 99999999999999999999999")).toHaveLength(6);
    expect(await txSearch(`tx.hash = '${HASH(0xab + 16).toLowerCase()}'`)).toEqual(["1:0"]);
    expect(await txSearch("tx.hash CONTAINS 'bc'")).toEqual(["1:1"]);
    expect(await txSearch("block.height = 7")).toEqual(["3:0"]);
    expect(await blockSearch("block.height >= 2 AND mint.amount < 40")).toEqual([2, 3]);
    expect(await blockSearch("block.height > 2.5 AND mint.amount EXISTS")).toEqual([3, 4]);
    expect(await blockSearch("tx.height EXISTS")).toEqual([]);
  });

  it("can answer every query shape from indexes", async () => {
    // Enough distinct values under one key (on txs that do not exist, so no search above sees them)
    // for the planner to prefer the value/num/time index over the bare key prefix.
    await exec(`INSERT INTO consensus_tx_attrs SELECT $1, 1000 + i, 0, 0, 'a.b', 'v' || i, i, '2020-01-01Z'::timestamptz + i * interval '1 hour'
                FROM generate_series(1, 5000) i`, [NET]);
    await exec("ANALYZE consensus_tx_attrs");
    await exec("SET enable_seqscan = off");
    try {
      // [query, a condition some index scan in the plan must use]
      const keyOrRow = /Index Cond: .*(\(key = 'a\.b'::text\)|\(height = t\.height\) AND \(tx_index = t\.tx_index\))/;
      for (const [input, indexCondition] of [
        ["a.b = 'x'", /Index Cond: .*\(value = 'x'::text\)/],
        ["a.b CONTAINS 'x'", keyOrRow],
        ["a.b EXISTS", keyOrRow],
        ["a.b > 4990", /Index Cond: .*\(num > '4990'::numeric\)/],
        ["a.b <= TIME 2020-01-01T05:00:00Z", /Index Cond: .*\("time" <= /],
        ["a.b = DATE 2020-01-02", /Index Cond: .*\("time" >= .*\("time" < /],
        ["tx.height >= 5.5", /Index Cond: .*\(height > '5'::bigint\)/],
        ["tx.hash = 'ab'", /Index Cond: .*\(hash = 'AB'::text\)/],
        ["a.b = 'x' AND c.d > 1 AND tx.height < 100", /Index Cond: .*\(height < '100'::bigint\)/],
        // The height bounds repeated in the attribute test: a key's attributes within the range.
        ["a.b EXISTS AND tx.height > 4000 AND tx.height < 4100", /consensus_tx_attrs.*\n\s*Index Cond: .*\(key = 'a\.b'::text\).*\(height > '4000'::bigint\) AND \(height < '4100'::bigint\)/],
      ] as const) {
        const parsed = parseQuery(input);
        if (!parsed.ok) throw new Error(parsed.error.message);
        const params: unknown[] = [NET];
        const sql = `EXPLAIN SELECT 1 FROM consensus_txs t WHERE t.network = $1 AND ${compileTxQuery(parsed.query, params)}`;
        const plan = (await exec(sql, params)).map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n");
        expect(plan, `${input}\n${plan}`).not.toContain("Seq Scan");
        expect(plan, `${input}\n${plan}`).toMatch(indexCondition);
      }
    } finally {
      await exec("RESET enable_seqscan");
    }
  });
});
