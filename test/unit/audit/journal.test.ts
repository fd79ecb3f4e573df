import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MirrorConflictError, S3JournalMirror } from '../../../functions/adapters/aws/journal-store';
import type { DsseSigner } from '../../../functions/domain/audit/dsse';
import {
  entryJson,
  signedTreeHeadJson,
  TREE_HEAD_PAYLOAD_TYPE,
  verifyJournalExport,
} from '../../../functions/domain/audit/journal-verify';
import { canonicalJson } from '../../../functions/domain/money/canonical';
import { toHttpError } from '../../../functions/handlers/middleware/domain-errors';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import type { OperationRequest } from '../../../functions/handlers/middleware/http';
import { journalOperations } from '../../../functions/handlers/operations/audit';
import type { Clock } from '../../../functions/ports/clock';
import {
  journalEntryKey,
  journalHeadKey,
  type SignedTreeHead,
  type StoredEntry,
} from '../../../functions/ports/journal';
import type { PublicJwk } from '../../../functions/ports/signing';
import {
  EntryNotSealedError,
  InvalidJournalEntryError,
  Journal,
  JournalContentionError,
  type JournalDependencies,
  JournalIntegrityError,
  JournalNotFoundError,
  JournalRangeError,
} from '../../../functions/usecases/audit/journal';
import { MemoryJournalMirror, MemoryJournalStore } from '../../support/memory-journal-store';

// ---------------------------------------------------------------------------------------------------------
// An independent RFC 9162 verifier, written from the RFC's text with its own SHA-256 hashing; it imports nothing
// from functions/domain/audit/merkle.ts.
//   §2.1.1   MTH({}) = SHA-256(), MTH({d(0)}) = SHA-256(0x00 || d(0)),
//            MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])), k the largest power of two < n.
//   §2.1.3.2 verifying an inclusion proof; §2.1.4.2 verifying consistency between two tree heads (0 < m < n).
// fn and sn are BigInts so that "right-shift" and "LSB" read as in the RFC.
// ---------------------------------------------------------------------------------------------------------

const sha256 = (...chunks: readonly Uint8Array[]): Buffer =>
  chunks.reduce((hash, chunk) => hash.update(chunk), createHash('sha256')).digest();
const rfcLeaf = (d: Uint8Array): Buffer => sha256(Buffer.of(0), d);
const rfcNode = (left: Uint8Array, right: Uint8Array): Buffer => sha256(Buffer.of(1), left, right);
const equal = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;
const lsb = (x: bigint): boolean => (x & 1n) === 1n;

const rfcMth = (leaves: readonly Uint8Array[]): Buffer => {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return rfcLeaf(leaves[0] as Uint8Array);
  let k = 1;
  while (k << 1 < leaves.length) k <<= 1;
  return rfcNode(rfcMth(leaves.slice(0, k)), rfcMth(leaves.slice(k)));
};

/** RFC 9162 §4.12 `inclusion_proof_v2`: the fields the check reads. */
interface InclusionProofV2 {
  readonly leaf_index: number;
  readonly tree_size: number;
  readonly inclusion_path: readonly Uint8Array[];
}

/** RFC 9162 §4.13 `consistency_proof_v2`: `tree_size_1` is "first", `tree_size_2` is "second". */
interface ConsistencyProofV2 {
  readonly tree_size_1: number;
  readonly tree_size_2: number;
  readonly consistency_path: readonly Uint8Array[];
}

/** §2.1.3.2: does `proof` show that `hash` is a leaf of the tree whose head has `root_hash`? */
const rfcVerifyInclusion = (proof: InclusionProofV2, hash: Uint8Array, root_hash: Uint8Array): boolean => {
  if (proof.leaf_index >= proof.tree_size) return false; // step 1
  let [fn, sn] = [BigInt(proof.leaf_index), BigInt(proof.tree_size) - 1n]; // step 2
  let r: Uint8Array = hash; // step 3
  for (const p of proof.inclusion_path) {
    // step 4
    if (sn === 0n) return false; // 4a
    if (!lsb(fn) && fn !== sn) {
      r = rfcNode(r, p); // 4b, otherwise-branch
    } else {
      r = rfcNode(p, r); // 4b.i
      for (; !lsb(fn) && fn !== 0n; fn >>= 1n) sn >>= 1n; // 4b.ii
    }
    [fn, sn] = [fn >> 1n, sn >> 1n]; // 4c
  }
  return sn === 0n && equal(r, root_hash); // step 5
};

/** §2.1.4.2: does `proof` show that the tree with `first_hash` is a prefix of the one with `second_hash`? */
const rfcVerifyConsistency = (
  proof: ConsistencyProofV2,
  first_hash: Uint8Array,
  second_hash: Uint8Array,
): boolean => {
  if (proof.consistency_path.length === 0) return false; // step 1
  const first = BigInt(proof.tree_size_1);
  const isPowerOfTwo = (first & (first - 1n)) === 0n;
  const path = isPowerOfTwo ? [first_hash, ...proof.consistency_path] : [...proof.consistency_path]; // step 2
  let [fn, sn] = [first - 1n, BigInt(proof.tree_size_2) - 1n]; // step 3
  for (; lsb(fn); fn >>= 1n) sn >>= 1n; // step 4
  let fr = path[0] as Uint8Array; // step 5
  let sr = fr;
  for (const c of path.slice(1)) {
    // step 6
    if (sn === 0n) return false; // 6a
    if (!lsb(fn) && fn !== sn) {
      sr = rfcNode(sr, c); // 6b, otherwise-branch
    } else {
      fr = rfcNode(c, fr); // 6b.i
      sr = rfcNode(c, sr); // 6b.ii
      for (; !lsb(fn) && fn !== 0n; fn >>= 1n) sn >>= 1n; // 6b.iii
    }
    [fn, sn] = [fn >> 1n, sn >> 1n]; // 6c
  }
  return equal(fr, first_hash) && equal(sr, second_hash) && sn === 0n; // step 7
};

/** The leaf bytes of an entry, computed here: UTF-8 of the RFC 8785 form of exactly its five fields. */
const leafBytes = ({ index, entry_id, type, at, data }: StoredEntry): Buffer =>
  Buffer.from(canonicalJson({ index, entry_id, type, at, data }));
const hex = (text: string): Buffer => Buffer.from(text, 'hex');

// ---------------------------------------------------------------------------------------------------------
// Fixtures: a real P-256 signer, a clock that moves one second per append, the journal in memory.
// ---------------------------------------------------------------------------------------------------------

const keyPair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer: DsseSigner = {
    keyId: 'journal-test-key',
    sign: async (message) => new Uint8Array(sign('sha256', message, privateKey)),
  };
  const jwk = publicKey.export({ format: 'jwk' });
  const publicJwk: PublicJwk = {
    kty: 'EC',
    crv: 'P-256',
    x: jwk.x as string,
    y: jwk.y as string,
    kid: signer.keyId,
    alg: 'ES256',
    use: 'sig',
  };
  return { signer, publicKey, jwks: { keys: [publicJwk] } };
};

const KEYS = keyPair();
const START = Date.parse('2026-11-22T12:00:00.000Z');

interface Fixture {
  readonly journal: Journal;
  readonly store: MemoryJournalStore;
  readonly mirror: MemoryJournalMirror;
  readonly mirrorErrors: unknown[];
  tick(seconds: number): void;
}

const fixture = (overrides: Partial<JournalDependencies> = {}): Fixture => {
  let now = START;
  const clock: Clock = { now: () => new Date(now) };
  const store = new MemoryJournalStore();
  const mirror = new MemoryJournalMirror();
  const mirrorErrors: unknown[] = [];
  const journal = new Journal({
    store,
    mirror,
    signer: KEYS.signer,
    clock,
    logId: 'test-log',
    sliceSize: 5,
    sliceSeconds: 60,
    onMirrorError: (error) => mirrorErrors.push(error),
    sleep: async () => undefined,
    ...overrides,
  });
  return {
    journal,
    store,
    mirror,
    mirrorErrors,
    tick: (seconds) => {
      now += seconds * 1000;
    },
  };
};

const appendMany = async (f: Fixture, count: number, from = 0) => {
  for (let i = from; i < from + count; i += 1) {
    f.tick(1);
    await f.journal.append({ entry_id: `e-${i}`, type: 'test', data: { n: i, text: `entry ${i}` } });
  }
};

const allHeads = async (journal: Journal): Promise<SignedTreeHead[]> =>
  (await journal.heads({ limit: 1000 })).heads.slice();

describe('Journal: proofs checked by an independent RFC 9162 verifier', () => {
  it('the verifier itself accepts a known tree and refuses altered proofs', () => {
    const leaves = ['a', 'b', 'c', 'd', 'e'].map((text) => Buffer.from(text));
    const root = rfcMth(leaves);
    // PATH(2, D[5]) = [leaf d, MTH(a, b), leaf e] by the RFC's recursion.
    const path = [rfcLeaf(leaves[3] as Buffer), rfcMth(leaves.slice(0, 2)), rfcLeaf(leaves[4] as Buffer)];
    const at = (leaf_index: number, inclusion_path = path) => ({ leaf_index, tree_size: 5, inclusion_path });
    expect(rfcVerifyInclusion(at(2), rfcLeaf(leaves[2] as Buffer), root)).toBe(true);
    expect(rfcVerifyInclusion(at(2), rfcLeaf(leaves[1] as Buffer), root)).toBe(false);
    expect(rfcVerifyInclusion(at(5), rfcLeaf(leaves[2] as Buffer), root)).toBe(false);
    expect(rfcVerifyInclusion(at(2, [...path, root]), rfcLeaf(leaves[2] as Buffer), root)).toBe(false);
    // PROOF(3, D[5]) = [leaf c, leaf d, MTH(a, b), leaf e].
    const proof = [rfcLeaf(leaves[2] as Buffer), rfcLeaf(leaves[3] as Buffer), rfcMth(leaves.slice(0, 2))];
    const consistency = [...proof, rfcLeaf(leaves[4] as Buffer)];
    const from3 = (consistency_path: Uint8Array[]) => ({ tree_size_1: 3, tree_size_2: 5, consistency_path });
    const first = rfcMth(leaves.slice(0, 3));
    expect(rfcVerifyConsistency(from3(consistency), first, root)).toBe(true);
    expect(rfcVerifyConsistency(from3(consistency), rfcMth(leaves.slice(0, 2)), root)).toBe(false);
    expect(rfcVerifyConsistency(from3([]), first, root)).toBe(false);
    expect(rfcVerifyConsistency(from3(consistency.slice(0, 2)), first, root)).toBe(false);
    expect(rfcVerifyConsistency(from3([...consistency, root]), first, root)).toBe(false);
    // A power-of-two first size: its own hash starts the path (step 2).
    const from4 = { tree_size_1: 4, tree_size_2: 5, consistency_path: [rfcLeaf(leaves[4] as Buffer)] };
    expect(rfcVerifyConsistency(from4, rfcMth(leaves.slice(0, 4)), root)).toBe(true);
  });

  it('proves every entry in every head and every pair of heads of a 37-entry journal (slices of 5)', async () => {
    const f = fixture();
    await appendMany(f, 37);
    expect((await allHeads(f.journal)).map((head) => head.tree_size)).toEqual([5, 10, 15, 20, 25, 30, 35]);
    f.tick(60);
    const last = await f.journal.closeSliceIfDue();
    expect(last?.tree_size).toBe(37);
    const heads = await allHeads(f.journal);
    expect(heads.map((head) => head.tree_size)).toEqual([5, 10, 15, 20, 25, 30, 35, 37]);

    const { entries } = await f.journal.entries({ limit: 1000 });
    expect(entries.map((entry) => entry.index)).toEqual([...Array(37).keys()]);
    const leaves = entries.map(leafBytes);

    for (const head of heads) {
      // The head states the RFC's MTH of exactly its first tree_size entries, and its envelope signs that.
      expect(head.root_hash).toBe(rfcMth(leaves.slice(0, head.tree_size)).toString('hex'));
      const payload = Buffer.from(head.envelope.payload, 'base64');
      expect(JSON.parse(payload.toString('utf8'))).toEqual({
        log_id: 'test-log',
        tree_size: head.tree_size,
        root_hash: head.root_hash,
        timestamp: head.timestamp,
      });
      const pae = Buffer.concat([
        Buffer.from(`DSSEv1 ${TREE_HEAD_PAYLOAD_TYPE.length} ${TREE_HEAD_PAYLOAD_TYPE} ${payload.length} `),
        payload,
      ]);
      const signature = Buffer.from(head.envelope.signatures[0]?.sig as string, 'base64');
      expect(verify('sha256', pae, KEYS.publicKey, signature)).toBe(true);

      for (let index = 0; index < head.tree_size; index += 1) {
        const answer = await f.journal.entry(index, { treeSize: head.tree_size });
        expect(answer.entry).toEqual(entries[index]);
        expect(answer.leaf_hash).toBe(rfcLeaf(leaves[index] as Buffer).toString('hex'));
        expect(answer.head).toEqual(head);
        const proof = {
          leaf_index: index,
          tree_size: answer.inclusion.tree_size,
          inclusion_path: answer.inclusion.proof.map(hex),
        };
        const ok = rfcVerifyInclusion(proof, rfcLeaf(leaves[index] as Buffer), hex(head.root_hash));
        expect(ok, `entry ${index} in head ${head.tree_size}`).toBe(true);
      }
    }

    for (const older of heads) {
      for (const newer of heads.filter((head) => head.tree_size >= older.tree_size)) {
        const answer = await f.journal.consistency(older.tree_size, newer.tree_size);
        expect(answer.from_head).toEqual(older);
        expect(answer.to_head).toEqual(newer);
        const path = answer.proof.map(hex);
        if (older.tree_size === newer.tree_size) {
          expect(path).toEqual([]);
          continue;
        }
        const proof = { tree_size_1: older.tree_size, tree_size_2: newer.tree_size, consistency_path: path };
        const ok = rfcVerifyConsistency(proof, hex(older.root_hash), hex(newer.root_hash));
        expect(ok, `head ${older.tree_size} → ${newer.tree_size}`).toBe(true);
      }
    }
  });

  it('proves against the latest head by default', async () => {
    const f = fixture();
    await appendMany(f, 12);
    const answer = await f.journal.entry(3);
    expect(answer.inclusion.tree_size).toBe(10);
    expect(answer.head.tree_size).toBe(10);
    const leaf = rfcLeaf(leafBytes(answer.entry));
    const proof = { leaf_index: 3, tree_size: 10, inclusion_path: answer.inclusion.proof.map(hex) };
    expect(rfcVerifyInclusion(proof, leaf, hex(answer.head.root_hash))).toBe(true);
  });
});

describe('Journal: appends', () => {
  it('numbers entries from 0, stamps them with the clock and stores their RFC 8785 text', async () => {
    const f = fixture();
    expect(
      await f.journal.append({ entry_id: 'a', type: 'release', data: { z: 1, a: [true, null] } }),
    ).toEqual({
      index: 0,
      created: true,
    });
    f.tick(1);
    expect(await f.journal.append({ entry_id: 'b', type: 'release', data: 'text' })).toEqual({
      index: 1,
      created: true,
    });
    const record = f.store.records.get(0);
    expect(record?.entry).toEqual({
      index: 0,
      entry_id: 'a',
      type: 'release',
      at: '2026-11-22T12:00:00.000Z',
      data: { z: 1, a: [true, null] },
    });
    expect(record?.json).toBe(
      '{"at":"2026-11-22T12:00:00.000Z","data":{"a":[true,null],"z":1},"entry_id":"a","index":0,"type":"release"}',
    );
    expect(record?.leaf_hash).toBe(rfcLeaf(Buffer.from(record?.json as string)).toString('hex'));
    expect(f.store.records.get(1)?.entry.at).toBe('2026-11-22T12:00:01.000Z');
  });

  it('is idempotent by entry_id: the same id answers its index without a new entry', async () => {
    const f = fixture();
    await appendMany(f, 3);
    expect(await f.journal.append({ entry_id: 'e-1', type: 'other', data: 42 })).toEqual({
      index: 1,
      created: false,
    });
    expect((await f.store.state())?.size).toBe(3);
    expect(f.store.records.get(1)?.entry.data).toEqual({ n: 1, text: 'entry 1' });
  });

  it('gives 40 concurrent appends contiguous indexes, none lost, and seals them in order', async () => {
    const f = fixture();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        f.journal.append({ entry_id: `c-${i}`, type: 'concurrent', data: { i } }),
      ),
    );
    expect(results.every((result) => result.created)).toBe(true);
    expect(results.map((result) => result.index).sort((a, b) => a - b)).toEqual([...Array(40).keys()]);
    expect(f.store.conflicts).toBeGreaterThan(0);
    for (const [i, result] of results.entries()) {
      expect(f.store.records.get(result.index)?.entry.entry_id).toBe(`c-${i}`);
    }
    expect((await f.store.state())?.size).toBe(40);
    // Every slice of 5 got a head; heads grow strictly.
    const sizes = (await allHeads(f.journal)).map((head) => head.tree_size);
    expect(sizes.at(-1)).toBe(40);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect(verifyJournalExport(await f.journal.exportAll(), KEYS.jwks).ok).toBe(true);
  });

  it('creates one entry for concurrent appends of one entry_id', async () => {
    const f = fixture();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => f.journal.append({ entry_id: 'same', type: 't', data: null })),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.index))).toEqual(new Set([0]));
    expect(f.store.records.size).toBe(1);
  });

  it('refuses an entry without id or type, with data that is not JSON, or too large', async () => {
    const f = fixture();
    await expect(f.journal.append({ entry_id: '', type: 't', data: 1 })).rejects.toThrow(
      InvalidJournalEntryError,
    );
    await expect(f.journal.append({ entry_id: 'x'.repeat(513), type: 't', data: 1 })).rejects.toThrow(
      /entry_id/,
    );
    await expect(f.journal.append({ entry_id: 'a', type: '', data: 1 })).rejects.toThrow(/type/);
    await expect(f.journal.append({ entry_id: 'a', type: 't', data: Number.NaN })).rejects.toThrow(
      /not JSON/,
    );
    await expect(f.journal.append({ entry_id: 'a', type: 't', data: 'x'.repeat(300_000) })).rejects.toThrow(
      /larger than/,
    );
    expect(f.store.records.size).toBe(0);
  });

  it('gives up after its attempts when every write loses a race', async () => {
    const store = new MemoryJournalStore();
    store.append = async () => 'conflict';
    const f = fixture({ store, maxAttempts: 3 });
    await expect(f.journal.append({ entry_id: 'a', type: 't', data: 1 })).rejects.toThrow(
      JournalContentionError,
    );
  });

  it('waits between attempts with a jittered, growing backoff', async () => {
    const store = new MemoryJournalStore();
    store.append = async () => 'conflict';
    const waits: number[] = [];
    const f = fixture({
      store,
      maxAttempts: 4,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(f.journal.append({ entry_id: 'a', type: 't', data: 1 })).rejects.toThrow();
    // Between attempts only: none after the last one.
    expect(waits).toHaveLength(3);
    waits.forEach((ms, attempt) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(5 * 2 ** attempt);
    });
  });

  it('refuses bad slice settings', () => {
    expect(() => fixture({ sliceSize: 0 })).toThrow(RangeError);
    expect(() => fixture({ sliceSeconds: 0 })).toThrow(RangeError);
  });

  it('still answers an append whose slice closure keeps losing races', async () => {
    const store = new MemoryJournalStore();
    store.putHead = async () => 'conflict';
    const f = fixture({ store, maxAttempts: 2, sliceSize: 1 });
    expect(await f.journal.append({ entry_id: 'a', type: 't', data: 1 })).toEqual({
      index: 0,
      created: true,
    });
    await expect(f.journal.closeSliceIfDue()).rejects.toThrow(JournalContentionError);
  });

  it('fails an append whose slice cannot be signed (the entry stays; a retry is idempotent)', async () => {
    const f = fixture({
      sliceSize: 1,
      signer: {
        keyId: 'k',
        sign: async () => {
          throw new Error('KMS is down');
        },
      },
    });
    await expect(f.journal.append({ entry_id: 'a', type: 't', data: 1 })).rejects.toThrow('KMS is down');
    expect(await f.journal.append({ entry_id: 'a', type: 't', data: 1 })).toEqual({
      index: 0,
      created: false,
    });
  });
});

describe('Journal: slices', () => {
  it('closes nothing in an empty journal', async () => {
    const f = fixture();
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
    expect(await f.journal.latestHead()).toBeUndefined();
  });

  it('closes a slice by count at once, and by time only once the last head is sliceSeconds old', async () => {
    const f = fixture();
    await appendMany(f, 7);
    expect((await f.journal.latestHead())?.tree_size).toBe(5);
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
    // Head 5 was signed at 12:00:05; it is 60 s old at 12:01:05.
    f.tick(57);
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
    f.tick(1);
    const head = await f.journal.closeSliceIfDue();
    expect(head).toMatchObject({ log_id: 'test-log', tree_size: 7, timestamp: '2026-11-22T12:01:05.000Z' });
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
  });

  it('before the first head, times the slice from the first entry', async () => {
    const f = fixture();
    await appendMany(f, 2);
    f.tick(58);
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
    f.tick(1);
    expect((await f.journal.closeSliceIfDue())?.tree_size).toBe(2);
  });

  it('signs the root of the stored frontier, never of a size another writer already passed', async () => {
    const f = fixture({ sliceSize: 100 });
    await appendMany(f, 3);
    f.tick(120);
    const [a, b] = await Promise.all([f.journal.closeSliceIfDue(), f.journal.closeSliceIfDue()]);
    expect([a, b].filter((head) => head !== undefined)).toHaveLength(1);
    expect((await allHeads(f.journal)).map((head) => head.tree_size)).toEqual([3]);
  });

  it('refuses a state whose frontier does not fit its size', async () => {
    const f = fixture();
    await appendMany(f, 3);
    f.store.current = { ...(f.store.current as NonNullable<typeof f.store.current>), peaks: [] };
    await expect(f.journal.append({ entry_id: 'x', type: 't', data: 1 })).rejects.toThrow(
      JournalIntegrityError,
    );
    f.store.current = {
      ...(f.store.current as NonNullable<typeof f.store.current>),
      peaks: ['zz', 'zz'],
    };
    await expect(f.journal.append({ entry_id: 'x', type: 't', data: 1 })).rejects.toThrow(/not a SHA-256/);
  });
});

describe('Journal: the mirror', () => {
  it('copies each sealed slice, entries before their head, as their RFC 8785 text', async () => {
    const f = fixture();
    await appendMany(f, 7);
    expect([...f.mirror.objects.keys()]).toEqual([
      ...[0, 1, 2, 3, 4].map(journalEntryKey),
      journalHeadKey(5),
    ]);
    const record = f.store.records.get(3);
    expect(f.mirror.objects.get(journalEntryKey(3))).toBe(record?.json);
    expect(record?.json).toBe(entryJson(record?.entry as StoredEntry));
    const head = (await f.journal.latestHead()) as SignedTreeHead;
    expect(f.mirror.objects.get(journalHeadKey(5))).toBe(signedTreeHeadJson(head));
    expect(JSON.parse(f.mirror.objects.get(journalHeadKey(5)) as string)).toEqual(head);
    expect(journalEntryKey(12)).toBe('journal/entries/000000000012.json');
    expect(journalHeadKey(35)).toBe('journal/heads/000000000035.json');
    expect((await f.store.state())?.mirrored_size).toBe(5);
  });

  it('reports a failed copy and resumes from mirrored_size at the next run', async () => {
    const f = fixture();
    f.mirror.failing = true;
    await appendMany(f, 11);
    expect(f.mirrorErrors.length).toBeGreaterThan(0);
    expect(f.mirror.objects.size).toBe(0);
    expect((await f.store.state())?.mirrored_size).toBe(0);
    f.mirror.failing = false;
    // Nothing is due, but the scheduled run catches the mirror up.
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
    expect([...f.mirror.objects.keys()].sort()).toEqual(
      [...[...Array(10).keys()].map(journalEntryKey), journalHeadKey(5), journalHeadKey(10)].sort(),
    );
    expect((await f.store.state())?.mirrored_size).toBe(10);
    const puts = f.mirror.puts;
    expect(await f.journal.closeSliceIfDue()).toBeUndefined();
    expect(f.mirror.puts).toBe(puts);
  });

  it('reports an entry missing below a head instead of copying past it', async () => {
    const f = fixture();
    f.mirror.failing = true;
    await appendMany(f, 5);
    f.mirror.failing = false;
    f.store.records.delete(3);
    f.store.records.delete(4);
    const errors = f.mirrorErrors.length;
    await f.journal.closeSliceIfDue();
    expect(f.mirrorErrors.length).toBe(errors + 1);
    expect(f.mirrorErrors.at(-1)).toBeInstanceOf(JournalIntegrityError);
    expect((await f.store.state())?.mirrored_size).toBe(0);
  });

  it('works without a mirror', async () => {
    const f = fixture({ mirror: undefined });
    await appendMany(f, 6);
    expect((await f.journal.latestHead())?.tree_size).toBe(5);
  });
});

describe('Journal: reads', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = fixture();
    await appendMany(f, 12);
  });

  it('refuses an entry no head covers (not sealed) and an unknown one', async () => {
    await expect(f.journal.entry(11)).rejects.toThrow(EntryNotSealedError);
    await expect(f.journal.entry(11)).rejects.toMatchObject({ index: 11, sealedSize: 10 });
    await expect(f.journal.entry(12)).rejects.toThrow(JournalNotFoundError);
    const empty = fixture();
    await empty.journal.append({ entry_id: 'a', type: 't', data: 1 });
    await expect(empty.journal.entry(0)).rejects.toMatchObject({ sealedSize: 0 });
  });

  it('refuses bad indexes and sizes, an unknown head, an entry past the tree asked for', async () => {
    await expect(f.journal.entry(-1)).rejects.toThrow(JournalRangeError);
    await expect(f.journal.entry(1.5)).rejects.toThrow(JournalRangeError);
    await expect(f.journal.entry(1, { treeSize: -2 })).rejects.toThrow(JournalRangeError);
    await expect(f.journal.entry(1, { treeSize: 7 })).rejects.toThrow(JournalNotFoundError);
    await expect(f.journal.entry(7, { treeSize: 5 })).rejects.toThrow(JournalRangeError);
  });

  it('answers consistency only between signed heads, in order', async () => {
    await expect(f.journal.consistency(10, 5)).rejects.toThrow(JournalRangeError);
    await expect(f.journal.consistency(10, 5)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(f.journal.consistency(5, 7)).rejects.toThrow(JournalNotFoundError);
    await expect(f.journal.consistency(3, 10)).rejects.toThrow(JournalNotFoundError);
    await expect(f.journal.consistency(-1, 10)).rejects.toThrow(JournalRangeError);
    expect((await f.journal.consistency(5, 10)).proof.length).toBeGreaterThan(0);
  });

  it('lists heads by page', async () => {
    await appendMany(f, 10, 12);
    const first = await f.journal.heads({ limit: 2 });
    expect(first.heads.map((head) => head.tree_size)).toEqual([5, 10]);
    expect(first.next).toBe(15);
    const second = await f.journal.heads({ from: first.next, limit: 2 });
    expect(second.heads.map((head) => head.tree_size)).toEqual([15, 20]);
    expect(second.next).toBeUndefined();
    await expect(f.journal.heads({ limit: 0 })).rejects.toThrow(JournalRangeError);
    await expect(f.journal.heads({ from: -1 })).rejects.toThrow(JournalRangeError);
  });

  it('lists sealed entries by page, against the latest head or a given one', async () => {
    const page = await f.journal.entries({ from: 3, limit: 4 });
    expect(page).toMatchObject({ tree_size: 10, next: 7 });
    expect(page.entries.map((entry) => entry.index)).toEqual([3, 4, 5, 6]);
    const end = await f.journal.entries({ from: 7, limit: 100 });
    expect(end.entries.map((entry) => entry.index)).toEqual([7, 8, 9]);
    expect(end.next).toBeUndefined();
    expect((await f.journal.entries({ from: 50 })).entries).toEqual([]);
    expect((await f.journal.entries({ treeSize: 5 })).entries).toHaveLength(5);
    await expect(f.journal.entries({ treeSize: 6 })).rejects.toThrow(JournalNotFoundError);
    await expect(f.journal.entries({ treeSize: -6 })).rejects.toThrow(JournalRangeError);
    expect(await fixture().journal.entries()).toEqual({ tree_size: 0, entries: [] });
  });

  it('exports the sealed entries and every head, which verify offline', async () => {
    const document = await f.journal.exportAll();
    expect(document.log_id).toBe('test-log');
    expect(document.entries).toHaveLength(10);
    expect(document.heads.map((head) => head.tree_size)).toEqual([5, 10]);
    const report = verifyJournalExport(JSON.parse(JSON.stringify(document)), KEYS.jwks);
    expect(report).toMatchObject({ ok: true, entries: 10, heads: 2, verified_heads: 2, tree_size: 10 });
    expect(await fixture().journal.exportAll()).toEqual({ log_id: 'test-log', entries: [], heads: [] });
  });

  it('exports in pages (more than 500 entries and heads)', async () => {
    const big = fixture({ sliceSize: 1 });
    for (let i = 0; i < 503; i += 1) {
      await big.journal.append({ entry_id: `b-${i}`, type: 't', data: i });
    }
    const document = await big.journal.exportAll();
    expect(document.entries).toHaveLength(503);
    expect(document.heads).toHaveLength(503);
    expect(verifyJournalExport(document, KEYS.jwks, { proofSample: 20 }).ok).toBe(true);
  });

  it('refuses to answer from a store that contradicts itself', async () => {
    const record = f.store.records.get(2) as NonNullable<ReturnType<typeof f.store.records.get>>;
    f.store.records.set(2, { ...record, entry: { ...record.entry, data: 'altered' } });
    await expect(f.journal.entry(2)).rejects.toThrow(JournalIntegrityError);
    f.store.records.set(2, { ...record, leaf_hash: '00'.repeat(32) });
    await expect(f.journal.entry(3)).rejects.toThrow(JournalIntegrityError);
    await expect(f.journal.consistency(5, 10)).rejects.toThrow(JournalIntegrityError);
    f.store.records.delete(2);
    await expect(f.journal.entry(3)).rejects.toThrow(/holds 2 of the 10/);
    await expect(f.journal.exportAll()).rejects.toThrow(/entry 2 is missing/);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The HTTP operations (functions/handlers/operations/audit.ts)
// ---------------------------------------------------------------------------------------------------------

const request = (
  query: Record<string, string> | null = null,
  path: Record<string, string> | null = null,
): OperationRequest => ({
  event: { queryStringParameters: query, pathParameters: path } as unknown as APIGatewayProxyEvent,
  route: {
    method: 'GET',
    path: '/audit/journal',
    function: 'admin',
    operation: 'x',
    auth: 'admin',
    summary: '',
  },
  traceId: 'trc_test',
});

/** The status the service answers: use-case errors go through the same mapping as the HTTP middleware. */
const statusOf = async (promise: Promise<unknown>): Promise<number> => {
  try {
    await promise;
    return 200;
  } catch (error) {
    const mapped = toHttpError(error);
    if (!mapped) throw error;
    return mapped.statusCode;
  }
};

describe('journal HTTP operations', () => {
  it('answers 404 for the head of an empty journal, then the latest head', async () => {
    const f = fixture();
    const operations = journalOperations(f.journal);
    await expect(operations.getJournalHead?.(request())).rejects.toThrow(HttpError);
    expect(await statusOf(Promise.resolve(operations.getJournalHead?.(request())))).toBe(404);
    await appendMany(f, 5);
    const answer = await operations.getJournalHead?.(request());
    expect(answer).toMatchObject({ statusCode: 200, body: { tree_size: 5 } });
  });

  it('lists heads, answers entries (409 when not sealed), consistency (400 when inverted) and the export', async () => {
    const f = fixture();
    await appendMany(f, 12);
    const ops = journalOperations(f.journal);
    const run = (name: string, req: OperationRequest) =>
      (ops[name] as NonNullable<(typeof ops)[string]>)(req);

    expect(await run('listJournalHeads', request({ from: '6', limit: '1' }))).toMatchObject({
      statusCode: 200,
      body: { heads: [{ tree_size: 10 }] },
    });
    expect(await run('listJournalHeads', request())).toMatchObject({ body: { heads: [{}, {}] } });
    expect(await statusOf(run('listJournalHeads', request({ limit: '0' })))).toBe(400);

    expect(await run('getJournalEntry', request({ tree_size: '5' }, { index: '2' }))).toMatchObject({
      statusCode: 200,
      body: { entry: { index: 2 }, inclusion: { tree_size: 5 } },
    });
    expect(await run('getJournalEntry', request(null, { index: '2' }))).toMatchObject({
      body: { inclusion: { tree_size: 10 } },
    });
    const unsealed = await run('getJournalEntry', request(null, { index: '11' })).catch(toHttpError);
    expect(unsealed).toMatchObject({
      statusCode: 409,
      code: 'conflict',
      description: expect.stringContaining('entry 11 is not sealed yet'),
      details: { index: 11, sealed_size: 10 },
    });
    expect(await statusOf(run('getJournalEntry', request(null, { index: '12' })))).toBe(404);
    expect(await statusOf(run('getJournalEntry', request(null, { index: 'x' })))).toBe(400);
    expect(await statusOf(run('getJournalEntry', request({ tree_size: '5' }, { index: '7' })))).toBe(400);

    expect(await run('getJournalConsistency', request({ from: '5', to: '10' }))).toMatchObject({
      statusCode: 200,
      body: { from_head: { tree_size: 5 }, to_head: { tree_size: 10 } },
    });
    expect(await statusOf(run('getJournalConsistency', request({ from: '10', to: '5' })))).toBe(400);
    expect(await statusOf(run('getJournalConsistency', request({ from: '5' })))).toBe(400);
    expect(await statusOf(run('getJournalConsistency', request({ from: '4', to: '10' })))).toBe(404);

    const exported = await run('exportJournal', request());
    expect(exported.statusCode).toBe(200);
    expect(verifyJournalExport(exported.body, KEYS.jwks).ok).toBe(true);
  });

  it('lets other errors through', async () => {
    const store = new MemoryJournalStore();
    store.latestHead = async () => {
      throw new Error('DynamoDB is down');
    };
    const ops = journalOperations(fixture({ store }).journal);
    await expect(ops.getJournalHead?.(request())).rejects.toThrow('DynamoDB is down');
  });
});

// ---------------------------------------------------------------------------------------------------------
// The S3 mirror's write-once puts (S3 answers 412 to If-None-Match: * over an existing object)
// ---------------------------------------------------------------------------------------------------------

describe('S3JournalMirror', () => {
  const s3 = mockClient(S3Client);
  afterEach(() => s3.reset());
  afterAll(() => s3.restore());
  const precondition = Object.assign(
    new Error('At least one of the pre-conditions you specified did not hold'),
    {
      name: 'PreconditionFailed',
      $metadata: { httpStatusCode: 412 },
    },
  );
  // The part of a streamed body the mirror reads.
  const body = (text: string) => ({ transformToString: async () => text }) as never;

  it('puts JSON objects under the journal keys with If-None-Match: *', async () => {
    s3.on(PutObjectCommand).resolves({});
    const mirror = new S3JournalMirror(new S3Client({ region: 'eu-west-1' }), 'journal-bucket');
    expect(await mirror.putEntry(7, '{"a":1}')).toBe('created');
    expect(await mirror.putHead(10, '{"h":1}')).toBe('created');
    const inputs = s3.commandCalls(PutObjectCommand).map((call) => call.args[0].input);
    expect(inputs).toEqual([
      {
        Bucket: 'journal-bucket',
        Key: 'journal/entries/000000000007.json',
        Body: '{"a":1}',
        ContentType: 'application/json',
        // The SHA-256 a write into an Object Lock bucket must carry, of the exact body.
        ChecksumSHA256: 'AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=',
        IfNoneMatch: '*',
      },
      {
        Bucket: 'journal-bucket',
        Key: 'journal/heads/000000000010.json',
        Body: '{"h":1}',
        ContentType: 'application/json',
        // The SHA-256 a write into an Object Lock bucket must carry, of the exact body.
        ChecksumSHA256: 'xrzDyDZGmV9AuyW2sy/r+k9OdM1RDZQiPewLlA4R2n0=',
        IfNoneMatch: '*',
      },
    ]);
  });

  it('takes a 412 over the same bytes as a copy already made, and refuses other bytes', async () => {
    s3.on(PutObjectCommand).rejects(precondition);
    s3.on(GetObjectCommand).resolves({ Body: body('{"a":1}') });
    const mirror = new S3JournalMirror(new S3Client({ region: 'eu-west-1' }), 'journal-bucket');
    expect(await mirror.putEntry(7, '{"a":1}')).toBe('exists');
    await expect(mirror.putEntry(7, '{"a":2}')).rejects.toThrow(MirrorConflictError);
    s3.on(GetObjectCommand).resolves({});
    await expect(mirror.putEntry(7, '{"a":1}')).rejects.toThrow(MirrorConflictError);
  });

  it('throws any other error', async () => {
    s3.on(PutObjectCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDenied' }));
    const mirror = new S3JournalMirror(new S3Client({ region: 'eu-west-1' }), 'journal-bucket');
    await expect(mirror.putHead(5, '{}')).rejects.toThrow('denied');
  });
});
