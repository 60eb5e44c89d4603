import { createHash } from "node:crypto";
import {
  AccountAddress,
  AccountAuthenticatorEd25519,
  AuthenticationKey,
  ChainId,
  Ed25519PublicKey,
  Ed25519Signature,
  EntryFunction,
  MoveString,
  RawTransaction,
  SimpleTransaction,
  TransactionPayloadEntryFunction,
  U64,
  U8,
  generateSigningMessageForTransaction,
  generateUserTransactionHash,
  parseTypeTag,
  type EntryFunctionArgumentTypes,
} from "@aptos-labs/ts-sdk";
import { describe, expect, it } from "vitest";
import type { AptosEventJson, BlockMetadataTransactionJson, IngestBlock, UserTransactionJson } from "../types";
import { FUNDED, MARKET, USERS, VAULT } from "./accounts";
import { buildBlock, genesisBlock, type DevnetState } from "./chain";

const CHAIN_ID = 104;
const START_US = 1_760_000_000_000_000n;

function chain(blocks: number, userTxs = 5): { blocks: IngestBlock[]; state: DevnetState } {
  const genesis = genesisBlock();
  const out = [genesis.block];
  let state = genesis.state;
  for (let h = 1n; h <= BigInt(blocks); h++) {
    const built = buildBlock({ chainId: CHAIN_ID }, h, out.at(-1)!.lastVersion + 1n, state, START_US + h * 1_000_000n, userTxs);
    out.push(built.block);
    state = built.state;
  }
  return { blocks: out, state };
}

const { blocks, state: finalState } = chain(40);
const bodies = blocks.flatMap((b) => b.txs.map((t) => t.body));
const users = bodies.filter((t): t is UserTransactionJson => t.type === "user_transaction");
const events = users.flatMap((t) => t.events);
const sha3 = (...parts: Buffer[]) => createHash("sha3-256").update(Buffer.concat(parts)).digest();
const bytes = (hex: string) => Buffer.from(hex.slice(2), "hex");
const u64le = (n: string) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};
const PREFIX = sha3(Buffer.from("APTOS::Transaction"));

/** The signed transaction rebuilt from its JSON alone (argument types as the devnet's modules declare them). */
function rebuild(t: UserTransactionJson, chainId = CHAIN_ID): { tx: SimpleTransaction; auth: AccountAuthenticatorEd25519; publicKey: Ed25519PublicKey; signature: Ed25519Signature } {
  const payload = t.payload as { function: string; type_arguments: string[]; arguments: unknown[] };
  const types: Record<string, Array<"address" | "u64" | "string" | "u8">> = {
    transfer: ["address", "u64"],
    list_item: ["string", "u64", "u8"],
    deposit: ["u64", "string"],
  };
  const [address, module, fn] = payload.function.split("::") as [string, string, string];
  const args: EntryFunctionArgumentTypes[] = types[fn]!.map((type, i) => {
    const v = payload.arguments[i];
    if (type === "address") return AccountAddress.from(v as string);
    if (type === "u64") return new U64(BigInt(v as string));
    if (type === "u8") return new U8(v as number);
    return new MoveString(v as string);
  });
  const raw = new RawTransaction(
    AccountAddress.from(t.sender),
    BigInt(t.sequence_number),
    new TransactionPayloadEntryFunction(EntryFunction.build(`${address}::${module}`, fn, payload.type_arguments.map((a) => parseTypeTag(a)), args)),
    BigInt(t.max_gas_amount),
    BigInt(t.gas_unit_price),
    BigInt(t.expiration_timestamp_secs),
    new ChainId(chainId),
  );
  const sig = t.signature as { public_key: string; signature: string };
  const publicKey = new Ed25519PublicKey(sig.public_key);
  const signature = new Ed25519Signature(sig.signature);
  return { tx: new SimpleTransaction(raw), auth: new AccountAuthenticatorEd25519(publicKey, signature), publicKey, signature };
}

describe("the Aptos devnet's blocks", () => {
  it("open with block metadata and close with a state checkpoint; versions go up by one per transaction from genesis", () => {
    expect(blocks[0]!.txs.map((t) => t.type)).toEqual(["genesis_transaction"]);
    expect(blocks[0]).toMatchObject({ height: 0n, firstVersion: 0n, lastVersion: 0n, timestamp: 0n });
    expect(bodies.map((t) => t.version)).toEqual(bodies.map((_, i) => String(i)));
    for (const b of blocks.slice(1)) {
      const types = b.txs.map((t) => t.type);
      expect(types[0]).toBe("block_metadata_transaction");
      expect(types.at(-1)).toBe("state_checkpoint_transaction");
      expect(types.slice(1, -1).every((t) => t === "user_transaction")).toBe(true);
      const meta = b.txs[0]!.body as BlockMetadataTransactionJson;
      expect(b.hash).toBe(meta.id);
      expect(b.timestamp.toString()).toBe(meta.timestamp);
      expect(b.timestamp.toString()).toMatch(/^\d{16}$/);
      expect(b.txs.every((t) => (t.body as { timestamp: string }).timestamp === meta.timestamp)).toBe(true);
      expect(meta.events[0]).toMatchObject({ guid: { creation_number: "3", account_address: "0x1" }, sequence_number: b.height.toString(), type: "0x1::block::NewBlockEvent" });
      expect((meta.events[0]!.data as { height: string }).height).toBe(b.height.toString());
    }
  });

  it("write user transactions with the fullnode's fields in its order, every u64 a decimal string", () => {
    for (const t of users) {
      expect(Object.keys(t)).toEqual([
        "version",
        "hash",
        "state_change_hash",
        "event_root_hash",
        "state_checkpoint_hash",
        "gas_used",
        "success",
        "vm_status",
        "accumulator_root_hash",
        "changes",
        "sender",
        "sequence_number",
        "max_gas_amount",
        "gas_unit_price",
        "expiration_timestamp_secs",
        "payload",
        "signature",
        "events",
        "timestamp",
        "type",
      ]);
      for (const field of ["version", "gas_used", "sequence_number", "max_gas_amount", "gas_unit_price", "expiration_timestamp_secs", "timestamp"] as const) {
        expect(t[field], field).toMatch(/^(0|[1-9]\d*)$/);
      }
      for (const field of ["hash", "state_change_hash", "event_root_hash", "accumulator_root_hash"] as const) expect(t[field]).toMatch(/^0x[0-9a-f]{64}$/);
      expect(t.state_checkpoint_hash).toBeNull();
      expect(t.sender).toMatch(/^0x[0-9a-f]{64}$/);
      expect(Object.keys(t.payload)).toEqual(["function", "type_arguments", "arguments", "type"]);
      expect(t.signature).toEqual({ public_key: expect.stringMatching(/^0x[0-9a-f]{64}$/), signature: expect.stringMatching(/^0x[0-9a-f]{128}$/), type: "ed25519_signature" });
      for (const e of t.events) {
        expect(Object.keys(e)).toEqual(["guid", "sequence_number", "type", "data"]);
        expect(Object.keys(e.guid)).toEqual(["creation_number", "account_address"]);
      }
      expect(BigInt(t.expiration_timestamp_secs)).toBe(BigInt(t.timestamp) / 1_000_000n + 600n);
    }
  });

  it("hash each user transaction as SHA3-256 of its BCS-encoded signed transaction (recomputed with the SDK from the JSON alone)", () => {
    expect(users.length).toBe(200);
    for (const t of users) {
      const { tx, auth } = rebuild(t);
      expect(generateUserTransactionHash({ transaction: tx, senderAuthenticator: auth })).toBe(t.hash);
    }
    // The chain id is part of what is hashed and signed: the same transaction for another chain is another one.
    const { tx, auth } = rebuild(users[0]!, 1);
    expect(generateUserTransactionHash({ transaction: tx, senderAuthenticator: auth })).not.toBe(users[0]!.hash);
  });

  it("sign each user transaction with the sender's ed25519 key over the chain's signing message", () => {
    for (const t of users) {
      const { tx, publicKey, signature } = rebuild(t);
      expect(publicKey.verifySignature({ message: generateSigningMessageForTransaction(tx), signature })).toBe(true);
      expect(AuthenticationKey.fromPublicKey({ publicKey }).derivedAddress().toStringLong()).toBe(t.sender);
      expect(publicKey.verifySignature({ message: generateSigningMessageForTransaction(rebuild(t, 105).tx), signature })).toBe(false);
    }
  });

  it("hash block metadata, state checkpoint and genesis transactions over their BCS encoding", () => {
    for (const b of blocks.slice(1)) {
      const meta = b.txs[0]!.body as BlockMetadataTransactionJson;
      const encoded = Buffer.concat([
        Buffer.from([2, 32]),
        bytes(meta.id),
        u64le(meta.epoch),
        u64le(meta.round),
        bytes(meta.proposer),
        Buffer.from([meta.previous_block_votes_bitvec.length, ...meta.previous_block_votes_bitvec]),
        Buffer.from([0]),
        u64le(meta.timestamp),
      ]);
      expect(meta.hash).toBe(`0x${sha3(PREFIX, encoded).toString("hex")}`);
      expect(b.txs.at(-1)!.hash).toBe(`0x${sha3(PREFIX, Buffer.from([3, 32]), bytes(meta.id)).toString("hex")}`);
      expect(b.txs.at(-1)!.body.state_checkpoint_hash).toMatch(/^0x[0-9a-f]{64}$/);
    }
    expect(blocks[0]!.txs[0]!.hash).toBe(`0x${sha3(PREFIX, Buffer.from([1, 0, 0, 0, 0])).toString("hex")}`);
  });

  it("emit module events at 0x0 and legacy handle events with real accounts and counters", () => {
    const moduleEvents = events.filter((e) => e.guid.account_address === "0x0");
    expect(moduleEvents.every((e) => e.guid.creation_number === "0" && e.sequence_number === "0")).toBe(true);
    const types = new Set(moduleEvents.map((e) => e.type));
    for (const type of ["0x1::fungible_asset::Withdraw", "0x1::fungible_asset::Deposit", "0x1::coin::CoinWithdraw", "0x1::coin::CoinDeposit", "0x1::transaction_fee::FeeStatement"]) {
      expect(types, type).toContain(type);
    }
    const deposit = moduleEvents.find((e) => e.type === "0x1::fungible_asset::Deposit")!;
    expect(Object.keys(deposit.data as object)).toEqual(["amount", "store"]);
    const coinDeposit = moduleEvents.find((e) => e.type === "0x1::coin::CoinDeposit")!;
    expect(coinDeposit.data).toEqual({ account: expect.stringMatching(/^0x[0-9a-f]{64}$/), amount: expect.stringMatching(/^\d+$/), coin_type: expect.stringMatching(/::dev_coin::DevCoin$/) });
    // The market's listings: a handle event of the market account, numbered from 0 without a gap.
    const listings = events.filter((e) => e.type === `${MARKET.hex}::market::ListingEvent`);
    expect(listings.length).toBeGreaterThan(5);
    expect(listings.every((e) => e.guid.account_address === MARKET.hex && e.guid.creation_number === "4")).toBe(true);
    expect(listings.map((e) => e.sequence_number)).toEqual(listings.map((_, i) => String(i)));
  });

  it("carry event data nested one, two and three levels deep, and event types with type arguments", () => {
    const listed = events.find((e) => e.type === `${MARKET.hex}::market::ItemListed`)!;
    expect(listed.data).toEqual({
      item: { attributes: { level: expect.any(Number), rarity: expect.stringMatching(/^(common|rare|epic|legendary)$/) }, id: expect.any(String), name: expect.any(String) },
      price: expect.stringMatching(/^\d+$/),
      seller: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const deposited = events.find((e) => e.type === `${VAULT.hex}::vault::Deposited<0x1::aptos_coin::AptosCoin>`)!;
    expect(deposited.data).toEqual({ account: expect.any(String), amount: expect.any(String), memo: { tags: ["devnet", expect.any(String)], text: expect.any(String) } });
  });

  it("fail a share of transactions for lack of funds, charging gas and moving the sequence number", () => {
    const failed = users.filter((t) => !t.success);
    expect(failed.length).toBeGreaterThan(5);
    expect(failed.length).toBeLessThan(users.length / 4);
    for (const t of failed) {
      expect(t.vm_status).toMatch(/^Move abort in 0x1::(coin: EINSUFFICIENT_BALANCE\(0x10006\)|fungible_asset: EINSUFFICIENT_BALANCE\(0x10004\))/);
      expect(t.events.map((e: AptosEventJson) => e.type)).toEqual(["0x1::transaction_fee::FeeStatement"]);
    }
    expect(users.filter((t) => t.success).every((t) => t.vm_status === "Executed successfully")).toBe(true);
    // Each sender's sequence numbers run from 0 without a gap, failed transactions included.
    for (const u of USERS) {
      const seqs = users.filter((t) => t.sender === u.hex).map((t) => t.sequence_number);
      expect(seqs).toEqual(seqs.map((_, i) => String(i)));
    }
  });

  it("keep balances: only gas leaves the funded accounts", () => {
    const fees = users.reduce((sum, t) => sum + BigInt(t.gas_used) * BigInt(t.gas_unit_price), 0n);
    const total = FUNDED.reduce((sum, a) => sum + BigInt(finalState.balances[a.hex]!.apt), 0n);
    expect(total).toBe(10_000_000_000_000n * BigInt(FUNDED.length) - fees);
  });

  it("come from fixed seeds: the same accounts and the same transactions every time", () => {
    expect(USERS[0]!.hex).toBe("0xc01e43a38a40fc444ec5f515a083a60230875bc08f30d8f870ad7b6612f82308");
    expect(chain(3).blocks.flatMap((b) => b.txs.map((t) => t.hash))).toEqual(blocks.slice(0, 4).flatMap((b) => b.txs.map((t) => t.hash)));
  });
});
