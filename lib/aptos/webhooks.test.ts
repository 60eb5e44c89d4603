import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { networkBySlug, type Network } from "@/lib/networks";
import { connectTestDatabase } from "@/lib/testing/harness";
import { DEV_COIN, MARKET, USERS, VAULT } from "./devnet/accounts";
import { generateAptosBlocks } from "./devnet/producer";
import { deleteAptosIndex, pruneAptosIndex } from "./store";
import type { AptosEventJson, UserTransactionJson } from "./types";
import type { BlockMatch, ChainBlockRef, MatchableSubscription, Matcher } from "@/lib/webhooks/engine/source";
import type { TransactionCondition } from "@/lib/webhooks/types";
import { AptosTransactionMatcher, aptosChainSource, SAMPLE_BLOCK, SAMPLE_TRANSACTION } from "./webhooks";

// A network of its own (the devnet chain of aptos/testnet under another slug): the Aptos suites
// that share this run's database use the catalog's slugs.
const SLUG = "aptos-webhooks-test";
const EMPTY_SLUG = "aptos-webhooks-empty";
const PRUNED_SLUG = "aptos-webhooks-pruned";
const ZERO_HASH = `0x${"0".repeat(64)}`;
const signal = new AbortController().signal;

let network: Network;
let users: UserTransactionJson[];
let head: bigint;

beforeAll(async () => {
  await connectTestDatabase();
  const testnet = networkBySlug("aptos-testnet")!;
  network = { ...testnet, slug: SLUG };
  await deleteAptosIndex(SLUG);
  await deleteAptosIndex(EMPTY_SLUG);
  await deleteAptosIndex(PRUNED_SLUG);
  // Genesis and 69 blocks of 8 user transactions each: more than two read-ahead windows.
  await generateAptosBlocks(network, 70, 8);
  const rows = await db().aptosTransaction.findMany({ where: { network: SLUG, type: "user_transaction" }, orderBy: { version: "asc" }, select: { body: true } });
  users = rows.map((r) => r.body as unknown as UserTransactionJson);
  head = (await db().aptosBlock.aggregate({ where: { network: SLUG }, _max: { height: true } }))._max.height!;
}, 120_000);

afterAll(async () => {
  await disconnectDb();
});

const messageOf = ({ changes: _changes, ...message }: UserTransactionJson) => message;
const fnOf = (t: UserTransactionJson) => (t.payload as { function?: string }).function ?? null;

/** eventData semantics written out independently: every filter key present, objects compared key by key, anything else deeply equal. */
function dataMatches(filter: Record<string, unknown>, data: unknown): boolean {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  return Object.keys(filter).every((k) => {
    if (!(k in data)) return false;
    const want = filter[k];
    const have = (data as Record<string, unknown>)[k];
    return typeof want === "object" && want !== null && !Array.isArray(want) ? dataMatches(want as Record<string, unknown>, have) : isDeepStrictEqual(want, have);
  });
}

/** What an independent filter over every stored user transaction finds for a condition. */
function expectedFor(c: Partial<TransactionCondition>): string[] {
  const account = c.eventAccountAddress === undefined || c.eventAccountAddress === null ? null : BigInt(c.eventAccountAddress);
  const emits = (e: AptosEventJson) => e.type === c.eventType && BigInt(e.guid.account_address) === account && (!c.eventData || dataMatches(c.eventData, e.data));
  return users
    .filter((t) => (c.payloadFunction ? fnOf(t) === c.payloadFunction : true) && (c.eventType ? t.events.some(emits) : true))
    .map((t) => t.hash);
}

const full = (c: Partial<TransactionCondition>): TransactionCondition => ({
  payloadFunction: c.payloadFunction ?? null,
  eventType: c.eventType ?? null,
  eventAccountAddress: c.eventAccountAddress ?? null,
  eventData: c.eventData ?? null,
});

const sub = (id: string, c: Partial<TransactionCondition>): MatchableSubscription => ({ id, eventType: "TRANSACTION", condition: full(c) });

/** Runs a matcher of the source over every stored block, as a follower or a replay does. */
async function runMatcher(
  subs: readonly MatchableSubscription[],
  edit?: (matcher: Matcher) => void,
): Promise<{ perBlock: Array<{ block: ChainBlockRef; matches: BlockMatch[] }>; bySub: Map<string, string[]> }> {
  const source = aptosChainSource(network);
  const matcher = source.matcher(subs);
  edit?.(matcher);
  const perBlock = [];
  const bySub = new Map<string, string[]>(subs.map((s) => [s.id, []]));
  for (let n = 0n; n <= head; n++) {
    const block = (await source.block(n, signal))!;
    const matches = await matcher.match(block, signal);
    perBlock.push({ block, matches });
    for (const m of matches) {
      const list = bySub.get(m.subscriptionId) ?? [];
      bySub.set(m.subscriptionId, list);
      list.push(...m.messages.map((t) => (t as { hash: string }).hash));
    }
  }
  return { perBlock, bySub };
}

describe("the Aptos chain source", () => {
  it("follows the index: final at commit, the head, blocks with parent hashes and times in seconds", async () => {
    const source = aptosChainSource(network);
    expect(source).toBe(aptosChainSource(network));
    expect([source.network.slug, source.finalityDepth, source.reorgs]).toEqual([SLUG, 0, false]);
    expect(await source.head(signal)).toBe(head);
    const stored = await db().aptosBlock.findMany({ where: { network: SLUG }, orderBy: { height: "asc" } });
    expect(stored.length).toBe(70);
    const refs: ChainBlockRef[] = [];
    for (const b of stored) refs.push((await source.block(b.height, signal))!);
    expect(refs).toEqual(
      stored.map((b, i) => ({
        number: b.height,
        hash: b.hash,
        parentHash: i === 0 ? ZERO_HASH : stored[i - 1]!.hash,
        timestamp: Math.floor(Number(b.timestamp) / 1e6),
      })),
    );
    expect(refs.at(-1)!.timestamp).toBeGreaterThan(1_700_000_000);
    expect(await source.block(head + 1n, signal)).toBeNull();
    // A range read in windows gives the same refs.
    expect(await source.blocks(0n, head + 5n, signal)).toEqual(refs);
    expect(await source.blocks(10n, 44n, signal)).toEqual(refs.slice(10, 45));
  });

  it("gives BLOCK_PERIOD messages: the fullnode's block fields and the hashes of all its transactions", async () => {
    const source = aptosChainSource(network);
    const b = (await db().aptosBlock.findUnique({ where: { network_height: { network: SLUG, height: 12n } } }))!;
    const txs = await db().aptosTransaction.findMany({ where: { network: SLUG, blockHeight: 12n }, orderBy: { version: "asc" }, select: { hash: true, type: true } });
    const message = await source.blockPeriodMessage((await source.block(12n, signal))!, signal);
    expect(message).toEqual({
      block_height: "12",
      block_hash: b.hash,
      block_timestamp: b.timestamp.toString(),
      first_version: b.firstVersion.toString(),
      last_version: b.lastVersion.toString(),
      transactions: txs.map((t) => t.hash),
    });
    expect(Object.keys(message as object)).toEqual(["block_height", "block_hash", "block_timestamp", "first_version", "last_version", "transactions"]);
    expect(txs.map((t) => t.type)).toEqual(["block_metadata_transaction", ...Array(8).fill("user_transaction"), "state_checkpoint_transaction"]);
    const stale = { number: 12n, hash: `0x${"ee".repeat(32)}`, parentHash: ZERO_HASH, timestamp: 0 };
    await expect(source.blockPeriodMessage(stale, signal)).rejects.toThrow(/index was replaced/);
  });

  it("sends a real transaction and block as test samples, and the documented shapes before the chain has any", async () => {
    const source = aptosChainSource(network);
    expect(await source.sample("TRANSACTION", signal)).toEqual(messageOf(users.at(-1)!));
    expect(await source.sample("BLOCK_PERIOD", signal)).toEqual(await source.blockPeriodMessage((await source.block(head, signal))!, signal));
    const log = await source.sample("LOG", signal).catch((e: unknown) => e);
    expect(log).toBeInstanceOf(AppError);
    expect([(log as AppError).status, (log as AppError).code]).toEqual([400, "INVALID_PARAMETER"]);

    const empty = aptosChainSource({ ...network, slug: EMPTY_SLUG });
    expect(await empty.head(signal)).toBeNull();
    expect(await empty.block(0n, signal)).toBeNull();
    const tx = (await empty.sample("TRANSACTION", signal)) as Record<string, unknown>;
    expect(tx).toEqual(SAMPLE_TRANSACTION);
    // The documented message fields, in the fullnode's order, of the same types as a stored one.
    expect(Object.keys(tx)).toEqual(Object.keys(messageOf(users[0]!)));
    for (const [k, v] of Object.entries(messageOf(users[0]!))) expect(typeof tx[k], k).toBe(typeof v);
    expect(Object.keys(SAMPLE_TRANSACTION.events[0]!)).toEqual(Object.keys(users[0]!.events[0]!));
    const block = await empty.sample("BLOCK_PERIOD", signal);
    expect(block).toEqual(SAMPLE_BLOCK);
    expect(Object.keys(block as object)).toEqual(Object.keys((await source.sample("BLOCK_PERIOD", signal)) as object));
  });
});

describe("a pruned index", () => {
  it("refuses to match a block pruned after it was read, rather than matching nothing, and then no longer gives it", async () => {
    const pruned = { ...network, slug: PRUNED_SLUG };
    await generateAptosBlocks(pruned, 12, 3);
    const source = aptosChainSource(pruned);
    const matcher = source.matcher([sub("fee", { eventType: "0x1::transaction_fee::FeeStatement", eventAccountAddress: "0x0" })]);
    const early = (await source.block(2n, signal))!;
    const kept = (await source.block(8n, signal))!;
    await pruneAptosIndex(PRUNED_SLUG, 5n);
    await expect(matcher.match(early, signal)).rejects.toThrow("block 2 of aptos-webhooks-pruned is no longer in the index (pruned, or the index was replaced)");
    expect(await source.block(2n, signal)).toBeNull();
    const matches = await matcher.match(kept, signal);
    expect(matches.map((m) => m.messages.length)).toEqual([3]);
    // The oldest stored block's parent is pruned: its parent hash is unknown.
    expect((await source.blocks(0n, 6n, signal)).map((b) => [b.number, b.parentHash === ZERO_HASH])).toEqual([
      [5n, true],
      [6n, false],
    ]);
  });
});

describe("TRANSACTION matching", () => {
  const deposit = "0x1::fungible_asset::Deposit";
  const deposited = `${VAULT.hex}::vault::Deposited<0x1::aptos_coin::AptosCoin>`;
  const listed = `${MARKET.hex}::market::ItemListed`;
  let conditions: Record<string, { c: Partial<TransactionCondition>; some: boolean }>;

  beforeAll(() => {
    const depositEvent = users.flatMap((t) => t.events).find((e) => e.type === deposit)!;
    const amount = (depositEvent.data as { amount: string }).amount;
    const item = users.flatMap((t) => t.events).find((e) => e.type === listed && (e.data as { item: { attributes: { rarity: string } } }).item.attributes.rarity === "epic")!;
    const { item: itemData, seller } = item.data as { item: { attributes: { level: number } }; seller: string };
    const vault = users.flatMap((t) => t.events).find((e) => e.type === deposited)!;
    const { account: vaultAccount, memo: vaultMemo } = vault.data as { account: string; memo: { text: string } };
    conditions = {
      // Payload function alone (failed calls included).
      fnTransfer: { c: { payloadFunction: "0x1::aptos_account::transfer" }, some: true },
      fnCoin: { c: { payloadFunction: "0x1::coin::transfer" }, some: true },
      fnMarket: { c: { payloadFunction: `${MARKET.hex}::market::list_item` }, some: true },
      fnVault: { c: { payloadFunction: `${VAULT.hex}::vault::deposit` }, some: true },
      fnNone: { c: { payloadFunction: "0x1::nothing::here" }, some: false },
      // Event type and emitting account alone.
      evDeposit: { c: { eventType: deposit, eventAccountAddress: "0x0" }, some: true },
      // Module events are emitted by 0x0, however the address is written.
      evDepositLongZero: { c: { eventType: deposit, eventAccountAddress: `0x${"0".repeat(64)}` }, some: true },
      evFee: { c: { eventType: "0x1::transaction_fee::FeeStatement", eventAccountAddress: "0x0" }, some: true },
      evListingHandle: { c: { eventType: `${MARKET.hex}::market::ListingEvent`, eventAccountAddress: MARKET.hex }, some: true },
      evListingWrongAccount: { c: { eventType: `${MARKET.hex}::market::ListingEvent`, eventAccountAddress: "0x0" }, some: false },
      evDepositOtherAccount: { c: { eventType: deposit, eventAccountAddress: USERS[0]!.hex }, some: false },
      // Both: calls of the function that emit the event.
      bothCoinDeposit: { c: { payloadFunction: "0x1::coin::transfer", eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0" }, some: true },
      bothTransferFee: { c: { payloadFunction: "0x1::aptos_account::transfer", eventType: "0x1::transaction_fee::FeeStatement", eventAccountAddress: "0x0" }, some: true },
      bothVaultDeposit: { c: { payloadFunction: `${VAULT.hex}::vault::deposit`, eventType: deposit, eventAccountAddress: "0x0" }, some: true },
      bothMismatch: { c: { payloadFunction: `${MARKET.hex}::market::list_item`, eventType: deposit, eventAccountAddress: "0x0" }, some: false },
      bothCoinType: { c: { payloadFunction: "0x1::coin::transfer", eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0", eventData: { coin_type: DEV_COIN } }, some: true },
      // eventData at depth 1, 2 and 3.
      depth1: { c: { eventType: deposit, eventAccountAddress: "0x0", eventData: { amount } }, some: true },
      depth1Number: { c: { eventType: deposit, eventAccountAddress: "0x0", eventData: { amount: Number(amount) } }, some: false },
      depth1Missing: { c: { eventType: deposit, eventAccountAddress: "0x0", eventData: { nothing: "here" } }, some: false },
      depth2: { c: { eventType: deposited, eventAccountAddress: "0x0", eventData: { memo: { text: "rent" } } }, some: true },
      depth2Array: { c: { eventType: deposited, eventAccountAddress: "0x0", eventData: { memo: { tags: ["devnet", "rent"] } } }, some: true },
      depth2ArrayOrder: { c: { eventType: deposited, eventAccountAddress: "0x0", eventData: { memo: { tags: ["rent", "devnet"] } } }, some: false },
      depth2AndField: { c: { eventType: deposited, eventAccountAddress: "0x0", eventData: { account: vaultAccount, memo: { text: vaultMemo.text } } }, some: true },
      depth3: { c: { eventType: listed, eventAccountAddress: "0x0", eventData: { item: { attributes: { rarity: "epic" } } } }, some: true },
      depth3Two: { c: { eventType: listed, eventAccountAddress: "0x0", eventData: { seller, item: { attributes: { rarity: "epic", level: itemData.attributes.level } } } }, some: true },
      depth3WithFn: { c: { payloadFunction: `${MARKET.hex}::market::list_item`, eventType: listed, eventAccountAddress: "0x0", eventData: { item: { attributes: { rarity: "legendary" } } } }, some: true },
      // Type arguments as written.
      typeArgs: { c: { eventType: deposited, eventAccountAddress: "0x0" }, some: true },
      typeArgsMissing: { c: { eventType: `${VAULT.hex}::vault::Deposited`, eventAccountAddress: "0x0" }, some: false },
      typeArgsOther: { c: { eventType: `${VAULT.hex}::vault::Deposited<${DEV_COIN}>`, eventAccountAddress: "0x0" }, some: false },
    };
  });

  it("matches exactly what an independent filter over the stored transactions finds, for each condition form", async () => {
    const subs = Object.entries(conditions).map(([id, { c }]) => sub(id, c));
    const { bySub } = await runMatcher(subs);
    for (const [id, { c, some }] of Object.entries(conditions)) {
      const want = expectedFor(c);
      expect(bySub.get(id), id).toEqual(want);
      expect(want.length > 0, `${id} has matches`).toBe(some);
    }
    // Depth 3 narrows: fewer epic listings than listings.
    expect(bySub.get("depth3")!.length).toBeLessThan(expectedFor({ eventType: listed, eventAccountAddress: "0x0" }).length);
    expect(bySub.get("evFee")).toEqual(users.map((t) => t.hash));
  });

  it("follows subscriptions changed one at a time: added, given a condition of another form, removed", async () => {
    const entries = Object.entries(conditions);
    const half = Math.floor(entries.length / 2);
    const now = new Map(entries.map(([id, { c }]) => [id, c]));
    const swaps: Array<[string, string]> = [
      ["fnTransfer", "depth1"], // by function -> by an eventData field
      ["depth1", "fnVault"], // and back
      ["evFee", "bothCoinDeposit"], // an event alone -> a function and an event
      ["depth3", "evListingHandle"], // a nested eventData field -> an event alone
    ];
    const { bySub } = await runMatcher(
      entries.slice(0, half).map(([id, { c }]) => sub(id, c)),
      (matcher) => {
        for (const [id, { c }] of entries.slice(half)) matcher.put(sub(id, c));
        for (const [id, like] of swaps) {
          now.set(id, conditions[like]!.c);
          matcher.put(sub(id, conditions[like]!.c));
        }
        for (const id of ["fnCoin", "depth2", entries[half + 1]![0]]) {
          now.delete(id);
          matcher.remove(id);
        }
        now.delete("evDeposit");
        matcher.put({ id: "evDeposit", eventType: "BLOCK_PERIOD", condition: { period: 1 } });
      },
    );
    for (const [id] of entries) {
      const c = now.get(id);
      expect(bySub.get(id) ?? [], id).toEqual(c ? expectedFor(c) : []);
    }
    expect(bySub.get("fnTransfer")).toEqual(expectedFor(conditions.depth1!.c));
    expect(bySub.get("fnTransfer")!.length).toBeGreaterThan(0);
    expect(bySub.get("fnCoin") ?? []).toEqual([]);
  });

  it("matches failed transactions that match: a failed call of the function, its fee statement", async () => {
    const failed = users.filter((t) => !t.success);
    expect(failed.length).toBeGreaterThan(0);
    const { bySub } = await runMatcher([
      sub("fn", { payloadFunction: "0x1::aptos_account::transfer" }),
      sub("coin", { payloadFunction: "0x1::coin::transfer" }),
      sub("fee", { eventType: "0x1::transaction_fee::FeeStatement", eventAccountAddress: "0x0" }),
      sub("deposits", { payloadFunction: "0x1::coin::transfer", eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x0" }),
    ]);
    const failedHashes = new Set(failed.map((t) => t.hash));
    const failedOf = (id: string) => bySub.get(id)!.filter((h) => failedHashes.has(h));
    expect([...failedOf("fn"), ...failedOf("coin")].sort()).toEqual(failed.filter((t) => fnOf(t) === "0x1::aptos_account::transfer" || fnOf(t) === "0x1::coin::transfer").map((t) => t.hash).sort());
    expect(failedOf("fn").length + failedOf("coin").length).toBeGreaterThan(0);
    expect(failedOf("fee")).toEqual(failed.map((t) => t.hash));
    // A failed transfer emits no CoinDeposit.
    expect(failedOf("deposits")).toEqual([]);
    const vmStatuses = users.filter((t) => bySub.get("fn")!.includes(t.hash) && !t.success).map((t) => t.vm_status);
    expect(vmStatuses.every((s) => s.startsWith("Move abort"))).toBe(true);
  });

  it("delivers whole transactions in version order, one match per subscription per block", async () => {
    const subs = [sub("fee", { eventType: "0x1::transaction_fee::FeeStatement", eventAccountAddress: "0x0" }), sub("transfer", { payloadFunction: "0x1::aptos_account::transfer" })];
    const { perBlock } = await runMatcher(subs);
    const byHash = new Map(users.map((t) => [t.hash, t]));
    for (const { matches } of perBlock) {
      expect(matches.map((m) => m.subscriptionId)).toEqual([...new Set(matches.map((m) => m.subscriptionId))]);
      for (const m of matches) {
        expect(m.messages.length).toBeGreaterThan(0);
        const versions = m.messages.map((t) => BigInt((t as { version: string }).version));
        expect(versions).toEqual([...versions].sort((a, b) => (a < b ? -1 : 1)));
        for (const t of m.messages) expect(t).toEqual(messageOf(byHash.get((t as { hash: string }).hash)!));
      }
    }
    // Every block with user transactions delivers all of them to the fee subscription, nothing else.
    const stored = await db().aptosTransaction.findMany({ where: { network: SLUG, type: "user_transaction" }, select: { blockHeight: true, hash: true }, orderBy: { version: "asc" } });
    for (const { block, matches } of perBlock) {
      const fee = matches.find((m) => m.subscriptionId === "fee");
      const want = stored.filter((t) => t.blockHeight === block.number).map((t) => t.hash);
      expect(fee?.messages.map((t) => (t as { hash: string }).hash) ?? [], `block ${block.number}`).toEqual(want);
      expect(Object.keys(fee?.messages[0] ?? {})).not.toContain("changes");
    }
    expect(perBlock[0]!.matches).toEqual([]);
  });

  it("stays indexed with 10,000 subscriptions: each gets exactly its own matches", async () => {
    const amounts = [...new Set(users.flatMap((t) => t.events).filter((e) => e.type === deposit).map((e) => (e.data as { amount: string }).amount))];
    expect(amounts.length).toBeGreaterThan(100);
    const subs: MatchableSubscription[] = [];
    const conds = new Map<string, Partial<TransactionCondition>>();
    const add = (id: string, c: Partial<TransactionCondition>) => {
      subs.push(sub(id, c));
      conds.set(id, c);
    };
    // One per real deposit amount, and as many that never occur.
    amounts.forEach((amount, i) => {
      add(`amount-${i}`, { eventType: deposit, eventAccountAddress: "0x0", eventData: { amount } });
      add(`no-amount-${i}`, { eventType: deposit, eventAccountAddress: "0x0", eventData: { amount: `${amount}0` } });
    });
    // Many subscribers of the same event and function.
    for (let i = 0; i < 500; i++) add(`fee-${i}`, { eventType: "0x1::transaction_fee::FeeStatement", eventAccountAddress: "0x0" });
    for (let i = 0; i < 500; i++) add(`transfer-${i}`, { payloadFunction: "0x1::aptos_account::transfer" });
    for (const rarity of ["common", "rare", "epic", "legendary"]) add(`rarity-${rarity}`, { eventType: listed, eventAccountAddress: "0x0", eventData: { item: { attributes: { rarity } } } });
    // The rest: functions and events of modules that do not exist, with and without data.
    for (let i = 0; subs.length < 10_000; i++) {
      const address = `0x${(i + 0x1000).toString(16).padStart(64, "0")}`;
      if (i % 3 === 0) add(`decoy-${i}`, { payloadFunction: `${address}::decoy::call_${i}` });
      else if (i % 3 === 1) add(`decoy-${i}`, { eventType: `${address}::decoy::Event`, eventAccountAddress: address, eventData: { n: String(i) } });
      else add(`decoy-${i}`, { payloadFunction: "0x1::aptos_account::transfer", eventType: `${address}::decoy::Event`, eventAccountAddress: "0x0" });
    }
    expect(subs.length).toBe(10_000);
    const { bySub } = await runMatcher(subs);
    let matched = 0;
    for (const [id, c] of conds) {
      const want = expectedFor(c);
      expect(bySub.get(id), id).toEqual(want);
      if (want.length > 0) matched++;
      if (id.startsWith("amount-")) expect(want.length).toBeGreaterThan(0);
      if (id.startsWith("no-amount-") || id.startsWith("decoy-")) expect(want).toEqual([]);
    }
    expect(matched).toBe(amounts.length + 1000 + 4);
  });

  it("compares names in AIP-40 form: a subscription matches what a fullnode writes with leading zeros stripped", () => {
    const long = `0x${"0".repeat(62)}ab`;
    const tx = {
      ...SAMPLE_TRANSACTION,
      payload: { function: "0xab::pay::go", type_arguments: [], arguments: [], type: "entry_function_payload" },
      events: [{ guid: { creation_number: "2", account_address: "0xab" }, sequence_number: "7", type: "0xab::pay::Paid<0x1::aptos_coin::AptosCoin,0xab::pay::Tag>", data: { n: "1" } }],
    };
    const matcher = new AptosTransactionMatcher([
      sub("fn", { payloadFunction: `${long}::pay::go` }),
      sub("event", { eventType: `${long}::pay::Paid<0x1::aptos_coin::AptosCoin, ${long}::pay::Tag>`, eventAccountAddress: long, eventData: { n: "1" } }),
      sub("short-account", { eventType: `${long}::pay::Paid<0x1::aptos_coin::AptosCoin, ${long}::pay::Tag>`, eventAccountAddress: "0xab" }),
      sub("no-args", { eventType: `${long}::pay::Paid`, eventAccountAddress: long }),
      { id: "log", eventType: "LOG", condition: { address: "0x1", topics: [] } },
    ]);
    expect(matcher.matchTransactions([tx]).map((m) => m.subscriptionId)).toEqual(["fn", "event", "short-account"]);
  });
});
