import { hash } from "node:crypto";
import { bytesEqual, concatBytes } from "./hex";

/**
 * The simple Merkle tree of CometBFT's `crypto/merkle` (RFC 6962 style):
 *
 *   empty tree      = SHA-256()                      (the hash of no bytes)
 *   leaf(item)      = SHA-256(0x00 ‖ item)
 *   inner(l, r)     = SHA-256(0x01 ‖ l ‖ r)
 *   root(items)     = leaf(item)                               for one item
 *                   = inner(root(items[:k]), root(items[k:]))  otherwise,
 *                     k = splitPoint(n), the largest power of two strictly below n
 *
 * Proofs list the sibling hashes ("aunts") from the leaf up, as in `merkle.Proof`.
 */

export const HASH_SIZE = 32;
/** CometBFT's `merkle.MaxAunts`: proofs with more aunts are rejected. */
export const MAX_AUNTS = 100;

const LEAF_PREFIX = Uint8Array.of(0);
const INNER_PREFIX = Uint8Array.of(1);

export interface MerkleProof {
  total: number;
  index: number;
  leafHash: Uint8Array;
  /** Sibling hashes from the leaf up to (not including) the root. */
  aunts: Uint8Array[];
  /** The tree's root, which the proof folds up to. */
  rootHash: Uint8Array;
}

/** SHA-256 of the concatenation of `parts` (of nothing when called without arguments). */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  // One-shot hashing of one buffer is the cheapest for the small inputs hashed here.
  return new Uint8Array(hash("sha256", parts.length === 1 ? parts[0]! : concatBytes(...parts), "buffer"));
}

export function leafHash(item: Uint8Array): Uint8Array {
  return sha256(LEAF_PREFIX, item);
}

export function innerHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(INNER_PREFIX, left, right);
}

/** The root of a tree with no items: SHA-256 of no bytes (e3b0c442…b855). */
export function emptyHash(): Uint8Array {
  return sha256();
}

/**
 * How many of `n` items go to the left subtree: the largest power of two strictly less than `n`
 * (0 for n = 1), like CometBFT's `getSplitPoint`. Throws for n < 1.
 */
export function splitPoint(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`splitPoint: expected a positive integer, got ${n}`);
  if (n === 1) return 0;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function item(items: readonly Uint8Array[], i: number): Uint8Array {
  const value = items[i];
  if (value === undefined) throw new RangeError(`no item at index ${i}`);
  return value;
}

/** Root of items[lo, hi), hi > lo. Recursion depth is log2(n). */
function rangeRoot(items: readonly Uint8Array[], lo: number, hi: number): Uint8Array {
  if (hi - lo === 1) return leafHash(item(items, lo));
  const mid = lo + splitPoint(hi - lo);
  return innerHash(rangeRoot(items, lo, mid), rangeRoot(items, mid, hi));
}

/** CometBFT `merkle.HashFromByteSlices`. */
export function merkleRoot(items: readonly Uint8Array[]): Uint8Array {
  return items.length === 0 ? emptyHash() : rangeRoot(items, 0, items.length);
}

function checkIndex(items: readonly Uint8Array[], index: number): void {
  if (!Number.isSafeInteger(index) || index < 0 || index >= items.length) {
    throw new RangeError(`merkle proof: index ${index} out of range for ${items.length} item(s)`);
  }
}

/**
 * The inclusion proof of `items[index]` (CometBFT `merkle.ProofsFromByteSlices`, one entry).
 * Costs one pass over the tree (about 2n hashes); for proofs of many items of the same list use
 * `merkleProofs`. Throws a RangeError when index is out of range (including an empty list).
 */
export function merkleProof(items: readonly Uint8Array[], index: number): MerkleProof {
  checkIndex(items, index);
  const aunts: Uint8Array[] = [];
  let leaf: Uint8Array | undefined;
  // Returns the root of items[lo, hi), which contains `index`; pushes the sibling at each level
  // after recursing, so `aunts` ends up ordered from the leaf up.
  const walk = (lo: number, hi: number): Uint8Array => {
    if (hi - lo === 1) {
      leaf = leafHash(item(items, lo));
      return leaf;
    }
    const mid = lo + splitPoint(hi - lo);
    if (index < mid) {
      const left = walk(lo, mid);
      const right = rangeRoot(items, mid, hi);
      aunts.push(right);
      return innerHash(left, right);
    }
    const left = rangeRoot(items, lo, mid);
    const right = walk(mid, hi);
    aunts.push(left);
    return innerHash(left, right);
  };
  const rootHash = walk(0, items.length);
  if (leaf === undefined) throw new Error("merkle proof: leaf not reached");
  return { total: items.length, index, leafHash: leaf, aunts, rootHash };
}

/**
 * The root and the inclusion proofs of every item, in one pass (n·log2(n) aunt references,
 * about 2n hashes), like CometBFT's `merkle.ProofsFromByteSlices`. An empty list gives the empty
 * hash and no proofs.
 */
export function merkleProofs(items: readonly Uint8Array[]): { rootHash: Uint8Array; proofs: MerkleProof[] } {
  if (items.length === 0) return { rootHash: emptyHash(), proofs: [] };
  const leaves = items.map((value) => leafHash(value));
  const aunts: Uint8Array[][] = items.map(() => []);
  const build = (lo: number, hi: number): Uint8Array => {
    if (hi - lo === 1) return item(leaves, lo);
    const mid = lo + splitPoint(hi - lo);
    const left = build(lo, mid);
    const right = build(mid, hi);
    for (let i = lo; i < mid; i++) aunts[i]?.push(right);
    for (let i = mid; i < hi; i++) aunts[i]?.push(left);
    return innerHash(left, right);
  };
  const rootHash = build(0, items.length);
  const proofs = leaves.map((leaf, index) => ({ total: items.length, index, leafHash: leaf, aunts: aunts[index] ?? [], rootHash }));
  return { rootHash, proofs };
}

/**
 * Folds `aunts` (leaf first) onto `leafHash` at position `index` of a `total`-item tree, exactly
 * like CometBFT's `computeHashFromAunts`. Returns null when the inputs cannot describe a path
 * (index out of range, too few or too many aunts).
 */
export function computeRootFromAunts(index: number, total: number, leaf: Uint8Array, aunts: readonly Uint8Array[]): Uint8Array | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(total)) return null;
  if (index < 0 || total <= 0 || index >= total) return null;
  // `count` = how many of aunts[0..count) are still unused; the last of them is this level's sibling.
  const fold = (idx: number, tot: number, count: number): Uint8Array | null => {
    if (tot === 1) return count === 0 ? leaf : null;
    if (count === 0) return null;
    const sibling = aunts[count - 1];
    if (sibling === undefined) return null;
    const numLeft = splitPoint(tot);
    if (idx < numLeft) {
      const left = fold(idx, numLeft, count - 1);
      return left === null ? null : innerHash(left, sibling);
    }
    const right = fold(idx - numLeft, tot - numLeft, count - 1);
    return right === null ? null : innerHash(sibling, right);
  };
  return fold(index, total, aunts.length);
}

/**
 * CometBFT's `merkle.Proof.Verify`: the proof's leaf hash is `leaf(item)`, its hashes have the
 * right size, it has at most MAX_AUNTS aunts and it folds up to `rootHash`. Never throws.
 */
export function verifyMerkleProof(
  rootHash: Uint8Array,
  value: Uint8Array,
  proof: Pick<MerkleProof, "total" | "index" | "leafHash" | "aunts">,
): boolean {
  if (proof.aunts.length > MAX_AUNTS || proof.leafHash.length !== HASH_SIZE) return false;
  if (proof.aunts.some((aunt) => aunt.length !== HASH_SIZE)) return false;
  if (!bytesEqual(proof.leafHash, leafHash(value))) return false;
  const computed = computeRootFromAunts(proof.index, proof.total, proof.leafHash, proof.aunts);
  return computed !== null && bytesEqual(computed, rootHash);
}
