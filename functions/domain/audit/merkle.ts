import { createHash } from 'node:crypto';

/**
 * RFC 9162 (Certificate Transparency v2) §2.1 Merkle hash trees over SHA-256: the tree hash, inclusion proofs
 * (PATH, §2.1.3) and consistency proofs (PROOF/SUBPROOF, §2.1.4), with the RFC's verification algorithms.
 *
 * Trees are built from their entries (`leaves`, the raw bytes of each journal entry); the `…OfLeafHashes`
 * variants take the leaf hashes instead, so a journal that stores `leafHash(entry)` need not re-hash entries.
 * Proof generation throws `MerkleRangeError` on out-of-range sizes or indices (a caller bug); the verifiers
 * never throw and answer `false` for any input that does not check out, malformed input included.
 */

/** Byte length of every hash in the tree (SHA-256). */
export const MERKLE_HASH_BYTES = 32;

/** Raised when a proof is asked for an index or tree size the leaves cannot provide. */
export class MerkleRangeError extends RangeError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MerkleRangeError';
  }
}

const sha256 = (...parts: readonly Uint8Array[]): Uint8Array => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** The hash of a leaf entry: SHA-256(0x00 ‖ entry) (RFC 9162 §2.1.1). */
export const leafHash = (entry: Uint8Array): Uint8Array => sha256(LEAF_PREFIX, entry);

/** The hash of an interior node: SHA-256(0x01 ‖ left ‖ right) (RFC 9162 §2.1.1). */
export const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => sha256(NODE_PREFIX, left, right);

/** The root of the empty tree: SHA-256 of the empty string (RFC 9162 §2.1.1). */
export const emptyTreeHash = (): Uint8Array => sha256();

/** Largest power of two strictly smaller than `n` (n ≥ 2): the RFC's split point k. */
const splitPoint = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

/** MTH(D[lo:hi]) over leaf hashes, by the RFC's recursive definition (hi > lo). */
const subtreeHash = (hashes: readonly Uint8Array[], lo: number, hi: number): Uint8Array => {
  const n = hi - lo;
  if (n === 1) return hashes[lo]!;
  const k = splitPoint(n);
  return nodeHash(subtreeHash(hashes, lo, lo + k), subtreeHash(hashes, lo + k, hi));
};

const isSize = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

const requireSize = (name: string, value: number, max: number): void => {
  if (!isSize(value) || value > max) {
    throw new MerkleRangeError(`${name} must be an integer in [0, ${max}], got ${String(value)}`);
  }
};

/** MTH over leaf hashes (RFC 9162 §2.1.1 with the leaf hashing already done). */
export const merkleRootOfLeafHashes = (hashes: readonly Uint8Array[]): Uint8Array =>
  hashes.length === 0 ? emptyTreeHash() : subtreeHash(hashes, 0, hashes.length);

/** The Merkle Tree Hash MTH(D[n]) of the entries (RFC 9162 §2.1.1); the empty tree hashes to SHA-256(""). */
export const merkleTreeHash = (leaves: readonly Uint8Array[]): Uint8Array =>
  merkleRootOfLeafHashes(leaves.map(leafHash));

/**
 * Inclusion proof PATH(m, D[n]) over leaf hashes (RFC 9162 §2.1.3.1), audit path ordered from the leaf up.
 * Throws `MerkleRangeError` unless 0 ≤ index < hashes.length.
 */
export const inclusionProofOfLeafHashes = (hashes: readonly Uint8Array[], index: number): Uint8Array[] => {
  if (!isSize(index) || index >= hashes.length) {
    throw new MerkleRangeError(
      `leaf index must be an integer in [0, ${hashes.length}), got ${String(index)}`,
    );
  }
  const path: Uint8Array[] = [];
  let lo = 0;
  let hi = hashes.length;
  // Walk down from the root, collecting the sibling of each subtree containing the leaf; the RFC appends
  // them on the way back up, so the list is reversed at the end.
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      path.push(subtreeHash(hashes, lo + k, hi));
      hi = lo + k;
    } else {
      path.push(subtreeHash(hashes, lo, lo + k));
      lo += k;
    }
  }
  return path.reverse();
};

/** Inclusion proof PATH(index, D[n]) for the entry at `index` (RFC 9162 §2.1.3.1). */
export const inclusionProof = (leaves: readonly Uint8Array[], index: number): Uint8Array[] =>
  inclusionProofOfLeafHashes(leaves.map(leafHash), index);

/**
 * Consistency proof PROOF(m, D[n]) over leaf hashes (RFC 9162 §2.1.4.1) between the first `oldSize` and the
 * first `newSize` leaves. The RFC defines it for 0 < m < n; for m = 0 or m = n the proof is empty (the empty
 * tree and a tree itself are trivially consistent). Throws `MerkleRangeError` unless
 * 0 ≤ oldSize ≤ newSize ≤ hashes.length.
 */
export const consistencyProofOfLeafHashes = (
  hashes: readonly Uint8Array[],
  oldSize: number,
  newSize: number,
): Uint8Array[] => {
  requireSize('newSize', newSize, hashes.length);
  requireSize('oldSize', oldSize, newSize);
  if (oldSize === 0 || oldSize === newSize) return [];
  const proof: Uint8Array[] = [];
  // SUBPROOF(m, D[lo:hi], b), unrolled: each step records the sibling that the RFC appends after recursing.
  let m = oldSize;
  let lo = 0;
  let hi = newSize;
  let complete = true;
  while (m !== hi - lo) {
    const k = splitPoint(hi - lo);
    if (m <= k) {
      proof.push(subtreeHash(hashes, lo + k, hi));
      hi = lo + k;
    } else {
      proof.push(subtreeHash(hashes, lo, lo + k));
      lo += k;
      m -= k;
      complete = false;
    }
  }
  if (!complete) proof.push(subtreeHash(hashes, lo, hi));
  return proof.reverse();
};

/** Consistency proof PROOF(oldSize, D[newSize]) between two prefixes of the entries (RFC 9162 §2.1.4.1). */
export const consistencyProof = (
  leaves: readonly Uint8Array[],
  oldSize: number,
  newSize: number,
): Uint8Array[] => consistencyProofOfLeafHashes(leaves.map(leafHash), oldSize, newSize);

const isHash = (value: unknown): value is Uint8Array =>
  value instanceof Uint8Array && value.length === MERKLE_HASH_BYTES;

const isHashList = (value: unknown): value is readonly Uint8Array[] =>
  Array.isArray(value) && value.every(isHash);

/** Equality of two hashes already checked to be `MERKLE_HASH_BYTES` long. */
const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
};

/** What `verifyInclusion` checks: the leaf hash at `index` of a tree of `treeSize` with `rootHash`. */
export interface InclusionCheck {
  readonly index: number;
  readonly treeSize: number;
  readonly leafHash: Uint8Array;
  readonly proof: readonly Uint8Array[];
  readonly rootHash: Uint8Array;
}

/**
 * Verifies an inclusion proof by the algorithm of RFC 9162 §2.1.3.2. Returns `false` (never throws) for a
 * proof that does not check out and for malformed input (non-integer index or size, hashes not 32 bytes).
 */
export const verifyInclusion = (check: InclusionCheck): boolean => {
  const { index, treeSize, proof } = check;
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  if (!isHash(check.leafHash) || !isHash(check.rootHash) || !isHashList(proof)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = check.leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(r, check.rootHash);
};

/** Whether n ≥ 1 is an exact power of two (arithmetic, not bitwise: sizes may exceed 32 bits). */
const isPowerOfTwo = (n: number): boolean => {
  let rest = n;
  while (rest % 2 === 0) rest /= 2;
  return rest === 1;
};

/** What `verifyConsistency` checks: the tree of `oldSize` with `oldRoot` is a prefix of the one of `newSize`. */
export interface ConsistencyCheck {
  readonly oldSize: number;
  readonly newSize: number;
  readonly oldRoot: Uint8Array;
  readonly newRoot: Uint8Array;
  readonly proof: readonly Uint8Array[];
}

/**
 * Verifies a consistency proof by the algorithm of RFC 9162 §2.1.4.2 for 0 < oldSize < newSize. Beyond the
 * RFC, matching `consistencyProof`: oldSize = newSize holds with an empty proof and equal roots, and
 * oldSize = 0 holds with an empty proof when `oldRoot` is the empty tree's hash. Returns `false` (never
 * throws) for anything else, malformed input included.
 */
export const verifyConsistency = (check: ConsistencyCheck): boolean => {
  const { oldSize, newSize, oldRoot, newRoot, proof } = check;
  if (!isSize(oldSize) || !isSize(newSize) || oldSize > newSize) return false;
  if (!isHash(oldRoot) || !isHash(newRoot) || !isHashList(proof)) return false;
  if (oldSize === 0) return proof.length === 0 && bytesEqual(oldRoot, emptyTreeHash());
  if (oldSize === newSize) return proof.length === 0 && bytesEqual(oldRoot, newRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(fr, oldRoot) && bytesEqual(sr, newRoot);
};

/**
 * An append-only Merkle tree summarised by its size and the roots of its perfect subtrees ("peaks"), largest
 * first: one per set bit of `size`. It lets a journal extend its tree head entry by entry in O(log n) without
 * re-reading older entries; `frontierRoot` equals `merkleTreeHash` of the same entries.
 */
export interface MerkleFrontier {
  readonly size: number;
  readonly peaks: readonly Uint8Array[];
}

/** The frontier of the empty tree. */
export const EMPTY_FRONTIER: MerkleFrontier = { size: 0, peaks: [] };

/** Appends one leaf hash (`leafHash(entry)`) to a frontier, returning the new frontier. */
export const appendToFrontier = (frontier: MerkleFrontier, hash: Uint8Array): MerkleFrontier => {
  const peaks = [...frontier.peaks];
  let carry = hash;
  // Merge equal-sized perfect subtrees, as in a binary increment: one merge per trailing set bit of size.
  for (let size = frontier.size; size % 2 === 1; size = Math.floor(size / 2)) {
    carry = nodeHash(peaks.pop()!, carry);
  }
  peaks.push(carry);
  return { size: frontier.size + 1, peaks };
};

/** The Merkle Tree Hash of the entries a frontier summarises. */
export const frontierRoot = (frontier: MerkleFrontier): Uint8Array => {
  const { peaks } = frontier;
  if (peaks.length === 0) return emptyTreeHash();
  let root = peaks[peaks.length - 1]!;
  for (let i = peaks.length - 2; i >= 0; i -= 1) root = nodeHash(peaks[i]!, root);
  return root;
};
