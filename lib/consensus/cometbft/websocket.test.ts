import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { networkBySlug, type Network } from "@/lib/networks";
import { startHttpServer } from "@/lib/server";
import { addTestNetworks, createTestProject, startTestGateway, waitForStoredHeight, type TestGateway } from "@/lib/testing/harness";
import { connectSocket, refusedUpgrade, type SocketMessage } from "@/lib/testing/socket";
import { generateBlocks, startDevnetProducer, type ProducerHandle } from "../devnet/producer";
import { deleteNetworkIndex, nativeBlock, storedRange } from "../store";
import { freePort } from "@/lib/testing/ports";
import { SLOW_CLIENT_REASON, SOCKET_LIMITS } from "./websocket";

let gw: TestGateway;
let key: string;
let producer: ProducerHandle;

/** A consensus network of this suite alone (the catalog's networks are shared with other suites' blocks). */
function testNetwork(tag: string): Network {
  const base = networkBySlug("babylon-testnet")!;
  return { ...base, slug: `cometws-${tag}-${randomBytes(3).toString("hex")}` };
}
const live = testNetwork("live");
const bulk = testNetwork("bulk");

const wsBase = (net: Network) => `${gw.url.replace(/^http/, "ws")}/cometbft/${net.slug}`;

beforeAll(async () => {
  gw = await startTestGateway();
  addTestNetworks(live, bulk);
  ({ apiKey: key } = await createTestProject("CometBFT WebSocket", "ENTERPRISE"));
  producer = startDevnetProducer(live, { databaseUrl: process.env.DATABASE_URL!, blockTimeMs: 150 });
}, 120_000);

afterAll(async () => {
  await producer?.stop();
  await deleteNetworkIndex(live.slug);
  await deleteNetworkIndex(bulk.slug);
  await gw?.stop();
});

describe("cosmjs's Comet38Client over the WebSocket (key in the path)", () => {
  it("receives live NewBlock and Tx events equal to the stored blocks, and reads over the same socket", async () => {
    const { Comet38Client, WebsocketClient } = await import("@cosmjs/tendermint-rpc");
    const socket = new WebsocketClient(`${wsBase(live)}/${key}`);
    const client = Comet38Client.create(socket);
    try {
      const blocks = await new Promise<Array<Awaited<ReturnType<typeof client.block>>["block"]>>((resolve, reject) => {
        const got: Array<Awaited<ReturnType<typeof client.block>>["block"]> = [];
        const sub = client.subscribeNewBlock().subscribe({
          next: (b) => {
            got.push(b);
            if (got.length === 3) {
              sub.unsubscribe();
              resolve(got);
            }
          },
          error: reject,
        });
      });
      for (let i = 1; i < blocks.length; i++) expect(blocks[i]!.header.height).toBe(blocks[i - 1]!.header.height + 1);
      for (const b of blocks) {
        // The same block read back over the socket (the /block method) and from the store.
        const read = await client.block(b.header.height);
        expect(b).toEqual(read.block);
        const stored = JSON.parse((await nativeBlock(live.slug, { height: BigInt(b.header.height) }))!.text) as { block: { header: { app_hash: string; time: string }; data: { txs: string[] } } };
        expect(Buffer.from(b.header.appHash).toString("hex").toUpperCase()).toBe(stored.block.header.app_hash);
        expect(b.txs.map((t) => Buffer.from(t).toString("base64"))).toEqual(stored.block.data.txs);
      }

      const txs = await new Promise<Array<{ height: number; hash: Uint8Array; tx: Uint8Array; result: { code: number; events: readonly { type: string; attributes: readonly { key: string; value: string }[] }[] } }>>((resolve, reject) => {
        const got: Array<{ height: number; hash: Uint8Array; tx: Uint8Array; result: { code: number; events: readonly { type: string; attributes: readonly { key: string; value: string }[] }[] } }> = [];
        const sub = client.subscribeTx("tm.event='Tx' AND message.action='send' AND transfer.amount >= 1").subscribe({
          next: (t) => {
            got.push(t);
            if (got.length === 3) {
              sub.unsubscribe();
              resolve(got);
            }
          },
          error: reject,
        });
      });
      for (const t of txs) {
        const read = await client.tx({ hash: t.hash });
        expect(read.height).toBe(t.height);
        expect(Buffer.from(read.tx)).toEqual(Buffer.from(t.tx));
        expect(t.result.code).toBe(0);
        expect(t.result.events).toEqual(read.result.events);
        const action = t.result.events.find((e) => e.type === "message")!.attributes.find((a) => a.key === "action");
        expect(action?.value).toBe("send");
      }
    } finally {
      socket.disconnect();
    }
  });
});

describe("the events in CometBFT's JSON", () => {
  it("NewBlock, NewBlockHeader, NewBlockEvents and Tx carry the node's data and events map; unsubscribe stops them", async () => {
    const c = await connectSocket(`${wsBase(live)}/websocket`, { "X-API-KEY": key });
    try {
      // Tx last: the block of the first Tx event reached every subscription.
      expect((await c.call("b", "subscribe", { query: "tm.event='NewBlock'" })).result).toEqual({});
      expect((await c.call("h", "subscribe", { query: "tm.event = 'NewBlockHeader'" })).result).toEqual({});
      expect((await c.call("e", "subscribe", { query: "tm.event='NewBlockEvents'" })).result).toEqual({});
      expect((await c.call("m", "subscribe", { query: "mint.amount EXISTS" })).result).toEqual({});
      expect((await c.call("t", "subscribe", { query: "tm.event='Tx'" })).result).toEqual({});
      type Attr = { key: string; value: string; index?: boolean };
      type Exec = { code?: number; log?: string; gas_wanted?: string; gas_used?: string; events: Array<{ type: string; attributes: Attr[] }> };
      const txOf = (m: SocketMessage) => m.result!.data!.value.TxResult as { height: string; index?: number; tx: string; result: Exec };
      // A tx with an attribute that is not indexed (message.module of a send or a delegation).
      const withUnindexed = (m: SocketMessage) => m.id === "t" && m.result?.query !== undefined && txOf(m).result.events.some((e) => e.type === "message" && e.attributes.some((a) => a.key === "module"));
      await c.until("a block with a tx", () => c.messages.some(withUnindexed));
      const tx = c.messages.find(withUnindexed)!.result!;
      expect(tx.query).toBe("tm.event='Tx'");
      expect(tx.data!.type).toBe("tendermint/event/Tx");
      const txResult = txOf(c.messages.find(withUnindexed)!);
      const height = BigInt(txResult.height);
      expect(tx.events!["tm.event"]).toEqual(["Tx"]);
      expect(tx.events!["tx.height"]).toEqual([txResult.height]);
      expect(tx.events!["tx.hash"]![0]).toMatch(/^[0-9A-F]{64}$/);
      expect(tx.events!["message.action"]!.length).toBeGreaterThan(0);
      const [row] = await db().$queryRawUnsafe<Array<{ exec: string; raw: Uint8Array }>>(
        "SELECT exec_result::text AS exec, raw FROM consensus_txs WHERE network = $1 AND height = $2 AND tx_index = $3",
        live.slug,
        height,
        txResult.index ?? 0,
      );
      // As a node's event bus writes it: the result without its empty fields (code 0, data, info,
      // codespace), while every attribute keeps all of its fields, index false included.
      const storedExec = JSON.parse(row!.exec) as Exec;
      expect(Object.keys(txResult.result)).toEqual(["log", "gas_wanted", "gas_used", "events"]);
      expect(txResult.result).toEqual({ log: storedExec.log, gas_wanted: storedExec.gas_wanted, gas_used: storedExec.gas_used, events: storedExec.events });
      const attributes = txResult.result.events.flatMap((e) => e.attributes);
      for (const a of attributes) expect(Object.keys(a)).toEqual(["key", "value", "index"]);
      expect(attributes.find((a) => a.key === "module")!.index).toBe(false);
      expect(txResult.tx).toBe(Buffer.from(row!.raw).toString("base64"));

      await c.until("the NewBlock of that height", () => c.messages.some((m) => m.id === "b" && m.result?.data?.value && (m.result.data.value.block as { header: { height: string } }).header.height === txResult.height));
      const nb = c.messages.find((m) => m.id === "b" && (m.result?.data?.value?.block as { header: { height: string } } | undefined)?.header.height === txResult.height)!.result!;
      expect(nb.data!.type).toBe("tendermint/event/NewBlock");
      const stored = JSON.parse((await nativeBlock(live.slug, { height }))!.text) as { block: unknown; block_id: unknown };
      expect(nb.data!.value.block).toEqual(stored.block);
      expect(nb.data!.value.block_id).toEqual(stored.block_id);
      const results = (await c.call("r", "block_results", { height: txResult.height })).result as unknown as { txs_results: object[]; finalize_block_events: unknown[]; app_hash: string };
      expect(nb.data!.value.result_finalize_block).toMatchObject({ tx_results: results.txs_results, events: results.finalize_block_events, app_hash: results.app_hash });
      // Its tx results are reached through pointers, so the node writes them with every field, as block_results does.
      for (const r of (nb.data!.value.result_finalize_block as { tx_results: object[] }).tx_results) {
        expect(Object.keys(r)).toEqual(["code", "data", "log", "info", "gas_wanted", "gas_used", "events", "codespace"]);
      }
      expect(nb.events!["tm.event"]).toEqual(["NewBlock"]);
      expect(nb.events!["mint.amount"]!.length).toBe(1);
      const header = c.messages.find((m) => m.id === "h" && m.result?.query)!.result!;
      expect(header.data!.type).toBe("tendermint/event/NewBlockHeader");
      expect(header.events).toEqual({ "tm.event": ["NewBlockHeader"] });

      // NewBlockEvents: the block's events (as block_results writes them) and its number of txs, int64s as strings.
      const blockEvents = c.events("e").find((m) => m.result!.data!.value.height === txResult.height)!.result!;
      expect(blockEvents.data!.type).toBe("tendermint/event/NewBlockEvents");
      expect(Object.keys(blockEvents.data!.value)).toEqual(["height", "events", "num_txs"]);
      expect(blockEvents.data!.value).toEqual({ height: txResult.height, events: results.finalize_block_events, num_txs: String((stored.block as { data: { txs: string[] } }).data.txs.length) });
      expect(blockEvents.events).toEqual({ ...nb.events, "tm.event": ["NewBlockEvents"] });
      // A query of the block's events without tm.event holds for both events that carry them, NewBlock first.
      const heightOf = (m: SocketMessage) => (m.result!.data!.value.height ?? (m.result!.data!.value.block as { header: { height: string } }).header.height) as string;
      expect(c.events("m").filter((m) => heightOf(m) === txResult.height).map((m) => m.result!.data!.type)).toEqual(["tendermint/event/NewBlock", "tendermint/event/NewBlockEvents"]);

      // Unsubscribed: no NewBlockHeader event after the answer, while NewBlock events go on.
      expect((await c.call("u", "unsubscribe", { query: "tm.event = 'NewBlockHeader'" })).result).toEqual({});
      const after = c.messages.length;
      await c.until("two more blocks", () => c.messages.slice(after).filter((m) => m.id === "b").length >= 2);
      expect(c.messages.slice(after).filter((m) => m.id === "h")).toEqual([]);
      expect((await c.call("u2", "unsubscribe", { query: "tm.event = 'NewBlockHeader'" })).error).toEqual({ code: -32603, message: "Internal error", data: "subscription not found" });
      expect((await c.call("ua", "unsubscribe_all")).result).toEqual({});
      const afterAll = c.messages.length;
      expect((await c.call("s", "status")).result).toMatchObject({ node_info: { network: "bbn-devnet-2" } });
      const at = (await storedRange(live.slug))!.latest;
      await waitForStoredHeight(live.slug, at + 2n, "two more devnet blocks");
      expect(c.messages.slice(afterAll).filter((m) => m.result?.query)).toEqual([]);
    } finally {
      c.ws.close();
    }
  });

  it("meters subscribe as a call and each delivered event at 1 CU on the usage rows", async () => {
    const own = await createTestProject("CometBFT WS metering", "ENTERPRISE");
    const c = await connectSocket(`${wsBase(live)}/${own.apiKey}/websocket`);
    try {
      await c.call(1, "subscribe", { query: "tm.event='NewBlockHeader'" });
      await c.call(3, "subscribe", { query: "tm.event='NewBlockEvents'" });
      await c.until("three events of each", () => c.events(1).length >= 3 && c.events(3).length >= 3);
      await c.call(2, "unsubscribe_all");
      const delivered = c.events(1).length;
      await gw.meter.flush();
      const rows = await db().usageBucket.groupBy({ by: ["endpoint"], where: { projectId: own.projectId }, _sum: { cu: true, requests: true } });
      const by = Object.fromEntries(rows.map((r) => [r.endpoint, { cu: Number(r._sum.cu), requests: r._sum.requests }]));
      expect(by["subscribe"]).toEqual({ cu: 20, requests: 2 });
      expect(by["event:NewBlockHeader"]).toEqual({ cu: delivered, requests: delivered });
      expect(by["event:NewBlockEvents"]).toEqual({ cu: c.events(3).length, requests: c.events(3).length });
      expect(by["unsubscribe_all"]).toEqual({ cu: 0, requests: 1 });
    } finally {
      c.ws.close();
    }
  });
});

describe("a server that stops", () => {
  it("closes open connections with 1001 (Going Away) and its reason instead of cutting them off", async () => {
    const server = await startHttpServer({ host: "127.0.0.1", port: await freePort(), meter: gw.meter });
    const c = await connectSocket(`${server.url.replace(/^http/, "ws")}/cometbft/${live.slug}/${key}/websocket`);
    expect(await c.call(1, "subscribe", { query: "tm.event='NewBlock'" })).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    await server.close();
    expect(await c.closed).toEqual({ code: 1001, reason: "server shutting down" });
  });
});

describe("limits", () => {
  it("refuses the upgrade with 401 for a bad or missing key, and 404 for an unknown network", async () => {
    const bad = await refusedUpgrade(`${wsBase(live)}/not-a-key/websocket`);
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe("AUTHENTICATION_FAILED");
    const missing = await refusedUpgrade(`${wsBase(live)}/websocket`);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe("NO_AUTHENTICATION_FOUND");
    const unknown = await refusedUpgrade(`${gw.url.replace(/^http/, "ws")}/cometbft/no-such-net/${key}/websocket`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("NOT_SUPPORTED_CHAIN");
  });

  it("answers a 6th subscription on one connection with CometBFT's error", async () => {
    const c = await connectSocket(`${wsBase(live)}/${key}/websocket`);
    try {
      for (let i = 0; i < SOCKET_LIMITS.subscriptionsPerConnection; i++) {
        expect((await c.call(i, "subscribe", { query: `tm.event='Tx' AND tx.height > ${i}` })).result).toEqual({});
      }
      expect((await c.call("dup", "subscribe", { query: "tm.event='Tx' AND tx.height > 0" })).error).toEqual({ code: -32603, message: "Internal error", data: "already subscribed" });
      expect((await c.call("six", "subscribe", { query: "tm.event='NewBlock'" })).error).toEqual({ code: -32603, message: "Internal error", data: "max_subscriptions_per_client 5 reached" });
      const bad = await c.call("bad", "subscribe", { query: "tm.event=" });
      expect(bad.error).toMatchObject({ code: -32603, message: "Internal error", data: expect.stringContaining("failed to parse query: parse error at offset 9") });
      expect((await c.call("none", "subscribe", {})).error).toMatchObject({ code: -32602, message: "Invalid params" });
    } finally {
      c.ws.close();
    }
  });

  it("refuses a key's connection past its limit with 429, and closes a connection on an oversized message with 1009", async () => {
    const own = await createTestProject("CometBFT WS connections", "ENTERPRISE");
    const limit = SOCKET_LIMITS.connectionsPerKey;
    SOCKET_LIMITS.connectionsPerKey = 2;
    const open = [await connectSocket(`${wsBase(live)}/${own.apiKey}/websocket`), await connectSocket(`${wsBase(live)}/${own.apiKey}/websocket`)];
    try {
      const third = await refusedUpgrade(`${wsBase(live)}/${own.apiKey}/websocket`);
      expect(third.status).toBe(429);
      expect(third.body.code).toBe("TOO_MANY_REQUESTS");
      const closed = new Promise<number>((resolve) => open[0]!.ws.once("close", (code) => resolve(code)));
      open[0]!.ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "status", params: { pad: "x".repeat(SOCKET_LIMITS.maxMessageBytes) } }));
      expect(await closed).toBe(1009);
    } finally {
      SOCKET_LIMITS.connectionsPerKey = limit;
      for (const c of open) c.ws.close();
    }
  });

  it("drops a subscriber that does not read its events with CometBFT's error", async () => {
    const c = await connectSocket(`${wsBase(bulk)}/${key}/websocket`);
    const limit = SOCKET_LIMITS.sendBufferBytes;
    SOCKET_LIMITS.sendBufferBytes = 64 * 1024;
    try {
      expect((await c.call("slow", "subscribe", { query: "tm.event='Tx'" })).result).toEqual({});
      const dropped = () => c.messages.some((m) => m.id === "slow" && m.error);
      // The client stops reading: what the server sends piles up in the kernel, then in its send buffer.
      for (let round = 0; round < 8 && !dropped(); round++) {
        const tcp = (c.ws as unknown as { _socket: Socket })._socket;
        tcp.pause();
        await generateBlocks(bulk, 200, 20);
        // Let the events of the stored blocks be sent before reading again.
        await new Promise((resolve) => setTimeout(resolve, 500));
        tcp.resume();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const error = c.messages.find((m) => m.id === "slow" && m.error)!;
      expect(error).toEqual({ jsonrpc: "2.0", id: "slow", error: { code: -32000, message: "Server error", data: `subscription was canceled (reason: ${SLOW_CLIENT_REASON})` } });
      // The connection stays; the subscription is gone and may be taken again.
      expect((await c.call("again", "subscribe", { query: "tm.event='Tx'" })).result).toEqual({});
    } finally {
      SOCKET_LIMITS.sendBufferBytes = limit;
      c.ws.close();
    }
  }, 120_000);
});
