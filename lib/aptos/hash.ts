/**
 * Aptos transaction hashes: SHA3-256 over the domain-separation prefix SHA3-256("APTOS::Transaction")
 * followed by the BCS encoding of the `Transaction` enum (variant index, then the variant's
 * value), as aptos-core's CryptoHash for Transaction computes it
 * (https://aptos.dev/network/blockchain/txns-states).
 */
import { createHash } from "node:crypto";
import { AccountAddress, Serializer, type SignedTransaction } from "@aptos-labs/ts-sdk";

export function sha3(...parts: Array<Uint8Array | string>): Buffer {
  const h = createHash("sha3-256");
  for (const p of parts) h.update(p);
  return h.digest();
}

export const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString("hex")}`;

export function fromHex(text: string): Buffer {
  return Buffer.from(text.startsWith("0x") ? text.slice(2) : text, "hex");
}

const TRANSACTION_PREFIX = sha3("APTOS::Transaction");

/** Variant indexes of aptos-core's `Transaction` enum. */
const VARIANT = { UserTransaction: 0, GenesisTransaction: 1, BlockMetadata: 2, StateCheckpoint: 3 } as const;

function transactionHash(variant: number, value: Uint8Array): string {
  const s = new Serializer();
  s.serializeU32AsUleb128(variant);
  s.serializeFixedBytes(value);
  return hex(sha3(TRANSACTION_PREFIX, s.toUint8Array()));
}

export function userTransactionHash(signed: SignedTransaction): string {
  return transactionHash(VARIANT.UserTransaction, signed.bcsToBytes());
}

export interface BlockMetadataFields {
  id: string;
  epoch: bigint;
  round: bigint;
  proposer: string;
  previousBlockVotesBitvec: number[];
  failedProposerIndices: number[];
  timestampUs: bigint;
}

/** `Transaction::BlockMetadata(BlockMetadata { id, epoch, round, proposer, previous_block_votes_bitvec, failed_proposer_indices, timestamp_usecs })`. */
export function blockMetadataHash(m: BlockMetadataFields): string {
  const s = new Serializer();
  // A HashValue is BCS bytes: length, then the 32 bytes.
  s.serializeBytes(fromHex(m.id));
  s.serializeU64(m.epoch);
  s.serializeU64(m.round);
  AccountAddress.from(m.proposer).serialize(s);
  s.serializeBytes(Uint8Array.from(m.previousBlockVotesBitvec));
  s.serializeU32AsUleb128(m.failedProposerIndices.length);
  for (const i of m.failedProposerIndices) s.serializeU32(i);
  s.serializeU64(m.timestampUs);
  return transactionHash(VARIANT.BlockMetadata, s.toUint8Array());
}

/** `Transaction::StateCheckpoint(block_id)`. */
export function stateCheckpointHash(blockId: string): string {
  const s = new Serializer();
  s.serializeBytes(fromHex(blockId));
  return transactionHash(VARIANT.StateCheckpoint, s.toUint8Array());
}

/** `Transaction::GenesisTransaction(WriteSetPayload::Direct(ChangeSet { write_set: WriteSet::V0(empty), events: [] }))`. */
export function emptyGenesisHash(): string {
  const s = new Serializer();
  s.serializeU32AsUleb128(0); // WriteSetPayload::Direct
  s.serializeU32AsUleb128(0); // WriteSet::V0
  s.serializeU32AsUleb128(0); // no write ops
  s.serializeU32AsUleb128(0); // no events
  return transactionHash(VARIANT.GenesisTransaction, s.toUint8Array());
}
