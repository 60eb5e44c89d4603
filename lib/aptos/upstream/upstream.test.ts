import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Aptos, AptosConfig, Network as SdkNetwork } from "@aptos-labs/ts-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { buildCatalog, networkBySlug, type Network } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { UsageMeter } from "@/lib/usage/meter";
import { startDelivery } from "@/lib/webhooks/delivery/worker";
import { networkFollower } from "@/lib/webhooks/engine/follower";
import { createWebhook } from "@/lib/webhooks/service";
import type { WorkerHandle } from "@/lib/workers/worker";
import { generateAptosBlocks, startAptosDevnetProducer } from "../devnet/producer";
import { aptosHeadHeight } from "../source";
import { aptosCursor, deleteAptosIndex, transactionTexts } from "../store";
import type { LedgerInfo, UserTransactionJson } from "../types";
import { AptosNodeClient } from "./client";
import { fixtureBlockText, MEMO_MODULE } from "./fixtures";
import { startAptosFollower, type AptosFollowerOptions } from "./follower";
import { AptosStandIn } from "./stand-in";

// Not used by the devnet suite (aptos-testnet), which shares this run's database.
const SLUG = "aptos-mainnet";
const CHAIN_ID = 1;
const NODE_BLOCKS = 150;

let a: AptosStandIn;
let b: AptosStandIn;
let network: Network;
let gw: TestGateway;
let key: string;
let projectId: string;
let follower: WorkerHandle | undefined;
const { logger, messages: logs } = captureLogs();

beforeAll(async () => {
  // Two nodes serving the same chain (the builder is deterministic), the second a failover.
  [a, b] = await Promise.all([AptosStandIn.start({ chainId: CHAIN_ID, blocks: NODE_BLOCKS, fixtures: true }), AptosStandIn.start({ chainId: CHAIN_ID, blocks: NODE_BLOCKS, fixtures: true })]);
  // The catalog is read once per process: configure the upstream before anything reads it.
  process.env.UPSTREAM_APTOS_MAINNET = `${a.url},${b.url}`;
  network = networkBySlug(SLUG)!;
  if (network.source.kind !== "upstream") throw new Error("the network catalog was read before this suite configured UPSTREAM_APTOS_MAINNET");
  gw = await startTestGateway();
  ({ apiKey: key, projectId } = await createTestProject("Aptos upstream", "ENTERPRISE"));
  await deleteAptosIndex(SLUG);
}, 120_000);

afterAll(async () => {
  await follower?.stop();
  await gw?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  delete process.env.UPSTREAM_APTOS_MAINNET;
});

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${logs.join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stored = async () => (await aptosHeadHeight(SLUG)) ?? -1n;
const caughtUp = (node = a) => waitFor(`the index to reach block ${node.latest.height}`, async () => (await stored()) === node.latest.height);

function follow(opts: Partial<AptosFollowerOptions> = {}): WorkerHandle {
  const client = opts.client ?? new AptosNodeClient([a.url, b.url], { chainId: CHAIN_ID, network: SLUG, unhealthyMs: 60_000, logger });
  return startAptosFollower(network, { databaseUrl: process.env.DATABASE_URL!, logger, pollMs: 50, backoff: { baseMs: 50, maxMs: 200 }, ...opts, client });
}

/** The index holds exactly the node's blocks from `from` to its head: same headers, every transaction as the node wrote it. */
async function expectIndexMatchesNode(from: bigint) {
  const rows = await db().aptosBlock.findMany({ where: { network: SLUG }, orderBy: { height: "asc" } });
  const served = a.blocks.filter((x) => x.height >= from);
  expect(rows.map((r) => [r.height, r.hash, r.firstVersion, r.lastVersion, r.timestamp])).toEqual(served.map((x) => [x.height, x.hash, x.firstVersion, x.lastVersion, x.timestamp]));
  expect(rows.map((r) => r.txHashes)).toEqual(served.map((x) => x.txs.map((t) => t.hash)));
  const texts = await transactionTexts(SLUG, served[0]!.firstVersion, a.latest.lastVersion);
  expect(texts).toEqual(a.txs.slice(Number(served[0]!.firstVersion)).map((t) => JSON.stringify(t)));
}

describe("an upstream Aptos network", () => {
  it("starts an empty index at the node's oldest block when the configured start is pruned", async () => {
    const pruned = await AptosStandIn.start({ chainId: CHAIN_ID, blocks: 30, oldestHeight: 20n });
    const client = new AptosNodeClient([pruned.url], { chainId: CHAIN_ID, network: SLUG });
    follower = follow({ client, startHeight: 5n });
    await caughtUp(pruned);
    await follower.stop();
    expect(logs).toContain("start height 5 is below the node's oldest block 20: starting there");
    const rows = await db().aptosBlock.findMany({ where: { network: SLUG }, orderBy: { height: "asc" }, select: { height: true } });
    expect(rows.map((r) => r.height)).toEqual(Array.from({ length: 11 }, (_, i) => 20n + BigInt(i)));
    await pruned.stop();
    await client.close();
    await deleteAptosIndex(SLUG);
  });

  it("replaces blocks the devnet stored before, and starts 100 blocks below the node's head", async () => {
    const devnet = buildCatalog({}).find((n) => n.slug === SLUG)!;
    await generateAptosBlocks(devnet, 3, 1);
    expect(await aptosCursor(SLUG).read()).toMatchObject({ source: "devnet", chainId: 104 });
    follower = follow();
    await caughtUp();
    const start = a.latest.height - 100n;
    expect(logs).toContain("removing the devnet blocks (chain id 104) stored before the upstream was configured");
    expect(logs.some((l) => l.includes(`from block ${start}, version ${a.blocks[Number(start)]!.firstVersion} (node at block ${a.latest.height}`))).toBe(true);
    await expectIndexMatchesNode(start);
    expect(await aptosCursor(SLUG).read()).toEqual({ source: "upstream", chainId: CHAIN_ID, nextHeight: String(a.latest.height + 1n), nextVersion: String(a.latest.lastVersion + 1n) });
  });

  it("keeps the mainnet-shaped blocks as the node wrote them: validator transactions, block epilogues, nested events", async () => {
    const fixtures = a.blocks.filter((x) => x.txs.some((t) => t.type === "block_epilogue_transaction"));
    expect(fixtures.length).toBe(2);
    const rows = await db().aptosTransaction.findMany({ where: { network: SLUG, blockHeight: { in: fixtures.map((x) => x.height) } }, orderBy: { version: "asc" }, select: { type: true, success: true, payloadFunction: true } });
    expect(rows).toEqual([
      { type: "block_metadata_transaction", success: true, payloadFunction: null },
      { type: "validator_transaction", success: true, payloadFunction: null },
      { type: "user_transaction", success: true, payloadFunction: "0x1::aptos_account::transfer" },
      { type: "user_transaction", success: false, payloadFunction: "0x1::coin::transfer" },
      { type: "block_epilogue_transaction", success: true, payloadFunction: null },
      { type: "block_metadata_transaction", success: true, payloadFunction: null },
      { type: "user_transaction", success: true, payloadFunction: "0x48271d39d0b05bd6efca2278f22277d6fcc375504f9839fd73f74ace240861af::router::swap_exact_input" },
      { type: "block_epilogue_transaction", success: true, payloadFunction: null },
    ]);
    // The read API answers them byte for byte, through the SDK too.
    const swap = fixtures[1]!.txs[1]!;
    const res = await fetch(`${gw.url}/aptos/mainnet/v1/transactions/by_hash/${swap.hash}`, { headers: { "X-API-KEY": key } });
    expect(await res.text()).toBe(JSON.stringify(swap));
    const aptos = new Aptos(new AptosConfig({ network: SdkNetwork.CUSTOM, fullnode: `${gw.url}/aptos/mainnet/${key}/v1` }));
    expect(await aptos.getTransactionByHash({ transactionHash: swap.hash })).toEqual(swap);
    const block = await aptos.getBlockByHeight({ blockHeight: fixtures[0]!.height, options: { withTransactions: true } });
    expect(block.transactions).toEqual(fixtures[0]!.txs);
  });

  it("answers as a pruned fullnode below the oldest stored block", async () => {
    const start = a.latest.height - 100n;
    const get = async (path: string) => {
      const res = await fetch(`${gw.url}/aptos/mainnet/v1${path}`, { headers: { "X-API-KEY": key } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const ledger = (await get("")).body as unknown as LedgerInfo;
    expect(ledger).toMatchObject({ chain_id: CHAIN_ID, oldest_block_height: start.toString(), oldest_ledger_version: a.blocks[Number(start)]!.firstVersion.toString() });
    expect(await get(`/blocks/by_height/${start - 1n}`)).toEqual({ status: 410, body: { message: `Block(${start - 1n}) has been pruned`, error_code: "block_pruned", vm_error_code: null } });
    expect(await get("/transactions/by_version/3")).toEqual({ status: 410, body: { message: "Ledger version(3) has been pruned", error_code: "version_pruned", vm_error_code: null } });
    expect((await get("/transactions?start=3")).status).toBe(410);
  });

  it("follows new blocks as the node commits them", async () => {
    a.advance(4);
    b.advance(4);
    await caughtUp();
    await expectIndexMatchesNode(a.latest.height - 104n);
  });

  it("resumes from its cursor after a restart: no gap, nothing read twice", async () => {
    await follower!.stop();
    const next = a.latest.lastVersion + 1n;
    a.advance(6);
    b.advance(6);
    const seen = a.requests.length;
    follower = follow();
    await caughtUp();
    expect(logs.some((l) => l.includes(`from block ${a.latest.height - 5n}, version ${next}`))).toBe(true);
    const pages = a.requests.slice(seen).filter((r) => r.startsWith("/v1/transactions"));
    expect(pages[0]).toBe(`/v1/transactions?start=${next}&limit=100`);
    await expectIndexMatchesNode(a.latest.height - 110n);
  });

  it("fails over to the next node when one answers 500 or is down", async () => {
    a.fail("500");
    a.advance(3);
    b.advance(3);
    await caughtUp(b);
    expect(logs.some((l) => new RegExp(`upstream ${a.url.replace(/\/v1$/, "")} failed \\(HTTP 500\\); passing over it`).test(l))).toBe(true);
    a.fail(false);
    await a.stop();
    a.advance(2);
    b.advance(2);
    await caughtUp(b);
    await a.start();
    await expectIndexMatchesNode(a.latest.height - 115n);
  });

  it("backs off while the node's ledger ends before where the index continues, then goes on", async () => {
    await follower!.stop();
    // One node whose transaction pages trail the ledger it reports (a node behind a load balancer's other).
    const client = new AptosNodeClient([a.url], { chainId: CHAIN_ID, network: SLUG });
    follower = follow({ client });
    await caughtUp();
    const next = a.latest.lastVersion + 1n;
    a.lag(1_000);
    a.advance(3);
    const seen = a.requests.length;
    await waitFor("three refused pages", () => a.requests.slice(seen).filter((r) => r.startsWith(`/v1/transactions?start=${next}`)).length >= 3);
    expect((await stored()) < a.latest.height).toBe(true);
    a.lag(0);
    await caughtUp();
    expect(logs.some((l) => l.startsWith(`waiting for the node, retrying with backoff (up to 0.2 s): the node's ledger ends before version ${next} (HTTP 400 invalid_input: Given start value (${next}) is higher than the current ledger version`))).toBe(true);
    expect(logs.some((l) => /^recovered after \d+ failed attempts; continuing at block/.test(l))).toBe(true);
    await client.close();
  });

  it("stores text that PostgreSQL cannot hold as it is (NUL, an unpaired surrogate) as the node sent it, and delivers it to the webhooks it matches", async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push(Buffer.concat(chunks).toString("utf8"));
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const subscribe = (eventData: Record<string, string>) =>
      createWebhook(projectId, network, {
        eventType: "TRANSACTION",
        description: "text PostgreSQL cannot hold",
        notification: { webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
        condition: { eventType: `${MEMO_MODULE}::memo::Posted`, eventAccountAddress: "0x0", eventData },
      }).then((r) => r.subscriptionId);
    const matching = await subscribe({ amount: "5" });
    // U+FFFD is what the database would have made of the NUL: it must not match.
    const replaced = await subscribe({ memo: "a\uFFFDb" });
    const signal = new AbortController().signal;
    const engine = networkFollower(network, { logger });
    const state = await engine.init(signal);
    const drain = async () => {
      for (let i = 0; i < 100 && (await engine.step(state, signal)); i++);
    };
    await drain();

    await follower!.stop();
    follower = follow();
    a.append(fixtureBlockText);
    b.append(fixtureBlockText);
    await caughtUp();
    const [, memo, aborted] = a.latest.txs as [unknown, UserTransactionJson, UserTransactionJson];
    for (const tx of [memo, aborted]) {
      const res = await fetch(`${gw.url}/aptos/mainnet/v1/transactions/by_hash/${tx.hash}`, { headers: { "X-API-KEY": key } });
      expect(await res.text()).toBe(JSON.stringify(tx));
    }

    await drain();
    const meter = new UsageMeter();
    const delivery = startDelivery({ timeoutMs: 2000, retryScheduleMs: [50], pollMs: 20, meter, projectIds: [projectId] });
    try {
      // The console's and the API's "send test" takes the latest user transaction: the aborted one.
      const test = await fetch(`${gw.url}/v1/aptos/mainnet/webhooks/${matching}/test`, { method: "POST", headers: { "X-API-KEY": key } });
      expect(test.status).toBe(200);
      await waitFor("two deliveries", () => received.length >= 2);
    } finally {
      await delivery.stop();
      await meter.stop();
      await new Promise((resolve) => receiver.close(resolve));
    }
    const { changes: _memoChanges, ...memoMessage } = memo;
    const { changes: _abortedChanges, ...abortedMessage } = aborted;
    const bodies = received
      .map((text) => JSON.parse(text) as { subscriptionId: string; sequenceNumber: string; test?: boolean; event: { messages: unknown[] } })
      .sort((x, y) => Number(x.sequenceNumber) - Number(y.sequenceNumber));
    expect(bodies.map((m) => [m.subscriptionId, m.test ?? false, m.event.messages])).toEqual([
      [matching, false, [memoMessage]],
      [matching, true, [abortedMessage]],
    ]);
    expect(received.find((text) => !text.includes('"test":true'))).toContain('"memo":"a\\u0000b","note":"x\\ud800y","k\\u0000":"v"');
    expect(await db().webhookMessage.count({ where: { subscriptionId: replaced } })).toBe(0);

    const history = await fetch(`${gw.url}/v1/aptos/mainnet/webhooks/history?subscriptionId=${matching}&withEventMessage=true`, { headers: { "X-API-KEY": key } });
    expect(history.status).toBe(200);
    const items = ((await history.json()) as { items: Array<{ eventMessage: unknown }> }).items;
    expect(items.map((i) => i.eventMessage).reverse()).toEqual(bodies);
    expect(logs.filter((l) => l.includes("webhook follower failed"))).toEqual([]);
  });

  it("leaves out a node of another chain and stores nothing from it", async () => {
    await follower!.stop();
    const other = await AptosStandIn.start({ chainId: 2, blocks: 2 });
    const client = new AptosNodeClient([other.url], { chainId: CHAIN_ID, network: SLUG, logger });
    const before = await aptosCursor(SLUG).read();
    follower = follow({ client });
    await waitFor("the node to be left out", () => logs.some((l) => l.includes("every upstream node is left out (it serves chain id 2, not 1)")));
    await follower.stop();
    follower = undefined;
    expect(await aptosCursor(SLUG).read()).toEqual(before);
    await other.stop();
    await client.close();
  });

  it("keeps the devnet producer off an index that holds the upstream's chain", async () => {
    const devnet = buildCatalog({}).find((n) => n.slug === SLUG)!;
    const before = await aptosCursor(SLUG).read();
    const producer = startAptosDevnetProducer(devnet, { databaseUrl: process.env.DATABASE_URL!, blockTimeMs: 10, logger });
    await waitFor("the producer to decline", () => logs.includes("the index holds another chain (an upstream's); not producing devnet blocks on top of it"));
    await producer.stop();
    expect(await aptosCursor(SLUG).read()).toEqual(before);
  });
});
