import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { describeReport, parseOptions, run } from '../../../bin/verify-journal';
import { LocalReceiptSigner } from '../../../functions/adapters/local/local-signing';
import { signEnvelope } from '../../../functions/domain/audit/dsse';
import {
  entryJson,
  entryLeafHash,
  hashFromHex,
  type JournalExport,
  type JournalVerificationReport,
  type SignedTreeHead,
  type StoredEntry,
  signedTreeHeadJson,
  TREE_HEAD_PAYLOAD_TYPE,
  type TreeHead,
  toHex,
  treeHeadJson,
  treeHeadPayload,
  verifyJournalExport,
} from '../../../functions/domain/audit/journal-verify';
import type { PublicJwk } from '../../../functions/ports/signing';
import { Journal } from '../../../functions/usecases/audit/journal';
import { cliWorld } from '../../support/cli-world';
import { MemoryJournalStore } from '../../support/memory-journal-store';

const signerAndKeys = async () => {
  const signer = new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  return { signer, jwks: { keys: [await signer.publicKey()] as PublicJwk[] } };
};

type Keys = Awaited<ReturnType<typeof signerAndKeys>>;

/** A journal of `count` entries sealed in slices of `sliceSize`, the last slice closed too. */
const buildJournal = async (keys: Keys, count: number, sliceSize: number) => {
  let now = Date.parse('2026-11-22T12:00:00.000Z');
  const store = new MemoryJournalStore();
  const journal = new Journal({
    store,
    signer: keys.signer,
    clock: { now: () => new Date(now) },
    logId: 'audit-log',
    sliceSize,
    sliceSeconds: 60,
    sleep: async () => undefined,
  });
  for (let i = 0; i < count; i += 1) {
    now += 1000;
    await journal.append({
      entry_id: `id-${i}`,
      type: i % 2 ? 'release' : 'rate',
      data: { i, note: `n${i}` },
    });
  }
  now += 120_000;
  await journal.closeSliceIfDue();
  return { journal, store };
};

let keys: Keys;
let base: JournalExport;
/** A fresh deep copy of the 37-entry export (slices of 5: heads 5, 10, …, 35, 37). */
const doc = (): { log_id: string; entries: StoredEntry[]; heads: SignedTreeHead[] } =>
  JSON.parse(JSON.stringify(base));

beforeAll(async () => {
  keys = await signerAndKeys();
  base = await (await buildJournal(keys, 37, 5)).journal.exportAll();
});

const check = (document: unknown, options = {}): JournalVerificationReport =>
  verifyJournalExport(document, keys.jwks, options);

/** A head for `root` at `treeSize`, correctly signed with the journal's key. */
const forgedHead = async (treeSize: number, root: string, timestamp = '2026-11-22T12:30:00.000Z') => {
  const head: TreeHead = { log_id: 'audit-log', tree_size: treeSize, root_hash: root, timestamp };
  return {
    ...head,
    envelope: await signEnvelope(TREE_HEAD_PAYLOAD_TYPE, treeHeadPayload(head), keys.signer),
  };
};

describe('the journal formats', () => {
  it('hashes an entry over the RFC 8785 text of exactly its five fields', () => {
    const entry = {
      index: 3,
      entry_id: 'x',
      type: 't',
      at: '2026-01-01T00:00:00.000Z',
      data: { b: 1, a: 2 },
    };
    const text = '{"at":"2026-01-01T00:00:00.000Z","data":{"a":2,"b":1},"entry_id":"x","index":3,"type":"t"}';
    expect(entryJson({ ...entry, extra: 'ignored' } as StoredEntry)).toBe(text);
    expect(toHex(entryLeafHash(entry))).toMatch(/^[0-9a-f]{64}$/);
    const head: TreeHead = { log_id: 'l', tree_size: 2, root_hash: 'ab'.repeat(32), timestamp: 't' };
    expect(treeHeadJson({ ...head, extra: 1 } as TreeHead)).toBe(
      `{"log_id":"l","root_hash":"${'ab'.repeat(32)}","timestamp":"t","tree_size":2}`,
    );
    const signed = {
      ...head,
      envelope: { payloadType: 'p', payload: 'AA==', signatures: [{ keyid: 'k', sig: 'AA==' }] },
    };
    expect(JSON.parse(signedTreeHeadJson(signed))).toEqual(signed);
  });

  it('reads hashes only as 64 lowercase hex digits', () => {
    expect(toHex(hashFromHex('0f'.repeat(32)) as Uint8Array)).toBe('0f'.repeat(32));
    expect(hashFromHex('0F'.repeat(32))).toBeUndefined();
    expect(hashFromHex('0f')).toBeUndefined();
  });
});

describe('verifyJournalExport', () => {
  it('accepts an intact export and says what it checked', () => {
    const report = check(doc());
    expect(report).toEqual({
      ok: true,
      log_id: 'audit-log',
      entries: 37,
      heads: 8,
      verified_heads: 8,
      tree_size: 37,
      root_hash: base.heads.at(-1)?.root_hash,
      inclusion_checked: 37,
      consistency_checked: 7,
      problems: [],
    });
  });

  it('accepts an empty journal', () => {
    expect(check({ log_id: 'audit-log', entries: [], heads: [] })).toMatchObject({
      ok: true,
      entries: 0,
      verified_heads: 0,
      inclusion_checked: 0,
      consistency_checked: 0,
    });
  });

  it('checks a sample of proofs when asked', () => {
    expect(check(doc(), { proofSample: 3 })).toMatchObject({
      ok: true,
      inclusion_checked: 3,
      consistency_checked: 3,
    });
    expect(check(doc(), { proofSample: 1 })).toMatchObject({
      ok: true,
      inclusion_checked: 1,
      consistency_checked: 1,
    });
    expect(check(doc(), { proofSample: 0 })).toMatchObject({
      ok: true,
      inclusion_checked: 0,
      consistency_checked: 0,
    });
    expect(check(doc(), { proofSample: 1000 })).toMatchObject({
      inclusion_checked: 37,
      consistency_checked: 7,
    });
  });

  describe('entries', () => {
    it('names a removed entry', () => {
      const document = doc();
      document.entries.splice(12, 1);
      const report = check(document);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([
        { kind: 'removed', index: 12, message: 'entry 12 is missing (the next entry holds index 13)' },
      ]);
      // The heads before the gap still verify.
      expect(report).toMatchObject({ verified_heads: 2, tree_size: 10 });
    });

    it('names several removed entries, and a removed last-but-one entry', () => {
      const document = doc();
      document.entries.splice(12, 2);
      expect(check(document).problems[0]).toMatchObject({
        kind: 'removed',
        index: 12,
        range: { from: 12, to: 13 },
      });
      const again = doc();
      again.entries.splice(35, 1);
      expect(check(again).problems[0]).toMatchObject({ kind: 'removed', index: 35 });
    });

    it('names entries cut off the end', () => {
      const document = doc();
      document.entries.splice(34);
      expect(check(document).problems).toEqual([
        {
          kind: 'removed',
          index: 34,
          range: { from: 34, to: 34 },
          tree_size: 35,
          message: 'head 35 signs 35 entries; the export holds only the first 34',
        },
      ]);
    });

    it('locates a removal whose later entries were renumbered to the slice it happened in', () => {
      const document = doc();
      document.entries.splice(12, 1);
      document.entries = document.entries.map((entry, index) => ({ ...entry, index }));
      document.heads[0] = { ...(document.heads[0] as SignedTreeHead), timestamp: 'changed' };
      const [first, second] = check(document).problems;
      expect(first).toMatchObject({ kind: 'payload_mismatch', tree_size: 5 });
      expect(second).toMatchObject({ kind: 'removed', range: { from: 10, to: 14 }, tree_size: 15 });
      expect(second?.message).toContain('were removed and the later ones renumbered');
    });

    it('names a reordered pair', () => {
      const document = doc();
      const [a, b] = document.entries.slice(20, 22) as [StoredEntry, StoredEntry];
      document.entries.splice(20, 2, b, a);
      expect(check(document).problems).toEqual([
        { kind: 'reordered', index: 20, message: 'entry 20 is at position 21; position 20 holds entry 21' },
      ]);
    });

    it('names a pair swapped with their indexes rewritten', () => {
      const document = doc();
      const [a, b] = document.entries.slice(21, 23) as [StoredEntry, StoredEntry];
      document.entries.splice(21, 2, { ...b, index: 21 }, { ...a, index: 22 });
      expect(check(document).problems).toEqual([
        {
          kind: 'reordered',
          index: 21,
          range: { from: 21, to: 22 },
          tree_size: 25,
          message: 'entries 21 and 22 were swapped (their indexes rewritten)',
        },
      ]);
    });

    it('names an altered entry by its slice, and only the first head that disagrees', () => {
      for (const change of [
        (entry: StoredEntry) => ({ ...entry, data: { i: 17, note: 'changed' } }),
        (entry: StoredEntry) => ({ ...entry, type: 'other' }),
        (entry: StoredEntry) => ({ ...entry, at: '2030-01-01T00:00:00.000Z' }),
        (entry: StoredEntry) => ({ ...entry, entry_id: 'someone-else' }),
      ]) {
        const document = doc();
        document.entries[17] = change(document.entries[17] as StoredEntry);
        const report = check(document);
        expect(report.problems).toEqual([
          {
            kind: 'altered',
            range: { from: 15, to: 19 },
            tree_size: 20,
            message: 'an entry among 15–19 differs from what head 20 signed (it agrees up to 15)',
          },
        ]);
        expect(report).toMatchObject({ verified_heads: 3, tree_size: 15, inclusion_checked: 15 });
      }
    });

    it('names an altered entry exactly when its slice holds only it', async () => {
      const small = await (await buildJournal(keys, 4, 1)).journal.exportAll();
      const document = JSON.parse(JSON.stringify(small)) as typeof small & { entries: StoredEntry[] };
      document.entries[2] = { ...(document.entries[2] as StoredEntry), data: 'changed' };
      expect(check(document).problems).toEqual([
        {
          kind: 'altered',
          index: 2,
          range: { from: 2, to: 2 },
          tree_size: 3,
          message: 'entry 2 differs from what head 3 signed',
        },
      ]);
      // The first slice, and a slice too large to try swaps in.
      const first = JSON.parse(JSON.stringify(small)) as typeof document;
      first.entries[0] = { ...(first.entries[0] as StoredEntry), data: 'changed' };
      expect(check(first).problems[0]).toMatchObject({ kind: 'altered', index: 0, tree_size: 1 });
      const large = await (await buildJournal(keys, 70, 70)).journal.exportAll();
      const big = JSON.parse(JSON.stringify(large)) as typeof document;
      big.entries[40] = { ...(big.entries[40] as StoredEntry), data: 'changed' };
      expect(check(big).problems).toMatchObject([
        { kind: 'altered', range: { from: 0, to: 69 }, tree_size: 70 },
      ]);
    });

    it('names an entry whose index was rewritten', () => {
      const document = doc();
      document.entries[7] = { ...(document.entries[7] as StoredEntry), index: 1000 };
      const { problems } = check(document);
      expect(problems[0]).toEqual({
        kind: 'altered',
        index: 7,
        message: 'entry 7 carries index 1000: its index was changed',
      });
      expect(problems.map((problem) => problem.kind)).toEqual(['altered', 'unsealed']);
    });

    it('names a duplicated entry', () => {
      const document = doc();
      document.entries.splice(10, 0, document.entries[9] as StoredEntry);
      expect(check(document).problems).toEqual([
        { kind: 'duplicated', index: 9, message: 'index 9 appears at positions 9, 10' },
      ]);
    });

    it('names entries no signed head covers', async () => {
      const { store } = await buildJournal(keys, 3, 100);
      const entries = [...store.records.values()].map((record) => record.entry);
      expect(check({ log_id: 'audit-log', entries, heads: [] }).problems).toEqual([
        { kind: 'unsealed', index: 0, range: { from: 0, to: 2 }, message: 'no signed head covers any entry' },
      ]);
      const document = doc();
      document.heads.pop();
      expect(check(document).problems).toEqual([
        {
          kind: 'unsealed',
          index: 35,
          range: { from: 35, to: 36 },
          message: 'entries 35–36 are beyond the last head (35)',
        },
      ]);
    });

    it('names malformed entries', () => {
      const document = doc() as unknown as { log_id: string; entries: unknown[]; heads: unknown[] };
      document.entries[3] = 'not an entry';
      const [problem] = check(document).problems;
      expect(problem).toEqual({ kind: 'malformed', index: 3, message: 'entries[3] is not an object' });
      const valid = doc().entries[3] as StoredEntry;
      const variants: [unknown, string][] = [
        [{ ...valid, index: -1 }, 'has no non-negative integer index'],
        [{ ...valid, index: 1.5 }, 'has no non-negative integer index'],
        [{ ...valid, entry_id: 5 }, 'has no string entry_id'],
        [{ ...valid, type: null }, 'has no string type'],
        [{ ...valid, at: undefined }, 'has no string at'],
        [{ index: 3, entry_id: 'a', type: 't', at: 'x' }, 'has no data'],
      ];
      for (const [entry, message] of variants) {
        document.entries[3] = entry;
        expect(check(document).problems[0]).toEqual({
          kind: 'malformed',
          index: 3,
          message: `entries[3] ${message}`,
        });
      }
    });
  });

  describe('heads', () => {
    it('names a head whose signature was tampered with', () => {
      const document = doc();
      const head = document.heads[2] as SignedTreeHead;
      const sig = Buffer.from(head.envelope.signatures[0]?.sig as string, 'base64');
      sig[sig.length - 1] = (sig[sig.length - 1] as number) ^ 1;
      document.heads[2] = {
        ...head,
        envelope: {
          ...head.envelope,
          signatures: [{ keyid: keys.signer.keyId, sig: sig.toString('base64') }],
        },
      };
      const report = check(document);
      expect(report.problems).toHaveLength(1);
      expect(report.problems[0]).toMatchObject({ kind: 'bad_signature', tree_size: 15 });
      expect(report.problems[0]?.message).toMatch(/head 15: the signature does not verify \(bad_signature/);
      expect(report.verified_heads).toBe(7);
    });

    it('names heads signed by a key it does not know, or with a malformed envelope', async () => {
      const other = await signerAndKeys();
      const report = verifyJournalExport(doc(), other.jwks);
      expect(report.problems).toHaveLength(8);
      expect(report.problems.every((problem) => problem.kind === 'bad_signature')).toBe(true);
      expect(report.problems[0]?.message).toMatch(/unknown_keyid/);
      const document = doc() as unknown as { heads: Record<string, unknown>[] };
      (document.heads[0] as Record<string, unknown>).envelope = 'nope';
      expect(check(document).problems[0]?.message).toMatch(/malformed_envelope/);
    });

    it('names a head whose fields differ from what it signed', () => {
      const document = doc();
      document.heads[3] = { ...(document.heads[3] as SignedTreeHead), timestamp: '2030-01-01T00:00:00.000Z' };
      const [problem] = check(document).problems;
      expect(problem).toMatchObject({ kind: 'payload_mismatch', tree_size: 20 });
      expect(problem?.message).toContain('the head states {"log_id":"audit-log"');
      const other = doc();
      other.heads[3] = { ...(other.heads[3] as SignedTreeHead), root_hash: '00'.repeat(32) };
      expect(check(other).problems.map((p) => p.kind)).toEqual(['payload_mismatch']);
    });

    it('names heads of another log', () => {
      const document = { ...doc(), log_id: 'another-log' };
      const report = check(document);
      expect(report.problems).toHaveLength(8);
      expect(report.problems[0]).toEqual({
        kind: 'wrong_log',
        tree_size: 5,
        message: 'head 5 is of log audit-log, not another-log',
      });
    });

    it('names a signed head whose root later heads contradict', async () => {
      const document = doc();
      document.heads.splice(2, 0, await forgedHead(12, 'ab'.repeat(32)));
      const report = check(document);
      expect(report.problems).toEqual([
        {
          kind: 'root_mismatch',
          tree_size: 12,
          message:
            'head 12 signs a root that is not the root of the first 12 entries, which later heads sign',
        },
      ]);
      expect(report.verified_heads).toBe(8);
    });

    it('names heads out of order and duplicated', () => {
      const document = doc();
      const [h15, h20] = document.heads.slice(2, 4) as [SignedTreeHead, SignedTreeHead];
      document.heads.splice(2, 2, h20, h15);
      expect(check(document).problems).toEqual([
        { kind: 'reordered', tree_size: 15, message: 'head 15 comes after head 20' },
      ]);
      const again = doc();
      again.heads.splice(2, 0, again.heads[1] as SignedTreeHead);
      expect(check(again).problems).toEqual([
        { kind: 'duplicated', tree_size: 10, message: 'two heads of tree size 10' },
      ]);
    });

    it('names malformed heads', () => {
      const valid = doc().heads[0] as SignedTreeHead;
      const variants: [unknown, string, number | undefined][] = [
        ['head', 'is not an object', undefined],
        [{ ...valid, tree_size: -5 }, 'has no non-negative integer tree_size', undefined],
        [{ ...valid, log_id: 1 }, 'has no string log_id', 5],
        [{ ...valid, root_hash: 'AB'.repeat(32) }, 'has no root_hash of 64 lowercase hex digits', 5],
        [{ ...valid, root_hash: 7 }, 'has no root_hash of 64 lowercase hex digits', 5],
        [{ ...valid, timestamp: 0 }, 'has no string timestamp', 5],
      ];
      for (const [head, message, size] of variants) {
        const document = doc() as unknown as { heads: unknown[] };
        document.heads[0] = head;
        expect(check(document).problems[0]).toEqual({
          kind: 'malformed',
          ...(size === undefined ? {} : { tree_size: size }),
          message: `heads[0] ${message}`,
        });
      }
    });
  });

  it('refuses what is not an export', () => {
    for (const document of [
      null,
      [],
      'x',
      { log_id: 1, entries: [], heads: [] },
      { log_id: 'l', entries: {}, heads: [] },
      { log_id: 'l', entries: [] },
    ]) {
      expect(check(document)).toEqual({
        ok: false,
        entries: 0,
        heads: 0,
        verified_heads: 0,
        inclusion_checked: 0,
        consistency_checked: 0,
        problems: [
          {
            kind: 'malformed',
            message: 'the document is not a journal export ({ log_id, entries: [...], heads: [...] })',
          },
        ],
      });
    }
  });

  it('reports proofs that do not verify (the cross-checks against proof code that would be broken)', async () => {
    vi.resetModules();
    vi.doMock('../../../functions/domain/audit/merkle', async (original) => ({
      ...(await original<typeof import('../../../functions/domain/audit/merkle')>()),
      verifyInclusion: () => false,
      verifyConsistency: () => false,
    }));
    try {
      const broken = await import('../../../functions/domain/audit/journal-verify');
      const report = broken.verifyJournalExport(doc(), keys.jwks, { proofSample: 2 });
      expect(report.problems).toEqual([
        {
          kind: 'not_included',
          index: 0,
          tree_size: 37,
          message: 'the inclusion proof of entry 0 does not verify against head 37',
        },
        { kind: 'inconsistent', tree_size: 10, message: 'head 10 is not consistent with head 5' },
        {
          kind: 'not_included',
          index: 36,
          tree_size: 37,
          message: 'the inclusion proof of entry 36 does not verify against head 37',
        },
        { kind: 'inconsistent', tree_size: 37, message: 'head 37 is not consistent with head 35' },
      ]);
    } finally {
      vi.doUnmock('../../../functions/domain/audit/merkle');
      vi.resetModules();
    }
  });

  it('lists the earliest problem first', async () => {
    const document = doc();
    document.heads[6] = { ...(document.heads[6] as SignedTreeHead), timestamp: 'changed' };
    document.entries.splice(30, 1);
    document.heads.splice(1, 0, await forgedHead(7, 'cd'.repeat(32)));
    const kinds = check(document).problems.map((problem) => [
      problem.kind,
      problem.index ?? problem.tree_size,
    ]);
    expect(kinds).toEqual([
      ['root_mismatch', 7],
      ['removed', 30],
      ['payload_mismatch', 35],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// npm run verify-journal (bin/verify-journal.ts), run through its exported `run` with an injected world
// ---------------------------------------------------------------------------------------------------------

const world = cliWorld;

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** The first page the CLI asks for (the largest the API serves). */
const EXPORT_URL = 'http://127.0.0.1:4000/audit/journal/export?limit=2000';

describe('npm run verify-journal', () => {
  it('parses its options and refuses wrong command lines', () => {
    expect(parseOptions(['e.json', '--keys', 'k.json', '--proof-sample', '5'])).toEqual({
      file: 'e.json',
      keys: 'k.json',
      proofSample: 5,
    });
    expect(parseOptions(['--from-api', 'http://x', '--out', 'o.json', '--sigv4'])).toEqual({
      fromApi: 'http://x',
      out: 'o.json',
      sigv4: true,
    });
    for (const argv of [
      [],
      ['a.json', 'b.json'],
      ['a.json', '--from-api', 'http://x'],
      ['a.json', '--out', 'o.json'],
      ['a.json', '--sigv4'],
      ['a.json', '--keys'],
      ['a.json', '--keys', '--out'],
      ['a.json', '--proof-sample', '0'],
      ['a.json', '--bogus'],
    ]) {
      expect(() => parseOptions(argv), argv.join(' ')).toThrow();
    }
  });

  it('exits 2 with the usage for a wrong command line', async () => {
    const w = world({});
    expect(await run(['--bogus'], w.io)).toBe(2);
    expect(w.err.join('')).toContain('unknown option --bogus');
    expect(w.err.join('')).toContain('usage:');
  });

  it('verifies an export file with keys from a file: exit 0 and a summary', async () => {
    const w = world({ 'export.json': JSON.stringify(base), 'keys.json': JSON.stringify(keys.jwks) });
    expect(await run(['export.json', '--keys', 'keys.json'], w.io)).toBe(0);
    expect(w.out.join('')).toBe(
      `journal audit-log: OK — 37 entries, 8 signed heads verified (tree size 37, root ${base.heads.at(-1)?.root_hash}); ` +
        '37 inclusion and 7 consistency proofs checked\n',
    );
  });

  it('exits 1 listing every problem of a tampered export', async () => {
    const document = doc();
    document.entries.splice(12, 1);
    document.heads[7] = { ...(document.heads[7] as SignedTreeHead), timestamp: 'x' };
    const w = world({ 'export.json': JSON.stringify(document), 'keys.json': JSON.stringify(keys.jwks) });
    expect(await run(['export.json', '--keys', 'keys.json', '--proof-sample', '2'], w.io)).toBe(1);
    const text = w.out.join('');
    expect(text).toContain('journal audit-log: INVALID — 2 problems (36 entries, 8 heads, 2 verified)');
    expect(text).toContain('  removed [entry 12]: entry 12 is missing');
    expect(text).toContain('  payload_mismatch [head 37]: head 37: the envelope signs');
  });

  it('reads the keys from the API by default', async () => {
    const routes = { 'http://127.0.0.1:3000/keys': () => json(keys.jwks) };
    const w = world({ 'export.json': JSON.stringify(base) }, routes);
    expect(await run(['export.json'], w.io)).toBe(0);
    const elsewhere = world(
      { 'export.json': JSON.stringify(base) },
      { 'http://api.test/keys': () => json(keys.jwks) },
      {
        API_URL: 'http://api.test/',
      },
    );
    expect(await run(['export.json'], elsewhere.io)).toBe(0);
  });

  it('fetches the export with the admin client, saves it, and verifies it', async () => {
    const routes = {
      [EXPORT_URL]: () => json({ ...base, tree_size: base.entries.length }),
      'http://127.0.0.1:4000/keys': () => json(keys.jwks),
    };
    const w = world({}, routes, { ADMIN_TOKEN: 'adm_secret' });
    expect(await run(['--from-api', 'http://127.0.0.1:4000', '--out', 'saved.json'], w.io)).toBe(0);
    expect(w.requests[0]?.url).toBe(EXPORT_URL);
    const [first] = w.requests;
    expect((first?.init.headers ?? {}) as Record<string, string>).toMatchObject({
      Authorization: 'Bearer adm_secret',
    });
    expect(JSON.parse(w.written.get('saved.json') as string)).toEqual(base);
    expect(w.out.join('')).toContain('export saved to saved.json');
    expect(w.out.join('')).toContain('journal audit-log: OK');
  });

  it('follows the export’s pages and verifies the whole document they make', async () => {
    const half = Math.ceil(base.entries.length / 2);
    const headsOf = (from: number, to: number) =>
      base.heads.filter(
        (head) => (from === 0 ? head.tree_size >= 0 : head.tree_size > from) && head.tree_size <= to,
      );
    const size = base.entries.length;
    const routes = {
      [EXPORT_URL]: () =>
        json({
          log_id: base.log_id,
          tree_size: size,
          entries: base.entries.slice(0, half),
          heads: headsOf(0, half),
          next_cursor: 'c2',
        }),
      [`${EXPORT_URL}&cursor=c2`]: () =>
        json({
          log_id: base.log_id,
          tree_size: size,
          entries: base.entries.slice(half),
          heads: headsOf(half, size),
        }),
      'http://127.0.0.1:4000/keys': () => json(keys.jwks),
    };
    const w = world({}, routes, { ADMIN_TOKEN: 'adm_secret' });
    expect(await run(['--from-api', 'http://127.0.0.1:4000', '--out', 'saved.json'], w.io)).toBe(0);
    expect(w.requests.map((request) => request.url).slice(0, 2)).toEqual([
      EXPORT_URL,
      `${EXPORT_URL}&cursor=c2`,
    ]);
    expect(JSON.parse(w.written.get('saved.json') as string)).toEqual(base);
    expect(w.out.join('')).toContain('journal audit-log: OK');
  });

  it('exits 1 when the API refuses, the keys are not a JWKS, or a file is missing', async () => {
    const refusing = world(
      {},
      {
        [EXPORT_URL]: () => json({ error: 'forbidden', error_description: 'nope', trace_id: 'trc_1' }, 403),
      },
      { ADMIN_TOKEN: 't' },
    );
    expect(await run(['--from-api', 'http://127.0.0.1:4000'], refusing.io)).toBe(1);
    expect(refusing.err.join('')).toContain('cannot verify: error 403 forbidden: nope');

    const badKeys = world({ 'export.json': JSON.stringify(base), 'keys.json': '{"nope":1}' });
    expect(await run(['export.json', '--keys', 'keys.json'], badKeys.io)).toBe(1);
    expect(badKeys.err.join('')).toContain('keys.json is not a JWKS');

    const missing = world({});
    expect(await run(['missing.json', '--keys', 'keys.json'], missing.io)).toBe(1);
    expect(missing.err.join('')).toContain('ENOENT');

    const down = world(
      { 'export.json': JSON.stringify(base) },
      {
        'http://127.0.0.1:3000/keys': () => json({}, 503),
      },
    );
    expect(await run(['export.json'], down.io)).toBe(1);
    expect(down.err.join('')).toContain('http://127.0.0.1:3000/keys answered 503');
  });

  it('describes an empty journal and a list of keys', async () => {
    const w = world({
      'export.json': JSON.stringify({ log_id: 'audit-log', entries: [], heads: [] }),
      'keys.json': JSON.stringify(keys.jwks.keys),
    });
    expect(await run(['export.json', '--keys', 'keys.json'], w.io)).toBe(0);
    expect(w.out.join('')).toContain('OK — 0 entries, 0 signed heads verified (empty)');
    expect(
      describeReport({
        ok: false,
        entries: 0,
        heads: 0,
        verified_heads: 0,
        inclusion_checked: 0,
        consistency_checked: 0,
        problems: [{ kind: 'malformed', message: 'not an export' }],
      }),
    ).toBe(
      'journal (unnamed): INVALID — 1 problem (0 entries, 0 heads, 0 verified)\n  malformed: not an export\n',
    );
  });
});
