/**
 * The Aptos devnet's block builder: blocks as the real chain writes them (a block metadata
 * transaction, user transactions, a state checkpoint transaction), versions one per transaction,
 * signed user transactions with their real hashes, the events and resource changes of each kind
 * of call, and a state (balances, sequence numbers, counters) carried from block to block.
 *
 * Real: user transaction hashes (SHA3-256 of the BCS-encoded signed transaction) and their ed25519
 * signatures over the chain's signing message; addresses of accounts and primary stores; the
 * BCS-derived hashes of block metadata, state checkpoint and genesis transactions. Derived with
 * SHA3-256 but not Aptos's Merkle structures: block ids, accumulator roots (a hash chain here),
 * event roots, state change and checkpoint hashes, state key hashes.
 */
import {
  ChainId,
  EntryFunction,
  MoveString,
  RawTransaction,
  SignedTransaction,
  SimpleTransaction,
  TransactionAuthenticatorEd25519,
  TransactionPayloadEntryFunction,
  U64,
  U8,
  generateSigningMessageForTransaction,
  parseTypeTag,
  type EntryFunctionArgumentTypes,
} from "@aptos-labs/ts-sdk";
import { z } from "zod";
import { blockMetadataHash, emptyGenesisHash, hex, sha3, stateCheckpointHash, userTransactionHash } from "../hash";
import { ZERO_HASH, toIngestBlock, toIngestTx } from "../ingest";
import type { AptosEventJson, IngestBlock, TransactionJson, WriteSetChange } from "../types";
import { APT_METADATA, APTOS_COIN, COIN_PUBLISHER, DEV_COIN, FUNDED, MARKET, USERS, VALIDATORS, VAULT, type DevnetAccount } from "./accounts";

/** The root hash of an empty accumulator: the bytes of "ACCUMULATOR_PLACEHOLDER_HASH", zero-padded. */
export const PLACEHOLDER_HASH = "0x414343554d554c41544f525f504c414345484f4c4445525f4841534800000000";
export const EXECUTED = "Executed successfully";
export const GAS_UNIT_PRICE = 100n;
const MAX_GAS_AMOUNT = 200_000n;
const EPOCH = 1n;
/** Each devnet account starts with 100,000 APT and 1,000,000 DevCoin (8 decimals each). */
const INITIAL_APT = 10_000_000_000_000n;
const INITIAL_DEV = 100_000_000_000_000n;

const u64 = z.string().regex(/^\d{1,20}$/);
const hash32 = z.string().regex(/^0x[0-9a-f]{64}$/);

/** What carries from one block to the next (kept in the index's cursor). */
export const devnetStateSchema = z.object({
  blockId: hash32,
  timestampUs: u64,
  accumulator: hash32,
  round: u64,
  /** APT (octas) and DevCoin balances by account address. */
  balances: z.record(z.string(), z.object({ apt: u64, dev: u64 })),
  sequenceNumbers: z.record(z.string(), u64),
  /** The market's listing counter (its ListingEvent handle's next sequence number). */
  listings: u64,
});
export type DevnetState = z.infer<typeof devnetStateSchema>;

export interface DevnetChain {
  chainId: number;
}

/** Deterministic numbers for one block: SHA3-256 in counter mode over the chain id and height. */
class BlockRandom {
  private counter = 0;
  private pool: Buffer = Buffer.alloc(0);

  constructor(private readonly seed: string) {}

  /** An integer in [0, n). */
  int(n: number): number {
    if (this.pool.length < 4) this.pool = sha3(this.seed, String(this.counter++));
    const v = this.pool.readUInt32BE(0);
    this.pool = this.pool.subarray(4);
    return v % n;
  }

  bigint(min: bigint, max: bigint): bigint {
    const span = max - min + 1n;
    const v = (BigInt(this.int(2 ** 30)) << 30n) | BigInt(this.int(2 ** 30));
    return min + (v % span);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** Move structs as the REST API writes them: fields in name order, nested structs too. */
function moveStruct(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(moveStruct);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, moveStruct((value as Record<string, unknown>)[k])]),
  );
}

const moduleEvent = (type: string, data: Record<string, unknown>): AptosEventJson => ({
  guid: { creation_number: "0", account_address: "0x0" },
  sequence_number: "0",
  type,
  data: moveStruct(data),
});

const handleEvent = (account: string, creationNumber: bigint, sequence: bigint, type: string, data: Record<string, unknown>): AptosEventJson => ({
  guid: { creation_number: creationNumber.toString(), account_address: account },
  sequence_number: sequence.toString(),
  type,
  data: moveStruct(data),
});

function writeResource(address: string, type: string, data: Record<string, unknown>): WriteSetChange {
  return { address, state_key_hash: hex(sha3("state key", address, type)), data: { type, data: moveStruct(data) }, type: "write_resource" };
}

const eventHandle = (addr: string, creationNum: number, counter = 0n) => ({ counter: counter.toString(), guid: { id: { addr, creation_num: String(creationNum) } } });

function accountResource(a: DevnetAccount, sequenceNumber: bigint): WriteSetChange {
  return writeResource(a.hex, "0x1::account::Account", {
    authentication_key: a.hex,
    coin_register_events: eventHandle(a.hex, 0),
    guid_creation_num: "4",
    key_rotation_events: eventHandle(a.hex, 1),
    rotation_capability_offer: { for: { vec: [] } },
    sequence_number: sequenceNumber.toString(),
    signer_capability_offer: { for: { vec: [] } },
  });
}

const aptStoreResource = (a: DevnetAccount, balance: bigint) =>
  writeResource(a.aptStore, "0x1::fungible_asset::FungibleStore", { balance: balance.toString(), frozen: false, metadata: { inner: APT_METADATA } });

const devCoinStoreResource = (a: DevnetAccount, value: bigint) =>
  writeResource(a.hex, `0x1::coin::CoinStore<${DEV_COIN}>`, {
    coin: { value: value.toString() },
    deposit_events: eventHandle(a.hex, 2),
    frozen: false,
    withdraw_events: eventHandle(a.hex, 3),
  });

function feeStatement(gasUsed: bigint): AptosEventJson {
  const io = gasUsed / 3n;
  return moduleEvent("0x1::transaction_fee::FeeStatement", {
    execution_gas_units: (gasUsed - io).toString(),
    io_gas_units: io.toString(),
    storage_fee_octas: "0",
    storage_fee_refund_octas: "0",
    total_charge_gas_units: gasUsed.toString(),
  });
}

/** The derived hashes that close a transaction's info, given its own hash and the running accumulator. */
class Ledger {
  constructor(public accumulator: string) {}

  info(version: bigint, txHash: string, events: AptosEventJson[], changes: WriteSetChange[], gasUsed: bigint, vmStatus: string, checkpoint: string | null) {
    this.accumulator = hex(sha3(Buffer.from(this.accumulator.slice(2), "hex"), Buffer.from(txHash.slice(2), "hex")));
    return {
      version: version.toString(),
      hash: txHash,
      state_change_hash: changes.length === 0 ? PLACEHOLDER_HASH : hex(sha3("state changes", JSON.stringify(changes))),
      event_root_hash: events.length === 0 ? PLACEHOLDER_HASH : hex(sha3("events", JSON.stringify(events))),
      state_checkpoint_hash: checkpoint,
      gas_used: gasUsed.toString(),
      success: vmStatus === EXECUTED,
      vm_status: vmStatus,
      accumulator_root_hash: this.accumulator,
      changes,
    };
  }
}

/** A call a devnet user makes, and what executing it did. */
interface Call {
  sender: DevnetAccount;
  fn: string;
  typeArguments: string[];
  /** BCS arguments (signed) and their JSON form (shown). */
  args: EntryFunctionArgumentTypes[];
  jsonArgs: unknown[];
  gasUsed: bigint;
  /** "Executed successfully" or the abort. */
  vmStatus: string;
  /** Events and changes besides the fee statement and the sender's account resource. */
  events: AptosEventJson[];
  changes: WriteSetChange[];
}

function balanceOf(state: DevnetState, a: DevnetAccount) {
  const b = state.balances[a.hex]!;
  return { apt: BigInt(b.apt), dev: BigInt(b.dev) };
}

function setBalance(state: DevnetState, a: DevnetAccount, change: { apt?: bigint; dev?: bigint }) {
  const b = balanceOf(state, a);
  state.balances[a.hex] = { apt: (change.apt ?? b.apt).toString(), dev: (change.dev ?? b.dev).toString() };
}

const RARITIES = ["common", "rare", "epic", "legendary"] as const;
const ITEMS = ["Sword", "Shield", "Helmet", "Bow", "Potion", "Ring"] as const;
const MEMOS = ["rent", "savings", "salary", "refund"] as const;

/** A transfer of one asset between two users; when it is to fail, an amount over the sender's balance. */
interface TransferKind {
  asset: "apt" | "dev";
  fn: string;
  typeArguments: string[];
  amounts: [bigint, bigint];
  abort: string;
  /** Events and changes of a transfer that went through, given the balances after it. */
  effects(amount: bigint, senderAfter: bigint, toAfter: bigint): { events: AptosEventJson[]; changes: WriteSetChange[] };
}

function transfer(state: DevnetState, r: BlockRandom, who: { sender: DevnetAccount; to: DevnetAccount; fail: boolean }, kind: TransferKind): Call {
  const { sender, to, fail } = who;
  const have = balanceOf(state, sender)[kind.asset];
  const amount = fail ? have + r.bigint(1n, kind.amounts[0]) : r.bigint(...kind.amounts);
  const call: Call = {
    sender,
    fn: kind.fn,
    typeArguments: kind.typeArguments,
    args: [to.address, new U64(amount)],
    jsonArgs: [to.hex, amount.toString()],
    gasUsed: fail ? r.bigint(5n, 8n) : r.bigint(9n, 14n),
    vmStatus: fail ? kind.abort : EXECUTED,
    events: [],
    changes: [],
  };
  if (fail) return call;
  const toAfter = balanceOf(state, to)[kind.asset] + amount;
  setBalance(state, sender, { [kind.asset]: have - amount });
  setBalance(state, to, { [kind.asset]: toAfter });
  return { ...call, ...kind.effects(amount, have - amount, toAfter) };
}

/** Plans one call of a random kind (about one in ten fails for lack of funds) and applies its effects to `state`. */
function planCall(state: DevnetState, r: BlockRandom): Call {
  const sender = r.pick(USERS);
  const others = USERS.filter((u) => u !== sender);
  const to = r.pick(others);
  const roll = r.int(100);
  const fail = roll >= 90;
  if (roll < 35 || (fail && roll < 95)) {
    // APT, a fungible asset: withdrawn from the sender's primary store, deposited into the recipient's.
    return transfer(state, r, { sender, to, fail }, {
      asset: "apt",
      fn: "0x1::aptos_account::transfer",
      typeArguments: [],
      amounts: [1_000_000n, 5_000_000_000n],
      abort: "Move abort in 0x1::fungible_asset: EINSUFFICIENT_BALANCE(0x10004): The fungible asset's balance is insufficient.",
      effects: (amount, _senderAfter, toAfter) => ({
        events: [
          moduleEvent("0x1::fungible_asset::Withdraw", { amount: amount.toString(), store: sender.aptStore }),
          moduleEvent("0x1::fungible_asset::Deposit", { amount: amount.toString(), store: to.aptStore }),
        ],
        changes: [aptStoreResource(to, toAfter)],
      }),
    });
  }
  if (roll < 55 || fail) {
    // DevCoin, a coin: the coin module's events name the account and the coin type.
    return transfer(state, r, { sender, to, fail }, {
      asset: "dev",
      fn: "0x1::coin::transfer",
      typeArguments: [DEV_COIN],
      amounts: [1_000n, 100_000_000n],
      abort: "Move abort in 0x1::coin: EINSUFFICIENT_BALANCE(0x10006): Not enough coins to complete transaction",
      effects: (amount, senderAfter, toAfter) => ({
        events: [
          moduleEvent("0x1::coin::CoinWithdraw", { account: sender.hex, amount: amount.toString(), coin_type: DEV_COIN }),
          moduleEvent("0x1::coin::CoinDeposit", { account: to.hex, amount: amount.toString(), coin_type: DEV_COIN }),
        ],
        changes: [devCoinStoreResource(sender, senderAfter), devCoinStoreResource(to, toAfter)],
      }),
    });
  }
  if (roll < 75) {
    // The market: a module event with data nested three levels deep, and a legacy handle event.
    const id = BigInt(state.listings);
    const name = `${r.pick(ITEMS)} #${id}`;
    const price = r.bigint(100_000n, 900_000_000n);
    const rarity = r.int(RARITIES.length);
    const level = 1 + r.int(20);
    state.listings = (id + 1n).toString();
    return {
      sender,
      fn: `${MARKET.hex}::market::list_item`,
      typeArguments: [],
      args: [new MoveString(name), new U64(price), new U8(rarity)],
      jsonArgs: [name, price.toString(), rarity],
      gasUsed: r.bigint(20n, 40n),
      vmStatus: EXECUTED,
      events: [
        moduleEvent(`${MARKET.hex}::market::ItemListed`, {
          item: { id: id.toString(), name, attributes: { rarity: RARITIES[rarity], level } },
          price: price.toString(),
          seller: sender.hex,
        }),
        handleEvent(MARKET.hex, 4n, id, `${MARKET.hex}::market::ListingEvent`, { listing_id: id.toString(), seller: sender.hex }),
      ],
      changes: [writeResource(MARKET.hex, `${MARKET.hex}::market::Marketplace`, { listing_events: eventHandle(MARKET.hex, 4, id + 1n), next_id: (id + 1n).toString() })],
    };
  }
  // The vault: a generic module; its event type carries the coin type as a type argument.
  const amount = r.bigint(1_000_000n, 500_000_000n);
  const memo = r.pick(MEMOS);
  const vaultBal = balanceOf(state, VAULT);
  setBalance(state, sender, { apt: balanceOf(state, sender).apt - amount });
  setBalance(state, VAULT, { apt: vaultBal.apt + amount });
  return {
    sender,
    fn: `${VAULT.hex}::vault::deposit`,
    typeArguments: [APTOS_COIN],
    args: [new U64(amount), new MoveString(memo)],
    jsonArgs: [amount.toString(), memo],
    gasUsed: r.bigint(30n, 60n),
    vmStatus: EXECUTED,
    events: [
      moduleEvent("0x1::fungible_asset::Withdraw", { amount: amount.toString(), store: sender.aptStore }),
      moduleEvent(`${VAULT.hex}::vault::Deposited<${APTOS_COIN}>`, { account: sender.hex, amount: amount.toString(), memo: { text: memo, tags: ["devnet", memo] } }),
      moduleEvent("0x1::fungible_asset::Deposit", { amount: amount.toString(), store: VAULT.aptStore }),
    ],
    changes: [aptStoreResource(VAULT, vaultBal.apt + amount)],
  };
}

/** Signs a planned call as a user transaction and writes its JSON, charging the gas to the sender. */
function userTransaction(chain: DevnetChain, ledger: Ledger, state: DevnetState, call: Call, version: bigint, timestampUs: bigint): TransactionJson {
  const sender = call.sender;
  const sequenceNumber = BigInt(state.sequenceNumbers[sender.hex] ?? "0");
  const [address, module, name] = call.fn.split("::") as [string, string, string];
  const expiration = timestampUs / 1_000_000n + 600n;
  const payload = new TransactionPayloadEntryFunction(
    EntryFunction.build(
      `${address}::${module}`,
      name,
      call.typeArguments.map((t) => parseTypeTag(t)),
      call.args,
    ),
  );
  const raw = new RawTransaction(sender.address, sequenceNumber, payload, MAX_GAS_AMOUNT, GAS_UNIT_PRICE, expiration, new ChainId(chain.chainId));
  const signature = sender.privateKey.sign(generateSigningMessageForTransaction(new SimpleTransaction(raw)));
  const publicKey = sender.privateKey.publicKey();
  const signed = new SignedTransaction(raw, new TransactionAuthenticatorEd25519(publicKey, signature));

  // Gas is paid whether the call succeeded or aborted; the sequence number moves either way.
  const fee = call.gasUsed * GAS_UNIT_PRICE;
  const after = balanceOf(state, sender).apt - fee;
  setBalance(state, sender, { apt: after });
  state.sequenceNumbers[sender.hex] = (sequenceNumber + 1n).toString();
  const events = [...call.events, feeStatement(call.gasUsed)];
  const changes = [accountResource(sender, sequenceNumber + 1n), aptStoreResource(sender, after), ...call.changes];
  return {
    ...ledger.info(version, userTransactionHash(signed), events, changes, call.gasUsed, call.vmStatus, null),
    sender: sender.hex,
    sequence_number: sequenceNumber.toString(),
    max_gas_amount: MAX_GAS_AMOUNT.toString(),
    gas_unit_price: GAS_UNIT_PRICE.toString(),
    expiration_timestamp_secs: expiration.toString(),
    payload: { function: call.fn, type_arguments: call.typeArguments, arguments: call.jsonArgs, type: "entry_function_payload" },
    signature: { public_key: publicKey.toString(), signature: signature.toString(), type: "ed25519_signature" },
    events,
    timestamp: timestampUs.toString(),
    type: "user_transaction",
  };
}

/** Block 0: the genesis transaction alone (version 0), funding the devnet's accounts. */
export function genesisBlock(): { block: IngestBlock; state: DevnetState } {
  const ledger = new Ledger(ZERO_HASH);
  const genesis: TransactionJson = {
    ...ledger.info(0n, emptyGenesisHash(), [], [], 0n, EXECUTED, hex(sha3("checkpoint", "genesis"))),
    payload: { write_set: { changes: [], events: [], type: "direct_write_set" }, type: "write_set_payload" },
    events: [],
    type: "genesis_transaction",
  };
  const state: DevnetState = {
    blockId: ZERO_HASH,
    timestampUs: "0",
    accumulator: ledger.accumulator,
    round: "0",
    balances: Object.fromEntries(FUNDED.map((a) => [a.hex, { apt: INITIAL_APT.toString(), dev: INITIAL_DEV.toString() }])),
    sequenceNumbers: {},
    listings: "0",
  };
  return { block: toIngestBlock(0n, [toIngestTx(genesis)], 0n), state };
}

/**
 * Block `height` (≥ 1) from version `firstVersion`, at `timestampUs`, with `userTxs` user
 * transactions. Returns the block and the state after it; `state` is not changed.
 */
export function buildBlock(chain: DevnetChain, height: bigint, firstVersion: bigint, prev: DevnetState, timestampUs: bigint, userTxs: number): { block: IngestBlock; state: DevnetState } {
  const state: DevnetState = structuredClone(prev);
  const r = new BlockRandom(`aptos devnet ${chain.chainId} block ${height}`);
  const ledger = new Ledger(prev.accumulator);
  const round = BigInt(prev.round) + 1n;
  const id = hex(sha3("block", String(chain.chainId), height.toString(), prev.blockId, timestampUs.toString()));
  const proposer = VALIDATORS[Number(height % BigInt(VALIDATORS.length))]!;
  const votes = [0b1111_0000];
  const metadataEvents = [
    handleEvent("0x1", 3n, height, "0x1::block::NewBlockEvent", {
      epoch: EPOCH.toString(),
      failed_proposer_indices: [],
      hash: id,
      height: height.toString(),
      previous_block_votes_bitvec: hex(Uint8Array.from(votes)),
      proposer,
      round: round.toString(),
      time_microseconds: timestampUs.toString(),
    }),
  ];
  const metadataChanges = [
    writeResource("0x1", "0x1::block::BlockResource", {
      epoch_interval: "7200000000",
      height: height.toString(),
      new_block_events: eventHandle("0x1", 3, height + 1n),
      update_epoch_interval_events: eventHandle("0x1", 4),
    }),
    writeResource("0x1", "0x1::timestamp::CurrentTimeMicroseconds", { microseconds: timestampUs.toString() }),
  ];
  const metadataHash = blockMetadataHash({ id, epoch: EPOCH, round, proposer, previousBlockVotesBitvec: votes, failedProposerIndices: [], timestampUs });
  const txs: TransactionJson[] = [
    {
      ...ledger.info(firstVersion, metadataHash, metadataEvents, metadataChanges, 0n, EXECUTED, null),
      id,
      epoch: EPOCH.toString(),
      round: round.toString(),
      events: metadataEvents,
      previous_block_votes_bitvec: votes,
      proposer,
      failed_proposer_indices: [],
      timestamp: timestampUs.toString(),
      type: "block_metadata_transaction",
    },
  ];
  for (let i = 0; i < userTxs; i++) {
    txs.push(userTransaction(chain, ledger, state, planCall(state, r), firstVersion + BigInt(txs.length), timestampUs));
  }
  const checkpointVersion = firstVersion + BigInt(txs.length);
  txs.push({
    ...ledger.info(checkpointVersion, stateCheckpointHash(id), [], [], 0n, EXECUTED, hex(sha3("checkpoint", id))),
    timestamp: timestampUs.toString(),
    type: "state_checkpoint_transaction",
  });
  state.blockId = id;
  state.timestampUs = timestampUs.toString();
  state.accumulator = ledger.accumulator;
  state.round = round.toString();
  return { block: toIngestBlock(height, txs.map(toIngestTx), EPOCH), state };
}

/** User transactions in the live devnet's block at a height: a few, varying, sometimes none. */
export function userTxCountFor(height: bigint): number {
  const r = Number((height * 2654435761n) % 97n);
  return r < 12 ? 0 : 1 + (r % 6);
}

/** The modules the devnet calls, for documentation and tests. */
export const DEVNET_MODULES = {
  coin: COIN_PUBLISHER.hex,
  market: MARKET.hex,
  vault: VAULT.hex,
  devCoin: DEV_COIN,
} as const;
