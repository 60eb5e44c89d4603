/**
 * For tests only: what a relayer or light client checks before it trusts a header, written from
 * CometBFT's own definitions and nothing of ours (lib/consensus/crypto is what it checks):
 *
 * - the header hash is the RFC 6962 merkle root of its fields, each protobuf-encoded as
 *   types/block.go Header.Hash does (scalars wrapped in google.protobuf.*Value, cdcEncode);
 * - validators_hash is the merkle root of the set, each validator as a SimpleValidator
 *   (types/validator.go Validator.Bytes);
 * - each BLOCK_ID_FLAG_COMMIT signature is ed25519 over the length-delimited CanonicalVote
 *   (types/vote.go VoteSignBytes, types/canonical.go CanonicalizeVote);
 * - the signatures for the block carry more than 2/3 of the voting power
 *   (types/validator_set.go VerifyCommitLight);
 * - last_commit_hash is the merkle root of the block's last_commit signatures, each a CommitSig
 *   (types/block.go Commit.Hash); last_results_hash the merkle root of the previous block's tx
 *   results, each an ExecTxResult stripped to code, data, gas_wanted, gas_used
 *   (types/results.go ABCIResults.Hash, abci/types deterministicExecTxResult).
 *
 * The messages are encoded by protobufjs from the .proto definitions of CometBFT v0.38
 * (proto/tendermint/{types,crypto,version}); https://github.com/cometbft/cometbft/tree/v0.38.x/proto
 */
import { createHash, createPublicKey, verify } from "node:crypto";
import protobuf from "protobufjs";

const PROTO = `
syntax = "proto3";
package google.protobuf;
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message StringValue { string value = 1; }
message Int64Value { int64 value = 1; }
message BytesValue { bytes value = 1; }
`;

const TENDERMINT = `
syntax = "proto3";
package tendermint;

message Consensus { uint64 block = 1; uint64 app = 2; }

message PublicKey {
  oneof sum {
    bytes ed25519   = 1;
    bytes secp256k1 = 2;
  }
}

enum SignedMsgType {
  SIGNED_MSG_TYPE_UNKNOWN   = 0;
  SIGNED_MSG_TYPE_PREVOTE   = 1;
  SIGNED_MSG_TYPE_PRECOMMIT = 2;
  SIGNED_MSG_TYPE_PROPOSAL  = 32;
}

message PartSetHeader { uint32 total = 1; bytes hash = 2; }
message BlockID { bytes hash = 1; PartSetHeader part_set_header = 2; }

message SimpleValidator {
  PublicKey pub_key      = 1;
  int64     voting_power = 2;
}

enum BlockIDFlag {
  BLOCK_ID_FLAG_UNKNOWN = 0;
  BLOCK_ID_FLAG_ABSENT  = 1;
  BLOCK_ID_FLAG_COMMIT  = 2;
  BLOCK_ID_FLAG_NIL     = 3;
}

message CommitSig {
  BlockIDFlag               block_id_flag     = 1;
  bytes                     validator_address = 2;
  google.protobuf.Timestamp timestamp         = 3;
  bytes                     signature         = 4;
}

message ExecTxResult {
  uint32 code       = 1;
  bytes  data       = 2;
  string log        = 3;
  string info       = 4;
  int64  gas_wanted = 5;
  int64  gas_used   = 6;
  string codespace  = 8;
}

message CanonicalPartSetHeader { uint32 total = 1; bytes hash = 2; }
message CanonicalBlockID { bytes hash = 1; CanonicalPartSetHeader part_set_header = 2; }
message CanonicalVote {
  SignedMsgType             type      = 1;
  sfixed64                  height    = 2;
  sfixed64                  round     = 3;
  CanonicalBlockID          block_id  = 4;
  google.protobuf.Timestamp timestamp = 5;
  string                    chain_id  = 6;
}
`;

const root = new protobuf.Root();
protobuf.parse(PROTO, root, { keepCase: true });
protobuf.parse(TENDERMINT, root, { keepCase: true });
const type = (name: string) => root.lookupType(name);
const T = {
  Timestamp: type("google.protobuf.Timestamp"),
  StringValue: type("google.protobuf.StringValue"),
  Int64Value: type("google.protobuf.Int64Value"),
  BytesValue: type("google.protobuf.BytesValue"),
  Consensus: type("tendermint.Consensus"),
  BlockID: type("tendermint.BlockID"),
  SimpleValidator: type("tendermint.SimpleValidator"),
  CanonicalVote: type("tendermint.CanonicalVote"),
  CommitSig: type("tendermint.CommitSig"),
  ExecTxResult: type("tendermint.ExecTxResult"),
};

/**
 * Go's proto3 encoder leaves out scalars at their zero value; protobufjs writes any field that is
 * set, so zero scalars are not set. Nested messages stay (gogoproto non-nullable: always written).
 */
function present(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === 0 || v === "" || v === undefined || v === null) continue;
    if (v instanceof Uint8Array && v.length === 0) continue;
    out[k] = v;
  }
  return out;
}

const encode = (t: protobuf.Type, fields: Record<string, unknown>) => t.encode(t.fromObject(present(fields))).finish();

export const hexBytes = (hex: string): Uint8Array => Buffer.from(hex, "hex");
const b64 = (text: string): Uint8Array => Buffer.from(text, "base64");
const sha256 = (...parts: Uint8Array[]) => new Uint8Array(createHash("sha256").update(Buffer.concat(parts)).digest());

/** RFC 6962 merkle root, as crypto/merkle HashFromByteSlices. */
export function merkleRoot(items: readonly Uint8Array[]): Uint8Array {
  if (items.length === 0) return sha256();
  if (items.length === 1) return sha256(Uint8Array.of(0), items[0]!);
  let split = 1;
  while (split * 2 < items.length) split *= 2;
  return sha256(Uint8Array.of(1), merkleRoot(items.slice(0, split)), merkleRoot(items.slice(split)));
}

/** An RFC 3339 time with up to nanoseconds as google.protobuf.Timestamp fields. */
export function timestampOf(text: string): { seconds: number; nanos: number } {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) throw new Error(`not an RFC 3339 time: ${text}`);
  const seconds = Date.parse(`${m[1]}${m[3]}`) / 1000;
  return { seconds, nanos: Number((m[2] ?? "").padEnd(9, "0")) };
}

export interface JsonBlockId {
  hash: string;
  parts: { total: number; hash: string };
}

export interface JsonHeader {
  version: { block: string; app?: string };
  chain_id: string;
  height: string;
  time: string;
  last_block_id: JsonBlockId;
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

export interface JsonCommit {
  height: string;
  round: number;
  block_id: JsonBlockId;
  signatures: Array<{ block_id_flag: number; validator_address: string; timestamp: string; signature: string | null }>;
}

export interface JsonValidator {
  address: string;
  pub_key: { type: string; value: string };
  voting_power: string;
  proposer_priority: string;
}

const blockIdFields = (id: JsonBlockId) => ({ hash: hexBytes(id.hash), part_set_header: present({ total: id.parts.total, hash: hexBytes(id.parts.hash) }) });

/** types/block.go Header.Hash. */
export function headerHash(h: JsonHeader): string {
  const bytesValue = (hex: string) => encode(T.BytesValue, { value: hexBytes(hex) });
  const leaves = [
    encode(T.Consensus, { block: Number(h.version.block), app: Number(h.version.app ?? "0") }),
    encode(T.StringValue, { value: h.chain_id }),
    encode(T.Int64Value, { value: Number(h.height) }),
    encode(T.Timestamp, timestampOf(h.time)),
    encode(T.BlockID, blockIdFields(h.last_block_id)),
    ...[h.last_commit_hash, h.data_hash, h.validators_hash, h.next_validators_hash, h.consensus_hash, h.app_hash, h.last_results_hash, h.evidence_hash, h.proposer_address].map(bytesValue),
  ];
  return Buffer.from(merkleRoot(leaves)).toString("hex").toUpperCase();
}

/** types/validator_set.go ValidatorSet.Hash: the merkle root of each SimpleValidator. */
export function validatorsHash(validators: readonly JsonValidator[]): string {
  const leaves = validators.map((v) => {
    if (v.pub_key.type !== "tendermint/PubKeyEd25519") throw new Error(`unexpected key type ${v.pub_key.type}`);
    return encode(T.SimpleValidator, { pub_key: { ed25519: b64(v.pub_key.value) }, voting_power: Number(v.voting_power) });
  });
  return Buffer.from(merkleRoot(leaves)).toString("hex").toUpperCase();
}

/** types/vote.go VoteSignBytes of a precommit for `blockId` (null: a vote for nil), length-delimited. */
export function voteSignBytes(vote: { height: string; round: number; blockId: JsonBlockId | null; timestamp: string; chainId: string }): Uint8Array {
  const body = encode(T.CanonicalVote, {
    type: 2,
    height: Number(vote.height),
    round: vote.round,
    block_id: vote.blockId ? blockIdFields(vote.blockId) : undefined,
    timestamp: present(timestampOf(vote.timestamp)),
    chain_id: vote.chainId,
  });
  return protobuf.Writer.create().bytes(body).finish();
}

export interface JsonCommitSig {
  block_id_flag: number;
  validator_address: string;
  timestamp: string;
  signature: string | null;
}

/** types/block.go Commit.Hash: the merkle root of each CommitSig (the timestamp always written). */
export function commitHash(signatures: readonly JsonCommitSig[]): string {
  const leaves = signatures.map((s) =>
    encode(T.CommitSig, {
      block_id_flag: s.block_id_flag,
      validator_address: hexBytes(s.validator_address),
      timestamp: present(timestampOf(s.timestamp)),
      signature: s.signature === null ? undefined : b64(s.signature),
    }),
  );
  return Buffer.from(merkleRoot(leaves)).toString("hex").toUpperCase();
}

export interface JsonExecTxResult {
  code?: number;
  data?: string | null;
  log?: string;
  info?: string;
  gas_wanted?: string;
  gas_used?: string;
  codespace?: string;
}

/** types/results.go ABCIResults.Hash: the merkle root of each result with only its deterministic fields. */
export function resultsHash(results: readonly JsonExecTxResult[]): string {
  const leaves = results.map((r) =>
    encode(T.ExecTxResult, { code: r.code ?? 0, data: r.data ? b64(r.data) : undefined, gas_wanted: Number(r.gas_wanted ?? "0"), gas_used: Number(r.gas_used ?? "0") }),
  );
  return Buffer.from(merkleRoot(leaves)).toString("hex").toUpperCase();
}

/** An address as crypto/ed25519 derives it: the first 20 bytes of SHA-256 of the public key. */
export const addressOf = (publicKeyBase64: string) => Buffer.from(sha256(b64(publicKeyBase64)).slice(0, 20)).toString("hex").toUpperCase();

export function verifyEd25519(publicKeyBase64: string, message: Uint8Array, signatureBase64: string): boolean {
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKeyBase64, "base64").toString("base64url") }, format: "jwk" });
  return verify(null, message, key, b64(signatureBase64));
}

export interface LightBlockCheck {
  headerHashMatches: boolean;
  validatorsHashMatches: boolean;
  /** Per signature: null when not a commit signature (absent or nil), else whether it verifies. */
  signatures: Array<boolean | null>;
  signedPower: bigint;
  totalPower: bigint;
  /** All of the above hold and the signed power is more than 2/3 of the total. */
  trusted: boolean;
}

/**
 * Checks a header against the commit and validator set of its height, as VerifyCommitLight does
 * (commit signatures are in validator set order; only commit signatures count).
 */
export function checkLightBlock(header: JsonHeader, commit: JsonCommit, validators: readonly JsonValidator[], chainId: string): LightBlockCheck {
  const headerHashMatches = headerHash(header) === commit.block_id.hash && commit.height === header.height;
  const validatorsHashMatches = validatorsHash(validators) === header.validators_hash;
  let signedPower = 0n;
  const totalPower = validators.reduce((sum, v) => sum + BigInt(v.voting_power), 0n);
  const signatures = commit.signatures.map((s, i) => {
    if (s.block_id_flag !== 2) return null;
    const v = validators[i];
    if (!v || s.signature === null || addressOf(v.pub_key.value) !== s.validator_address || v.address !== s.validator_address) return false;
    const ok = verifyEd25519(v.pub_key.value, voteSignBytes({ height: commit.height, round: commit.round, blockId: commit.block_id, timestamp: s.timestamp, chainId }), s.signature);
    if (ok) signedPower += BigInt(v.voting_power);
    return ok;
  });
  const trusted =
    headerHashMatches && validatorsHashMatches && signatures.length === validators.length && signatures.every((s) => s !== false) && signedPower * 3n > totalPower * 2n;
  return { headerHashMatches, validatorsHashMatches, signatures, signedPower, totalPower, trusted };
}

/** header, commit and every page of validators at a height from a native CometBFT URL (key in the path). */
export async function fetchLightBlock(baseUrl: string, height: number, perPage = 2) {
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${baseUrl}/${path}`);
    const body = (await res.json()) as { result?: T; error?: unknown };
    if (res.status !== 200 || body.result === undefined) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(body.error)}`);
    return body.result;
  };
  const { header } = await get<{ header: JsonHeader }>(`header?height=${height}`);
  const { signed_header: signed } = await get<{ signed_header: { header: JsonHeader; commit: JsonCommit } }>(`commit?height=${height}`);
  const validators: JsonValidator[] = [];
  let pages = 0;
  for (let page = 1; ; page++) {
    const r = await get<{ block_height: string; validators: JsonValidator[]; count: string; total: string }>(`validators?height=${height}&page=${page}&per_page=${perPage}`);
    if (r.block_height !== String(height)) throw new Error(`validators of height ${r.block_height}, asked ${height}`);
    validators.push(...r.validators);
    pages++;
    if (validators.length >= Number(r.total) || r.validators.length === 0) break;
  }
  return { header, signedHeader: signed, validators, pages };
}
