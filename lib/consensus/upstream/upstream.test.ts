import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { parseEnv } from "@/lib/env";
import { metricsRegistry } from "@/lib/metrics";
import { buildCatalog, networkBySlug, type Network } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { dataHash, fromBase64, headerHash, txHash, verifyTxProof, verifyVote } from "../crypto";
import { generateBlocks } from "../devnet/producer";
import { chainHead, deleteNetworkIndex, latestHeight } from "../store";
import type { BlockResult, ConsensusParamsResult, NetInfoResult, StatusResult, TxRecord } from "../types";
import { startUpstreamFollower, type FollowerHandle, type FollowerOptions } from "./follower";
import { goTime } from "../native";
import { CometStandIn, toCometBlock, toCometBlockResults } from "./stand-in";

// Not used by the devnet suite (babylon-testnet), which shares this run's database.
const SLUG = "babylon-mainnet";
const CHAIN_ID = "bbn-1";
const NODE_BLOCKS = 120;

let node: CometStandIn;
let network: Network;
let gw: TestGateway;
let key: string;
let follower: FollowerHandle | undefined;
const { logger, messages: logs } = captureLogs();

type Rpc<T> = { jsonrpc: string; id: number; result: T; error?: { code: number; message: string; data: string } };

async function get<T>(path: string): Promise<Rpc<T>> {
  const res = await fetch(`${gw.url}/rpc/${SLUG}/${path}`, { headers: { "X-API-KEY": key } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Rpc<T>;
}

async function ok<T>(path: string): Promise<T> {
  const r = await get<T>(path);
  expect(r.error, `${path}: ${JSON.stringify(r.error)}`).toBeUndefined();
  return r.result;
}

async function rpcError(path: string) {
  const r = await get(path);
  expect(r.result, path).toBeUndefined();
  return r.error!;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${logs.join("\n")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const stored = async () => (await latestHeight(SLUG)) ?? 0n;
/** One metric as GET /metrics writes it (with a newline after its last sample). */
const metric = async (name: string) => `${await metricsRegistry().getSingleMetricAsString(name)}\n`;
const caughtUp = () => waitFor(`the index to reach height ${node.latestHeight}`, async () => (await stored()) === node.latestHeight);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function follow(opts: Partial<FollowerOptions> = {}, of: Network = network): FollowerHandle {
  return startUpstreamFollower(of, { databaseUrl: process.env.DATABASE_URL!, logger, ...opts });
}

/** The index holds exactly the node's blocks from..to: same hashes, every tx, no gap, no duplicate. */
async function expectIndexMatchesNode(from: bigint, to: bigint) {
  const blocks = await db().consensusBlock.findMany({ where: { network: SLUG }, orderBy: { height: "asc" }, select: { height: true, hash: true } });
  expect(blocks.map((b) => b.height)).toEqual(Array.from({ length: Number(to - from) + 1 }, (_, i) => from + BigInt(i)));
  expect(blocks.map((b) => b.hash)).toEqual(blocks.map((b) => node.block(b.height).result.block_id.hash));
  const txs = await db().consensusTx.findMany({ where: { network: SLUG }, orderBy: [{ height: "asc" }, { txIndex: "asc" }], select: { hash: true } });
  expect(txs.map((t) => t.hash)).toEqual(blocks.flatMap((b) => node.block(b.height).txs.map((t) => t.hash)));
}

beforeAll(async () => {
  node = await CometStandIn.start({ chainId: CHAIN_ID, blocks: NODE_BLOCKS });
  // The catalog is read once per process: configure the upstream before anything reads it.
  process.env.UPSTREAM_BABYLON_MAINNET = node.url;
  network = networkBySlug(SLUG)!;
  if (network.source.kind !== "upstream") throw new Error("the network catalog was read before this suite configured UPSTREAM_BABYLON_MAINNET");
  gw = await startTestGateway();
  ({ apiKey: key } = await createTestProject("Upstream", "ENTERPRISE"));
  await deleteNetworkIndex(SLUG);
}, 120_000);

afterAll(async () => {
  await follower?.stop();
  await gw?.stop();
  await node?.stop();
  delete process.env.UPSTREAM_BABYLON_MAINNET;
});

describe("configuration", () => {
  it("reads UPSTREAM_START_HEIGHT as a height and names it when it is not one", () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "blockgate-env-"));
    expect(parseEnv({ DATA_DIR: dataDir, UPSTREAM_START_HEIGHT: " 1234567 " }).UPSTREAM_START_HEIGHT).toBe(1234567n);
    expect(parseEnv({ DATA_DIR: dataDir, UPSTREAM_START_HEIGHT: "" }).UPSTREAM_START_HEIGHT).toBeUndefined();
    for (const bad of ["0", "-5", "12abc", "1e6"]) expect(() => parseEnv({ DATA_DIR: dataDir, UPSTREAM_START_HEIGHT: bad })).toThrow(/UPSTREAM_START_HEIGHT/);
  });
});

describe("an upstream consensus network", () => {
  it("answers status from the node before anything is ingested, as catching up", async () => {
    const s = await ok<StatusResult>("status");
    expect(s.node_info).toMatchObject({ network: CHAIN_ID, id: node.chain.validators[0]!.nodeId, version: "0.38.17", other: { tx_index: "on", rpc_address: expect.any(String) } });
    expect(s.sync_info).toMatchObject({ latest_block_height: String(NODE_BLOCKS), latest_block_hash: node.block(NODE_BLOCKS).result.block_id.hash, earliest_block_height: "0", earliest_block_hash: "", catching_up: true });
    expect(s.validator_info).toEqual({ address: node.chain.validators[0]!.keys.address, pub_key: { type: "tendermint/PubKeyEd25519", value: expect.any(String) }, voting_power: "10" });
    expect(await rpcError("block")).toMatchObject({ code: -32603, message: expect.stringContaining("no blocks yet") });
  });

  it("replaces blocks the devnet stored before, and starts 100 blocks below the node's head", async () => {
    const devnet = buildCatalog({}).find((n) => n.slug === SLUG)!;
    await generateBlocks(devnet, 3, 1);
    expect((await chainHead(SLUG))!.latest.body.block.header.chain_id).toBe(devnet.devnetChainId);
    follower = follow();
    await caughtUp();
    expect(logs.some((l) => l.includes("removing the devnet blocks (chain bbn-devnet-1)"))).toBe(true);
    expect(logs.some((l) => l.includes(`from height ${NODE_BLOCKS - 100} (node at ${NODE_BLOCKS})`))).toBe(true);
    await expectIndexMatchesNode(BigInt(NODE_BLOCKS - 100), BigInt(NODE_BLOCKS));
    const labels = `{follower="index",network="${SLUG}",stream="upstream"}`;
    expect(await metric("blockgate_follower_block")).toContain(`${labels} ${NODE_BLOCKS}\n`);
    expect(await metric("blockgate_follower_blocks_behind")).toContain(`${labels} 0\n`);
    expect(await metric("blockgate_follower_lag_seconds")).toContain(labels);
    expect(await metric("blockgate_upstream_calls_total")).toMatch(new RegExp(`\\{network="${SLUG}",upstream="1",outcome="ok"\\} [1-9]`));
  });

  it("serves the node's blocks in the SPEC shape with the node's hashes and verifiable commits", async () => {
    for (const h of [20, 21, 57, NODE_BLOCKS]) {
      const b = await ok<BlockResult>(`block?height=${h}`);
      // As the node sent it: times in Go's RFC 3339 format (no trailing zeros).
      const sent = node.block(h).result;
      expect(b).toEqual({
        ...sent,
        block: {
          ...sent.block,
          header: { ...sent.block.header, time: goTime(sent.block.header.time) },
          last_commit: { ...sent.block.last_commit, signatures: sent.block.last_commit.signatures.map((s) => ({ ...s, timestamp: goTime(s.timestamp) })) },
        },
      });
      expect(b.block_id.hash).toBe(headerHash(b.block.header));
      expect(b.block.header.data_hash).toBe(dataHash(b.block.data.map(fromBase64)));
      expect(b.block.last_commit.height).toBe(h - 1);
      const previous = h > 20 ? await ok<BlockResult>(`block?height=${h - 1}`) : null;
      for (const s of b.block.last_commit.signatures) {
        expect(s).toEqual({ type: 2, height: String(h - 1), round: 0, block_id: b.block.header.last_block_id, timestamp: expect.any(String), validator_address: expect.stringMatching(/^[0-9A-F]{40}$/), validator_index: expect.any(Number), signature: expect.any(String) });
        const v = node.chain.validators[s.validator_index]!;
        expect(verifyVote(v.keys.publicKey, { type: 2, height: s.height, round: s.round, block_id: s.block_id, timestamp: s.timestamp, chain_id: CHAIN_ID }, s.signature)).toBe(true);
      }
      if (previous) expect(b.block.header.last_block_id).toEqual(previous.block_id);
    }
    expect(await rpcError("block?height=19")).toMatchObject({ code: -32603, message: "height 19 is not available, lowest height is 20" });
  });

  it("finds txs by their events, with results as the node gave them and proofs that verify", async () => {
    const height = [...Array(NODE_BLOCKS - 20).keys()].map((i) => i + 21).find((h) => node.block(h).txs.some((t) => t.result.tags.some((g) => g.key === "message.module")))!;
    const expected = node.block(height);
    const index = expected.txs.findIndex((t) => t.result.tags.some((g) => g.key === "message.module"));
    const tx = expected.txs[index]!;
    const record = await ok<TxRecord>(`tx?hash=${tx.hash}&prove=true`);
    expect(record).toMatchObject({ hash: txHash(tx.raw), height: String(height), index, tx_result: tx.result, tx: Buffer.from(tx.raw).toString("base64") });
    expect(verifyTxProof(record.proof!, tx.raw, expected.result.block.header.data_hash)).toBe(true);

    const sender = tx.result.tags.find((g) => g.key === "message.sender")!.value;
    const bySender = await ok<{ txs: TxRecord[]; total_count: string }>(`tx_search?query=${encodeURIComponent(`message.sender = '${sender}'`)}&per_page=100&prove=true`);
    expect(bySender.txs.map((t) => t.hash)).toContain(tx.hash);
    for (const t of bySender.txs) {
      expect(t.tx_result.tags).toContainEqual({ key: "message.sender", value: sender, index: true });
      expect(verifyTxProof(t.proof!, fromBase64(t.tx), node.block(BigInt(t.height)).result.block.header.data_hash)).toBe(true);
    }
    // Attributes the app did not mark for indexing are kept as tags but are not searchable.
    const moduleTag = tx.result.tags.find((g) => g.key === "message.module")!;
    expect(moduleTag.index).toBe(false);
    expect(await ok(`tx_search?query=${encodeURIComponent(`message.module = '${moduleTag.value}'`)}`)).toEqual({ txs: [], total_count: "0" });

    const epochs = await ok<{ blocks: BlockResult[]; total_count: number }>(`block_search?query=${encodeURIComponent("checkpoint.epoch EXISTS")}&order_by=asc`);
    expect(epochs.blocks.map((b) => b.block.header.height)).toEqual(["20", "30", "40", "50", "60", "70", "80", "90", "100", "110", "120"]);
  });

  it("answers consensus_params and net_info from the node, for heights the index holds", async () => {
    expect(await ok<ConsensusParamsResult>("consensus_params?height=25")).toEqual({
      block_height: "25",
      consensus_params: { block: { max_bytes: "22020096", max_gas: "-1", time_iota_ms: "1000" }, evidence: { max_age: "100000" }, validator: { pub_key_types: ["ed25519"] } },
    });
    expect((await ok<ConsensusParamsResult>("consensus_params")).block_height).toBe(String(await stored()));
    expect(await rpcError("consensus_params?height=5")).toMatchObject({ message: "height 5 is not available, lowest height is 20" });
    const n = await ok<NetInfoResult>("net_info");
    expect(n).toEqual({
      listening: true,
      listeners: ["Listener(@tcp://0.0.0.0:26656)"],
      n_peers: "3",
      peers: node.chain.validators.slice(1).map((v) => ({ node_id: v.nodeId, url: `tcp://${v.nodeId}@10.0.0.${v.index}:26656` })),
    });
  });

  it("reports catching_up while the node does, or while the index is more than a block behind", async () => {
    const status = () => ok<StatusResult>("status");
    await waitFor("status to show the index caught up", async () => (await status()).sync_info.catching_up === false);
    const s = await status();
    expect(s.sync_info).toMatchObject({ latest_block_height: String(NODE_BLOCKS), earliest_block_height: "20", earliest_block_hash: node.block(20).result.block_id.hash, earliest_app_hash: node.block(20).result.block.header.app_hash, earliest_block_time: goTime(node.block(20).result.block.header.time) });
    node.setCatchingUp(true);
    await waitFor("status to report the node catching up", async () => (await status()).sync_info.catching_up);
    node.setCatchingUp(false);
    await waitFor("status to report the node caught up", async () => !(await status()).sync_info.catching_up);

    await follower!.stop();
    node.advance(5);
    await waitFor("status to see the node ahead", async () => (await status()).sync_info.latest_block_height === String(NODE_BLOCKS + 5));
    expect((await status()).sync_info.catching_up).toBe(true);
  });

  it("resumes after a restart from the stored head: no duplicate, no gap", async () => {
    // A start height only applies to an empty index.
    follower = follow({ startHeight: 1n });
    await caughtUp();
    expect(logs.filter((l) => l.includes("following"))).toEqual([expect.stringContaining("from height 20"), expect.stringContaining(`from height ${NODE_BLOCKS + 1} (node at ${NODE_BLOCKS + 5})`)]);
    await expectIndexMatchesNode(20n, node.latestHeight);
    await waitFor("status to show the index caught up", async () => (await ok<StatusResult>("status")).sync_info.catching_up === false);
  });

  it("survives the node failing or going away for a while, logs once per streak, and catches up", async () => {
    const from = logs.length;
    node.fail(true);
    node.advance(6);
    await sleep(2500);
    expect(await stored()).toBe(BigInt(NODE_BLOCKS + 5));
    expect(await metric("blockgate_upstream_up")).toContain(`{network="${SLUG}",upstream="1"} 0\n`);
    expect(await metric("blockgate_upstream_calls_total")).toMatch(new RegExp(`\\{network="${SLUG}",upstream="1",outcome="(bad_answer|unreachable)"\\} [1-9]`));
    expect(await rpcError("status")).toMatchObject({ code: -32603, message: `the upstream node of ${SLUG} is not answering; try again shortly` });
    node.fail(false);
    await caughtUp();

    await node.stop();
    node.advance(3);
    await sleep(2000);
    await node.start();
    await caughtUp();

    const since = logs.slice(from);
    expect(since.filter((l) => l.includes("upstream failed, retrying with backoff"))).toHaveLength(2);
    expect(since.filter((l) => l.includes("recovered after"))).toHaveLength(2);
    await expectIndexMatchesNode(20n, node.latestHeight);
  }, 90_000);

  it("refuses to ingest from a node of another chain", async () => {
    await follower!.stop();
    follower = undefined;
    const other = await CometStandIn.start({ chainId: "bbn-test-5", blocks: NODE_BLOCKS + 40 });
    try {
      const wrong = follow({}, { ...network, source: { kind: "upstream", urls: [other.url] } });
      await waitFor("the follower to refuse the node", async () => logs.some((l) => l.includes("the node serves chain bbn-test-5, not bbn-1")));
      await wrong.stop();
    } finally {
      await other.stop();
    }
    await expectIndexMatchesNode(20n, node.latestHeight);
  });
});

describe("the native CometBFT interface (/cometbft) on an upstream network", () => {
  const base = () => `${gw.url}/cometbft/${SLUG}`;

  it("answers blocks and results with the JSON the node sent, byte for byte", async () => {
    for (const h of [21, 57]) {
      const res = await fetch(`${base()}/${key}/block?height=${h}`);
      expect(await res.text()).toBe(`{"jsonrpc":"2.0","id":-1,"result":${JSON.stringify(toCometBlock(node.block(h)))}}`);
      const results = await fetch(`${base()}/block_results?height=${h}`, { headers: { "X-API-KEY": key } });
      expect(await results.text()).toBe(`{"jsonrpc":"2.0","id":-1,"result":${JSON.stringify(toCometBlockResults(node.block(h)))}}`);
    }
  });

  it("serves cosmjs's Comet38Client from the index and the node", async () => {
    const { Comet38Client, HttpClient } = await import("@cosmjs/tendermint-rpc");
    for (const client of [await Comet38Client.connect(`${base()}/${key}`), Comet38Client.create(new HttpClient({ url: base(), headers: { "X-API-KEY": key } }))]) {
      const status = await client.status();
      expect(status.nodeInfo.network).toBe(CHAIN_ID);
      expect(status.syncInfo.earliestBlockHeight).toBe(20);
      expect(await client.health()).toBeNull();
      const h = [...Array(30).keys()].map((i) => i + 30).find((x) => node.block(x).txs.length > 1)!;
      const expected = node.block(h);
      const block = await client.block(h);
      expect(Buffer.from(block.blockId.hash).toString("hex").toUpperCase()).toBe(expected.result.block_id.hash);
      expect(block.block.txs).toHaveLength(expected.txs.length);
      const results = await client.blockResults(h);
      expect(results.results.map((r) => r.gasUsed)).toEqual(expected.txs.map((t) => BigInt(t.result.gas_used)));
      const tx = await client.tx({ hash: Buffer.from(expected.txs[1]!.hash, "hex") });
      expect(tx).toMatchObject({ height: h, index: 1 });
      const search = await client.txSearch({ query: `tx.height = ${h}` });
      expect(search.txs.map((t) => Buffer.from(t.hash).toString("hex").toUpperCase())).toEqual(expected.txs.map((t) => t.hash));
      const blocks = await client.blockSearch({ query: "checkpoint.epoch EXISTS AND block.height <= 40", order_by: "asc" });
      expect(blocks.blocks.map((b) => b.block.header.height)).toEqual([20, 30, 40]);
      const validators = await client.validators({ height: h });
      expect(validators.validators.map((v) => Buffer.from(v.address).toString("hex").toUpperCase())).toEqual(node.chain.validators.map((v) => v.keys.address));
      const commit = await client.commit(h);
      expect(commit.canonical).toBe(true);
      expect(commit.commit.signatures.map((s) => Buffer.from(s.signature!).toString("base64"))).toEqual(node.block(h + 1).result.block.last_commit.signatures.map((s) => s.signature));
      const chain = await client.blockchain(30, 35);
      expect(chain.blockMetas.map((m) => m.header.height)).toEqual([35, 34, 33, 32, 31, 30]);
      expect((await client.genesis()).chainId).toBe(CHAIN_ID);
      expect((await client.abciInfo()).lastBlockHeight).toBe(Number(node.latestHeight));
      client.disconnect();
    }
  });

  it("forwards writes and ABCI queries to the node", async () => {
    const { Comet38Client } = await import("@cosmjs/tendermint-rpc");
    const client = await Comet38Client.connect(`${base()}/${key}`);
    const tx = Buffer.from("a signed tx");
    const sent = await client.broadcastTxSync({ tx });
    expect(Buffer.from(sent.hash).toString("hex").toUpperCase()).toBe(txHash(tx));
    const query = await client.abciQuery({ path: "/store/bank/key", data: Buffer.from("k") });
    expect(Buffer.from(query.value).toString()).toBe("stand-in:/store/bank/key");
    expect(node.received.map((r) => [r.method, r.params])).toEqual([
      ["broadcast_tx_sync", { tx: tx.toString("base64") }],
      ["abci_query", { path: "/store/bank/key", data: "6B" }],
    ]);
    client.disconnect();
  });
});
