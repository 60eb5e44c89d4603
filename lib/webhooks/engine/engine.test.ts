// The webhook engine over a real anvil (as optimism-sepolia's upstream) and real PostgreSQL: what
// the followers, replay, preview and "Send test" write into webhook_messages, compared with what
// viem reads from the same node. Followers are stepped by hand (automine: blocks come when asked).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createTestClient, createWalletClient, http, pad, type Address, type Hash } from "viem";
import { db, disconnectDb, rawPool } from "@/lib/db/client";
import { DEVNET_CONTRACTS, Emitter } from "@/lib/evm/devnet/contracts";
import { spawnAnvil, type BareAnvil } from "@/lib/evm/testing";
import { buildCatalog, configureNetworks, finalityDepthOf, networkBySlug, type Network } from "@/lib/networks";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { services } from "@/lib/services";
import { previewMatches, replayBlocks, resendMessage, sendTestMessage } from "../actions";
import { consoleBilling, createWebhook, deleteWebhook, updateWebhook } from "../service";
import { CursorConflictError } from "@/lib/workers/cursor";
import { networkFollower, networksWithSubscriptions, type NetworkFollower } from "./follower";

const SLUG = "optimism-sepolia";
const PING = DEVNET_CONTRACTS.emitter.events.Ping.topic0;

let anvil: BareAnvil;
let network: Network;
let projectId: string;
let emitter: Address;
let alice: Address;
let bob: Address;
let pub: ReturnType<typeof createPublicClient>;
let wallet: ReturnType<typeof createWalletClient>;
let testClient: ReturnType<typeof createTestClient>;

type Json = Record<string, unknown>;
let automine = true;

beforeAll(async () => {
  await connectTestDatabase();
  anvil = await spawnAnvil({ chainId: 11155420 });
  configureNetworks({ UPSTREAM_OPTIMISM_SEPOLIA: anvil.url });
  services().evm.configure({ blockTimeMs: 1000 });
  network = networkBySlug(SLUG)!;
  const transport = http(anvil.url);
  pub = createPublicClient({ transport, pollingInterval: 50 });
  wallet = createWalletClient({ transport });
  testClient = createTestClient({ mode: "anvil", transport });
  [alice, bob] = (await wallet.getAddresses()) as [Address, Address];
  const hash = await wallet.deployContract({ abi: Emitter.abi, bytecode: Emitter.bytecode, account: alice, chain: null });
  emitter = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
  projectId = (await createTestProject("Engine", "DEVELOPER")).projectId;
});

afterEach(async () => {
  // Subscriptions of one test do not produce messages in the next.
  await db().webhookSubscription.updateMany({ where: { projectId }, data: { isActive: false } });
});

afterAll(async () => {
  await anvil?.stop();
  configureNetworks({});
  await disconnectDb();
});

/** Sends a ping; with automine on, returns once its block is mined (anvil answers the send first). */
async function ping(from: Address, round: bigint, note = "hello"): Promise<Hash> {
  const hash = await wallet.writeContract({ address: emitter, abi: Emitter.abi, functionName: "ping", args: [round, note], account: from, chain: null });
  if (automine) await pub.waitForTransactionReceipt({ hash });
  return hash;
}

/** Sends the transactions in one block. */
async function inOneBlock(send: () => Promise<unknown>): Promise<void> {
  await testClient.setAutomine(false);
  automine = false;
  try {
    await send();
    await testClient.mine({ blocks: 1 });
  } finally {
    await testClient.setAutomine(true);
    automine = true;
  }
}

const mine = (blocks: number) => testClient.mine({ blocks });
// Uncached: waiting for a receipt fills viem's block-number cache, which would answer an older head.
const head = () => pub.getBlockNumber({ cacheTime: 0 });

/** Steps the follower until it has nothing more to do right away. */
async function drain(f: { follower: NetworkFollower; state: Awaited<ReturnType<NetworkFollower["init"]>> }): Promise<void> {
  for (let i = 0; i < 1000 && (await f.follower.step(f.state, new AbortController().signal)); i++);
}

async function follower() {
  const follower = networkFollower(network);
  const f = { follower, state: await follower.init(new AbortController().signal) };
  await drain(f);
  return f;
}

async function subscribe(body: Json): Promise<string> {
  const record = await createWebhook(projectId, network, { description: "engine test", notification: { webhookUrl: "http://127.0.0.1:9/hook" }, ...body });
  return record.subscriptionId;
}

const logSub = (topics: (string | null)[], isInstant = true) => subscribe({ eventType: "LOG", isInstant, condition: { address: emitter, topics } });

async function rows(subscriptionId: string) {
  return db().webhookMessage.findMany({ where: { subscriptionId }, orderBy: { sequenceNumber: "asc" } });
}

const payloadOf = (row: { payload: unknown }) => row.payload as { sequenceNumber: string; event: Json & { messages?: Json[]; message?: Json }; replayed?: boolean; test?: boolean };

function expectGapFree(list: { sequenceNumber: bigint; payload: unknown }[]) {
  list.forEach((r, i) => {
    expect(r.sequenceNumber).toBe(BigInt(i + 1));
    expect(payloadOf(r).sequenceNumber).toBe(String(i + 1));
  });
}

describe("catalog", () => {
  it("a devnet's finality depth is its devnetFinalityDepth (2 on EVM, Kaia's 1), an upstream's the chain's", () => {
    const devnet = buildCatalog({});
    expect(finalityDepthOf(devnet.find((n) => n.slug === "ethereum-mainnet")!)).toBe(2);
    expect(finalityDepthOf(devnet.find((n) => n.slug === "polygon-mainnet")!)).toBe(2);
    expect(finalityDepthOf(devnet.find((n) => n.slug === "kaia-mainnet")!)).toBe(1);
    expect(finalityDepthOf(devnet.find((n) => n.slug === "aptos-mainnet")!)).toBe(0);
    expect(finalityDepthOf(buildCatalog({ UPSTREAM_ETHEREUM_MAINNET: "http://node.example" }).find((n) => n.slug === "ethereum-mainnet")!)).toBe(64);
    expect(finalityDepthOf(network)).toBe(20);
  });
});

describe("followers", () => {
  it("LOG: one message per block with every match in chain order, fields as the node has them", async () => {
    const f = await follower();
    const sub = await logSub([PING, pad(alice)]);
    const wildcard = await logSub([PING, null, pad("0x7", { size: 32 })]);
    await drain(f); // sees the subscriptions: they start at the head
    await inOneBlock(async () => {
      await ping(alice, 1n, "first");
      await ping(bob, 7n, "bob's");
      await ping(alice, 7n, "second");
    });
    await drain(f);

    const [row, ...more] = await rows(sub);
    expect(more).toEqual([]);
    const body = payloadOf(row!);
    expect(body).toMatchObject({ subscriptionId: sub, sequenceNumber: "1", eventType: "LOG", protocol: "OPTIMISM", network: "SEPOLIA", isInstant: true });
    expect(body.event.targetAddress).toBe(emitter.toLowerCase());
    expect(body.event.topics).toEqual([PING, pad(alice).toLowerCase()]);
    const logs = await pub.getLogs({ address: emitter, blockHash: row!.blockHash as Hash });
    const block = await pub.getBlock({ blockHash: row!.blockHash as Hash });
    const alices = logs.filter((l) => l.topics[1] === pad(alice).toLowerCase());
    expect(alices).toHaveLength(2);
    expect(body.event.messages).toEqual(
      alices.map((l) => ({
        address: emitter.toLowerCase(),
        topics: l.topics,
        data: l.data,
        block_number: Number(l.blockNumber),
        transaction_hash: l.transactionHash,
        transaction_index: l.transactionIndex,
        log_index: l.logIndex,
        block_hash: l.blockHash,
        block_timestamp: Number(block.timestamp),
        removed: false,
        type: "log",
      })),
    );
    for (const m of body.event.messages!) {
      for (const k of ["block_number", "transaction_index", "log_index", "block_timestamp"]) expect(Number.isInteger(m[k]), k).toBe(true);
    }
    expect(row!.blockNumber).toBe(block.number);

    // topics[1] null matches both senders; topics[2] must be round 7.
    const [w] = await rows(wildcard);
    expect(payloadOf(w!).event.messages!.map((m) => m.log_index)).toEqual(logs.filter((l) => BigInt(l.topics[2]!) === 7n).map((l) => l.logIndex));
    expect(payloadOf(w!).event.messages).toHaveLength(2);
  });

  it("BLOCK_PERIOD: fires on the first block after the start, then every period blocks, with every block field typed", async () => {
    const f = await follower();
    const sub = await subscribe({ eventType: "BLOCK_PERIOD", isInstant: true, condition: { period: 3 } });
    await drain(f);
    const start = (await db().webhookSubscription.findUniqueOrThrow({ where: { id: sub } })).startBlock!;
    await ping(alice, 5n, "in a period block"); // start + 1
    await mine(7);
    await drain(f);
    const list = await rows(sub);
    expect(list.map((r) => r.blockNumber)).toEqual([start + 1n, start + 4n, start + 7n]);
    expectGapFree(list);

    const message = payloadOf(list[0]!).event.message!;
    const block = await pub.getBlock({ blockNumber: start + 1n });
    const raw = (await anvilCall("eth_getBlockByNumber", [`0x${(start + 1n).toString(16)}`, false])) as Record<string, string>;
    const logs = await pub.getLogs({ blockHash: block.hash });
    expect(message).toEqual({
      hash: block.hash,
      parent_hash: block.parentHash,
      sha3_uncles: block.sha3Uncles,
      miner: block.miner.toLowerCase(),
      state_root: block.stateRoot,
      transactions_root: block.transactionsRoot,
      receipts_root: block.receiptsRoot,
      logs_bloom: block.logsBloom,
      mix_hash: block.mixHash,
      nonce: block.nonce,
      extra_data: block.extraData,
      withdrawals_root: block.withdrawalsRoot,
      parent_beacon_block_root: raw.parentBeaconBlockRoot,
      difficulty: `0x${block.difficulty.toString(16)}`,
      total_difficulty: raw.totalDifficulty,
      gas_limit: `0x${block.gasLimit.toString(16)}`,
      gas_used: `0x${block.gasUsed.toString(16)}`,
      size: `0x${block.size.toString(16)}`,
      base_fee_per_gas: `0x${block.baseFeePerGas!.toString(16)}`,
      blob_gas_used: `0x${block.blobGasUsed.toString(16)}`,
      excess_blob_gas: `0x${block.excessBlobGas.toString(16)}`,
      block_number: Number(block.number),
      block_timestamp: Number(block.timestamp),
      transaction_count: block.transactions.length,
      log_count: logs.length,
      withdrawal_count: 0,
      transactions: block.transactions,
    });
    expect(message.transaction_count).toBe(1);
    expect(message.log_count).toBe(1);
    for (const [k, v] of Object.entries(message)) {
      if (["block_number", "block_timestamp", "transaction_count", "log_count", "withdrawal_count"].includes(k)) expect(Number.isInteger(v), k).toBe(true);
      else if (k !== "transactions") expect(v, k).toMatch(/^0x[0-9a-f]*$/);
    }
    expect(payloadOf(list[0]!).event.period).toBe(3);
  });

  it("isInstant false waits until the block is the finality depth (20) deep", async () => {
    const f = await follower();
    const sub = await logSub([PING], false);
    await drain(f);
    const tx = await ping(bob, 9n);
    const at = (await pub.getTransactionReceipt({ hash: tx })).blockNumber;
    await mine(18); // head = at + 18 (a block's depth is 19 then... the final stream delivers up to head - 20)
    await drain(f);
    expect(await rows(sub)).toEqual([]);
    await mine(1); // head = at + 19
    await drain(f);
    expect(await rows(sub)).toEqual([]);
    await mine(1); // head = at + 20: final
    await drain(f);
    const list = await rows(sub);
    expect(list.map((r) => r.blockNumber)).toEqual([at]);
    expect(payloadOf(list[0]!).event.messages![0]!.transaction_hash).toBe(tx);
  });

  it("a reorganisation gives the dropped block's LOG messages again with removed: true, to instant subscriptions only", async () => {
    const f = await follower();
    const instant = await logSub([PING, pad(alice)]);
    const final = await logSub([PING, pad(alice)], false);
    await drain(f);
    const snapshot = await testClient.snapshot();
    const dropped = await ping(alice, 100n, "to be dropped");
    await drain(f);
    const [first] = await rows(instant);
    const firstMessages = payloadOf(first!).event.messages!;
    expect(firstMessages[0]!.transaction_hash).toBe(dropped);

    await testClient.revert({ id: snapshot });
    const kept = await ping(alice, 200n, "on the new chain");
    await mine(1);
    await drain(f);

    const list = await rows(instant);
    expectGapFree(list);
    expect(list).toHaveLength(3);
    const removal = payloadOf(list[1]!);
    expect(list[1]!.blockHash).toBe(first!.blockHash);
    expect(list[1]!.blockNumber).toBe(first!.blockNumber);
    expect(removal.event.messages).toEqual(firstMessages.map((m) => ({ ...m, removed: true })));
    const replacement = payloadOf(list[2]!).event.messages!;
    expect(replacement[0]).toMatchObject({ transaction_hash: kept, removed: false, block_number: Number(first!.blockNumber) });
    expect(replacement[0]!.block_hash).not.toBe(first!.blockHash);

    // The final stream never delivered the dropped block: once the new one is final, only it.
    await mine(20);
    await drain(f);
    const finals = await rows(final);
    expect(finals).toHaveLength(1);
    expect(payloadOf(finals[0]!).event.messages![0]).toMatchObject({ transaction_hash: kept, removed: false });
  });

  it("messages and the cursor move in one transaction: a follower that lost the race writes nothing; a restart resumes without gaps or duplicates", async () => {
    const sub = await subscribe({ eventType: "BLOCK_PERIOD", isInstant: true, condition: { period: 1 } });
    const a = await follower();
    const start = (await db().webhookSubscription.findUniqueOrThrow({ where: { id: sub } })).startBlock!;
    await mine(45);
    // One batch (20 blocks) then the process "stops".
    expect(await a.follower.step(a.state, new AbortController().signal)).toBe(true);
    expect((await rows(sub)).length).toBeGreaterThan(0);
    // Another process takes over from the stored cursor and finishes.
    const b = await follower();
    // The first one, stepping again from its stale position, is refused and commits nothing.
    await expect(a.follower.step(a.state, new AbortController().signal)).rejects.toThrow(CursorConflictError);
    await drain(b);
    const list = await rows(sub);
    const tip = await head();
    expect(list.map((r) => r.blockNumber)).toEqual(Array.from({ length: Number(tip - start) }, (_, i) => start + 1n + BigInt(i)));
    expectGapFree(list);
  });
});

describe("subscription changes", () => {
  /** What a follower matches with: per stream, its subscriptions among `ids` and their start blocks. */
  const held = (f: Awaited<ReturnType<typeof follower>>, ids: readonly string[]) =>
    f.state.streams.map((s) => [s.name, ids.flatMap((id) => [s.startOf.get(id), s.periodSubs.get(id)?.startBlock].filter((b) => b !== undefined).map((b) => [id, b]))]);

  it("a follower applies each change it reads: new, new condition, turned off and on again, deleted, deleted with their project", async () => {
    const f = await follower();
    const a = await logSub([PING, pad(alice)]);
    const b = await logSub([PING, pad(bob)]);
    const period = await subscribe({ eventType: "BLOCK_PERIOD", isInstant: false, condition: { period: 1 } });
    const other = await createTestProject("Engine, deleted", "DEVELOPER");
    const c = (await createWebhook(other.projectId, network, { eventType: "LOG", isInstant: true, description: "deleted with its project", notification: { webhookUrl: "http://127.0.0.1:9/hook" }, condition: { address: emitter, topics: [PING] } })).subscriptionId;
    const ids = [a, b, period, c];
    await drain(f);
    await inOneBlock(async () => {
      await ping(alice, 1n);
      await ping(bob, 2n);
    });
    await drain(f);
    expect((await rows(a)).length).toBe(1);
    expect((await rows(b)).length).toBe(1);
    expect(payloadOf((await rows(c))[0]!).event.messages).toHaveLength(2);

    const scope = { projectId };
    await updateWebhook(scope, a, { condition: { address: emitter, topics: [PING, pad(bob)] } });
    await updateWebhook(scope, b, { isActive: false });
    await deleteWebhook(scope, period);
    await db().project.delete({ where: { id: other.projectId } });
    await drain(f); // gives a its new start block; the changes are read at the next block
    await inOneBlock(async () => {
      await ping(alice, 3n);
      await ping(bob, 4n);
    });
    await drain(f);
    // What it holds now is what a follower reading them all holds.
    expect(held(f, ids)).toEqual(held(await follower(), ids));
    expect(held(f, ids).flatMap(([, subs]) => subs as unknown[])).toHaveLength(1);
    // a now matches bob's pings only, from the block after the head at its change; b is off.
    const [, second, ...more] = await rows(a);
    expect(more).toEqual([]);
    expect(payloadOf(second!).event.messages!.map((m) => (m.topics as string[])[1])).toEqual([pad(bob).toLowerCase()]);
    expect((await rows(b)).length).toBe(1);

    await updateWebhook(scope, b, { isActive: true });
    await drain(f);
    await ping(bob, 5n);
    await drain(f);
    expect((await rows(b)).length).toBe(2);
    expect(held(f, ids)).toEqual(held(await follower(), ids));
  });

  it("a change committed after a later transaction's change was read is still seen", async () => {
    const f = await follower();
    const x = await logSub([PING, pad(alice)]);
    const y = await logSub([PING, pad(bob)]);
    await drain(f);
    await mine(1);
    await drain(f);
    const count = () => held(f, [x, y]).flatMap(([, subs]) => subs as unknown[]).length;
    expect(count()).toBe(2);
    const client = await rawPool().connect();
    try {
      // x's transaction takes its number first and commits last.
      await client.query("BEGIN");
      await client.query("UPDATE webhook_subscriptions SET is_active = false WHERE id = $1", [x]);
      await updateWebhook({ projectId }, y, { isActive: false });
      await mine(1);
      await drain(f);
      expect(count()).toBe(1);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    await mine(1);
    await drain(f);
    expect(count()).toBe(0);
  });

  it("a check that finds nothing changed, and the engine's look for networks to follow, read a few rows of webhook_subscriptions, not one per subscription", async () => {
    const f = await follower();
    const template = await logSub([PING, pad(alice)]);
    const n = 3000;
    await rawPool().query(
      `INSERT INTO webhook_subscriptions (id, project_id, network, event_type, description, webhook_url, is_instant, is_active, condition, log_address, log_topic0, start_block, signing_key, created_at, updated_at)
       SELECT 'wh_many' || g, s.project_id, s.network, s.event_type, s.description, s.webhook_url, s.is_instant, true,
              jsonb_set(s.condition::jsonb, '{address}', to_jsonb(a.addr)), a.addr, s.log_topic0, 1, s.signing_key, now(), now()
       FROM webhook_subscriptions s, generate_series(1, $2::int) g, LATERAL (SELECT '0x' || lpad(to_hex(g), 40, '0') AS addr) a WHERE s.id = $1`,
      [template, n],
    );
    await rawPool().query("ANALYZE webhook_subscriptions");
    await mine(1);
    await drain(f);
    expect(f.state.streams[0]!.startOf.size).toBeGreaterThanOrEqual(n + 1);

    // The next check: a new block makes the follower look at the subscriptions again.
    expect(
      await rowsRead(async () => {
        await mine(1);
        await drain(f);
      }),
    ).toBeLessThan(50);
    let found: string[] = [];
    expect(
      await rowsRead(async () => {
        found = await networksWithSubscriptions();
      }),
    ).toBeLessThan(50);
    expect(found).toContain(SLUG);
    expect(found).toEqual([...new Set(found)].sort());
    await rawPool().query("DELETE FROM webhook_subscriptions WHERE id LIKE 'wh_many%'");
  });
});

/**
 * The rows of webhook_subscriptions that the statements `work` sends through the raw pool read:
 * each run again under EXPLAIN ANALYZE and rolled back, its plan's rows of the table counted
 * (returned, and removed by a filter or a recheck).
 */
async function rowsRead(work: () => Promise<unknown>): Promise<number> {
  const pool = rawPool();
  const sent: { text: string; values?: unknown[] }[] = [];
  const query = pool.query.bind(pool);
  pool.query = ((config: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
    sent.push(typeof config === "string" ? { text: config, values } : config);
    return query(config as never, values as never);
  }) as typeof pool.query;
  try {
    await work();
  } finally {
    pool.query = query;
  }
  const readOf = (plan: Record<string, unknown>): number =>
    (plan["Relation Name"] === "webhook_subscriptions"
      ? ((plan["Actual Rows"] as number) + ((plan["Rows Removed by Filter"] as number | undefined) ?? 0) + ((plan["Rows Removed by Index Recheck"] as number | undefined) ?? 0)) * (plan["Actual Loops"] as number)
      : 0) + ((plan.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((sum, p) => sum + readOf(p), 0);
  const touching = sent.filter((q) => q.text.includes("webhook_subscriptions"));
  expect(touching.length).toBeGreaterThan(0);
  const client = await pool.connect();
  let read = 0;
  try {
    for (const q of touching) {
      await client.query("BEGIN");
      const { rows: explained } = await client.query<{ "QUERY PLAN": [{ Plan: Record<string, unknown> }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values);
      await client.query("ROLLBACK");
      read += readOf(explained[0]!["QUERY PLAN"][0].Plan);
    }
  } finally {
    client.release();
  }
  return read;
}

describe("actions", () => {
  it("replay queues what matched, marked replayed; preview answers the last 100 blocks and creates nothing", async () => {
    const f = await follower();
    const tx1 = await ping(alice, 31n, "replay me");
    const tx2 = await ping(alice, 32n, "and me");
    await mine(2);
    const sub = await logSub([PING, pad(alice)]);
    await drain(f);
    const [r1, r2] = await Promise.all([tx1, tx2].map((hash) => pub.getTransactionReceipt({ hash })));

    const before = await db().webhookMessage.count();
    const preview = await previewMatches(network, { eventType: "LOG", condition: { address: emitter.toLowerCase(), topics: [PING, pad(alice).toLowerCase()] } });
    expect(await db().webhookMessage.count()).toBe(before);
    const tip = await head();
    expect(preview.toBlock).toBe(String(tip));
    expect(preview.fromBlock).toBe(String(tip >= 99n ? tip - 99n : 0n));
    const hashes = (preview.messages as Json[]).map((m) => m.transaction_hash);
    expect(hashes).toContain(tx1);
    expect(hashes.indexOf(tx1)).toBeLessThan(hashes.indexOf(tx2));

    const periodPreview = await previewMatches(network, { eventType: "BLOCK_PERIOD", condition: { period: 10 } });
    expect((periodPreview.messages as Json[]).map((m) => m.block_number)).toEqual(
      Array.from({ length: Math.ceil(Number(tip - BigInt(periodPreview.fromBlock) + 1n) / 10) }, (_, i) => Number(periodPreview.fromBlock) + 10 * i),
    );

    const replay = await replayBlocks(sub, r1!.blockNumber, r2!.blockNumber, consoleBilling(projectId));
    expect(replay).toEqual({ fromBlock: String(r1!.blockNumber), toBlock: String(r2!.blockNumber), messages: 2 });
    const list = await rows(sub);
    expectGapFree(list);
    expect(list.map((r) => [r.blockNumber, r.replayed])).toEqual([
      [r1!.blockNumber, true],
      [r2!.blockNumber, true],
    ]);
    expect(payloadOf(list[0]!).replayed).toBe(true);
    expect(payloadOf(list[0]!).event.messages![0]).toMatchObject({ transaction_hash: tx1, block_number: Number(r1!.blockNumber), removed: false, type: "log" });

    await expect(replayBlocks(sub, tip, tip + 5n, consoleBilling(projectId))).rejects.toMatchObject({ code: "WRONG_RANGE_PARAMETER" });
  });

  it("Send test queues a sample of the subscription's kind marked test, even when inactive; resend puts a message back to PENDING", async () => {
    const log = await logSub([PING, pad(bob)]);
    const period = await subscribe({ eventType: "BLOCK_PERIOD", isInstant: false, condition: { period: 5 } });
    await db().webhookSubscription.update({ where: { id: period }, data: { isActive: false } });
    await ping(bob, 77n, "sample");

    const { messageId } = await sendTestMessage(log, consoleBilling(projectId));
    const m = await db().webhookMessage.findUniqueOrThrow({ where: { id: messageId } });
    expect(m).toMatchObject({ test: true, status: "PENDING", blockNumber: null, sequenceNumber: 1n });
    const sample = payloadOf(m).event.messages![0]!;
    expect(payloadOf(m).test).toBe(true);
    expect(sample).toMatchObject({ address: emitter.toLowerCase(), type: "log", removed: false });
    expect((sample.topics as string[]).slice(0, 2)).toEqual([PING, pad(bob).toLowerCase()]);

    const { messageId: blockTest } = await sendTestMessage(period, consoleBilling(projectId));
    const b = await db().webhookMessage.findUniqueOrThrow({ where: { id: blockTest } });
    expect(payloadOf(b).event.message).toMatchObject({ block_number: expect.any(Number), transactions: expect.any(Array) });

    await db().webhookMessage.update({ where: { id: messageId }, data: { status: "FAIL", attempts: 8, nextAttemptAt: null } });
    expect(await resendMessage(log, messageId, consoleBilling(projectId))).toEqual({ messageId });
    expect(await db().webhookMessage.findUniqueOrThrow({ where: { id: messageId } })).toMatchObject({ status: "PENDING", attempts: 0, sequenceNumber: 1n });
    await expect(resendMessage(period, messageId, consoleBilling(projectId))).rejects.toMatchObject({ code: "RESOURCE_NOT_FOUND" });
  });
});

async function anvilCall(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(anvil.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}
