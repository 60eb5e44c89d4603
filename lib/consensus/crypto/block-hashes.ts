import { fromBase64, fromHex, toHex } from "./hex";
import { merkleRoot, sha256 } from "./merkle";
import { ProtoWriter, parseInt64 } from "./proto";
import { encodeTimestamp, parseTimestamp } from "./timestamp";

/**
 * The header hashes a CometBFT v0.38 node computes from a block's parts, besides the header hash
 * and data_hash (header.ts, tx.ts):
 *
 * - last_commit_hash = merkleRoot of each CommitSig of the block's last_commit, protobuf-encoded
 *   (types/block.go Commit.Hash; proto/tendermint/types/types.proto CommitSig):
 *     BlockIDFlag block_id_flag = 1; bytes validator_address = 2;
 *     google.protobuf.Timestamp timestamp = 3 (non-nullable: always written); bytes signature = 4;
 *   An empty commit (the first block's) hashes to SHA-256 of no bytes.
 * - last_results_hash = merkleRoot of the previous block's tx results, each stripped to its
 *   deterministic fields (types/results.go ABCIResults.Hash, abci/types deterministicExecTxResult):
 *     uint32 code = 1; bytes data = 2; int64 gas_wanted = 5; int64 gas_used = 6;
 *   (log, info, events and codespace are not hashed). The first block has none: "" (the genesis
 *   state has no LastResultsHash).
 * - consensus_hash = SHA-256 (not a merkle tree) of HashedParams { int64 block_max_bytes = 1;
 *   int64 block_max_gas = 2; } (types/params.go ConsensusParams.Hash).
 * - evidence_hash = merkleRoot of the evidence; no evidence: SHA-256 of no bytes.
 *
 * https://github.com/cometbft/cometbft/blob/v0.38.x/types/block.go
 * https://github.com/cometbft/cometbft/blob/v0.38.x/types/results.go
 * https://github.com/cometbft/cometbft/blob/v0.38.x/types/params.go
 */

/** A commit signature as /block and /commit show it (CometBFT JSON). */
export interface CommitSigJson {
  block_id_flag: number;
  /** Upper-case hex; "" for an absent validator. */
  validator_address: string;
  /** RFC 3339 with up to nanoseconds ("0001-01-01T00:00:00Z" for an absent validator). */
  timestamp: string;
  /** base64; null for an absent validator. */
  signature: string | null;
}

/** An ExecTxResult as /block_results shows it (zero values may be left out). */
export interface ExecTxResultJson {
  code?: number;
  /** base64 */
  data?: string | null;
  gas_wanted?: string;
  gas_used?: string;
}

/** The protobuf encoding of a CommitSig (a leaf of last_commit_hash; also a Commit's field 4). */
export function encodeCommitSig(s: CommitSigJson): Uint8Array {
  return new ProtoWriter()
    .uint64(1, BigInt(s.block_id_flag))
    .bytes(2, fromHex(s.validator_address))
    .message(3, encodeTimestamp(parseTimestamp(s.timestamp)))
    .bytes(4, s.signature === null ? new Uint8Array() : fromBase64(s.signature))
    .finish();
}

/** last_commit_hash of a block whose last_commit has these signatures (upper-case hex). */
export function commitHash(signatures: readonly CommitSigJson[]): string {
  return toHex(merkleRoot(signatures.map(encodeCommitSig)));
}

/** The deterministic protobuf encoding of an ExecTxResult (a leaf of last_results_hash). */
export function encodeDeterministicExecTxResult(r: ExecTxResultJson): Uint8Array {
  return new ProtoWriter()
    .uint32(1, r.code ?? 0)
    .bytes(2, r.data ? fromBase64(r.data) : new Uint8Array())
    .int64(5, parseInt64(r.gas_wanted ?? "0", "gas_wanted"))
    .int64(6, parseInt64(r.gas_used ?? "0", "gas_used"))
    .finish();
}

/** last_results_hash of the block after the one whose tx results these are (upper-case hex). */
export function resultsHash(results: readonly ExecTxResultJson[]): string {
  return toHex(merkleRoot(results.map(encodeDeterministicExecTxResult)));
}

/** consensus_hash of consensus parameters with these block limits (upper-case hex). */
export function consensusParamsHash(block: { max_bytes: string | number; max_gas: string | number }): string {
  const hashed = new ProtoWriter().int64(1, parseInt64(block.max_bytes, "block.max_bytes")).int64(2, parseInt64(block.max_gas, "block.max_gas")).finish();
  return toHex(sha256(hashed));
}
