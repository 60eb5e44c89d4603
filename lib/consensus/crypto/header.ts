import { fromHex, toHex } from "./hex";
import { merkleRoot } from "./merkle";
import { ProtoWriter, parseInt64, parseUint64 } from "./proto";
import { encodeTimestamp, parseTimestamp } from "./timestamp";

/**
 * Block header hash and part-set header, following CometBFT's `types.Header.Hash` and
 * `types.NewPartSetFromData`.
 *
 * headerHash = merkleRoot of these 14 byte strings, in order (proto3: zero/empty fields omitted):
 *
 *   1. version               tendermint.version.Consensus { uint64 block = 1; uint64 app = 2; }
 *   2. chain_id              google.protobuf.StringValue  { string value = 1; }       (cdcEncode)
 *   3. height                google.protobuf.Int64Value   { int64 value = 1; }        (cdcEncode)
 *   4. time                  google.protobuf.Timestamp    { int64 seconds = 1; int32 nanos = 2; }
 *   5. last_block_id         tendermint.types.BlockID     { bytes hash = 1;
 *                              PartSetHeader part_set_header = 2 [non-nullable: always written,
 *                              even empty] } with PartSetHeader { uint32 total = 1; bytes hash = 2; }
 *   6–14. last_commit_hash, data_hash, validators_hash, next_validators_hash, consensus_hash,
 *         app_hash, last_results_hash, evidence_hash, proposer_address
 *                            google.protobuf.BytesValue   { bytes value = 1; }        (cdcEncode)
 *
 * This reproduces CometBFT's own test vector (types/block_test.go TestHeaderHash), see the tests.
 */

export interface PartSetHeader {
  total: number;
  /** Upper-case hex; "" when there are no parts (a zero block id). */
  hash: string;
}

export interface BlockId {
  /** Upper-case hex; "" for the zero block id (e.g. last_block_id of the first block). */
  hash: string;
  parts: PartSetHeader;
}

/** A block header as in the JSON of CometBFT's /block (int64/uint64 as decimal strings, bytes as upper-case hex). */
export interface BlockHeader {
  version: { block: string; app: string };
  chain_id: string;
  height: string;
  /** RFC 3339 with up to nanosecond precision, e.g. "2023-06-14T10:17:42.164478437Z". */
  time: string;
  last_block_id: BlockId;
  last_commit_hash: string;
  data_hash: string;
  validators_hash: string;
  next_validators_hash: string;
  consensus_hash: string;
  app_hash: string;
  last_results_hash: string;
  evidence_hash: string;
  proposer_address: string;
}

/** CometBFT's `types.BlockPartSizeBytes`. */
export const BLOCK_PART_SIZE_BYTES = 65536;

/** The zero block id (CometBFT `BlockID{}`), used as last_block_id of the first block and for votes for nil. */
export function zeroBlockId(): BlockId {
  return { hash: "", parts: { total: 0, hash: "" } };
}

/** True for the zero block id: no hash, no parts (CometBFT `BlockID.IsZero`). */
export function isZeroBlockId(id: BlockId): boolean {
  return id.hash === "" && id.parts.total === 0 && id.parts.hash === "";
}

function hexField(value: string, what: string): Uint8Array {
  try {
    return fromHex(value);
  } catch {
    throw new TypeError(`${what}: not a hex string: ${JSON.stringify(value)}`);
  }
}

/** PartSetHeader { uint32 total = 1; bytes hash = 2; } */
export function encodePartSetHeader(parts: PartSetHeader, what = "part_set_header"): Uint8Array {
  return new ProtoWriter().uint32(1, parts.total).bytes(2, hexField(parts.hash, `${what}.hash`)).finish();
}

/** BlockID { bytes hash = 1; PartSetHeader part_set_header = 2 (non-nullable); } */
export function encodeBlockId(id: BlockId, what = "block_id"): Uint8Array {
  return new ProtoWriter()
    .bytes(1, hexField(id.hash, `${what}.hash`))
    .message(2, encodePartSetHeader(id.parts, `${what}.parts`))
    .finish();
}

const bytesValue = (value: string, what: string) => new ProtoWriter().bytes(1, hexField(value, what)).finish();

/** The 14 Merkle items of the header hash, in CometBFT's order (exported for tests and debugging). */
export function encodeHeaderFields(header: BlockHeader): Uint8Array[] {
  return [
    new ProtoWriter()
      .uint64(1, parseUint64(header.version.block, "version.block"))
      .uint64(2, parseUint64(header.version.app, "version.app"))
      .finish(),
    new ProtoWriter().string(1, header.chain_id).finish(),
    new ProtoWriter().int64(1, parseInt64(header.height, "height")).finish(),
    encodeTimestamp(parseTimestamp(header.time)),
    encodeBlockId(header.last_block_id, "last_block_id"),
    bytesValue(header.last_commit_hash, "last_commit_hash"),
    bytesValue(header.data_hash, "data_hash"),
    bytesValue(header.validators_hash, "validators_hash"),
    bytesValue(header.next_validators_hash, "next_validators_hash"),
    bytesValue(header.consensus_hash, "consensus_hash"),
    bytesValue(header.app_hash, "app_hash"),
    bytesValue(header.last_results_hash, "last_results_hash"),
    bytesValue(header.evidence_hash, "evidence_hash"),
    bytesValue(header.proposer_address, "proposer_address"),
  ];
}

/**
 * The block hash (block_id.hash), upper-case hex, as CometBFT's `Header.Hash()`. Like CometBFT, a
 * header without validators_hash has no hash: the result is then "" (Go returns nil). Throws a
 * TypeError/RangeError when a field is malformed (bad hex, non-decimal height, bad time…).
 */
export function headerHash(header: BlockHeader): string {
  const fields = encodeHeaderFields(header);
  if (header.validators_hash === "") return "";
  return toHex(merkleRoot(fields));
}

/** Splits serialized block bytes into BLOCK_PART_SIZE_BYTES parts (the last one may be shorter). */
export function splitParts(bytes: Uint8Array, partSize = BLOCK_PART_SIZE_BYTES): Uint8Array[] {
  if (!Number.isSafeInteger(partSize) || partSize < 1) throw new RangeError(`bad part size ${partSize}`);
  if (bytes.length === 0) return [new Uint8Array(0)];
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += partSize) parts.push(bytes.subarray(offset, offset + partSize));
  return parts;
}

/**
 * block_id.parts of serialized block bytes: total = number of 64 KiB parts, hash = merkleRoot over
 * the raw parts (CometBFT `NewPartSetFromData(bytes, BlockPartSizeBytes).Header()`).
 * Deviation: empty input counts as one empty part (total 1, hash = SHA-256(0x00)) so that a block
 * always has at least one part; CometBFT would give total 0 — real blocks are never empty.
 */
export function partSetHeader(bytes: Uint8Array): PartSetHeader {
  const parts = splitParts(bytes);
  return { total: parts.length, hash: toHex(merkleRoot(parts)) };
}
