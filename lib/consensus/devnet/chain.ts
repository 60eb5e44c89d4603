import { createHash } from "node:crypto";
import { bech32 } from "@scure/base";
import {
  commitHash,
  consensusParamsHash,
  dataHash,
  headerHash,
  keyPairFromSeed,
  partSetHeader,
  publicKeyJson,
  resultsHash,
  seedFromLabel,
  sha256,
  signVote,
  SignedMsgType,
  toHex,
  txHash,
  utf8,
  validatorSetHash,
  zeroBlockId,
  type Ed25519KeyPair,
} from "../crypto";
import { execResultOf, nativeBlockOf, nativeCommitOf, nativeResultsOf } from "../native";
import type { BlockId, BlockResult, CommitSig, ConsensusParamsResult, Header, IngestAttr, IngestBlock, IngestTx, Tag, TxResult } from "../types";

/**
 * A built-in CometBFT-style chain: four ed25519 validators that really sign every commit, blocks
 * with bank-transfer style transactions and the hashes a CometBFT v0.38 node computes (tx hash,
 * data_hash, header hash, parts, last_block_id, last_commit_hash, last_results_hash,
 * consensus_hash, evidence_hash; crypto/block-hashes.ts). Deterministic per network, so restarts
 * resume the same chain.
 */

export const VALIDATOR_COUNT = 4;
export const VOTING_POWER = 10;
export const BLOCK_VERSION = "11";
export const APP_VERSION = "0";

export interface DevnetValidator {
  index: number;
  keys: Ed25519KeyPair;
  /** P2P node id: hex of the first 20 bytes of SHA-256 of the node key (here: the validator key). */
  nodeId: string;
}

export interface DevnetChain {
  network: string;
  chainId: string;
  validators: DevnetValidator[];
  validatorsHash: string;
  consensusHash: string;
  accounts: string[];
  validatorOperators: string[];
}

const chains = new Map<string, DevnetChain>();

const hex = (bytes: Uint8Array) => toHex(bytes);
const sha = (text: string) => createHash("sha256").update(text).digest();

export function devnetChain(network: string, chainId: string): DevnetChain {
  const key = `${network}/${chainId}`;
  let chain = chains.get(key);
  if (chain) return chain;
  // In CometBFT's order of a set: voting power descending (all equal here), then address ascending.
  const validators = Array.from({ length: VALIDATOR_COUNT }, (_, i) => keyPairFromSeed(seedFromLabel(`blockgate-devnet/${network}/validator/${i}`)))
    .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
    .map((keys, index) => ({ index, keys, nodeId: hex(sha256(keys.publicKey).slice(0, 20)).toLowerCase() }));
  chain = {
    network,
    chainId,
    validators,
    validatorsHash: validatorSetHash(validators.map((v) => ({ publicKey: v.keys.publicKey, votingPower: BigInt(VOTING_POWER) }))),
    consensusHash: consensusParamsHash(CONSENSUS_PARAMS.block),
    accounts: Array.from({ length: 40 }, (_, i) => bech32.encodeFromBytes("bbn", sha(`blockgate-devnet/${network}/account/${i}`).subarray(0, 20))),
    validatorOperators: validators.map((v) => bech32.encodeFromBytes("bbnvaloper", sha256(v.keys.publicKey).subarray(0, 20))),
  };
  chains.set(key, chain);
  return chain;
}

/** Consensus parameters of the devnet, as /consensus_params reports them. */
export const CONSENSUS_PARAMS: ConsensusParamsResult["consensus_params"] = {
  block: { max_bytes: "22020096", max_gas: "-1", time_iota_ms: "1000" },
  evidence: { max_age: "100000" },
  validator: { pub_key_types: ["ed25519"] },
};

/** A small deterministic PRNG (mulberry32), so a height always produces the same transactions. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const tag = (key: string, value: string, index = true): Tag => ({ key, value, index });

interface TxKind {
  action: string;
  build(rand: () => number, chain: DevnetChain, time: Date): { message: Record<string, unknown>; tags: Tag[] };
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

const KINDS: Array<[weight: number, kind: TxKind]> = [
  [
    60,
    {
      action: "send",
      build(rand, chain) {
        const from = pick(rand, chain.accounts);
        let to = pick(rand, chain.accounts);
        if (to === from) to = chain.accounts[(chain.accounts.indexOf(from) + 1) % chain.accounts.length]!;
        const amount = `${1 + Math.floor(rand() * 5000)}ubbn`;
        return {
          message: { "@type": "/cosmos.bank.v1beta1.MsgSend", from_address: from, to_address: to, amount: [{ denom: "ubbn", amount: amount.slice(0, -4) }] },
          tags: [tag("message.action", "send"), tag("message.sender", from), tag("message.module", "bank", false), tag("transfer.sender", from), tag("transfer.recipient", to), tag("transfer.amount", amount)],
        };
      },
    },
  ],
  [
    20,
    {
      action: "delegate",
      build(rand, chain) {
        const from = pick(rand, chain.accounts);
        const validator = pick(rand, chain.validatorOperators);
        const amount = `${1000 + Math.floor(rand() * 100_000)}ubbn`;
        return {
          message: { "@type": "/cosmos.staking.v1beta1.MsgDelegate", delegator_address: from, validator_address: validator, amount: { denom: "ubbn", amount: amount.slice(0, -4) } },
          tags: [tag("message.action", "delegate"), tag("message.sender", from), tag("message.module", "staking", false), tag("delegate.validator", validator), tag("delegate.delegator", from), tag("delegate.amount", amount)],
        };
      },
    },
  ],
  [
    10,
    {
      action: "withdraw_delegator_reward",
      build(rand, chain) {
        const from = pick(rand, chain.accounts);
        const validator = pick(rand, chain.validatorOperators);
        const amount = `${1 + Math.floor(rand() * 900)}ubbn`;
        return {
          message: { "@type": "/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward", delegator_address: from, validator_address: validator },
          tags: [tag("message.action", "withdraw_delegator_reward"), tag("message.sender", from), tag("withdraw_rewards.validator", validator), tag("withdraw_rewards.delegator", from), tag("withdraw_rewards.amount", amount)],
        };
      },
    },
  ],
  [
    10,
    {
      action: "create_btc_delegation",
      build(rand, chain, time) {
        const staker = pick(rand, chain.accounts);
        const sats = `${10_000 + Math.floor(rand() * 5_000_000)}sat`;
        const unlock = new Date(time.getTime() + Math.floor(rand() * 90) * 86_400_000).toISOString();
        return {
          message: { "@type": "/babylon.btcstaking.v1.MsgCreateBTCDelegation", staker_addr: staker, staking_value: sats.slice(0, -3) },
          tags: [tag("message.action", "create_btc_delegation"), tag("message.sender", staker), tag("btc_delegation.staker", staker), tag("btc_delegation.amount", sats), tag("btc_delegation.unlock_time", unlock)],
        };
      },
    },
  ],
];
const TOTAL_WEIGHT = KINDS.reduce((s, [w]) => s + w, 0);

function chooseKind(rand: () => number): TxKind {
  let r = rand() * TOTAL_WEIGHT;
  for (const [w, kind] of KINDS) {
    if ((r -= w) < 0) return kind;
  }
  return KINDS[0]![1];
}

/** Transactions of one block: raw bytes (a JSON-encoded tx), hash, result with tags. */
export function makeTxs(chain: DevnetChain, height: bigint, time: Date, count: number): IngestTx[] {
  const rand = prng(Number(height % 4294967296n) ^ 0x9e3779b9);
  return Array.from({ length: count }, (_, i) => {
    const kind = chooseKind(rand);
    const { message, tags } = kind.build(rand, chain, time);
    const gasUsed = 50_000 + Math.floor(rand() * 100_000);
    const raw = utf8(
      JSON.stringify({
        body: { messages: [message], memo: "", timeout_height: "0" },
        auth_info: { fee: { amount: [{ denom: "ubbn", amount: "2000" }], gas_limit: "200000" } },
        nonce: `${chain.chainId}/${height}/${i}`,
      }),
    );
    const fee = tag("tx.fee", "2000ubbn");
    return {
      raw,
      hash: txHash(raw),
      result: {
        log: JSON.stringify([{ msg_index: 0, events: [{ type: "message", attributes: [{ key: "action", value: kind.action }] }] }]),
        gas_wanted: "200000",
        gas_used: String(gasUsed),
        tags: [...tags, fee],
      },
    };
  });
}

/** The commit of a block (signatures of its four validators), carried as last_commit by the next. */
export function makeCommit(chain: DevnetChain, height: bigint, blockId: BlockId, time: Date): CommitSig[] {
  return chain.validators.map((v) => {
    const timestamp = new Date(time.getTime() + 300 + v.index * 7).toISOString();
    const vote = { type: SignedMsgType.Precommit, height: height.toString(), round: 0, block_id: blockId, timestamp, chain_id: chain.chainId };
    return {
      type: SignedMsgType.Precommit,
      height: height.toString(),
      round: 0,
      block_id: blockId,
      timestamp,
      validator_address: v.keys.address,
      validator_index: v.index,
      signature: signVote(v.keys.privateKey, vote),
    };
  });
}

export interface PreviousBlock {
  height: bigint;
  blockId: BlockId;
  time: Date;
  appHash: string;
  /** The previous block's tx results, hashed into this block's last_results_hash. */
  resultsHash: string;
}

const EMPTY_HASH = toHex(sha256());

/** Builds block `prev.height + 1` (or the first block when prev is null). */
export function buildBlock(chain: DevnetChain, prev: PreviousBlock | null, time: Date, txCount: number): { block: IngestBlock; next: PreviousBlock } {
  const height = prev ? prev.height + 1n : 1n;
  const txs = makeTxs(chain, height, time, txCount);
  const raws = txs.map((t) => t.raw);
  const proposer = chain.validators[Number(height % BigInt(VALIDATOR_COUNT))]!;
  const lastBlockId = prev ? prev.blockId : zeroBlockId();
  const lastCommit = prev ? makeCommit(chain, prev.height, prev.blockId, prev.time) : [];
  const header: Header = {
    version: { block: BLOCK_VERSION, app: APP_VERSION },
    chain_id: chain.chainId,
    height: height.toString(),
    time: time.toISOString(),
    last_block_id: lastBlockId,
    // As /block answers last_commit; the first block's is empty (hash of no signatures).
    last_commit_hash: commitHash(nativeCommitOf(prev?.height ?? 0n, 0, lastBlockId, lastCommit).signatures),
    data_hash: dataHash(raws),
    validators_hash: chain.validatorsHash,
    next_validators_hash: chain.validatorsHash,
    consensus_hash: chain.consensusHash,
    app_hash: prev ? prev.appHash : "",
    last_results_hash: prev ? prev.resultsHash : "",
    evidence_hash: EMPTY_HASH,
    proposer_address: proposer.keys.address,
  };
  const data = raws.map((r) => Buffer.from(r).toString("base64"));
  const block = {
    header,
    data,
    evidence: [],
    last_commit: { height: prev ? Number(prev.height) : 0, round: 0, block_id: lastBlockId, signatures: lastCommit },
  };
  const blockId: BlockId = { hash: headerHash(header), parts: partSetHeader(utf8(JSON.stringify(block))) };
  const result: BlockResult = { block_id: blockId, block };
  const mint = 1_000_000 + Number(height % 1000n);
  const blockAttrs: IngestAttr[] = [
    { key: "mint.amount", value: `${mint}ubbn` },
    { key: "mint.inflation", value: "0.080000000000000000" },
    { key: "proposer.address", value: proposer.keys.address },
    { key: "rewards.validator", value: chain.validatorOperators[proposer.index]! },
  ];
  if (height % 10n === 0n) blockAttrs.push({ key: "checkpoint.epoch", value: String(height / 10n) });
  const appHash = appHashAfter(header);
  const execs = txs.map((t) => execResultOf(t.result));
  // What a node answers for it: /block_results' app_hash is the state after the block.
  const native = { block: nativeBlockOf(result), results: nativeResultsOf(height, execs, blockAttrs, appHash), execs };
  return { block: { height, result, txs, blockAttrs, native }, next: { height, blockId, time, appHash, resultsHash: lastResultsHash(txs.map((t) => t.result)) } };
}

/** last_results_hash of the block after one with these tx results (what /block_results answers for them). */
export function lastResultsHash(results: readonly TxResult[]): string {
  return resultsHash(results.map(execResultOf));
}

/** The devnet application's state hash after executing a block (the next block's app_hash). */
export function appHashAfter(header: Header): string {
  return toHex(sha256(utf8(header.app_hash), utf8(header.data_hash)));
}

export function validatorInfo(chain: DevnetChain) {
  const v = chain.validators[0]!;
  return { address: v.keys.address, pub_key: publicKeyJson(v.keys.publicKey), voting_power: String(VOTING_POWER) };
}
