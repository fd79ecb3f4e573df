import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendToFrontier,
  consistencyProof,
  consistencyProofOfLeafHashes,
  EMPTY_FRONTIER,
  emptyTreeHash,
  frontierRoot,
  inclusionProof,
  inclusionProofOfLeafHashes,
  leafHash,
  MERKLE_HASH_BYTES,
  type MerkleFrontier,
  MerkleRangeError,
  merkleRootOfLeafHashes,
  merkleTreeHash,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
} from '../../../../functions/domain/audit/merkle';
import { volume } from '../../../support/volume';

// ---------------------------------------------------------------------------------------------------------
// Independent reference, written in this file straight from RFC 9162 §2.1 (nothing below imports the module
// under test): hashing, MTH, PATH, SUBPROOF and the two verification algorithms.
// ---------------------------------------------------------------------------------------------------------

const H = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};
const refLeaf = (d: Uint8Array): Buffer => H(Buffer.from([0x00]), d);
const refNode = (l: Uint8Array, r: Uint8Array): Buffer => H(Buffer.from([0x01]), l, r);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const hexes = (list: readonly Uint8Array[]): string[] => list.map(hex);

/** k: the largest power of two smaller than n. */
const refK = (n: number): number => 2 ** Math.floor(Math.log2(n - 1));

/** MTH(D[n]), §2.1.1. */
const refMTH = (D: readonly Uint8Array[]): Buffer => {
  const n = D.length;
  if (n === 0) return H();
  if (n === 1) return refLeaf(D[0]!);
  const k = refK(n);
  return refNode(refMTH(D.slice(0, k)), refMTH(D.slice(k)));
};

/** PATH(m, D[n]), §2.1.3.1. */
const refPATH = (m: number, D: readonly Uint8Array[]): Buffer[] => {
  const n = D.length;
  if (n === 1) return [];
  const k = refK(n);
  return m < k
    ? [...refPATH(m, D.slice(0, k)), refMTH(D.slice(k))]
    : [...refPATH(m - k, D.slice(k)), refMTH(D.slice(0, k))];
};

/** SUBPROOF(m, D[n], b) and PROOF(m, D[n]), §2.1.4.1. */
const refSUBPROOF = (m: number, D: readonly Uint8Array[], b: boolean): Buffer[] => {
  const n = D.length;
  if (m === n) return b ? [] : [refMTH(D)];
  const k = refK(n);
  return m <= k
    ? [...refSUBPROOF(m, D.slice(0, k), b), refMTH(D.slice(k))]
    : [...refSUBPROOF(m - k, D.slice(k), false), refMTH(D.slice(0, k))];
};
const refPROOF = (m: number, D: readonly Uint8Array[]): Buffer[] => refSUBPROOF(m, D, true);

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** §2.1.3.2, step by step. */
const independentVerifyInclusion = (
  leafIndex: number,
  treeSize: number,
  hash: Uint8Array,
  inclusionPath: readonly Uint8Array[],
  rootHash: Uint8Array,
): boolean => {
  // 1. If leaf_index is greater than or equal to tree_size, then stop and fail the proof verification.
  if (leafIndex >= treeSize) return false;
  // 2. Set fn to leaf_index and sn to tree_size - 1.
  let fn = leafIndex;
  let sn = treeSize - 1;
  // 3. Set r to hash.
  let r: Uint8Array = hash;
  // 4. For each value p in the inclusion_path array:
  for (const p of inclusionPath) {
    // a. If sn is 0, then stop the iteration and fail the proof verification.
    if (sn === 0) return false;
    // b. If LSB(fn) is set, or if fn is equal to sn, then:
    if ((fn & 1) === 1 || fn === sn) {
      // i. Set r to HASH(0x01 || p || r).
      r = refNode(p, r);
      // ii. If LSB(fn) is not set, then right-shift both fn and sn equally until either LSB(fn) is set or fn is 0.
      if ((fn & 1) === 0) {
        while (!((fn & 1) === 1 || fn === 0)) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      // Otherwise: Set r to HASH(0x01 || r || p).
      r = refNode(r, p);
    }
    // c. Finally, right-shift both fn and sn one time.
    fn >>= 1;
    sn >>= 1;
  }
  // 5. Compare sn to 0. Compare r against the root_hash. If sn is equal to 0 and r and the root_hash are equal,
  //    then the log has proven the inclusion of hash. Otherwise, fail the proof verification.
  return sn === 0 && same(r, rootHash);
};

/** §2.1.4.2, step by step (defined for 0 < first < second). */
const independentVerifyConsistency = (
  first: number,
  second: number,
  firstHash: Uint8Array,
  secondHash: Uint8Array,
  consistencyPath: readonly Uint8Array[],
): boolean => {
  if (!(first > 0 && first < second)) throw new Error('the RFC algorithm is defined for 0 < first < second');
  // 1. If consistency_path is an empty array, then stop and fail the proof verification.
  if (consistencyPath.length === 0) return false;
  // 2. If first is an exact power of 2, then prepend first_hash to the consistency_path array.
  const path = (first & (first - 1)) === 0 ? [firstHash, ...consistencyPath] : [...consistencyPath];
  // 3. Set fn to first - 1 and sn to second - 1.
  let fn = first - 1;
  let sn = second - 1;
  // 4. If LSB(fn) is set, then right-shift both fn and sn equally until LSB(fn) is not set.
  while ((fn & 1) === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  // 5. Set both fr and sr to the first value in the consistency_path array.
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  // 6. For each subsequent value c in the consistency_path array:
  for (const c of path.slice(1)) {
    // a. If sn is 0, then stop the iteration and fail the proof verification.
    if (sn === 0) return false;
    // b. If LSB(fn) is set, or if fn is equal to sn, then:
    if ((fn & 1) === 1 || fn === sn) {
      // i. Set fr to HASH(0x01 || c || fr).  ii. Set sr to HASH(0x01 || c || sr).
      fr = refNode(c, fr);
      sr = refNode(c, sr);
      // iii. If LSB(fn) is not set, then right-shift both fn and sn equally until either LSB(fn) is set or fn is 0.
      if ((fn & 1) === 0) {
        while (!((fn & 1) === 1 || fn === 0)) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      // Otherwise: i. Set sr to HASH(0x01 || sr || c).
      sr = refNode(sr, c);
    }
    // c. Finally, right-shift both fn and sn one time.
    fn >>= 1;
    sn >>= 1;
  }
  // 7. Verify that fr equals first_hash, sr equals second_hash and sn is 0.
  return same(fr, firstHash) && same(sr, secondHash) && sn === 0;
};

/** Direction of each sibling on the audit path (L: sibling on the left), from the PATH recursion. */
const pathShape = (m: number, n: number): string => {
  if (n === 1) return '';
  const k = refK(n);
  return m < k ? `${pathShape(m, k)}R` : `${pathShape(m - k, n - k)}L`;
};

// ---------------------------------------------------------------------------------------------------------

/** Distinct entries: the index makes every entry unique, the salt varies their content between runs. */
const entries = (n: number, salt: string): Buffer[] =>
  Array.from({ length: n }, (_, i) => Buffer.from(`entry-${i}-${salt}`, 'utf8'));

const flipped = (bytes: Uint8Array, at: number, bit: number): Uint8Array => {
  const copy = Uint8Array.from(bytes);
  copy[at % copy.length]! ^= 1 << bit;
  return copy;
};

const RUNS = { numRuns: volume('MERKLE_PROPERTY_RUNS', { local: 250, ci: 1_000 }) };
const treeArb = fc.record({ n: fc.integer({ min: 1, max: 300 }), salt: fc.string({ maxLength: 8 }) });

describe('RFC 9162 hashing and the Merkle Tree Hash (known answers)', () => {
  it('hashes leaves and nodes with the 0x00 / 0x01 prefixes', () => {
    const entry = Buffer.from('hello');
    expect(hex(leafHash(entry))).toBe(hex(H(Buffer.from([0]), entry)));
    expect(hex(leafHash(new Uint8Array()))).toBe(
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    );
    const [a, b] = [refLeaf(Buffer.from('a')), refLeaf(Buffer.from('b'))];
    expect(hex(nodeHash(a, b))).toBe(hex(H(Buffer.from([1]), a, b)));
    expect(hex(nodeHash(a, b))).not.toBe(hex(nodeHash(b, a)));
    expect(leafHash(entry)).toHaveLength(MERKLE_HASH_BYTES);
  });

  it('gives the empty tree SHA-256 of the empty string', () => {
    const expected = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    expect(hex(merkleTreeHash([]))).toBe(expected);
    expect(hex(emptyTreeHash())).toBe(expected);
    expect(hex(merkleRootOfLeafHashes([]))).toBe(expected);
  });

  it('builds small trees exactly as drawn by hand', () => {
    const d = entries(7, 'kat');
    const [a, b, c, dd, e, f, j] = d.map(refLeaf) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
    const g = refNode(a, b);
    const h = refNode(c, dd);
    const i = refNode(e, f);
    const k = refNode(g, h);
    const l = refNode(i, j);
    expect(hex(merkleTreeHash(d.slice(0, 1)))).toBe(hex(a));
    expect(hex(merkleTreeHash(d.slice(0, 2)))).toBe(hex(g));
    expect(hex(merkleTreeHash(d.slice(0, 3)))).toBe(hex(refNode(g, c)));
    expect(hex(merkleTreeHash(d.slice(0, 4)))).toBe(hex(k));
    expect(hex(merkleTreeHash(d.slice(0, 5)))).toBe(hex(refNode(k, e)));
    expect(hex(merkleTreeHash(d.slice(0, 6)))).toBe(hex(refNode(k, i)));
    expect(hex(merkleTreeHash(d))).toBe(hex(refNode(k, l)));
  });

  it('matches the roots of the Certificate Transparency reference test vectors (Trillian, certificate-transparency)', () => {
    const leaves = [
      '',
      '00',
      '10',
      '2021',
      '3031',
      '40414243',
      '5051525354555657',
      '606162636465666768696a6b6c6d6e6f',
    ].map((text) => Buffer.from(text, 'hex'));
    const roots = [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
      '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
      'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
      '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
    ];
    roots.forEach((root, index) => {
      expect(hex(merkleTreeHash(leaves.slice(0, index + 1)))).toBe(root);
    });
  });

  it('equals the recursive definition for every size up to 300, incrementally as well', () => {
    const d = entries(300, 'all');
    let frontier: MerkleFrontier = EMPTY_FRONTIER;
    expect(hex(frontierRoot(frontier))).toBe(hex(H()));
    for (let n = 1; n <= 300; n += 1) {
      frontier = appendToFrontier(frontier, leafHash(d[n - 1]!));
      const expected = hex(refMTH(d.slice(0, n)));
      expect(hex(frontierRoot(frontier))).toBe(expected);
      expect(frontier.size).toBe(n);
      expect(frontier.peaks).toHaveLength(n.toString(2).replaceAll('0', '').length);
      if (n % 37 === 0 || n < 20) expect(hex(merkleTreeHash(d.slice(0, n)))).toBe(expected);
    }
  });
});

describe('RFC 9162 §2.1.5 example tree of seven entries', () => {
  const d = entries(7, 'rfc');
  const [a, b, c, dd, e, f, j] = d.map(refLeaf) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
  const g = refNode(a, b);
  const h = refNode(c, dd);
  const i = refNode(e, f);
  const k = refNode(g, h);
  const l = refNode(i, j);
  const root = refNode(k, l);

  it.each([
    [0, [b, h, l]],
    [3, [c, g, l]],
    [4, [f, j, k]],
    [6, [i, k]],
  ] as const)('gives the RFC audit path for d%i', (index, path) => {
    const proof = inclusionProof(d, index);
    expect(hexes(proof)).toEqual(hexes(path));
    expect(verifyInclusion({ index, treeSize: 7, leafHash: refLeaf(d[index]!), proof, rootHash: root })).toBe(
      true,
    );
  });

  it.each([
    [3, [c, dd, g, l]],
    [4, [l]],
    [6, [i, j, k]],
  ] as const)('gives the RFC consistency proof from size %i to 7', (oldSize, path) => {
    const proof = consistencyProof(d, oldSize, 7);
    expect(hexes(proof)).toEqual(hexes(path));
    const oldRoot = refMTH(d.slice(0, oldSize));
    expect(verifyConsistency({ oldSize, newSize: 7, oldRoot, newRoot: root, proof })).toBe(true);
    expect(independentVerifyConsistency(oldSize, 7, oldRoot, root, proof)).toBe(true);
  });

  it('accepts a wrong tree size only where the audit path has the same shape (the size is bound by the head)', () => {
    // PATH(0, D[3]) = [b, c] and PATH(0, D[4]) = [b, h] both hang their siblings on the right: the same proof
    // recomputes the same root under either size. A signed tree head binds root and size together.
    const proof = inclusionProof(d.slice(0, 3), 0);
    const root3 = refMTH(d.slice(0, 3));
    expect(pathShape(0, 3)).toBe(pathShape(0, 4));
    expect(verifyInclusion({ index: 0, treeSize: 4, leafHash: a, proof, rootHash: root3 })).toBe(true);
    expect(independentVerifyInclusion(0, 4, a, proof, root3)).toBe(true);
    expect(verifyInclusion({ index: 0, treeSize: 5, leafHash: a, proof, rootHash: root3 })).toBe(false);
  });
});

describe('inclusion proofs (properties)', () => {
  it('every proof equals PATH, and verifies with the independent verifier and with ours', () => {
    fc.assert(
      fc.property(treeArb, fc.nat(), ({ n, salt }, pick) => {
        const d = entries(n, salt);
        const index = pick % n;
        const proof = inclusionProof(d, index);
        const root = merkleTreeHash(d);
        expect(hexes(proof)).toEqual(hexes(refPATH(index, d)));
        expect(hex(root)).toBe(hex(refMTH(d)));
        const leaf = leafHash(d[index]!);
        expect(independentVerifyInclusion(index, n, leaf, proof, root)).toBe(true);
        expect(verifyInclusion({ index, treeSize: n, leafHash: leaf, proof, rootHash: root })).toBe(true);
      }),
      RUNS,
    );
  });

  it('fails with any altered byte of the proof, leaf or root, a wrong index, or a proof cut or extended', () => {
    fc.assert(
      fc.property(
        fc.record({ n: fc.integer({ min: 2, max: 300 }), salt: fc.string({ maxLength: 8 }) }),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        ({ n, salt }, pick, other, at, bit) => {
          const d = entries(n, salt);
          const index = pick % n;
          const proof = inclusionProof(d, index);
          const rootHash = merkleTreeHash(d);
          const leaf = leafHash(d[index]!);
          const check = { index, treeSize: n, leafHash: leaf, proof, rootHash };
          const both = (c: typeof check) => [
            verifyInclusion(c),
            independentVerifyInclusion(c.index, c.treeSize, c.leafHash, c.proof, c.rootHash),
          ];

          const element = at % proof.length;
          const badProof = proof.map((p, idx) => (idx === element ? flipped(p, at >> 3, bit) : p));
          expect(both({ ...check, proof: badProof })).toEqual([false, false]);
          expect(both({ ...check, leafHash: flipped(leaf, at, bit) })).toEqual([false, false]);
          expect(both({ ...check, rootHash: flipped(rootHash, at, bit) })).toEqual([false, false]);
          const wrongIndex = (index + 1 + (other % (n - 1))) % n;
          expect(both({ ...check, index: wrongIndex })).toEqual([false, false]);
          expect(both({ ...check, proof: proof.slice(0, -1) })).toEqual([false, false]);
          expect(both({ ...check, proof: [...proof, proof[0]!] })).toEqual([false, false]);
          // Swapping two siblings breaks it too (when they differ, which distinct subtrees always do).
          if (proof.length >= 2) {
            expect(both({ ...check, proof: [proof[1]!, proof[0]!, ...proof.slice(2)] })).toEqual([
              false,
              false,
            ]);
          }
        },
      ),
      RUNS,
    );
  });

  it('a wrong tree size verifies exactly when the audit path has the same shape, never otherwise', () => {
    fc.assert(
      fc.property(treeArb, fc.nat(), fc.integer({ min: 1, max: 300 }), ({ n, salt }, pick, wrongSize) => {
        fc.pre(wrongSize !== n);
        const d = entries(n, salt);
        const index = pick % n;
        const proof = inclusionProof(d, index);
        const rootHash = merkleTreeHash(d);
        const leaf = leafHash(d[index]!);
        const sameShape = index < wrongSize && pathShape(index, wrongSize) === pathShape(index, n);
        expect(verifyInclusion({ index, treeSize: wrongSize, leafHash: leaf, proof, rootHash })).toBe(
          sameShape,
        );
        expect(independentVerifyInclusion(index, wrongSize, leaf, proof, rootHash)).toBe(sameShape);
      }),
      RUNS,
    );
  });
});

describe('consistency proofs (properties)', () => {
  const sizesArb = fc
    .record({
      n: fc.integer({ min: 1, max: 300 }),
      salt: fc.string({ maxLength: 8 }),
      a: fc.nat(),
      b: fc.nat(),
    })
    .map(({ n, salt, a, b }) => {
      const x = (a % n) + 1;
      const y = (b % n) + 1;
      return { n, salt, oldSize: Math.min(x, y), newSize: Math.max(x, y) };
    });

  it('every proof between any two sizes equals PROOF and verifies with the independent verifier and ours', () => {
    fc.assert(
      fc.property(sizesArb, ({ n, salt, oldSize, newSize }) => {
        const d = entries(n, salt);
        const proof = consistencyProof(d, oldSize, newSize);
        const oldRoot = merkleTreeHash(d.slice(0, oldSize));
        const newRoot = merkleTreeHash(d.slice(0, newSize));
        expect(verifyConsistency({ oldSize, newSize, oldRoot, newRoot, proof })).toBe(true);
        if (oldSize < newSize) {
          expect(hexes(proof)).toEqual(hexes(refPROOF(oldSize, d.slice(0, newSize))));
          expect(independentVerifyConsistency(oldSize, newSize, oldRoot, newRoot, proof)).toBe(true);
        } else {
          expect(proof).toEqual([]);
        }
      }),
      RUNS,
    );
  });

  it('fails with any altered byte of the proof or either root, a cut or extended proof, or a changed history', () => {
    fc.assert(
      fc.property(sizesArb, fc.nat(), fc.integer({ min: 0, max: 7 }), (sizes, at, bit) => {
        const { n, salt, oldSize, newSize } = sizes;
        fc.pre(oldSize < newSize);
        const d = entries(n, salt);
        const proof = consistencyProof(d, oldSize, newSize);
        const oldRoot = merkleTreeHash(d.slice(0, oldSize));
        const newRoot = merkleTreeHash(d.slice(0, newSize));
        const check = { oldSize, newSize, oldRoot, newRoot, proof };
        const both = (c: typeof check) => [
          verifyConsistency(c),
          independentVerifyConsistency(c.oldSize, c.newSize, c.oldRoot, c.newRoot, c.proof),
        ];
        const element = at % proof.length;
        const badProof = proof.map((p, idx) => (idx === element ? flipped(p, at >> 3, bit) : p));
        expect(both({ ...check, proof: badProof })).toEqual([false, false]);
        expect(both({ ...check, oldRoot: flipped(oldRoot, at, bit) })).toEqual([false, false]);
        expect(both({ ...check, newRoot: flipped(newRoot, at, bit) })).toEqual([false, false]);
        expect(both({ ...check, proof: proof.slice(0, -1) })).toEqual([false, false]);
        expect(both({ ...check, proof: [...proof, proof[0]!] })).toEqual([false, false]);
        // The new tree rewrote an old entry: its proof cannot link the old head to the new one.
        const rewritten = d.slice(0, newSize);
        rewritten[at % oldSize] = Buffer.concat([rewritten[at % oldSize]!, Buffer.from('!')]);
        const forged = consistencyProof(rewritten, oldSize, newSize);
        const forgedRoot = merkleTreeHash(rewritten);
        expect(both({ ...check, newRoot: forgedRoot, proof: forged })).toEqual([false, false]);
      }),
      RUNS,
    );
  });
});

describe('the root commits to every entry (properties)', () => {
  it('changes when an entry is removed, two are swapped, or one byte of an entry changes', () => {
    fc.assert(
      fc.property(
        treeArb,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        ({ n, salt }, pick, other, bit) => {
          const d = entries(n, salt);
          const root = hex(merkleTreeHash(d));
          const index = pick % n;
          expect(hex(merkleTreeHash(d.filter((_, idx) => idx !== index)))).not.toBe(root);
          const altered = d.map((entry, idx) =>
            idx === index ? Buffer.from(flipped(entry, other, bit)) : entry,
          );
          expect(hex(merkleTreeHash(altered))).not.toBe(root);
          if (n >= 2) {
            const j = (index + 1 + (other % (n - 1))) % n;
            const swapped = [...d];
            [swapped[index], swapped[j]] = [d[j]!, d[index]!];
            expect(hex(merkleTreeHash(swapped))).not.toBe(root);
          }
        },
      ),
      RUNS,
    );
  });

  it('is the same from a frontier extended entry by entry', () => {
    fc.assert(
      fc.property(treeArb, fc.nat(), ({ n, salt }, pick) => {
        const d = entries(n, salt);
        const middle = pick % (n + 1);
        let frontier: MerkleFrontier = EMPTY_FRONTIER;
        d.forEach((entry, idx) => {
          if (idx === middle) expect(hex(frontierRoot(frontier))).toBe(hex(refMTH(d.slice(0, middle))));
          frontier = appendToFrontier(frontier, leafHash(entry));
        });
        expect(hex(frontierRoot(frontier))).toBe(hex(refMTH(d)));
        expect(hex(merkleRootOfLeafHashes(d.map(refLeaf)))).toBe(hex(refMTH(d)));
      }),
      RUNS,
    );
  });
});

describe('range errors and malformed input', () => {
  const d = entries(5, 'range');
  const hashes = d.map(refLeaf);

  it.each([-1, 5, 1.5, Number.NaN])('refuses an inclusion proof for index %s of 5 leaves', (index) => {
    expect(() => inclusionProof(d, index)).toThrow(MerkleRangeError);
    expect(() => inclusionProofOfLeafHashes(hashes, index)).toThrow(/leaf index/);
  });

  it('refuses an inclusion proof in the empty tree', () => {
    expect(() => inclusionProof([], 0)).toThrow(MerkleRangeError);
  });

  it.each([
    [-1, 3],
    [4, 3],
    [0, 6],
    [2, 2.5],
    [1.5, 3],
  ])('refuses a consistency proof from %s to %s over 5 leaves', (oldSize, newSize) => {
    expect(() => consistencyProof(d, oldSize, newSize)).toThrow(MerkleRangeError);
    expect(() => consistencyProofOfLeafHashes(hashes, oldSize, newSize)).toThrow(RangeError);
  });

  it('names the error and keeps a cause', () => {
    const cause = new Error('inner');
    const error = new MerkleRangeError('outer', { cause });
    expect(error.name).toBe('MerkleRangeError');
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(RangeError);
  });

  it('has empty proofs from the empty tree and to the same size, and verifies them as such', () => {
    const root = merkleTreeHash(d);
    const root3 = merkleTreeHash(d.slice(0, 3));
    expect(consistencyProof(d, 0, 5)).toEqual([]);
    expect(consistencyProof(d, 3, 3)).toEqual([]);
    expect(consistencyProof([], 0, 0)).toEqual([]);
    const empty = emptyTreeHash();
    expect(verifyConsistency({ oldSize: 0, newSize: 5, oldRoot: empty, newRoot: root, proof: [] })).toBe(
      true,
    );
    expect(verifyConsistency({ oldSize: 0, newSize: 0, oldRoot: empty, newRoot: empty, proof: [] })).toBe(
      true,
    );
    expect(verifyConsistency({ oldSize: 0, newSize: 5, oldRoot: root3, newRoot: root, proof: [] })).toBe(
      false,
    );
    expect(verifyConsistency({ oldSize: 0, newSize: 5, oldRoot: empty, newRoot: root, proof: [root] })).toBe(
      false,
    );
    expect(verifyConsistency({ oldSize: 3, newSize: 3, oldRoot: root3, newRoot: root3, proof: [] })).toBe(
      true,
    );
    expect(verifyConsistency({ oldSize: 3, newSize: 3, oldRoot: root3, newRoot: root, proof: [] })).toBe(
      false,
    );
    expect(verifyConsistency({ oldSize: 3, newSize: 3, oldRoot: root3, newRoot: root3, proof: [root] })).toBe(
      false,
    );
    expect(verifyConsistency({ oldSize: 3, newSize: 5, oldRoot: root3, newRoot: root, proof: [] })).toBe(
      false,
    );
  });

  it('answers false, never throws, for malformed verification input', () => {
    const proof = inclusionProof(d, 2);
    const rootHash = merkleTreeHash(d);
    const good = { index: 2, treeSize: 5, leafHash: hashes[2]!, proof, rootHash };
    expect(verifyInclusion(good)).toBe(true);
    for (const bad of [
      { ...good, index: -1 },
      { ...good, index: 5 },
      { ...good, index: 1.5 },
      { ...good, treeSize: Number.NaN },
      { ...good, treeSize: -5 },
      { ...good, leafHash: hashes[2]!.subarray(1) },
      { ...good, rootHash: Buffer.concat([rootHash, Buffer.from([0])]) },
      { ...good, proof: [...proof.slice(0, -1), proof.at(-1)!.subarray(0, 31)] },
      { ...good, proof: 'nope' as unknown as Uint8Array[] },
    ]) {
      expect(verifyInclusion(bad)).toBe(false);
    }
    const oldRoot = merkleTreeHash(d.slice(0, 3));
    const cons = { oldSize: 3, newSize: 5, oldRoot, newRoot: rootHash, proof: consistencyProof(d, 3, 5) };
    expect(verifyConsistency(cons)).toBe(true);
    for (const bad of [
      { ...cons, oldSize: 6 },
      { ...cons, oldSize: -1 },
      { ...cons, newSize: 2.5 },
      { ...cons, oldRoot: oldRoot.subarray(2) },
      { ...cons, newRoot: new Uint8Array(31) },
      { ...cons, proof: [new Uint8Array(33)] },
    ]) {
      expect(verifyConsistency(bad)).toBe(false);
    }
  });

  it('fails a proof that runs past the root (sn reaches 0 before the path ends)', () => {
    const one = entries(1, 'one');
    const root = merkleTreeHash(one);
    const extra = leafHash(Buffer.from('x'));
    expect(verifyInclusion({ index: 0, treeSize: 1, leafHash: root, proof: [], rootHash: root })).toBe(true);
    expect(verifyInclusion({ index: 0, treeSize: 1, leafHash: root, proof: [extra], rootHash: root })).toBe(
      false,
    );
    const two = entries(2, 'two');
    const proof = consistencyProof(two, 1, 2);
    const check = {
      oldSize: 1,
      newSize: 2,
      oldRoot: merkleTreeHash(two.slice(0, 1)),
      newRoot: merkleTreeHash(two),
    };
    expect(verifyConsistency({ ...check, proof })).toBe(true);
    expect(verifyConsistency({ ...check, proof: [...proof, extra] })).toBe(false);
  });
});
