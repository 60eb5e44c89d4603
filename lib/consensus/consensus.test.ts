import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, publicDb, PUBLIC_PLANNER_SETTINGS } from "@/lib/db/client";
import { networkBySlug } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { dataHash, fromBase64, headerHash, txHash, verifyTxProof, verifyVote } from "./crypto";
import { devnetChain } from "./devnet/chain";
import { generateBlocks } from "./devnet/producer";
import type { BlockResult, StatusResult, TxRecord } from "./types";
import { callCu } from "./catalog";
import { SEARCH_SQL } from "./handlers";
import { parseQuery, type Query } from "./query/parse";
import { compileTxQuery } from "./query/sql";

interface PlanNode {
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

const NET = "babylon-testnet";
const BLOCKS = 40;
const TXS = 4;
let gw: TestGateway;
let key: string;
let projectId: string;

type Rpc<T> = { jsonrpc: string; id: number | string | null; result: T; error?: { code: number; message: string; data: string } };

async function get<T = Record<string, unknown>>(path: string, apiKey: string | null = key): Promise<{ status: number; json: Rpc<T> }> {
  const res = await fetch(`${gw.url}/rpc/${NET}/${path}`, { headers: apiKey ? { "X-API-KEY": apiKey } : {} });
  return { status: res.status, json: (await res.json()) as Rpc<T> };
}

async function ok<T>(path: string): Promise<T> {
  const r = await get<T>(path);
  expect(r.status, path).toBe(200);
  expect(r.json.error, `${path}: ${JSON.stringify(r.json.error)}`).toBeUndefined();
  expect(r.json.jsonrpc).toBe("2.0");
  return r.json.result;
}

async function rpcError(path: string) {
  const r = await get(path);
  expect(r.status, path).toBe(200);
  expect(r.json.result, path).toBeUndefined();
  return r.json.error!;
}

const isHex = (s: unknown) => typeof s === "string" && /^[0-9A-F]{64}$/.test(s);

beforeAll(async () => {
  gw = await startTestGateway();
  // Unlimited throughput: this suite sends far more than the free plan's 300 CU per second.
  ({ apiKey: key, projectId } = await createTestProject("Consensus", "ENTERPRISE"));
  await generateBlocks(networkBySlug(NET)!, BLOCKS, TXS);
}, 120_000);
afterAll(async () => gw.stop());

describe("status, consensus_params, net_info", () => {
  it("status has every field of the spec with its type", async () => {
    const s = await ok<StatusResult>("status");
    expect(s.node_info.protocol_version).toEqual({ p2p: expect.any(String), block: "11", app: "0" });
    expect(s.node_info).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{40}$/), listen_addr: expect.any(String), network: "bbn-devnet-2", version: expect.any(String), channels: expect.stringMatching(/^[0-9a-f]+$/), moniker: expect.any(String) });
    expect(s.node_info.other).toEqual({ tx_index: "on", rpc_address: expect.any(String) });
    const si = s.sync_info;
    for (const f of ["latest_block_hash", "latest_app_hash", "latest_block_height", "latest_block_time", "earliest_block_hash", "earliest_app_hash", "earliest_block_height", "earliest_block_time"] as const) {
      expect(typeof si[f], f).toBe("string");
    }
    expect(si.catching_up).toBe(false);
    expect(Number(si.latest_block_height)).toBeGreaterThanOrEqual(BLOCKS);
    expect(si.earliest_block_height).toBe("1");
    expect(s.validator_info).toEqual({ address: expect.stringMatching(/^[0-9A-F]{40}$/), pub_key: { type: expect.any(String), value: expect.any(String) }, voting_power: "10" });
  });

  it("consensus_params and net_info have their fields", async () => {
    const p = await ok<{ block_height: string; consensus_params: Record<string, Record<string, unknown>> }>("consensus_params?height=3");
    expect(p).toEqual({
      block_height: "3",
      consensus_params: { block: { max_bytes: expect.any(String), max_gas: "-1", time_iota_ms: expect.any(String) }, evidence: { max_age: expect.any(String) }, validator: { pub_key_types: ["ed25519"] } },
    });
    const n = await ok<{ listening: boolean; listeners: string[]; n_peers: string; peers: Array<{ node_id: string; url: string }> }>("net_info");
    expect(n.listening).toBe(true);
    expect(n.listeners.length).toBeGreaterThan(0);
    expect(n.n_peers).toBe(String(n.peers.length));
    for (const p of n.peers) expect(p).toEqual({ node_id: expect.any(String), url: expect.any(String) });
  });
});

describe("block", () => {
  it("has every field of the spec, with real hashes, links and signed commits", async () => {
    const chain = devnetChain(NET, "bbn-devnet-2");
    let previous: BlockResult | undefined;
    for (const h of [1, 2, 3, 17]) {
      if (h === 17) previous = await ok<BlockResult>("block?height=16");
      const b = await ok<BlockResult>(`block?height=${h}`);
      const hd = b.block.header;
      expect(Object.keys(b).sort()).toEqual(["block", "block_id"]);
      expect(b.block_id).toEqual({ hash: expect.stringMatching(/^[0-9A-F]{64}$/), parts: { total: expect.any(Number), hash: expect.stringMatching(/^[0-9A-F]{64}$/) } });
      expect(hd.height).toBe(String(h));
      expect(hd.chain_id).toBe("bbn-devnet-2");
      expect(hd.version).toEqual({ block: "11", app: "0" });
      expect(new Date(hd.time).toISOString()).toBe(hd.time);
      expect(b.block_id.hash).toBe(headerHash(hd));
      const txs = b.block.data.map((d) => fromBase64(d));
      expect(hd.data_hash).toBe(dataHash(txs));
      for (const f of ["validators_hash", "next_validators_hash", "consensus_hash", "evidence_hash"] as const) expect(isHex(hd[f]), f).toBe(true);
      expect(hd.proposer_address).toMatch(/^[0-9A-F]{40}$/);
      expect(Array.isArray(b.block.evidence)).toBe(true);
      expect(b.block.last_commit).toEqual({ height: h - 1, round: 0, block_id: expect.any(Object), signatures: expect.any(Array) });
      if (h === 1) {
        expect(hd.last_block_id).toEqual({ hash: "", parts: { total: 0, hash: "" } });
        expect(b.block.last_commit.signatures).toEqual([]);
      } else {
        if (h !== 17) previous = await ok<BlockResult>(`block?height=${h - 1}`);
        expect(hd.last_block_id).toEqual(previous!.block_id);
        const sigs = b.block.last_commit.signatures;
        expect(sigs).toHaveLength(4);
        for (const s of sigs) {
          expect(s).toEqual({ type: 2, height: String(h - 1), round: 0, block_id: previous!.block_id, timestamp: expect.any(String), validator_address: expect.stringMatching(/^[0-9A-F]{40}$/), validator_index: expect.any(Number), signature: expect.any(String) });
          const v = chain.validators[s.validator_index]!;
          expect(v.keys.address).toBe(s.validator_address);
          const vote = { type: 2 as const, height: s.height, round: 0, block_id: s.block_id, timestamp: s.timestamp, chain_id: "bbn-devnet-2" };
          expect(verifyVote(v.keys.publicKey, vote, s.signature)).toBe(true);
          expect(verifyVote(v.keys.publicKey, { ...vote, height: "999" }, s.signature)).toBe(false);
        }
      }
    }
  });

  it("answers the latest block without height, and accepts the quoted URI form", async () => {
    const s = await ok<StatusResult>("status");
    const latest = await ok<BlockResult>("block");
    expect(Number(latest.block.header.height)).toBeGreaterThanOrEqual(Number(s.sync_info.latest_block_height));
    const quoted = await ok<BlockResult>('block?height="5"');
    expect(quoted.block.header.height).toBe("5");
  });

  it("refuses bad heights with errors that say what is wrong", async () => {
    expect(await rpcError("block?height=abc")).toMatchObject({ code: -32602, message: expect.stringContaining("height") });
    expect(await rpcError("block?height=-1")).toMatchObject({ code: -32602 });
    expect(await rpcError("block?height=0")).toMatchObject({ code: -32603, message: "height must be greater than 0, but got 0" });
    const above = await rpcError("block?height=99999999");
    expect(above.code).toBe(-32603);
    expect(above.message).toMatch(/^height 99999999 must be less than or equal to the current blockchain height \d+$/);
    expect(await rpcError("consensus_params?height=99999999")).toMatchObject({ code: -32603 });
  });

  it("echoes the integer id, -1 when absent", async () => {
    expect((await get("status?id=42")).json.id).toBe(42);
    expect((await get("status")).json.id).toBe(-1);
    expect((await get("status?id=x")).json.error?.code).toBe(-32602);
  });
});

describe("tx and tx_search", () => {
  it("finds a tx by hash in any form, with a proof that verifies", async () => {
    const b = await ok<BlockResult>("block?height=7");
    const raw = fromBase64(b.block.data[2]!);
    const hash = txHash(raw);
    for (const form of [hash, hash.toLowerCase(), `0x${hash.toLowerCase()}`, `"${hash}"`]) {
      const t = await ok<TxRecord>(`tx?hash=${encodeURIComponent(form)}`);
      expect(t).toEqual({ hash, height: "7", index: 2, tx_result: { log: expect.any(String), gas_wanted: expect.any(String), gas_used: expect.any(String), tags: expect.any(Array) }, tx: b.block.data[2] });
      for (const tag of t.tx_result.tags) expect(tag).toEqual({ key: expect.any(String), value: expect.any(String), index: expect.any(Boolean) });
    }
    const proved = await ok<TxRecord>(`tx?hash=${hash}&prove=true`);
    expect(proved.proof).toEqual({ RootHash: b.block.header.data_hash, Data: b.block.data[2], Proof: { total: String(TXS), index: "2", leaf_hash: expect.any(String), aunts: expect.any(Array) } });
    expect(verifyTxProof(proved.proof!, raw, b.block.header.data_hash)).toBe(true);
    expect(await rpcError(`tx?hash=${"0".repeat(64)}`)).toMatchObject({ code: -32603, message: expect.stringContaining("not found") });
    expect(await rpcError("tx?hash=xyz")).toMatchObject({ code: -32602, message: expect.stringContaining("64 hexadecimal") });
    expect(await rpcError(`tx?hash=${hash}&prove=maybe`)).toMatchObject({ code: -32602, message: expect.stringContaining("true or false") });
    expect(await rpcError("tx")).toMatchObject({ code: -32602, message: expect.stringContaining("hash is required") });
  });

  it("tx.height = N returns the block's txs in order, total_count a string", async () => {
    const r = await ok<{ txs: TxRecord[]; total_count: string }>('tx_search?query="tx.height=9"');
    expect(r.total_count).toBe(String(TXS));
    expect(r.txs.map((t) => [t.height, t.index])).toEqual(Array.from({ length: TXS }, (_, i) => ["9", i]));
    expect(r.txs.every((t) => t.proof === undefined)).toBe(true);
  });

  it("pages add up, orders work, per_page clamps to 100 and pages past the end are refused", async () => {
    const q = encodeURIComponent("tx.height >= 3 AND tx.height <= 20");
    const expected = 18 * TXS;
    const all: string[] = [];
    for (let page = 1; page <= Math.ceil(expected / 25); page++) {
      const r = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${q}&per_page=25&page=${page}`);
      expect(r.total_count).toBe(String(expected));
      all.push(...r.txs.map((t) => t.hash));
    }
    expect(all).toHaveLength(expected);
    expect(new Set(all).size).toBe(expected);
    const desc = await ok<{ txs: TxRecord[] }>(`tx_search?query=${q}&order_by=desc&per_page=5`);
    expect(desc.txs[0]!.height).toBe("20");
    expect(desc.txs[0]!.index).toBe(TXS - 1);
    const dflt = await ok<{ txs: TxRecord[] }>(`tx_search?query=${q}`);
    expect(dflt.txs).toHaveLength(30);
    expect(dflt.txs[0]!.height).toBe("3");
    const clamped = await ok<{ txs: TxRecord[] }>(`tx_search?query=${encodeURIComponent("tx.height > 0")}&per_page=1000`);
    expect(clamped.txs).toHaveLength(100);
    const past = await rpcError(`tx_search?query=${q}&per_page=25&page=4`);
    expect(past).toMatchObject({ code: -32603, message: "page should be within [1, 3] range, given 4" });
    expect(await rpcError(`tx_search?query=${q}&order_by=sideways`)).toMatchObject({ code: -32602 });
    expect(await rpcError(`tx_search?query=${q}&page=two`)).toMatchObject({ code: -32602 });
  });

  it("matches event attributes: =, numeric ranges on leading numbers, CONTAINS, EXISTS, with proofs", async () => {
    const first = await ok<TxRecord>(`tx?hash=${txHash(fromBase64((await ok<BlockResult>("block?height=5")).block.data[0]!))}`);
    const sender = first.tx_result.tags.find((t) => t.key === "message.sender")!.value;
    const bySender = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${encodeURIComponent(`message.sender = '${sender}'`)}&per_page=100&prove=true`);
    expect(Number(bySender.total_count)).toBeGreaterThan(0);
    for (const t of bySender.txs) {
      expect(t.tx_result.tags.some((g) => g.key === "message.sender" && g.value === sender)).toBe(true);
      expect(verifyTxProof(t.proof!, fromBase64(t.tx))).toBe(true);
    }
    const ranged = await ok<{ txs: TxRecord[] }>(`tx_search?query=${encodeURIComponent("tx.height > 10 AND tx.height < 30 AND transfer.amount > 2500")}&per_page=100`);
    expect(ranged.txs.length).toBeGreaterThan(0);
    for (const t of ranged.txs) {
      expect(Number(t.height)).toBeGreaterThan(10);
      expect(Number(t.height)).toBeLessThan(30);
      expect(t.tx_result.tags.some((g) => g.key === "transfer.amount" && parseInt(g.value, 10) > 2500)).toBe(true);
    }
    const contains = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${encodeURIComponent("message.action CONTAINS 'deleg'")}&per_page=100`);
    expect(contains.txs.every((t) => t.tx_result.tags.some((g) => g.key === "message.action" && g.value.includes("deleg")))).toBe(true);
    const exists = await ok<{ total_count: string }>(`tx_search?query=${encodeURIComponent("btc_delegation.unlock_time EXISTS")}`);
    const time = await ok<{ total_count: string }>(`tx_search?query=${encodeURIComponent("btc_delegation.unlock_time >= TIME 2000-01-01T00:00:00Z")}`);
    expect(time.total_count).toBe(exists.total_count);
    const none = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${encodeURIComponent("message.action = 'nothing-like-this'")}`);
    expect(none).toEqual({ txs: [], total_count: "0" });
  });

  it("refuses bad queries with the offset and what was expected", async () => {
    const e = await rpcError(`tx_search?query=${encodeURIComponent("tx.height >")}`);
    expect(e.code).toBe(-32603);
    expect(e.data).toMatch(/offset 11/);
    expect(e.data).toMatch(/expected/);
    expect(await rpcError(`tx_search?query=${encodeURIComponent("a = 1 OR b = 2")}`)).toMatchObject({ code: -32603 });
    const long = await rpcError(`tx_search?query=${encodeURIComponent(`a.b = '${"x".repeat(600)}'`)}`);
    expect(long.message).toMatch(/512/);
    expect(await rpcError("tx_search")).toMatchObject({ code: -32602, message: expect.stringContaining("query is required") });
    // NUL is no tag character; in a string it is searched for like any other (PostgreSQL is sent
    // U+FFFD in its place, never the NUL it would refuse).
    expect(await rpcError(`tx_search?query=${encodeURIComponent("a\u0000b EXISTS")}`)).toMatchObject({ code: -32603, data: expect.stringContaining("offset 1: expected an operator") });
    for (const q of ["a.b = 'x\u0000y'", "a.b CONTAINS '\u0000'", "tx.hash = '\u0000'", "tx.height CONTAINS '\u0000'"]) {
      expect(await ok(`tx_search?query=${encodeURIComponent(q)}`), q).toEqual({ txs: [], total_count: "0" });
    }
    expect(await ok(`block_search?query=${encodeURIComponent("block.height = '\u0000'")}`)).toEqual({ blocks: [], total_count: 0 });
  });
});

describe("search cost: conditions, plans and CU", () => {
  // Ten distinct conditions, the most a query may hold: every kind of test, written least selective first.
  const TEN = [
    "tx.fee EXISTS",
    "transfer.recipient EXISTS",
    "message.sender CONTAINS '1'",
    "transfer.sender CONTAINS 'bbn'",
    "transfer.amount > 100",
    "transfer.amount < 4000",
    "tx.height >= 2",
    "tx.height <= 35",
    "tx.fee = '2000ubbn'",
    "message.action = 'send'",
  ].join(" AND ");

  /** The stored transactions up to `maxHeight` with their indexed tags, read from their results, not from the search index. */
  async function storedTxs(maxHeight: number) {
    const rows = await db().consensusTx.findMany({ where: { network: NET, height: { lte: maxHeight } }, orderBy: [{ height: "asc" }, { txIndex: "asc" }] });
    return rows.map((r) => ({
      id: `${r.height}:${r.txIndex}`,
      height: Number(r.height),
      tags: (r.result as unknown as TxRecord["tx_result"]).tags.filter((t) => t.index),
    }));
  }
  const has = (tags: TxRecord["tx_result"]["tags"], key: string, test: (value: string) => boolean = () => true) => tags.some((t) => t.key === key && test(t.value));
  const leading = (value: string) => Number(/^[0-9]+(\.[0-9]+)?/.exec(value)?.[0] ?? NaN);

  it("answers a query of ten distinct conditions exactly as a plain filter of the stored transactions, with proofs", async () => {
    const expected = (await storedTxs(35)).filter(
      (t) =>
        has(t.tags, "tx.fee") &&
        has(t.tags, "transfer.recipient") &&
        has(t.tags, "message.sender", (v) => v.includes("1")) &&
        has(t.tags, "transfer.sender", (v) => v.includes("bbn")) &&
        has(t.tags, "transfer.amount", (v) => leading(v) > 100) &&
        has(t.tags, "transfer.amount", (v) => leading(v) < 4000) &&
        t.height >= 2 &&
        t.height <= 35 &&
        has(t.tags, "tx.fee", (v) => v === "2000ubbn") &&
        has(t.tags, "message.action", (v) => v === "send"),
    );
    expect(expected.length).toBeGreaterThan(5);
    const found = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${encodeURIComponent(TEN)}&per_page=100&prove=true`);
    expect(found.total_count).toBe(String(expected.length));
    expect(found.txs.map((t) => `${t.height}:${t.index}`)).toEqual(expected.map((t) => t.id));
    for (const t of found.txs) expect(verifyTxProof(t.proof!, fromBase64(t.tx))).toBe(true);
  });

  it("answers a query of 64 repeated conditions as the same query written once", async () => {
    // 64 times one condition, within the 512 characters: the query that once took ~320 ms to plan.
    const attack = Array.from({ length: 64 }, () => "a=1").join(" AND ");
    expect(await ok(`tx_search?query=${encodeURIComponent(attack)}`)).toEqual({ txs: [], total_count: "0" });
    expect(await ok(`tx_search?query=${encodeURIComponent("a=1")}`)).toEqual({ txs: [], total_count: "0" });
    // Two distinct conditions matching real transactions, repeated as often as 512 characters allow.
    const pair = ["tx.height<=30", "message.action='send'"];
    const short = Array.from({ length: 22 }, (_, i) => pair[i % 2]).join(" AND ");
    expect(short.length).toBeLessThanOrEqual(512);
    const expected = (await storedTxs(30)).filter((t) => has(t.tags, "message.action", (v) => v === "send")).map((t) => t.id);
    expect(expected.length).toBeGreaterThan(5);
    const found = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${encodeURIComponent(short)}&per_page=100`);
    expect(found.total_count).toBe(String(expected.length));
    expect(found.txs.map((t) => `${t.height}:${t.index}`)).toEqual(expected);
  });

  it("plans public searches with the bounded planner settings", async () => {
    const parsed = parseQuery(TEN);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const params: unknown[] = [NET];
    const sql = SEARCH_SQL.txCount(compileTxQuery(parsed.query, params));
    /** The plan of the ten-condition search on a client: the planner settings it was made with, and the tables it scans. */
    const planOn = async (client: typeof db) => {
      const [row] = await client().$queryRawUnsafe<Array<{ "QUERY PLAN": unknown }>>(`EXPLAIN (FORMAT JSON, SETTINGS) ${sql}`, ...params);
      const raw = row!["QUERY PLAN"];
      const [plan] = (typeof raw === "string" ? JSON.parse(raw) : raw) as [{ Plan: PlanNode; Settings?: Record<string, string> }];
      const scans = (n: PlanNode): string[] => [...(n["Relation Name"] ? [n["Relation Name"]] : []), ...(n.Plans ?? []).flatMap(scans)];
      return { settings: plan.Settings ?? {}, attributeScans: scans(plan.Plan).filter((r) => r === "consensus_tx_attrs").length };
    };
    const bounded = Object.fromEntries(Object.entries(PUBLIC_PLANNER_SETTINGS).map(([k, v]) => [k, String(v)]));
    // The public pool (where searches run) plans with the limits; every attribute test is still there.
    expect(await planOn(publicDb)).toEqual({ settings: expect.objectContaining(bounded), attributeScans: 8 });
    // The main pool keeps PostgreSQL's defaults (EXPLAIN's SETTINGS lists only what differs from them).
    const main = await planOn(db);
    for (const name of Object.keys(bounded)) expect(main.settings[name]).toBeUndefined();
  });

  it("meters a search 40 CU plus 5 for each event condition after the first; column conditions, repeats and refused queries add nothing", async () => {
    const p = await createTestProject("Consensus search CU", "ENTERPRISE");
    const call = (method: string, query: string) => fetch(`${gw.url}/rpc/${NET}/${method}?query=${encodeURIComponent(query)}`, { headers: { "X-API-KEY": p.apiKey } }).then((r) => r.json());
    // Ten conditions, eight on events: 40 + 7 × 5.
    expect(await call("tx_search", TEN)).toMatchObject({ result: expect.any(Object) });
    // One event condition written 64 times, and one narrowed by height and hash: 40 each.
    expect(await call("tx_search", Array.from({ length: 64 }, () => "a=1").join(" AND "))).toMatchObject({ result: expect.any(Object) });
    expect(await call("tx_search", "tx.height > 1 AND tx.height < 9 AND tx.hash CONTAINS 'A' AND message.action = 'send'")).toMatchObject({ result: expect.any(Object) });
    // Eleven distinct conditions: refused before it runs, 0 CU.
    const eleven = Array.from({ length: 11 }, (_, i) => `a${i}=1`).join(" AND ");
    expect(await call("tx_search", eleven)).toMatchObject({ error: { code: -32603, message: expect.stringContaining("at most 10 distinct conditions") } });
    // block_search: block.height is a column, mint.amount and proposer.address events: 40 + 5; in a POST batch too.
    expect(await call("block_search", "block.height > 1 AND mint.amount > 0 AND proposer.address EXISTS")).toMatchObject({ result: expect.any(Object) });
    const batch = await fetch(`${gw.url}/rpc/${NET}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-KEY": p.apiKey },
      body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "block_search", params: { query: "mint.amount > 0 AND mint.inflation EXISTS AND rewards.validator EXISTS" } }]),
    });
    expect(await batch.json()).toMatchObject([{ id: 1, result: expect.any(Object) }]);
    await gw.meter.flush();
    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId } });
    const sum = (endpoint: string) => {
      const r = rows.filter((x) => x.endpoint === endpoint);
      return { requests: r.reduce((s, x) => s + x.requests, 0), errors: r.reduce((s, x) => s + x.errors, 0), cu: r.reduce((s, x) => s + Number(x.cu), 0) };
    };
    expect(sum("tx_search")).toEqual({ requests: 4, errors: 1, cu: 75 + 40 + 40 });
    expect(sum("block_search")).toEqual({ requests: 2, errors: 0, cu: 45 + 50 });
    expect(callCu("tx_search", (parseQuery(TEN) as { query: Query }).query)).toBe(75);
  });
});

describe("block_search", () => {
  it("finds blocks by height and block events, total_count an integer, newest first by default", async () => {
    const r = await ok<{ blocks: BlockResult[]; total_count: number }>(`block_search?query=${encodeURIComponent("block.height > 30")}&per_page=5`);
    expect(typeof r.total_count).toBe("number");
    expect(r.total_count).toBeGreaterThanOrEqual(BLOCKS - 30);
    const heights = r.blocks.map((b) => Number(b.block.header.height));
    expect(heights).toEqual([...heights].sort((a, b) => b - a));
    const asc = await ok<{ blocks: BlockResult[] }>(`block_search?query=${encodeURIComponent("block.height > 30")}&order_by=asc&per_page=2`);
    expect(asc.blocks.map((b) => b.block.header.height)).toEqual(["31", "32"]);
    const epochs = await ok<{ blocks: BlockResult[]; total_count: number }>(`block_search?query=${encodeURIComponent("checkpoint.epoch EXISTS AND block.height <= 40")}`);
    expect(epochs.blocks.map((b) => Number(b.block.header.height)).every((h) => h % 10 === 0)).toBe(true);
    expect(epochs.total_count).toBe(4);
  });

  it("answers each block exactly as /block does (the stored body, written as it is)", async () => {
    const r = await ok<{ blocks: BlockResult[] }>(`block_search?query=${encodeURIComponent("block.height >= 9 AND block.height <= 11")}&order_by=asc`);
    expect(r.blocks.map((b) => b.block.header.height)).toEqual(["9", "10", "11"]);
    for (const b of r.blocks) {
      const single = await ok<BlockResult>(`block?height=${b.block.header.height}`);
      expect(b).toEqual(single);
      expect(JSON.stringify(b)).toBe(JSON.stringify(single)); // same key order too
      expect(headerHash(b.block.header)).toBe(b.block_id.hash);
    }
    // The POST form and batches carry the same text.
    const res = await fetch(`${gw.url}/rpc/${NET}`, {
      method: "POST",
      headers: { "X-API-KEY": key, "Content-Type": "application/json" },
      body: JSON.stringify([{ jsonrpc: "2.0", id: 7, method: "block_search", params: { query: "block.height = 10" } }]),
    });
    const [answer] = (await res.json()) as Array<Rpc<{ blocks: BlockResult[]; total_count: number }>>;
    expect(answer!.id).toBe(7);
    expect(answer!.result.total_count).toBe(1);
    expect(answer!.result.blocks[0]).toEqual(r.blocks[1]);
  });
});

describe("POST JSON-RPC form, authentication and metering", () => {
  it("answers the same as GET, with named params and batches", async () => {
    const res = await fetch(`${gw.url}/rpc/${NET}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-KEY": key },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: "a", method: "block", params: { height: "4" } },
        { jsonrpc: "2.0", id: 2, method: "tx_search", params: { query: "tx.height=4", prove: true } },
        { jsonrpc: "2.0", id: 3, method: "nope" },
      ]),
    });
    const [block, search, nope] = (await res.json()) as Array<Rpc<unknown>>;
    expect(block).toEqual({ jsonrpc: "2.0", id: "a", result: await ok<BlockResult>("block?height=4") });
    expect(search).toEqual({ jsonrpc: "2.0", id: 2, result: await ok("tx_search?query=tx.height%3D4&prove=true") });
    expect(nope?.error?.code).toBe(-32601);
  });

  it("uses the gateway's errors for keys and networks", async () => {
    expect((await get("status", null)).status).toBe(401);
    const wrongNet = await fetch(`${gw.url}/rpc/ethereum-mainnet/status`, { headers: { "X-API-KEY": key } });
    expect(wrongNet.status).toBe(404);
    expect(await wrongNet.json()).toMatchObject({ code: "NOT_SUPPORTED_CHAIN" });
    const post = await fetch(`${gw.url}/rpc/${NET}/status`, { method: "POST", headers: { "X-API-KEY": key } });
    expect(post.status).toBe(405);
  });

  it("meters the CU of the spec per successful call; failed calls cost nothing", async () => {
    const p = await createTestProject();
    const call = (path: string) => fetch(`${gw.url}/rpc/${NET}/${path}`, { headers: { "X-API-KEY": p.apiKey } });
    for (const path of ["block?height=2", "block_search?query=block.height%3E1", "status", "tx_search?query=tx.height%3D2", "consensus_params", "net_info", "block?height=0"]) await call(path);
    const t = (await ok<{ txs: TxRecord[] }>("tx_search?query=tx.height%3D2")).txs[0]!;
    await call(`tx?hash=${t.hash}`);
    await gw.meter.flush();
    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId } });
    const cu = Object.fromEntries(["block", "block_search", "status", "tx_search", "tx", "consensus_params", "net_info"].map((m) => [m, rows.filter((r) => r.endpoint === m).reduce((s, r) => s + Number(r.cu), 0)]));
    expect(cu).toEqual({ block: 25, block_search: 40, status: 10, tx_search: 40, tx: 20, consensus_params: 14, net_info: 10 });
    const block = rows.filter((r) => r.endpoint === "block");
    expect(block.reduce((s, r) => s + r.requests, 0)).toBe(2);
    expect(block.reduce((s, r) => s + r.errors, 0)).toBe(1);
    expect(projectId).toBeTruthy();
  });
});

describe("the JSON-RPC envelope: notifications, ids, nesting and the rate limit", () => {
  async function postRpc(body: string, apiKey = key) {
    const res = await fetch(`${gw.url}/rpc/${NET}`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-KEY": apiKey }, body });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
  }


  it("runs and meters notifications (no id) but answers them with 204 and no body; a mixed batch answers only the rest", async () => {
    const p = await createTestProject("Consensus notifications");
    const single = await postRpc(JSON.stringify({ jsonrpc: "2.0", method: "status" }), p.apiKey);
    expect(single.status).toBe(204);
    expect(single.text).toBe("");
    expect(single.headers.get("content-type")).toBeNull();
    expect(single.headers.get("x-request-id")).toMatch(/^req_/);
    expect(single.headers.get("access-control-allow-origin")).toBe("*");
    const all = await postRpc(JSON.stringify([{ jsonrpc: "2.0", method: "block", params: { height: "3" } }, { jsonrpc: "2.0", method: "net_info" }]), p.apiKey);
    expect(all.status).toBe(204);
    expect(all.text).toBe("");
    const mixed = await postRpc(
      JSON.stringify([
        { jsonrpc: "2.0", method: "status" },
        { jsonrpc: "2.0", id: 1, method: "block", params: { height: "2" } },
        { jsonrpc: "2.0", method: "block", params: { height: "0" } }, // fails, silently
        { jsonrpc: "2.0", id: null, method: "net_info" }, // id null is a request like any other
      ]),
      p.apiKey,
    );
    expect(mixed.status).toBe(200);
    expect(mixed.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: await ok<BlockResult>("block?height=2") },
      { jsonrpc: "2.0", id: null, result: expect.objectContaining({ listening: true }) },
    ]);
    expect(await gw.usageByEndpoint(p.projectId)).toEqual({
      status: { requests: 2, errors: 0, cu: 20 },
      block: { requests: 3, errors: 1, cu: 50 },
      net_info: { requests: 2, errors: 0, cu: 20 },
    });
  });

  it("echoes numeric ids exactly as written, in answers and errors, single and in batches", async () => {
    const big = await postRpc('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"status"}');
    expect(big.text.startsWith('{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{')).toBe(true);
    const batch = await postRpc('[{"jsonrpc":"2.0","id":1.0e3,"method":"status"},{"jsonrpc":"2.0","id":-0,"method":"nope"},{"jsonrpc":"2.0","id":12.50,"method":"block","params":{"height":"x"}}]');
    expect(batch.text).toMatch(/^\[\{"jsonrpc":"2\.0","id":1\.0e3,"result":\{.*\},\{"jsonrpc":"2\.0","id":-0,"error":\{"code":-32601,.*\},\{"jsonrpc":"2\.0","id":12\.50,"error":\{"code":-32602,.*\}\]$/);
  });

  it("refuses a body nested 10,000 levels deep with −32600, id null", async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tx_search","params":{"query":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`;
    const r = await postRpc(deep);
    expect(r.status).toBe(200);
    const message = "Invalid Request: the body nests arrays and objects deeper than 64 levels";
    expect(r.json).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message, data: message } });
  });

  it("answers what the rate limit refused with −32005 in a batch that ran, HTTP 429 with Retry-After when nothing ran; meters only what ran", async () => {
    const p = await createTestProject("Consensus rate limit"); // free plan: 300 CU per second, one second of burst
    // 10 blocks (250 CU) and 5 status (50 CU) fit; the last 5 status do not. Each item is charged in order before any runs.
    const items = [...Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "block", params: { height: String(i + 1) } })), ...Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: 10 + i, method: "status" }))];
    const r = await postRpc(JSON.stringify(items), p.apiKey);
    expect(r.status).toBe(200);
    const answers = r.json as Array<Rpc<unknown>>;
    expect(answers.map((a) => a.id)).toEqual(items.map((i) => i.id));
    expect(answers.slice(0, 15).every((a) => a.error === undefined && a.result !== undefined)).toBe(true);
    for (const a of answers.slice(15)) {
      expect(a).toEqual({ jsonrpc: "2.0", id: a.id, error: { code: -32005, message: expect.stringContaining("Rate limit of 300 CU per second exceeded"), data: { retryAfter: 1 } } });
    }
    expect(await gw.usageByEndpoint(p.projectId)).toEqual({ block: { requests: 10, errors: 0, cu: 250 }, status: { requests: 10, errors: 5, cu: 50 } });

    // Empty a fresh project's bucket at once (the limit is per project, whichever interface is
    // called; eth_chainId is answered without a node), then a single request and a batch of which
    // nothing runs. The bucket refills 40 CU in 133 ms: a machine slow enough to take longer
    // between the two gets another try with another project.
    let drained = p;
    let refused: Response[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      drained = await createTestProject("Consensus rate limit, drained");
      await fetch(`${gw.url}/node/ethereum-mainnet`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-KEY": drained.apiKey },
        body: JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" }))),
      });
      refused = await Promise.all([
        fetch(`${gw.url}/rpc/${NET}/block_search?query=${encodeURIComponent("block.height > 1")}`, { headers: { "X-API-KEY": drained.apiKey } }),
        fetch(`${gw.url}/rpc/${NET}`, { method: "POST", headers: { "X-API-KEY": drained.apiKey }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "block_search", params: { query: "block.height > 1" } }) }),
        fetch(`${gw.url}/rpc/${NET}`, {
          method: "POST",
          headers: { "X-API-KEY": drained.apiKey },
          body: JSON.stringify([
            { jsonrpc: "2.0", id: 1, method: "tx_search", params: { query: "tx.height > 1" } },
            { jsonrpc: "2.0", method: "tx_search", params: { query: "tx.height > 2" } },
          ]),
        }),
      ]);
      if (refused.every((r) => r.status === 429)) break;
    }
    for (const res of refused) {
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("Rate limit of 300 CU per second exceeded") });
    }
    const after = await gw.usageByEndpoint(drained.projectId);
    expect(after.block_search).toEqual({ requests: 2, errors: 2, cu: 0 });
    expect(after.tx_search).toEqual({ requests: 2, errors: 2, cu: 0 });
  });
});

describe("the native CometBFT interface (/cometbft) on the devnet", () => {
  const base = () => `${gw.url}/cometbft/${NET}`;
  const post = async (body: unknown, headers: Record<string, string> = { "X-API-KEY": key }) => {
    const res = await fetch(base(), { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Rpc<Record<string, unknown>> & Array<Rpc<unknown>> };
  };

  it("serves cosmjs's Comet38Client (key in the path, and in X-API-KEY) with the stored values", async () => {
    const { Comet38Client, HttpClient, toRfc3339WithNanoseconds: toRfc } = await import("@cosmjs/tendermint-rpc");
    for (const client of [await Comet38Client.connect(`${base()}/${key}`), Comet38Client.create(new HttpClient({ url: base(), headers: { "X-API-KEY": key } }))]) {
      const chain = devnetChain(NET, "bbn-devnet-2");
      const status = await client.status();
      expect(status.nodeInfo.network).toBe("bbn-devnet-2");
      expect(status.syncInfo.latestBlockHeight).toBeGreaterThanOrEqual(BLOCKS);
      expect(await client.health()).toBeNull();

      const stored = (await db().consensusBlock.findUnique({ where: { network_height: { network: NET, height: 7n } } }))!.body as unknown as BlockResult;
      const block = await client.block(7);
      expect(Buffer.from(block.blockId.hash).toString("hex").toUpperCase()).toBe(stored.block_id.hash);
      expect(block.block.header.height).toBe(7);
      expect(block.block.header.time.toISOString()).toBe(stored.block.header.time);
      expect(block.block.txs.map((t) => Buffer.from(t).toString("base64"))).toEqual(stored.block.data);
      expect(block.block.lastCommit!.signatures.map((s) => [s.blockIdFlag, Buffer.from(s.signature!).toString("base64")])).toEqual(stored.block.last_commit.signatures.map((s) => [2, s.signature]));

      const results = await client.blockResults(7);
      expect(results.results).toHaveLength(TXS);
      const txs = await db().consensusTx.findMany({ where: { network: NET, height: 7n }, orderBy: { txIndex: "asc" } });
      expect(results.results.map((r) => r.gasUsed)).toEqual(txs.map((t) => BigInt((t.result as unknown as { gas_used: string }).gas_used)));
      expect(results.finalizeBlockEvents.map((e) => e.type)).toContain("mint");

      const tx = await client.tx({ hash: Buffer.from(txs[1]!.hash, "hex"), prove: true });
      expect(tx).toMatchObject({ height: 7, index: 1 });
      expect(Buffer.from(tx.tx).equals(Buffer.from(txs[1]!.raw))).toBe(true);
      expect(Buffer.from(tx.proof!.rootHash).toString("hex").toUpperCase()).toBe(stored.block.header.data_hash);

      const sender = (txs[0]!.result as unknown as { tags: Array<{ key: string; value: string }> }).tags.find((t) => t.key === "message.sender")!.value;
      const found = await client.txSearch({ query: `message.sender = '${sender}' AND tx.height <= 10`, per_page: 100 });
      expect(found.totalCount).toBe(found.txs.length);
      expect(found.txs.map((t) => t.height)).toContain(7);

      const blocks = await client.blockSearch({ query: "block.height >= 3 AND block.height <= 5", order_by: "asc" });
      expect(blocks.blocks.map((b) => b.block.header.height)).toEqual([3, 4, 5]);
      expect(blocks.totalCount).toBe(3);

      const validators = await client.validators({ height: 7 });
      expect(validators.total).toBe(4);
      expect(validators.validators.map((v) => Buffer.from(v.address).toString("hex").toUpperCase())).toEqual(chain.validators.map((v) => v.keys.address));

      const commit = await client.commit(7);
      expect(commit.canonical).toBe(true);
      expect(commit.header.height).toBe(7);
      // Every signature verifies with the validator's key over CometBFT's canonical vote bytes.
      for (const [i, s] of commit.commit.signatures.entries()) {
        const vote = { type: 2 as const, height: "7", round: 0, block_id: stored.block_id, timestamp: toRfc(s.timestamp!), chain_id: "bbn-devnet-2" };
        expect(verifyVote(chain.validators[i]!.keys.publicKey, vote, Buffer.from(s.signature!).toString("base64"))).toBe(true);
      }
      const latest = await client.commit();
      expect(latest.canonical).toBe(false);

      const chainInfo = await client.blockchain(2, 6);
      expect(chainInfo.blockMetas.map((m) => m.header.height)).toEqual([6, 5, 4, 3, 2]);
      expect(chainInfo.blockMetas.every((m) => m.blockSize > 0)).toBe(true);

      const genesis = await client.genesis();
      expect(genesis.chainId).toBe("bbn-devnet-2");
      expect(genesis.validators).toHaveLength(4);
      const info = await client.abciInfo();
      expect(info.lastBlockHeight).toBe(status.syncInfo.latestBlockHeight);
      client.disconnect();
    }
  });

  it("answers the URI form with 0x-hex byte params and quoted strings, and JSON-RPC with positional params and batches", async () => {
    const tx = (await db().consensusTx.findFirst({ where: { network: NET, height: 5n, txIndex: 0 } }))!;
    const res = await fetch(`${base()}/tx?hash=0x${tx.hash}`, { headers: { "X-API-KEY": key } });
    const byUri = (await res.json()) as Rpc<{ hash: string; tx_result: { events: unknown[] }; proof?: unknown }>;
    expect(byUri.result).toMatchObject({ hash: tx.hash, height: "5", index: 0 });
    expect(byUri.result.proof).toBeUndefined();
    const q = await fetch(`${base()}/${key}/block_search?query=${encodeURIComponent('"block.height = 4"')}`);
    expect(((await q.json()) as Rpc<{ total_count: string }>).result.total_count).toBe("1");

    const batch = await post([
      { jsonrpc: "2.0", id: 1, method: "block", params: ["5"] },
      { jsonrpc: "2.0", id: 2, method: "header", params: { height: 5 } },
      { jsonrpc: "2.0", id: 3, method: "tx", params: { hash: Buffer.from(tx.hash, "hex").toString("base64") } },
      { jsonrpc: "2.0", id: 4, method: "nope" },
    ]);
    expect(batch.status).toBe(200);
    type Loose = { block: { header: unknown; data: { txs: string[] }; last_commit: { height: string } }; hash: string };
    const [block, header, byHash, missing] = batch.json as unknown as Array<Rpc<Loose>>;
    expect(block!.result.block.data.txs).toHaveLength(TXS);
    expect(block!.result.block.last_commit.height).toBe("4");
    expect(header!.result).toEqual({ header: block!.result.block.header });
    expect(byHash!.result.hash).toBe(tx.hash);
    expect(missing!.error).toMatchObject({ code: -32601, message: "Method not found", data: expect.stringContaining("nope") });
  });

  it("writes ABCI results with CometBFT's default fields in tx, tx_search and block_results, also for rows an older version stored without them", async () => {
    type Attr = { key: string; value: string; index?: boolean };
    type Event = { type: string; attributes: Attr[] };
    type Exec = { code?: number; data?: string | null; log?: string; info?: string; gas_wanted?: string; gas_used?: string; events: Event[]; codespace?: string };
    type Results = { height: string; txs_results: Exec[]; finalize_block_events: Event[] };
    const uri = async <T>(path: string) => {
      const text = await (await fetch(`${base()}/${path}`, { headers: { "X-API-KEY": key } })).text();
      return { text, result: (JSON.parse(text) as Rpc<T>).result };
    };
    const rpc = async <T>(method: string, params: Record<string, unknown>) => (await post({ jsonrpc: "2.0", id: 1, method, params })).json.result as unknown as T;
    const H = 12n;
    const rows = await db().consensusTx.findMany({ where: { network: NET, height: H }, orderBy: { txIndex: "asc" } });
    const tags = rows.map((r) => (r.result as unknown as TxRecord["tx_result"]).tags);
    /** An ExecTxResult as a 0.38 node writes it for the stored /rpc result: every field in proto order, each attribute with index. */
    const expectNodeExec = (exec: Exec, i: number) => {
      const stored = rows[i]!.result as unknown as TxRecord["tx_result"];
      expect(Object.keys(exec)).toEqual(["code", "data", "log", "info", "gas_wanted", "gas_used", "events", "codespace"]);
      expect(exec).toMatchObject({ code: 0, data: null, log: stored.log, info: "", gas_wanted: stored.gas_wanted, gas_used: stored.gas_used, codespace: "" });
      for (const e of exec.events) {
        expect(Object.keys(e)).toEqual(["type", "attributes"]);
        for (const a of e.attributes) expect(Object.keys(a)).toEqual(["key", "value", "index"]);
      }
      expect(exec.events.flatMap((e) => e.attributes.map((a) => ({ key: `${e.type}.${a.key}`, value: a.value, index: a.index })))).toEqual(tags[i]);
    };
    // The devnet's txs mostly carry message.module, which is not indexed: written as index false.
    expect(tags.flat().some((t) => !t.index)).toBe(true);

    const answers = async () => {
      const byHash = await Promise.all(rows.map((r) => uri<{ tx_result: Exec }>(`tx?hash=0x${r.hash}`)));
      const search = await uri<{ txs: Array<{ tx_result: Exec }> }>(`tx_search?query=${encodeURIComponent(`"tx.height=${H}"`)}`);
      const results = await uri<Results>(`block_results?height=${H}`);
      return { byHash, search, results };
    };
    const before = await answers();
    before.byHash.forEach((a, i) => expectNodeExec(a.result.tx_result, i));
    before.search.result.txs.forEach((t, i) => expectNodeExec(t.tx_result, i));
    before.results.result.txs_results.forEach(expectNodeExec);
    // finalize_block_events: each event by its struct fields, each attribute with every field (the block's are indexed).
    for (const e of before.results.result.finalize_block_events) for (const a of e.attributes) expect(Object.keys(a)).toEqual(["key", "value", "index"]);
    expect(before.results.result.finalize_block_events.flatMap((e) => e.attributes.map((a) => a.index))).not.toContain(false);
    // JSON-RPC answers the same.
    expect((await rpc<{ tx_result: Exec }>("tx", { hash: Buffer.from(rows[0]!.hash, "hex").toString("base64") })).tx_result).toEqual(before.byHash[0]!.result.tx_result);
    expect(await rpc("tx_search", { query: `tx.height=${H}` })).toEqual(before.search.result);
    expect(await rpc("block_results", { height: String(H) })).toEqual(before.results.result);

    // Rows as an older version stored them: zero values left out, no index on an attribute not indexed, or no native JSON at all.
    const compact = (e: Exec) => ({
      log: e.log,
      gas_wanted: e.gas_wanted,
      gas_used: e.gas_used,
      events: e.events.map((ev) => ({ type: ev.type, attributes: ev.attributes.map(({ key, value, index }) => (index ? { key, value, index } : { key, value })) })),
    });
    const old = before.results.result;
    await db().$executeRawUnsafe("UPDATE consensus_blocks SET results = $3::json WHERE network = $1 AND height = $2", NET, H, JSON.stringify({ ...old, txs_results: old.txs_results.map(compact) }));
    await db().$executeRawUnsafe("UPDATE consensus_txs SET exec_result = $3::json WHERE network = $1 AND height = $2 AND tx_index = 0", NET, H, JSON.stringify(compact(before.byHash[0]!.result.tx_result)));
    await db().$executeRawUnsafe("UPDATE consensus_txs SET exec_result = NULL WHERE network = $1 AND height = $2 AND tx_index = 1", NET, H);
    const after = await answers();
    expect(after.byHash.map((a) => a.text)).toEqual(before.byHash.map((a) => a.text));
    expect(after.search.text).toBe(before.search.text);
    expect(after.results.text).toBe(before.results.text);

    // Outside ABCI results, empty fields are left out as the node's encoder does: abci_info has no app_version (0).
    expect(Object.keys((await uri<{ response: object }>("abci_info")).result.response)).toEqual(["data", "version", "last_block_height", "last_block_app_hash"]);
  });

  it("writes block_results' app_hash ([]byte) in base64 and its empty validator_updates as null, as a node reads them from its store; also for rows an older version stored", async () => {
    const H = 13n;
    const uri = async (path: string) => (await fetch(`${base()}/${path}`, { headers: { "X-API-KEY": key } })).text();
    const text = await uri(`block_results?height=${H}`);
    const results = (JSON.parse(text) as Rpc<Record<string, unknown>>).result;
    expect(Object.keys(results)).toEqual(["height", "txs_results", "finalize_block_events", "validator_updates", "consensus_param_updates", "app_hash"]);
    expect(results).toMatchObject({ validator_updates: null, consensus_param_updates: null });
    // The state after the block, which the next header carries as HexBytes: the same bytes.
    const next = (JSON.parse(await uri(`header?height=${H + 1n}`)) as Rpc<{ header: { app_hash: string } }>).result.header.app_hash;
    expect(next).toMatch(/^[0-9A-F]{64}$/);
    expect(results.app_hash).toBe(Buffer.from(next, "hex").toString("base64"));
    // abci_info's last_block_app_hash is []byte too: the same value as the results of its height.
    const info = (JSON.parse(await uri("abci_info")) as Rpc<{ response: { last_block_height: string; last_block_app_hash: string } }>).result.response;
    const latest = (JSON.parse(await uri(`block_results?height=${info.last_block_height}`)) as Rpc<{ app_hash: string }>).result;
    expect(info.last_block_app_hash).toBe(latest.app_hash);

    // As an older version stored the row: the app hash in hex, validator_updates an empty list.
    await db().$executeRawUnsafe("UPDATE consensus_blocks SET results = $3::json WHERE network = $1 AND height = $2", NET, H, JSON.stringify({ ...results, validator_updates: [], app_hash: next }));
    expect(await uri(`block_results?height=${H}`)).toBe(text);
  });

  it("answers CometBFT's error objects for bad params, bad queries and writes on a devnet, never a 500", async () => {
    const one = async (method: string, params: unknown) => (await post({ jsonrpc: "2.0", id: 9, method, params })).json.error;
    expect(await one("block", { height: "abc" })).toMatchObject({ code: -32602, message: "Invalid params", data: expect.stringContaining("error converting json params to arguments") });
    expect(await one("tx", { hash: "not base64!" })).toMatchObject({ code: -32602, message: "Invalid params" });
    expect(await one("block", { height: "999999" })).toEqual({ code: -32603, message: "Internal error", data: expect.stringContaining("must be less than or equal to the current blockchain height") });
    // CometBFT's scanner takes DATE and TIME years 1900-2999 only.
    expect(await one("tx_search", { query: "tx.date >= DATE 0013-01-03" })).toMatchObject({ code: -32603, message: "Internal error", data: expect.stringContaining("year") });
    expect(await one("broadcast_tx_sync", { tx: Buffer.from("hi").toString("base64") })).toMatchObject({ code: -32603, message: "Internal error", data: expect.stringContaining("built-in devnet") });
    expect(await one("validators", { page: "9" })).toMatchObject({ code: -32603, data: "page should be within [1, 1] range, given 9" });
    const notJson = await fetch(base(), { method: "POST", headers: { "X-API-KEY": key }, body: "{" });
    expect(notJson.status).toBe(200);
    expect(((await notJson.json()) as Rpc<unknown>).error).toMatchObject({ code: -32700, message: "Parse error. Invalid JSON" });
    const uri = await fetch(`${base()}/block?height=x`, { headers: { "X-API-KEY": key } });
    expect(uri.status).toBe(200);
    expect(((await uri.json()) as Rpc<unknown>).error).toMatchObject({ code: -32602, message: "Invalid params", data: expect.stringContaining("error converting http params to arguments") });
    expect((await fetch(`${base()}/status`)).status).toBe(401);
  });
});

