import { bytesEqual, fromBase64, fromHex, toBase64, toHex } from "./hex";
import { HASH_SIZE, MAX_AUNTS, computeRootFromAunts, leafHash, merkleProof, merkleProofs, merkleRoot, sha256, type MerkleProof } from "./merkle";

/**
 * Transaction hashing as in CometBFT's `types.Tx` / `types.Txs`:
 *
 *   tx hash    = SHA-256(tx)                                   (shown as upper-case hex)
 *   data_hash  = merkleRoot([SHA-256(tx_0), SHA-256(tx_1), …])  (the items are the 32-byte tx
 *                hashes, so leaf_i = SHA-256(0x00 ‖ SHA-256(tx_i)); no txs → SHA-256 of nothing)
 *
 * and `types.TxProof`, in the JSON shape of `/tx?prove=true` (int64s as decimal strings, bytes as
 * base64, the root as upper-case hex).
 */

export interface TxProof {
  /** The block's data_hash, upper-case hex. */
  RootHash: string;
  /** The transaction, base64. */
  Data: string;
  Proof: {
    /** Number of txs in the block, decimal string. */
    total: string;
    /** Position of the tx in the block, decimal string. */
    index: string;
    /** base64 of SHA-256(0x00 ‖ SHA-256(tx)). */
    leaf_hash: string;
    /** base64 sibling hashes, from the leaf up. */
    aunts: string[];
  };
}

/** SHA-256 of the raw tx bytes, upper-case hex (the `hash` of /tx and /tx_search). */
export function txHash(tx: Uint8Array): string {
  return toHex(sha256(tx));
}

export function dataHashBytes(txs: readonly Uint8Array[]): Uint8Array {
  return merkleRoot(txs.map((tx) => sha256(tx)));
}

/** A block's data_hash, upper-case hex; an empty block gives E3B0C442…B855. */
export function dataHash(txs: readonly Uint8Array[]): string {
  return toHex(dataHashBytes(txs));
}

function toTxProof(tx: Uint8Array, proof: MerkleProof): TxProof {
  return {
    RootHash: toHex(proof.rootHash),
    Data: toBase64(tx),
    Proof: {
      total: String(proof.total),
      index: String(proof.index),
      leaf_hash: toBase64(proof.leafHash),
      aunts: proof.aunts.map((aunt) => toBase64(aunt)),
    },
  };
}

/** The inclusion proof of `txs[index]` in its block. Throws a RangeError for a bad index. */
export function txProof(txs: readonly Uint8Array[], index: number): TxProof {
  const proof = merkleProof(txs.map((tx) => sha256(tx)), index);
  const tx = txs[index];
  if (tx === undefined) throw new RangeError(`txProof: no tx at index ${index}`);
  return toTxProof(tx, proof);
}

/** The proofs of every tx of a block in one pass (use for tx_search pages with many hits per block). */
export function txProofs(txs: readonly Uint8Array[]): TxProof[] {
  const { proofs } = merkleProofs(txs.map((tx) => sha256(tx)));
  return proofs.map((proof, i) => {
    const tx = txs[i];
    if (tx === undefined) throw new RangeError(`txProofs: no tx at index ${i}`);
    return toTxProof(tx, proof);
  });
}

const DECIMAL_RE = /^(?:0|[1-9][0-9]*)$/;

function parseCount(value: unknown): number | null {
  if (typeof value !== "string" || !DECIMAL_RE.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

function decode(decoder: (s: string) => Uint8Array, value: unknown): Uint8Array | null {
  if (typeof value !== "string") return null;
  try {
    return decoder(value);
  } catch {
    return null;
  }
}

/**
 * Checks a TxProof the way CometBFT's `TxProof.Validate` does: the leaf hash is
 * SHA-256(0x00 ‖ SHA-256(Data)), all hashes are 32 bytes, there are at most 100 aunts, and folding
 * the aunts from the leaf up (same split rule as the tree) gives RootHash. Also checks, when given,
 * that Data is exactly `tx` and that RootHash is the expected block `dataHash` (hex, any case) —
 * without that last check the proof only shows internal consistency. Never throws: malformed
 * input (bad base64/hex, non-decimal total/index, wrong shapes) gives false.
 */
export function verifyTxProof(proof: TxProof, tx?: Uint8Array, dataHash?: string): boolean {
  if (typeof proof !== "object" || proof === null || typeof proof.Proof !== "object" || proof.Proof === null) return false;
  const { total: totalText, index: indexText, leaf_hash: leafText, aunts: auntTexts } = proof.Proof;
  const total = parseCount(totalText);
  const index = parseCount(indexText);
  if (total === null || index === null || total < 1 || index >= total) return false;

  const data = decode(fromBase64, proof.Data);
  const root = decode(fromHex, proof.RootHash);
  const leaf = decode(fromBase64, leafText);
  if (data === null || root === null || leaf === null) return false;
  if (root.length !== HASH_SIZE || leaf.length !== HASH_SIZE) return false;
  if (tx !== undefined && !bytesEqual(data, tx)) return false;
  if (dataHash !== undefined) {
    const expected = decode(fromHex, dataHash);
    if (expected === null || !bytesEqual(expected, root)) return false;
  }

  if (!Array.isArray(auntTexts) || auntTexts.length > MAX_AUNTS) return false;
  const aunts: Uint8Array[] = [];
  for (const text of auntTexts) {
    const aunt = decode(fromBase64, text);
    if (aunt === null || aunt.length !== HASH_SIZE) return false;
    aunts.push(aunt);
  }

  if (!bytesEqual(leaf, leafHash(sha256(data)))) return false;
  const computed = computeRootFromAunts(index, total, leaf, aunts);
  return computed !== null && bytesEqual(computed, root);
}
