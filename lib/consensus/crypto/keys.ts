import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { concatBytes, fromBase64, fromHex, toBase64, toHex, utf8 } from "./hex";
import { encodeBlockId, isZeroBlockId, type BlockId } from "./header";
import { merkleRoot, sha256 } from "./merkle";
import { ProtoWriter, lengthPrefixed, parseInt64 } from "./proto";
import { encodeTimestamp, parseTimestamp } from "./timestamp";

/**
 * Validator keys (ed25519, as CometBFT's default `crypto/ed25519`) and vote signing.
 *
 * - A key pair is derived deterministically from a 32-byte seed (RFC 8032 private key), through
 *   node:crypto's PKCS#8 import.
 * - address = first 20 bytes of SHA-256(raw 32-byte public key), upper-case hex (`crypto.AddressHash`).
 * - Signatures are raw 64-byte ed25519 signatures, shown as base64 (as in a commit's `signature`).
 */

const PKCS8_ED25519_PREFIX = fromHex("302e020100300506032b657004220420");
const SPKI_ED25519_PREFIX = fromHex("302a300506032b6570032100");

export const ED25519_SEED_SIZE = 32;
export const ED25519_PUBLIC_KEY_SIZE = 32;
export const ED25519_SIGNATURE_SIZE = 64;
export const ADDRESS_SIZE = 20;

export interface Ed25519KeyPair {
  privateKey: KeyObject;
  publicKeyObject: KeyObject;
  /** Raw 32-byte public key. */
  publicKey: Uint8Array;
  /** Upper-case hex of the first 20 bytes of SHA-256(publicKey). */
  address: string;
}

export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== ED25519_SEED_SIZE) throw new RangeError(`ed25519 seed must be ${ED25519_SEED_SIZE} bytes, got ${seed.length}`);
  return createPrivateKey({ key: Buffer.from(concatBytes(PKCS8_ED25519_PREFIX, seed)), format: "der", type: "pkcs8" });
}

/** The raw 32-byte public key of an ed25519 private or public KeyObject. */
export function publicKeyBytes(key: KeyObject): Uint8Array {
  const publicKey = key.type === "private" ? createPublicKey(key) : key;
  if (publicKey.asymmetricKeyType !== "ed25519") throw new TypeError("not an ed25519 key");
  const der = publicKey.export({ format: "der", type: "spki" });
  return Uint8Array.from(der.subarray(der.length - ED25519_PUBLIC_KEY_SIZE));
}

/** A public KeyObject from a raw 32-byte ed25519 public key. */
export function publicKeyFromBytes(raw: Uint8Array): KeyObject {
  if (raw.length !== ED25519_PUBLIC_KEY_SIZE) throw new RangeError(`ed25519 public key must be ${ED25519_PUBLIC_KEY_SIZE} bytes, got ${raw.length}`);
  return createPublicKey({ key: Buffer.from(concatBytes(SPKI_ED25519_PREFIX, raw)), format: "der", type: "spki" });
}

/** CometBFT validator address: SHA-256(pubkey)[:20], upper-case hex. */
export function addressFromPublicKey(publicKey: Uint8Array): string {
  return toHex(sha256(publicKey).subarray(0, ADDRESS_SIZE));
}

export function keyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  const privateKey = privateKeyFromSeed(seed);
  const publicKeyObject = createPublicKey(privateKey);
  const publicKey = publicKeyBytes(publicKeyObject);
  return { privateKey, publicKeyObject, publicKey, address: addressFromPublicKey(publicKey) };
}

/** A 32-byte seed from a label, SHA-256(utf8(label)) — for deterministic devnet validators only. */
export function seedFromLabel(label: string): Uint8Array {
  return sha256(utf8(label));
}

/** The pub_key object of CometBFT's JSON (/validators, genesis). */
export function publicKeyJson(publicKey: Uint8Array): { type: "tendermint/PubKeyEd25519"; value: string } {
  return { type: "tendermint/PubKeyEd25519", value: toBase64(publicKey) };
}

/**
 * A validator set's hash (validators_hash of a header), as CometBFT's ValidatorSet.Hash: the merkle
 * root of each validator encoded as tendermint.types.SimpleValidator { PublicKey pub_key = 1
 * (oneof ed25519 = 1); int64 voting_power = 2 }, in the set's order (voting power descending,
 * then address ascending).
 */
export function validatorSetHash(validators: ReadonlyArray<{ publicKey: Uint8Array; votingPower: bigint }>): string {
  const leaves = validators.map((v) =>
    new ProtoWriter().message(1, new ProtoWriter().bytes(1, v.publicKey).finish()).int64(2, v.votingPower).finish(),
  );
  return toHex(merkleRoot(leaves));
}

type PrivateKeyInput = KeyObject | Ed25519KeyPair;
type PublicKeyInput = KeyObject | Uint8Array | Ed25519KeyPair;

function toPrivateKey(key: PrivateKeyInput): KeyObject {
  return "privateKey" in key ? key.privateKey : key;
}

function toPublicKey(key: PublicKeyInput): KeyObject {
  if (key instanceof Uint8Array) return publicKeyFromBytes(key);
  return "publicKeyObject" in key ? key.publicKeyObject : key;
}

/** ed25519 signature of `message`, base64. */
export function signBytes(key: PrivateKeyInput, message: Uint8Array): string {
  return toBase64(sign(null, message, toPrivateKey(key)));
}

/** Checks a base64 ed25519 signature. Never throws: a malformed key or signature gives false. */
export function verifySignature(key: PublicKeyInput, message: Uint8Array, signature: string): boolean {
  try {
    const sig = fromBase64(signature);
    if (sig.length !== ED25519_SIGNATURE_SIZE) return false;
    return verify(null, message, toPublicKey(key), sig);
  } catch {
    return false;
  }
}

/** CometBFT `SignedMsgType`. */
export const SignedMsgType = { Unknown: 0, Prevote: 1, Precommit: 2, Proposal: 32 } as const;
export type SignedMsgType = (typeof SignedMsgType)[keyof typeof SignedMsgType];

export interface VoteToSign {
  type: SignedMsgType;
  /** int64, decimal string as in the JSON (a safe-integer number or bigint is accepted too). */
  height: string | number | bigint;
  /** int32 round. */
  round: number;
  /** The block voted for; null or the zero block id for a vote for nil. */
  block_id: BlockId | null;
  /** RFC 3339 with up to nanosecond precision. */
  timestamp: string;
  chain_id: string;
}

/**
 * The bytes a validator signs for a vote. Layout — byte-identical to CometBFT's
 * `types.VoteSignBytes` (`protoio.MarshalDelimited(CanonicalVote)`):
 *
 *   varint(length) ‖ CanonicalVote {
 *     SignedMsgType type = 1;         varint, omitted when 0
 *     sfixed64 height = 2;            8 bytes little endian, omitted when 0
 *     sfixed64 round = 3;             8 bytes little endian, omitted when 0
 *     CanonicalBlockID block_id = 4;  omitted for a vote for nil (zero block id); otherwise
 *                                     { bytes hash = 1; CanonicalPartSetHeader part_set_header = 2
 *                                       (always written) } with { uint32 total = 1; bytes hash = 2; }
 *     Timestamp timestamp = 5;        always written: { int64 seconds = 1; int32 nanos = 2; }
 *     string chain_id = 6;            omitted when empty
 *   }
 *
 * Checked against CometBFT's TestVoteSignBytesTestVectors in the tests.
 */
export function voteSignBytes(vote: VoteToSign): Uint8Array {
  if (!Number.isInteger(vote.type) || vote.type < 0 || vote.type > 0x7fffffff) throw new RangeError(`bad vote type ${vote.type}`);
  if (!Number.isInteger(vote.round) || vote.round < -0x80000000 || vote.round > 0x7fffffff) throw new RangeError(`round out of int32 range: ${vote.round}`);
  const writer = new ProtoWriter()
    .uint64(1, BigInt(vote.type))
    .sfixed64(2, parseInt64(vote.height, "height"))
    .sfixed64(3, BigInt(vote.round));
  if (vote.block_id !== null && !isZeroBlockId(vote.block_id)) writer.message(4, encodeBlockId(vote.block_id, "block_id"));
  writer.message(5, encodeTimestamp(parseTimestamp(vote.timestamp))).string(6, vote.chain_id);
  return lengthPrefixed(writer.finish());
}

/** Signs a vote's sign bytes; base64 signature. */
export function signVote(key: PrivateKeyInput, vote: VoteToSign): string {
  return signBytes(key, voteSignBytes(vote));
}

/** Verifies a vote signature. Never throws: a malformed vote, key or signature gives false. */
export function verifyVote(key: PublicKeyInput, vote: VoteToSign, signature: string): boolean {
  let message: Uint8Array;
  try {
    message = voteSignBytes(vote);
  } catch {
    return false;
  }
  return verifySignature(key, message, signature);
}
