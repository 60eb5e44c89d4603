import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { networkBySlug, type Network } from "@/lib/networks";
import { addTestNetworks, createTestProject, startTestGateway, waitForStoredHeight, type TestGateway } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { connectSocket } from "@/lib/testing/socket";
import { txHash, utf8 } from "../crypto";
import { realBlock, realResults, txs } from "./fixtures";
import { deleteNetworkIndex } from "../store";
import { startUpstreamFollower, type FollowerHandle } from "./follower";
import { CometStandIn } from "./stand-in";

/**
 * The JSON of a real CometBFT v0.38 node (fixtures.ts: nanosecond times, evidence, an absent
 * validator, a vote for nil, ABCI results with their default fields and one without, an unknown
 * future field) goes through the follower into the store and comes back unchanged from /cometbft;
 * what the node answers to writes and queries is passed on unchanged too.
 */

let gw: TestGateway;
let key: string;
let node: CometStandIn;
let follower: FollowerHandle;
let net: Network;
const { logger, messages: logs } = captureLogs();

const block101 = realBlock();
const results101 = realResults();
const thirdTx = utf8("third tx");
const block102 = realBlock({ height: 102, txs: [thirdTx] });
const results102 = realResults({
  height: "102",
  txs_results: [{ code: 0, data: "CgA=", log: "[]", info: "", gas_wanted: "90000", gas_used: "51000", events: [{ type: "message", attributes: [{ key: "action", value: "/cosmos.staking.v1beta1.MsgDelegate", index: true }] }], codespace: "" }],
});
/** Committed while a WebSocket client listens. */
const block103 = realBlock({ height: 103, txs: [utf8("fourth tx"), utf8("fifth tx")] });
const results103 = realResults({ height: "103" });

type Rpc<T = unknown> = { jsonrpc: string; id: number; result: T; error?: unknown };

beforeAll(async () => {
  // 100 blocks of the stand-in's chain, then the two recorded ones.
  node = await CometStandIn.start({ chainId: "bbn-1", blocks: 100 });
  node.appendRecorded(block101, results101);
  node.appendRecorded(block102, results102);
  const mainnet = networkBySlug("babylon-mainnet")!;
  net = { ...mainnet, slug: `roundtrip-${randomBytes(3).toString("hex")}`, source: { kind: "upstream", urls: [node.url] }, activeChainId: mainnet.chainId };
  addTestNetworks(net);
  gw = await startTestGateway();
  ({ apiKey: key } = await createTestProject("Round trip", "ENTERPRISE"));
  follower = startUpstreamFollower(net, { databaseUrl: process.env.DATABASE_URL!, logger, startHeight: 101n, pollMs: 100 });
  await waitForStoredHeight(net.slug, 102n, "the follower to ingest the recorded blocks", { detail: () => logs.join("\n") });
}, 120_000);

afterAll(async () => {
  await follower?.stop();
  await gw?.stop();
  await node?.stop();
  if (net) await deleteNetworkIndex(net.slug);
});

const url = (path: string) => `${gw.url}/cometbft/${net.slug}/${key}/${path}`;
const text = async (path: string) => {
  const res = await fetch(url(path));
  expect(res.status, path).toBe(200);
  return res.text();
};
const result = async <T>(path: string): Promise<T> => {
  const body = JSON.parse(await text(path)) as Rpc<T>;
  expect(body.error, path).toBeUndefined();
  return body.result;
};
const uriAnswer = (value: unknown) => `{"jsonrpc":"2.0","id":-1,"result":${JSON.stringify(value)}}`;

describe("a real node's JSON through the store", () => {
  it("was ingested without a warning", () => {
    expect(logs.filter((l) => /warn|error/i.test(l) && l.includes("block 10"))).toEqual([]);
  });

  it("answers /block, /block_by_hash and /block_results byte for byte as the node sent them", async () => {
    for (const [height, block, results] of [[101, block101, results101], [102, block102, results102]] as const) {
      expect(await text(`block?height=${height}`)).toBe(uriAnswer(block));
      expect(await text(`block_by_hash?hash=0x${block.block_id.hash}`)).toBe(uriAnswer(block));
      expect(await text(`block_results?height=${height}`)).toBe(uriAnswer(results));
    }
    // The JSON-RPC form answers the same result.
    const res = await fetch(`${gw.url}/cometbft/${net.slug}`, { method: "POST", headers: { "X-API-KEY": key }, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "block_results", params: { height: "101" } }) });
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 7, result: results101 });
  });

  it("answers /header and /commit field by field: nanosecond times, the future field, absent and nil signatures", async () => {
    const header = await result<{ header: unknown }>("header?height=101");
    expect(header).toEqual({ header: block101.block.header });
    expect(await result("header_by_hash?hash=0x" + block101.block_id.hash)).toEqual({ header: block101.block.header });
    // The commit of 101 is the last_commit of 102.
    const commit = await result<{ signed_header: { header: unknown; commit: { signatures: unknown[] } }; canonical: boolean }>("commit?height=101");
    expect(commit).toEqual({ signed_header: { header: block101.block.header, commit: block102.block.last_commit }, canonical: true });
    expect(commit.signed_header.commit.signatures).toEqual([
      { block_id_flag: 2, validator_address: "7".repeat(40), timestamp: "2025-03-04T05:06:06.1Z", signature: "c2lnLTA=" },
      { block_id_flag: 1, validator_address: "", timestamp: "0001-01-01T00:00:00Z", signature: null },
      { block_id_flag: 3, validator_address: "8".repeat(40), timestamp: "2025-03-04T05:06:06.2Z", signature: "c2lnLTI=" },
    ]);
    expect((header.header as { time: string }).time).toBe("2025-03-04T05:06:07.123456789Z");
    expect(header.header).toHaveProperty("extra_field_of_a_future_version", "ignored");
  });

  it("answers /tx and /tx_search with the node's ExecTxResult as sent (every field, or as another writer left it)", async () => {
    for (const [i, raw] of txs.entries()) {
      const tx = await result<{ hash: string; height: string; index: number; tx_result: unknown; tx: string }>(`tx?hash=0x${txHash(raw)}`);
      expect(tx).toEqual({ hash: txHash(raw), height: "101", index: i, tx_result: (results101.txs_results as unknown[])[i], tx: Buffer.from(raw).toString("base64") });
    }
    const found = await result<{ txs: Array<{ tx_result: unknown }>; total_count: string }>(`tx_search?query=${encodeURIComponent('"tx.height = 102"')}`);
    expect(found).toEqual({ txs: [{ hash: txHash(thirdTx), height: "102", index: 0, tx_result: (results102.txs_results as unknown[])[0], tx: Buffer.from(thirdTx).toString("base64") }], total_count: "1" });
  });
});

describe("what /cometbft builds or forwards from the node's answers", () => {
  it("forwards check_tx, broadcast_tx_commit and abci_query, answering the node's result as it sent it", async () => {
    const tx = Buffer.from("a signed tx").toString("base64");
    const calls: Array<[string, Record<string, string>]> = [["check_tx", { tx }], ["broadcast_tx_commit", { tx }], ["abci_query", { path: "/store/bank/key", data: "6B" }]];
    for (const [method, params] of calls) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 3, method, params });
      const fromNode = await (await fetch(node.url, { method: "POST", body })).text();
      const ours = await fetch(`${gw.url}/cometbft/${net.slug}/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
      expect(await ours.text(), method).toBe(fromNode);
    }
  });

  it("sends a Tx event's result without its empty fields, attributes with index; NewBlock with the node's tx results and NewBlockEvents with its block events as sent", async () => {
    const c = await connectSocket(`${gw.url.replace(/^http/, "ws")}/cometbft/${net.slug}/${key}/websocket`);
    try {
      expect((await c.call("t", "subscribe", { query: "tm.event='Tx'" })).result).toEqual({});
      expect((await c.call("b", "subscribe", { query: "tm.event='NewBlock'" })).result).toEqual({});
      expect((await c.call("e", "subscribe", { query: "tm.event='NewBlockEvents'" })).result).toEqual({});
      node.appendRecorded(block103, results103);
      await c.until("the events of block 103", () => c.events("t").length === 2 && c.events("b").length === 1 && c.events("e").length === 1);
      const results = c.events("t").map((m) => (m.result!.data!.value.TxResult as { result: Record<string, unknown> }).result);
      const [ok, failed] = results103.txs_results as Array<Record<string, unknown>>;
      // Written by CometBFT's encoder with its omitempty tags: code 0 and the empty log, info and codespace left out.
      expect(Object.keys(results[0]!)).toEqual(["data", "gas_wanted", "gas_used", "events"]);
      expect(results[0]).toEqual({ data: ok!.data, gas_wanted: ok!.gas_wanted, gas_used: ok!.gas_used, events: ok!.events });
      expect((results[0]!.events as Array<{ attributes: unknown[] }>)[1]!.attributes).toEqual([
        { key: "action", value: "/cosmos.bank.v1beta1.MsgSend", index: true },
        { key: "module", value: "bank", index: false },
      ]);
      // In the field order of the proto, whatever order the node's block_results had.
      expect(results[1]).toEqual({ code: 5, log: "insufficient funds", gas_wanted: "100000", gas_used: "40000", codespace: "sdk" });
      expect(Object.keys(results[1]!)).toEqual(["code", "log", "gas_wanted", "gas_used", "codespace"]);
      expect(failed).toHaveProperty("events", null);
      const block = c.events("b")[0]!.result!.data!.value as { result_finalize_block: { tx_results: unknown[] } };
      expect(JSON.stringify(block.result_finalize_block.tx_results)).toBe(JSON.stringify(results103.txs_results));
      const blockEvents = c.events("e")[0]!.result!;
      expect(blockEvents.data!.type).toBe("tendermint/event/NewBlockEvents");
      expect(JSON.stringify(blockEvents.data!.value)).toBe(`{"height":"103","events":${JSON.stringify(results103.finalize_block_events)},"num_txs":"2"}`);
      expect(blockEvents.events).toEqual({ "mint.amount": ["1000ubbn"], "mint.mode": ["BeginBlock"], "commission.validator": ["bbnvaloper1x"], "tm.event": ["NewBlockEvents"] });
    } finally {
      c.ws.close();
    }
  });
});

describe("text a node may send that PostgreSQL text cannot hold", () => {
  // Go strings may hold NUL (encoding/json writes \u0000); a lone \ud800 comes from no Go encoder
  // but is valid JSON. Beside them: a value spelled with U+FFFD, and one too long for an index
  // entry in UTF-8 (incompressible, so PostgreSQL cannot shrink it under the B-tree's 2,704 bytes).
  const unindexable = Array.from({ length: 2000 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join("");
  const txs105 = [utf8("sixth tx"), utf8("seventh tx")];
  const block105 = realBlock({ height: 105, txs: txs105 });
  const exec = (attributes: Array<{ key: string; value: string; index: boolean }>) => ({ code: 0, data: null, log: "", info: "", gas_wanted: "1", gas_used: "1", events: [{ type: "transfer", attributes }], codespace: "" });
  const results105 = {
    ...realResults({
      height: "105",
      txs_results: [
        exec([
          { key: "memo", value: "a\u0000b", index: true },
          { key: "note", value: "x\ud800y", index: true },
          { key: "sender\u0000", value: "bbn1nul", index: true },
          { key: "long", value: unindexable, index: true },
        ]),
        exec([
          { key: "memo", value: "a", index: true },
          { key: "note", value: "x\uFFFDy", index: true },
        ]),
      ],
    }),
    finalize_block_events: [{ type: "mint", attributes: [{ key: "memo", value: "b\u0000", index: true }] }],
  };
  const rpc = async <T>(method: string, params: Record<string, string>): Promise<T> => {
    const res = await fetch(`${gw.url}/rpc/${net.slug}`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    expect(res.status, params.query).toBe(200);
    const body = (await res.json()) as Rpc<T>;
    expect(body.error, params.query).toBeUndefined();
    return body.result;
  };
  const found = async (query: string) => (await rpc<{ txs: Array<{ hash: string }> }>("tx_search", { query })).txs.map((t) => t.hash);

  beforeAll(async () => {
    // Block 104 first: the recorded blocks must link.
    node.appendRecorded(realBlock({ height: 104, txs: [] }), realResults({ height: "104", txs_results: [] }));
    node.appendRecorded(block105, results105);
    await waitForStoredHeight(net.slug, 105n, "the follower to store the block holding NUL and unpaired surrogates", { detail: () => logs.join("\n") });
  });

  it("is stored and served as the node sent it: /cometbft byte for byte, /rpc with the same strings", async () => {
    expect(await text("block_results?height=105")).toBe(uriAnswer(results105));
    const [first, second] = txs105.map(txHash);
    const tx = await fetch(`${gw.url}/rpc/${net.slug}/tx?hash=${first}`, { headers: { "X-API-KEY": key } });
    const body = await tx.text();
    expect(body).toContain(JSON.stringify({ key: "transfer.memo", value: "a\u0000b", index: true }));
    expect(body).toContain('"value":"x\\ud800y"');
    expect(await found("tx.height = 105")).toEqual([first, second]);
  });

  it("finds it by those values: the index and the query's operand both hold U+FFFD where text cannot hold what was sent", async () => {
    const [first, second] = txs105.map(txHash);
    expect(await found("transfer.memo = 'a\u0000b'")).toEqual([first]);
    expect(await found("transfer.memo CONTAINS '\u0000'")).toEqual([first]);
    expect(await found("transfer.memo = 'a'")).toEqual([second]);
    // A lone surrogate and U+FFFD read alike, as PostgreSQL would store them.
    expect(await found("transfer.note = 'x\ud800y'")).toEqual([first, second]);
    expect(await found("transfer.note = 'x\uFFFDy' AND transfer.memo = 'a'")).toEqual([second]);
    expect(await found("transfer.long EXISTS")).toEqual([]);
    const blocks = await rpc<{ blocks: Array<{ block: { header: { height: string } } }> }>("block_search", { query: "mint.memo = 'b\u0000'" });
    expect(blocks.blocks.map((b) => b.block.header.height)).toEqual(["105"]);
  });
});
