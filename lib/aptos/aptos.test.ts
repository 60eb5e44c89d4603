import { Aptos, AptosApiError as SdkApiError, AptosConfig, Network as SdkNetwork } from "@aptos-labs/ts-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { networkBySlug, type Network } from "@/lib/networks";
import { createTestProject, startTestGateway, type TestGateway } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { APTOS_ROUTES } from "./catalog";
import { USERS } from "./devnet/accounts";
import { generateAptosBlocks, startAptosDevnetProducer } from "./devnet/producer";
import { aptosBlockAt, aptosHeadHeight, aptosUserTransactions, blockPeriodMessage } from "./source";
import { previewMatches, replayBlocks } from "@/lib/webhooks/actions";
import { networkFollower, type NetworkFollower } from "@/lib/webhooks/engine/follower";
import { consoleBilling, createWebhook } from "@/lib/webhooks/service";
import { finalityDepthOf } from "@/lib/networks";
import { aptosCursor, aptosHead, deleteAptosIndex } from "./store";
import { aptosFamily } from "./family";
import { applyRetention } from "@/lib/chains/retention";
import { getEnv } from "@/lib/env";
import type { AptosEventJson, BlockJson, LedgerInfo, TransactionJson, UserTransactionJson } from "./types";

// aptos-mainnet belongs to the upstream suite, which shares this run's database.
const SLUG = "aptos-testnet";
const CHAIN_ID = 105;
const DEPOSIT = "0x1::fungible_asset::Deposit";

let gw: TestGateway;
let network: Network;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway();
  network = networkBySlug(SLUG)!;
  ({ apiKey: key } = await createTestProject("Aptos", "ENTERPRISE"));
  await deleteAptosIndex(SLUG);
}, 120_000);

afterAll(async () => {
  await gw?.stop();
});

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every stored transaction body, in version order. */
async function storedBodies(): Promise<TransactionJson[]> {
  const rows = await db().aptosTransaction.findMany({ where: { network: SLUG }, orderBy: { version: "asc" }, select: { body: true } });
  return rows.map((r) => r.body as unknown as TransactionJson);
}

const api = (path: string, init: RequestInit = {}) => fetch(`${gw.url}/aptos/testnet${path}`, { ...init, headers: { "X-API-KEY": key, ...init.headers } });

async function json<T>(path: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers; text: string }> {
  const res = await api(path, init);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as T, headers: res.headers, text };
}

describe("the devnet producer", () => {
  it("leaves the read API answering 503 until the first block is stored", async () => {
    const res = await json<{ message: string; error_code: string }>("/v1/transactions?limit=0005");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ message: "The ledger of aptos-testnet has no blocks yet; try again shortly.", error_code: "internal_error", vm_error_code: null });
  });

  it("produces blocks from genesis, and after a restart resumes where it stopped: no gap, no repeat", async () => {
    const { logger, messages } = captureLogs();
    const start = () => startAptosDevnetProducer(network, { databaseUrl: process.env.DATABASE_URL!, blockTimeMs: 20, logger });
    const first = start();
    await waitFor("5 blocks", async () => ((await aptosHeadHeight(SLUG)) ?? -1n) >= 4n);
    await first.stop();
    const stopped = (await aptosHeadHeight(SLUG))!;
    const second = start();
    await waitFor("5 more blocks", async () => ((await aptosHeadHeight(SLUG)) ?? -1n) >= stopped + 5n);
    await second.stop();
    expect(messages).toContain("producing devnet blocks from height 0 (chain id 105)");
    expect(messages).toContain(`producing devnet blocks from height ${stopped + 1n} (chain id 105)`);

    const blocks = await db().aptosBlock.findMany({ where: { network: SLUG }, orderBy: { height: "asc" } });
    expect(blocks.map((b) => b.height)).toEqual(blocks.map((_, i) => BigInt(i)));
    blocks.slice(1).forEach((b, i) => expect(b.firstVersion).toBe(blocks[i]!.lastVersion + 1n));
    const bodies = await storedBodies();
    expect(bodies.map((t) => t.version)).toEqual(bodies.map((_, i) => String(i)));
    expect(new Set(bodies.map((t) => t.hash)).size).toBe(bodies.length);
    expect(blocks.map((b) => b.txHashes)).toEqual(blocks.map((b) => bodies.slice(Number(b.firstVersion), Number(b.lastVersion) + 1).map((t) => t.hash)));
    // Sequence numbers carry over the restart: each sender's run from 0 without a gap.
    const users = bodies.filter((t): t is UserTransactionJson => t.type === "user_transaction");
    for (const u of USERS) {
      const seqs = users.filter((t) => t.sender === u.hex).map((t) => t.sequence_number);
      expect(seqs).toEqual(seqs.map((_, i) => String(i)));
    }
    const cursor = await aptosCursor(SLUG).read();
    expect(cursor).toMatchObject({ source: "devnet", chainId: CHAIN_ID, nextHeight: String(blocks.length), nextVersion: String(bodies.length) });
  });

  it("fills the chain for the read API (bulk generation continues the same chain)", async () => {
    await generateAptosBlocks(network, 40, 5);
    const head = (await aptosHead(SLUG))!;
    expect(head.earliest.height).toBe(0n);
    expect(head.latest.height).toBeGreaterThanOrEqual(49n);
    expect(head.latest.lastVersion).toBeGreaterThan(250n);
  });
});

describe("the Aptos read API", () => {
  let head: NonNullable<Awaited<ReturnType<typeof aptosHead>>>;
  let bodies: TransactionJson[];
  beforeAll(async () => {
    head = (await aptosHead(SLUG))!;
    bodies = await storedBodies();
  });

  it("answers /v1 with the ledger information and the ledger headers of a fullnode", async () => {
    const { status, body, headers } = await json<LedgerInfo>("/v1");
    expect(status).toBe(200);
    expect(body).toEqual({
      chain_id: CHAIN_ID,
      epoch: "1",
      ledger_version: head.latest.lastVersion.toString(),
      oldest_ledger_version: "0",
      ledger_timestamp: head.latest.timestamp.toString(),
      node_role: "full_node",
      oldest_block_height: "0",
      block_height: head.latest.height.toString(),
    });
    expect(Object.keys(body)).toEqual(["chain_id", "epoch", "ledger_version", "oldest_ledger_version", "ledger_timestamp", "node_role", "oldest_block_height", "block_height"]);
    expect({
      chain: headers.get("x-aptos-chain-id"),
      version: headers.get("x-aptos-ledger-version"),
      oldest: headers.get("x-aptos-ledger-oldest-version"),
      time: headers.get("x-aptos-ledger-timestampusec"),
      epoch: headers.get("x-aptos-epoch"),
      height: headers.get("x-aptos-block-height"),
      oldestHeight: headers.get("x-aptos-oldest-block-height"),
    }).toEqual({ chain: "105", version: body.ledger_version, oldest: "0", time: body.ledger_timestamp, epoch: "1", height: body.block_height, oldestHeight: "0" });
    expect(headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(headers.get("access-control-expose-headers")).toContain("X-Aptos-Ledger-Version");
  });

  it("pages transactions by version exactly as stored: start and limit, or the latest page", async () => {
    const page = await json<TransactionJson[]>("/v1/transactions?start=0&limit=100");
    expect(page.status).toBe(200);
    expect(page.body).toEqual(bodies.slice(0, 100));
    expect(page.text).toBe(JSON.stringify(bodies.slice(0, 100)));
    const mid = await json<TransactionJson[]>("/v1/transactions?start=17&limit=3");
    expect(mid.body.map((t) => t.version)).toEqual(["17", "18", "19"]);
    const latest = await json<TransactionJson[]>("/v1/transactions");
    expect(latest.body.map((t) => t.version)).toEqual(bodies.slice(-25).map((t) => t.version));
    const tail = await json<TransactionJson[]>(`/v1/transactions?start=${head.latest.lastVersion}&limit=10`);
    expect(tail.body.map((t) => t.version)).toEqual([head.latest.lastVersion.toString()]);
  });

  it("finds a transaction by hash (any case, with or without 0x) and by version", async () => {
    const user = bodies.find((t) => t.type === "user_transaction")!;
    for (const hash of [user.hash, user.hash.toUpperCase().replace("0X", "0x"), user.hash.slice(2)]) {
      const byHash = await json<TransactionJson>(`/v1/transactions/by_hash/${hash}`);
      expect(byHash.status).toBe(200);
      expect(byHash.body).toEqual(user);
    }
    const byVersion = await json<TransactionJson>(`/v1/transactions/by_version/${user.version}`);
    expect(byVersion.text).toBe(JSON.stringify(user));
  });

  it("answers blocks by height and by version, with their transactions when asked", async () => {
    const b = (await db().aptosBlock.findUnique({ where: { network_height: { network: SLUG, height: 7n } } }))!;
    const plain = await json<BlockJson>("/v1/blocks/by_height/7");
    expect(plain.status).toBe(200);
    expect(plain.text).toBe(
      JSON.stringify({
        block_height: "7",
        block_hash: b.hash,
        block_timestamp: b.timestamp.toString(),
        first_version: b.firstVersion.toString(),
        last_version: b.lastVersion.toString(),
        transactions: null,
      }),
    );
    const full = await json<BlockJson>("/v1/blocks/by_height/7?with_transactions=true");
    expect(full.body.transactions).toEqual(bodies.slice(Number(b.firstVersion), Number(b.lastVersion) + 1));
    expect((await json<BlockJson>("/v1/blocks/by_height/7?with_transactions=false")).body.transactions).toBeNull();
    for (const v of [b.firstVersion, b.firstVersion + 1n, b.lastVersion]) {
      expect((await json<BlockJson>(`/v1/blocks/by_version/${v}`)).text).toBe(plain.text);
    }
    expect((await json<BlockJson>("/v1/blocks/by_height/0")).body).toMatchObject({ block_height: "0", block_hash: `0x${"0".repeat(64)}`, block_timestamp: "0", first_version: "0", last_version: "0" });
  });

  it("lists an account's transactions by sequence number", async () => {
    const user = USERS[2]!;
    const sent = bodies.filter((t): t is UserTransactionJson => t.type === "user_transaction" && (t as UserTransactionJson).sender === user.hex);
    expect(sent.length).toBeGreaterThan(5);
    const all = await json<UserTransactionJson[]>(`/v1/accounts/${user.hex}/transactions?start=0&limit=100`);
    expect(all.body).toEqual(sent);
    const some = await json<UserTransactionJson[]>(`/v1/accounts/${user.hex.slice(2).toUpperCase()}/transactions?start=2&limit=3`);
    expect(some.body.map((t) => t.sequence_number)).toEqual(["2", "3", "4"]);
    const latest = await json<UserTransactionJson[]>(`/v1/accounts/${user.hex}/transactions?limit=2`);
    expect(latest.body).toEqual(sent.slice(-2));
    expect((await json<unknown[]>(`/v1/accounts/0x1/transactions`)).body).toEqual([]);
  });

  it("takes the key in X-API-KEY, as a Bearer token, or in the path; refuses a missing, wrong or doubled key", async () => {
    const bare = (path: string, headers: Record<string, string> = {}) => fetch(`${gw.url}/aptos/testnet${path}`, { headers });
    expect((await bare(`/${key}/v1`)).status).toBe(200);
    expect((await bare("/v1", { Authorization: `Bearer ${key}` })).status).toBe(200);
    const none = await bare("/v1");
    expect([none.status, await none.json()]).toEqual([401, { code: "NO_AUTHENTICATION_FOUND", message: expect.any(String) }]);
    const wrong = await bare("/v1", { Authorization: "Bearer bg_1111111111111111111111111111111111" });
    expect([wrong.status, ((await wrong.json()) as { code: string }).code]).toEqual([401, "AUTHENTICATION_FAILED"]);
    const both = await bare(`/${key}/v1`, { "X-API-KEY": key });
    expect([both.status, ((await both.json()) as { code: string }).code]).toEqual([401, "AUTHENTICATION_FAILED"]);
    const differ = await bare("/v1", { "X-API-KEY": key, Authorization: "Bearer bg_other" });
    expect(differ.status).toBe(401);
    const devnet = await fetch(`${gw.url}/aptos/devnet/v1`, { headers: { "X-API-KEY": key } });
    expect([devnet.status, ((await devnet.json()) as { code: string }).code]).toEqual([404, "NOT_SUPPORTED_CHAIN"]);
    const route = await api("/v1/accounts/0x1/resources");
    expect([route.status, ((await route.json()) as { code: string }).code]).toEqual([404, "WRONG_ENDPOINT"]);
    const post = await api("/v1/transactions", { method: "POST", body: "{}" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
    const preflight = await fetch(`${gw.url}/aptos/testnet/v1`, { method: "OPTIONS" });
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
  });
});

describe("bad input answers the fullnode's error bodies and statuses", () => {
  const cases: Array<[string, number, string, RegExp | string, Record<string, string>?]> = [
    ["/v1/transactions/by_hash/0x1234", 400, "web_framework_error", /^failed to parse parameter `txn_hash`/],
    ["/v1/transactions/by_hash/0xzz5fe7bb98ae2ea2b6e1d8b1fbc8e7f1e9c3b8ad6a1d2b8a9f0c1e2d3b4a5968", 400, "web_framework_error", /txn_hash/],
    [`/v1/transactions/by_hash/0x${"ab".repeat(32)}`, 404, "transaction_not_found", `Transaction not found by Transaction hash(0x${"ab".repeat(32)})`],
    ["/v1/transactions/by_version/abc", 400, "web_framework_error", /^failed to parse parameter `txn_version`/],
    ["/v1/transactions/by_version/-1", 400, "web_framework_error", /txn_version/],
    ["/v1/transactions/by_version/18446744073709551616", 400, "web_framework_error", /too large/],
    ["/v1/transactions/by_version/99999999", 404, "transaction_not_found", "Transaction not found by Ledger version(99999999)"],
    ["/v1/transactions?limit=101", 400, "invalid_input", "Given limit value (101) is too large, it must be < 100"],
    ["/v1/transactions?limit=0", 400, "invalid_input", "Given limit value (0) must not be zero"],
    ["/v1/transactions?limit=abc", 400, "web_framework_error", /^failed to parse parameter `limit`/],
    ["/v1/transactions?limit=70000", 400, "web_framework_error", /too large/],
    ["/v1/transactions?start=1.5", 400, "web_framework_error", /^failed to parse parameter `start`/],
    ["/v1/transactions?start=99999999", 400, "invalid_input", /^Given start value \(99999999\) is higher than the current ledger version/],
    ["/v1/blocks/by_height/99999999", 404, "block_not_found", "Block not found by Block height(99999999)"],
    ["/v1/blocks/by_height/x1", 400, "web_framework_error", /block_height/],
    ["/v1/blocks/by_height/1?with_transactions=yes", 400, "web_framework_error", /with_transactions/],
    ["/v1/blocks/by_version/99999999", 404, "block_not_found", "Block not found by Ledger version(99999999)"],
    ["/v1/accounts/0xnothex/transactions", 400, "web_framework_error", /address/],
    ["/v1/accounts/0x1/transactions?limit=500", 400, "invalid_input", "Given limit value (500) is too large, it must be < 100"],
    ["/v1/transactions", 403, "api_disabled", "Transactions with BCS output is disabled on this endpoint", { Accept: "application/x-bcs" }],
  ];

  it.each(cases)("GET %s → %i %s", async (path, status, code, message, headers) => {
    const res = await json<{ message: string; error_code: string; vm_error_code: null }>(path, { headers });
    expect(res.status).toBe(status);
    expect(Object.keys(res.body)).toEqual(["message", "error_code", "vm_error_code"]);
    expect(res.body.error_code).toBe(code);
    expect(res.body.vm_error_code).toBeNull();
    if (typeof message === "string") expect(res.body.message).toBe(message);
    else expect(res.body.message).toMatch(message);
    // Errors about the ledger carry its headers; the web framework's parse errors do not.
    expect(res.headers.get("x-aptos-ledger-version") !== null).toBe(code !== "web_framework_error" && code !== "api_disabled");
  });

  it("meters the catalog's CU per successful call and nothing for a failed one", async () => {
    const p = await createTestProject("Aptos metering", "ENTERPRISE");
    const call = (path: string) => fetch(`${gw.url}/aptos/testnet${path}`, { headers: { "X-API-KEY": p.apiKey } }).then((r) => r.text());
    await call("/v1");
    await call("/v1/transactions?limit=5");
    await call("/v1/transactions?limit=500");
    await call("/v1/blocks/by_height/3");
    await call("/v1/transactions/by_version/abc");
    await gw.meter.flush();
    const rows = await db().usageBucket.findMany({ where: { projectId: p.projectId } });
    const usage = Object.fromEntries(rows.map((r) => [`${r.endpoint} ${r.status}`, { api: r.api, cu: Number(r.cu), requests: r.requests, errors: r.errors, network: r.network }]));
    expect(usage).toEqual({
      "ledger_info 2xx": { api: "aptos", cu: APTOS_ROUTES.ledger_info.cu, requests: 1, errors: 0, network: SLUG },
      "transactions 2xx": { api: "aptos", cu: APTOS_ROUTES.transactions.cu, requests: 1, errors: 0, network: SLUG },
      "transactions 4xx": { api: "aptos", cu: 0, requests: 1, errors: 1, network: SLUG },
      "block_by_height 2xx": { api: "aptos", cu: APTOS_ROUTES.block_by_height.cu, requests: 1, errors: 0, network: SLUG },
      "transaction_by_version 4xx": { api: "aptos", cu: 0, requests: 1, errors: 1, network: SLUG },
    });
  });
});

describe("@aptos-labs/ts-sdk pointed at the read API", () => {
  const sdk = (fullnode: string, clientConfig?: AptosConfig["clientConfig"]) => new Aptos(new AptosConfig({ network: SdkNetwork.CUSTOM, fullnode, clientConfig }));

  it("reads the ledger, transactions and blocks unmodified, with the key in the URL", async () => {
    const aptos = sdk(`${gw.url}/aptos/testnet/${key}/v1`);
    const bodies = await storedBodies();
    const ledger = await aptos.getLedgerInfo();
    expect(ledger).toMatchObject({ chain_id: CHAIN_ID, node_role: "full_node", oldest_ledger_version: "0" });
    const txs = await aptos.getTransactions({ options: { offset: 10, limit: 20 } });
    expect(txs).toEqual(bodies.slice(10, 30));
    const user = bodies.find((t): t is UserTransactionJson => t.type === "user_transaction" && t.success)!;
    expect(await aptos.getTransactionByHash({ transactionHash: user.hash })).toEqual(user);
    expect(await aptos.getTransactionByVersion({ ledgerVersion: BigInt(user.version) })).toEqual(user);
    const block = await aptos.getBlockByHeight({ blockHeight: 9, options: { withTransactions: true } });
    expect(block.block_height).toBe("9");
    expect(block.transactions).toEqual(bodies.slice(Number(block.first_version), Number(block.last_version) + 1));
    const byVersion = await aptos.getBlockByVersion({ ledgerVersion: BigInt(block.last_version) });
    expect(byVersion).toMatchObject({ block_height: "9", block_hash: block.block_hash, transactions: null });
    const sent = await aptos.getAccountTransactions({ accountAddress: user.sender, options: { offset: 0, limit: 3 } });
    expect(sent.map((t) => (t as UserTransactionJson).sequence_number)).toEqual(["0", "1", "2"]);
  });

  it("sends the key in a header (HEADERS or API_KEY) and surfaces the fullnode's errors", async () => {
    for (const clientConfig of [{ HEADERS: { "X-API-KEY": key } }, { API_KEY: key }]) {
      const aptos = sdk(`${gw.url}/aptos/testnet/v1`, clientConfig);
      expect((await aptos.getLedgerInfo()).chain_id).toBe(CHAIN_ID);
      const error = await aptos.getTransactionByHash({ transactionHash: `0x${"cd".repeat(32)}` }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SdkApiError);
      expect((error as SdkApiError).status).toBe(404);
      expect((error as SdkApiError).data).toEqual({ message: `Transaction not found by Transaction hash(0x${"cd".repeat(32)})`, error_code: "transaction_not_found", vm_error_code: null });
    }
  });
});

describe("Aptos as a webhook chain source", () => {
  let users: UserTransactionJson[];
  beforeAll(async () => {
    users = (await storedBodies()).filter((t): t is UserTransactionJson => t.type === "user_transaction");
  });

  it("gives blocks as BLOCK_PERIOD messages: the fullnode's block fields and its transaction hashes", async () => {
    const b = (await aptosBlockAt(SLUG, 5n))!;
    const fromApi = (await json<BlockJson>("/v1/blocks/by_height/5?with_transactions=true")).body;
    expect(blockPeriodMessage(b)).toEqual({
      block_height: "5",
      block_hash: fromApi.block_hash,
      block_timestamp: fromApi.block_timestamp,
      first_version: fromApi.first_version,
      last_version: fromApi.last_version,
      transactions: fromApi.transactions!.map((t) => t.hash),
    });
  });

  it("gives the user transactions of a block range as TRANSACTION messages: the REST shape without changes", async () => {
    const from = 3n;
    const last = 6n;
    const got = await aptosUserTransactions(SLUG, from, last);
    const blocks = await db().aptosBlock.findMany({ where: { network: SLUG, height: { gte: from, lte: last } }, orderBy: { height: "asc" } });
    const inRange = users.filter((t) => BigInt(t.version) >= blocks[0]!.firstVersion && BigInt(t.version) <= blocks.at(-1)!.lastVersion);
    expect(got.map((m) => m.message)).toEqual(inRange.map(({ changes: _changes, ...rest }) => rest));
    expect(Object.keys(got[0]!.message)).not.toContain("changes");
    expect(got.every((m) => m.blockHash === blocks.find((b) => b.height === m.blockHeight)!.hash)).toBe(true);
  });
});

type Payload = { sequenceNumber: string; network: string; eventType: string; isInstant: boolean; event: { messages?: UserTransactionJson[]; message?: Record<string, unknown>; period?: number; eventType?: string } };

async function drain(follower: NetworkFollower, state: Awaited<ReturnType<NetworkFollower["init"]>>): Promise<void> {
  for (let i = 0; i < 1000 && (await follower.step(state, new AbortController().signal)); i++);
}

const subscribe = (projectId: string, body: Record<string, unknown>) =>
  createWebhook(projectId, network, { description: "aptos engine test", notification: { webhookUrl: "http://127.0.0.1:9/hook" }, ...body }).then((r) => r.subscriptionId);

async function messagesOf(subscriptionId: string) {
  const rows = await db().webhookMessage.findMany({ where: { subscriptionId }, orderBy: { sequenceNumber: "asc" } });
  return rows.map((r) => ({ sequenceNumber: r.sequenceNumber, blockNumber: r.blockNumber, payload: r.payload as unknown as Payload }));
}

async function storedUserTransactions(fromHeight: bigint, toHeight: bigint) {
  const rows = await db().aptosTransaction.findMany({
    where: { network: SLUG, type: "user_transaction", blockHeight: { gte: fromHeight, lte: toHeight } },
    orderBy: { version: "asc" },
    select: { body: true, blockHeight: true },
  });
  return rows.map((r) => ({ height: r.blockHeight, tx: r.body as unknown as UserTransactionJson }));
}

const emitsDeposit = (t: UserTransactionJson) => t.events.some((e: AptosEventJson) => e.type === DEPOSIT && BigInt(e.guid.account_address) === 0n);
const withoutChanges = ({ changes: _changes, ...rest }: UserTransactionJson) => rest;

describe("webhooks on Aptos, through the engine", () => {
  let projectId: string;
  beforeAll(async () => {
    projectId = (await createTestProject("Aptos webhooks", "DEVELOPER")).projectId;
  });
  afterAll(async () => {
    await db().webhookSubscription.deleteMany({ where: { projectId } });
  });

  it("a follower delivers every matching transaction once (none missed, none extra) and BLOCK_PERIOD blocks every period, with gap-free sequence numbers; Aptos is final at once", async () => {
    expect(finalityDepthOf(network)).toBe(0);
    const deposits = await subscribe(projectId, { eventType: "TRANSACTION", condition: { eventType: DEPOSIT, eventAccountAddress: "0x0" } });
    const period = await subscribe(projectId, { eventType: "BLOCK_PERIOD", isInstant: false, condition: { period: 3 } });

    const follower = networkFollower(network);
    const state = await follower.init(new AbortController().signal);
    await drain(follower, state);
    const start = (await db().webhookSubscription.findUniqueOrThrow({ where: { id: deposits }, select: { startBlock: true } })).startBlock!;
    expect(start).not.toBeNull();

    await generateAptosBlocks(network, 12, 6);
    await drain(follower, state);
    const head = (await db().aptosBlock.aggregate({ where: { network: SLUG }, _max: { height: true } }))._max.height!;

    // TRANSACTION: one message per block that has matches, holding them in version order.
    const expected = (await storedUserTransactions(start + 1n, head)).filter((r) => emitsDeposit(r.tx));
    expect(expected.length).toBeGreaterThan(0);
    const got = await messagesOf(deposits);
    got.forEach((m, i) => expect(m.sequenceNumber).toBe(BigInt(i + 1)));
    expect(got.flatMap((m) => m.payload.event.messages!.map((t) => t.hash))).toEqual(expected.map((r) => r.tx.hash));
    for (const m of got) {
      expect(m.payload).toMatchObject({ network: "testnet", protocol: "aptos", eventType: "TRANSACTION", sequenceNumber: String(m.sequenceNumber) });
      const inBlock = expected.filter((r) => r.height === m.blockNumber).map((r) => withoutChanges(r.tx));
      expect(m.payload.event.messages).toEqual(inBlock);
    }

    // BLOCK_PERIOD: the first block after the start, then every 3rd.
    const blocks = await messagesOf(period);
    const heights = blocks.map((m) => m.blockNumber);
    const wanted = [];
    for (let h = start + 1n; h <= head; h += 3n) wanted.push(h);
    expect(heights).toEqual(wanted);
    const stored = await db().aptosBlock.findFirstOrThrow({ where: { network: SLUG, height: wanted[0]! } });
    expect(blocks[0]!.payload.event).toMatchObject({ period: 3 });
    expect(blocks[0]!.payload.event.message).toEqual({
      block_height: String(stored.height),
      block_hash: stored.hash,
      block_timestamp: String(stored.timestamp),
      first_version: String(stored.firstVersion),
      last_version: String(stored.lastVersion),
      transactions: stored.txHashes,
    });

    // Nothing more without new blocks.
    await drain(follower, state);
    expect((await messagesOf(deposits)).length).toBe(got.length);
  });

  it("preview and replay match Aptos block ranges by height", async () => {
    const head = (await db().aptosBlock.aggregate({ where: { network: SLUG }, _max: { height: true } }))._max.height!;
    const condition = { eventType: DEPOSIT, eventAccountAddress: "0x0" };
    const preview = await previewMatches(network, { eventType: "TRANSACTION", condition: { payloadFunction: null, eventData: null, ...condition } });
    const from = BigInt(preview.fromBlock);
    expect(BigInt(preview.toBlock)).toBe(head);
    const expected = (await storedUserTransactions(from, head)).filter((r) => emitsDeposit(r.tx)).map((r) => r.tx.hash);
    const previewed = (preview.messages as { messages?: UserTransactionJson[] }[]).flatMap((m) => m.messages ?? [m as unknown as UserTransactionJson]).map((t) => t.hash);
    expect(previewed).toEqual(expected);

    const id = await subscribe(projectId, { eventType: "TRANSACTION", condition });
    const replay = await replayBlocks(id, 1n, head, consoleBilling(projectId));
    const queued = await messagesOf(id);
    expect(replay).toMatchObject({ fromBlock: "1", toBlock: String(head), messages: queued.length });
    expect(queued.flatMap((m) => m.payload.event.messages!.map((t) => t.hash))).toEqual((await storedUserTransactions(1n, head)).filter((r) => emitsDeposit(r.tx)).map((r) => r.tx.hash));
    expect(queued.every((m) => (m.payload as unknown as { replayed?: boolean }).replayed === true)).toBe(true);
  });
});

describe("a devnet that keeps a bounded history", () => {
  it("loses its oldest blocks to the retention worker with their transactions and events, answers below them as a pruned fullnode and in its window as before", async () => {
    const from = (await aptosHeadHeight(SLUG))!;
    const producer = startAptosDevnetProducer(network, { databaseUrl: process.env.DATABASE_URL!, blockTimeMs: 5, logger: captureLogs().logger });
    await waitFor("10 more blocks", async () => (await aptosHeadHeight(SLUG))! >= from + 10n);
    await producer.stop();
    const before = (await aptosHead(SLUG))!;
    const keep = before.latest.height - 4n;
    const kept = await db().aptosBlock.findUniqueOrThrow({ where: { network_height: { network: SLUG, height: keep } } });
    const inWindow = [`/v1/blocks/by_height/${keep}?with_transactions=true`, `/v1/transactions/by_version/${kept.firstVersion}`, `/v1/transactions?start=${kept.firstVersion}&limit=3`];
    const answers = await Promise.all(inWindow.map(async (path) => (await json(path)).text));

    // Past every other suite's webhook history: none of it is swept.
    const pass = () => applyRetention({ targets: [{ network, retention: aptosFamily.retention! }], env: { ...getEnv(), APTOS_DEVNET_KEEP_BLOCKS: 5 }, batchRows: 40, now: 0 });
    const report = (await pass()).networks[SLUG]!;
    expect(report).toMatchObject({ below: keep, blocks: Number(keep - before.earliest.height) });
    expect(report.batches).toBeGreaterThan(1);
    const head = (await aptosHead(SLUG))!;
    expect(head.earliest.height).toBe(keep);
    expect(head.latest).toEqual(before.latest);
    const oldest = head.earliest.firstVersion;
    expect(await db().aptosTransaction.count({ where: { network: SLUG, version: { lt: oldest } } })).toBe(0);
    expect(await db().aptosEvent.count({ where: { network: SLUG, version: { lt: oldest } } })).toBe(0);
    expect((await json<LedgerInfo>("/v1")).body).toMatchObject({ oldest_block_height: keep.toString(), oldest_ledger_version: oldest.toString() });
    expect((await json("/v1/transactions/by_version/0")).body).toEqual({ message: "Ledger version(0) has been pruned", error_code: "version_pruned", vm_error_code: null });
    expect((await json(`/v1/transactions/by_version/${oldest - 1n}`)).status).toBe(410);
    expect((await json(`/v1/blocks/by_height/${keep - 1n}`)).body).toEqual({ message: `Block(${keep - 1n}) has been pruned`, error_code: "block_pruned", vm_error_code: null });
    expect(await Promise.all(inWindow.map(async (path) => (await json(path)).text))).toEqual(answers);
    // Nothing more to remove until the chain grows.
    expect((await pass()).networks[SLUG]).toMatchObject({ blocks: 0, rows: 0 });
  });

  it("has a webhook follower left below the oldest block kept go on from it", async () => {
    const { projectId } = await createTestProject("Aptos retention", "DEVELOPER");
    const id = await subscribe(projectId, { eventType: "BLOCK_PERIOD", condition: { period: 1 } });
    const { logger, messages } = captureLogs();
    const follower = networkFollower(network, { logger });
    const state = await follower.init(new AbortController().signal);
    await drain(follower, state);
    const start = (await aptosHead(SLUG))!.latest.height;

    // Stopped while 8 blocks are stored and all but the last 3 removed.
    await generateAptosBlocks(network, 8, 1);
    await applyRetention({ targets: [{ network, retention: aptosFamily.retention! }], env: { ...getEnv(), APTOS_DEVNET_KEEP_BLOCKS: 3 }, now: 0 });
    const head = (await aptosHead(SLUG))!;
    expect(head.earliest.height).toBe(start + 6n);

    await drain(follower, state);
    expect((await messagesOf(id)).map((m) => m.blockNumber)).toEqual([head.earliest.height, head.earliest.height + 1n, head.latest.height]);
    expect(messages).toContain(`instant stream is at block ${start + 1n}, below the oldest block the chain keeps: skipping blocks ${start + 1n}..${start + 5n} (removed by retention)`);
    await db().webhookSubscription.deleteMany({ where: { projectId } });
  });
});
