import { generateKeyPairSync } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoJournalStore, S3JournalMirror } from '../../functions/adapters/aws/journal-store';
import { LocalReceiptSigner } from '../../functions/adapters/local/local-signing';
import {
  entryJson,
  entryLeafHash,
  signedTreeHeadJson,
  toHex,
  verifyJournalExport,
} from '../../functions/domain/audit/journal-verify';
import { verifyConsistency } from '../../functions/domain/audit/merkle';
import type { Clock } from '../../functions/ports/clock';
import { journalEntryKey, journalHeadKey, type SignedTreeHead } from '../../functions/ports/journal';
import type { PublicJwk } from '../../functions/ports/signing';
import { Journal, JournalIntegrityError, JournalRangeError } from '../../functions/usecases/audit/journal';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const signer = new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
let jwks: { keys: PublicJwk[] };

let tableName: string;
let bucket: string;
let store: DynamoJournalStore;
let mirror: S3JournalMirror;
let now: number;
const clock: Clock = { now: () => new Date(now) };
const mirrorErrors: unknown[] = [];

const journalWith = (sliceSize = 5) =>
  new Journal({
    store,
    mirror,
    signer,
    clock,
    logId: 'it-journal',
    sliceSize,
    sliceSeconds: 60,
    onMirrorError: (error) => mirrorErrors.push(error),
  });

beforeEach(async () => {
  const resources = await provisionIsolated(clients);
  tableName = resources.tableNames.journal;
  bucket = resources.bucketNames.journal;
  store = new DynamoJournalStore(clients.documents, tableName);
  mirror = new S3JournalMirror(clients.s3, bucket);
  now = Date.parse('2026-11-22T12:00:00.000Z');
  mirrorErrors.length = 0;
  jwks = { keys: [await signer.publicKey()] };
});

const getItem = async (pk: string, seq: number) =>
  (
    await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { pk, seq }, ConsistentRead: true }),
    )
  ).Item;

const objectText = async (key: string) =>
  (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body?.transformToString('utf8');

describe('audit journal on DynamoDB Local and fauxqs', () => {
  it('appends 37 entries in slices of 5, proves every entry and head, and mirrors what is sealed', async () => {
    const journal = journalWith();
    for (let i = 0; i < 37; i += 1) {
      now += 1000;
      const result = await journal.append({
        entry_id: `e-${i}`,
        type: 'release',
        data: { i, cr_id: `cr_${i}` },
      });
      expect(result).toEqual({ index: i, created: true });
    }
    now += 61_000;
    expect((await journal.closeSliceIfDue())?.tree_size).toBe(37);
    expect(mirrorErrors).toEqual([]);

    // The items, as the adapter documents them.
    const state = await getItem('state', 0);
    expect(state).toMatchObject({ size: 37, last_head_size: 37, mirrored_size: 37 });
    expect(state?.peaks).toHaveLength(3);
    expect(state?.last_head_at).toBe('2026-11-22T12:01:38.000Z');
    const entry = await getItem('entry', 12);
    const record = await store.entry(12);
    expect(entry).toEqual({ pk: 'entry', seq: 12, entry: record?.json, leaf_hash: record?.leaf_hash });
    expect(record?.json).toBe(entryJson(record?.entry as NonNullable<typeof record>['entry']));
    expect(record?.leaf_hash).toBe(
      toHex(entryLeafHash(record?.entry as NonNullable<typeof record>['entry'])),
    );
    expect(await getItem('id#e-12', 0)).toEqual({ pk: 'id#e-12', seq: 0, index: 12 });
    expect(await getItem('head', 15)).toMatchObject({
      pk: 'head',
      seq: 15,
      tree_size: 15,
      log_id: 'it-journal',
    });

    // Every proof, checked by the offline verifier; every pair of heads, by the RFC 9162 consistency check.
    const document = await journal.exportAll();
    expect(document.heads.map((head) => head.tree_size)).toEqual([5, 10, 15, 20, 25, 30, 35, 37]);
    const report = verifyJournalExport(JSON.parse(JSON.stringify(document)), jwks);
    expect(report).toMatchObject({ ok: true, entries: 37, verified_heads: 8, inclusion_checked: 37 });
    for (const [i, older] of document.heads.entries()) {
      for (const newer of document.heads.slice(i + 1)) {
        const answer = await journal.consistency(older.tree_size, newer.tree_size);
        const check = {
          oldSize: older.tree_size,
          newSize: newer.tree_size,
          oldRoot: Buffer.from(older.root_hash, 'hex'),
          newRoot: Buffer.from(newer.root_hash, 'hex'),
          proof: answer.proof.map((hash) => Buffer.from(hash, 'hex')),
        };
        expect(verifyConsistency(check)).toBe(true);
      }
    }
    const proved = await journal.entry(36);
    expect(proved.inclusion.tree_size).toBe(37);

    // The mirror: each sealed entry's RFC 8785 text and each head, as JSON objects.
    const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'journal/' }));
    expect(listed.KeyCount).toBe(37 + 8);
    expect(await objectText(journalEntryKey(12))).toBe(record?.json);
    expect(await objectText(journalHeadKey(37))).toBe(
      signedTreeHeadJson(document.heads.at(-1) as SignedTreeHead),
    );
    const head = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: journalHeadKey(5) }));
    expect(head.ContentType).toBe('application/json');
  });

  it('never overwrites an entry, a marker or a head', async () => {
    const journal = journalWith(3);
    for (let i = 0; i < 4; i += 1) await journal.append({ entry_id: `e-${i}`, type: 't', data: i });
    const before = await store.entry(1);

    // An append that reuses an index (a stale state) writes nothing.
    const stale = {
      entry: { index: 1, entry_id: 'intruder', type: 't', at: 'x', data: 'overwrite' },
      json: '{}',
      leaf_hash: '00'.repeat(32),
      peaks: [],
    };
    expect(await store.append(stale)).toBe('conflict');
    expect(await store.entry(1)).toEqual(before);
    expect(await store.indexOf('intruder')).toBeUndefined();
    // …nor does one at the next index with a known entry id.
    expect(await store.append({ ...stale, entry: { ...stale.entry, index: 4, entry_id: 'e-0' } })).toBe(
      'conflict',
    );
    expect(await store.entry(4)).toBeUndefined();

    // The table refuses a conditional put to an existing key, as the store always writes.
    await expect(
      clients.documents.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk: 'entry', seq: 1, entry: '{}', leaf_hash: 'x' },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });

    // A head of an existing size, or below the last head, is refused.
    const existing = (await store.head(3)) as SignedTreeHead;
    expect(await store.putHead({ ...existing, timestamp: '2030-01-01T00:00:00.000Z' })).toBe('conflict');
    expect(await store.putHead({ ...existing, tree_size: 2 })).toBe('conflict');
    expect(await store.putHead({ ...existing, tree_size: 9 })).toBe('conflict');
    expect(await store.head(3)).toEqual(existing);
    expect((await store.state())?.last_head_size).toBe(3);
  });

  it('gives 40 concurrent appends contiguous indexes with none lost', async () => {
    const journal = journalWith(5);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        journal.append({ entry_id: `c-${i}`, type: 'concurrent', data: { i } }),
      ),
    );
    expect(results.map((result) => result.index).sort((a, b) => a - b)).toEqual([...Array(40).keys()]);
    expect(results.every((result) => result.created)).toBe(true);
    for (const [i, result] of results.entries()) {
      expect((await store.entry(result.index))?.entry.entry_id).toBe(`c-${i}`);
    }
    expect((await store.state())?.size).toBe(40);
    now += 61_000;
    await journal.closeSliceIfDue();
    const report = verifyJournalExport(await journal.exportAll(), jwks);
    expect(report).toMatchObject({ ok: true, entries: 40, tree_size: 40 });
  });

  it('exports by page: each page bounded, the pages together the whole document, pinned to the head of the first', async () => {
    const journal = journalWith(3);
    for (let i = 0; i < 23; i += 1) await journal.append({ entry_id: `p-${i}`, type: 'paged', data: { i } });
    now += 61_000;
    await journal.closeSliceIfDue();
    const whole = await journal.exportAll();
    expect(whole.entries).toHaveLength(23);

    const entries: unknown[] = [];
    const heads: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await journal.exportPage({ limit: 4, ...(cursor ? { cursor } : {}) });
      expect(page.entries.length).toBeLessThanOrEqual(4);
      expect(page.tree_size).toBe(23);
      entries.push(...page.entries);
      heads.push(...page.heads);
      cursor = page.next_cursor;
      pages += 1;
      // Entries appended meanwhile do not change the export the first page pinned.
      if (pages === 2) await journal.append({ entry_id: 'late', type: 'paged', data: {} });
    } while (cursor);
    expect(pages).toBe(6);
    // A cursor naming a head the journal never signed is a bad request, not a missing entry.
    const forged = Buffer.from(
      JSON.stringify({ l: 'journal-export', p: { size: 10_000, from: 0 } }),
    ).toString('base64url');
    await expect(journal.exportPage({ limit: 4, cursor: forged })).rejects.toBeInstanceOf(JournalRangeError);
    expect({ log_id: whole.log_id, entries, heads }).toEqual(whole);
    expect(verifyJournalExport({ log_id: whole.log_id, entries, heads }, jwks)).toMatchObject({
      ok: true,
      entries: 23,
      tree_size: 23,
    });
  });

  it('is idempotent by entry_id, also under concurrency', async () => {
    const journal = journalWith(100);
    expect(await journal.append({ entry_id: 'once', type: 't', data: 1 })).toEqual({
      index: 0,
      created: true,
    });
    expect(await journal.append({ entry_id: 'once', type: 't', data: 2 })).toEqual({
      index: 0,
      created: false,
    });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => journal.append({ entry_id: 'twice', type: 't', data: 3 })),
    );
    expect(results.filter((result) => result.created)).toEqual([{ index: 1, created: true }]);
    expect(new Set(results.map((result) => result.index))).toEqual(new Set([1]));
    expect((await store.state())?.size).toBe(2);
  });

  it('pages heads and entries, and moves mirrored_size only up', async () => {
    const journal = journalWith(2);
    for (let i = 0; i < 9; i += 1) await journal.append({ entry_id: `p-${i}`, type: 't', data: i });
    expect((await store.heads(3, 2)).map((head) => head.tree_size)).toEqual([4, 6]);
    expect((await store.heads(0, 100)).map((head) => head.tree_size)).toEqual([2, 4, 6, 8]);
    expect((await store.latestHead())?.tree_size).toBe(8);
    expect((await store.entries(5, 3)).map((record) => record.entry.index)).toEqual([5, 6, 7]);
    expect(await store.leafHashes(0)).toEqual([]);
    expect(await store.leafHashes(4)).toHaveLength(4);
    await store.markMirrored(3);
    expect((await store.state())?.mirrored_size).toBe(8);
    expect(await store.indexOf('p-4')).toBe(4);
    expect(await store.entry(99)).toBeUndefined();
    expect(await store.head(7)).toBeUndefined();
  });

  it('refuses to prove from a table with an entry missing below a head', async () => {
    const journal = journalWith(4);
    for (let i = 0; i < 4; i += 1) await journal.append({ entry_id: `m-${i}`, type: 't', data: i });
    await clients.documents.send(new DeleteCommand({ TableName: tableName, Key: { pk: 'entry', seq: 1 } }));
    expect(await store.leafHashes(4)).toHaveLength(1);
    await expect(journal.entry(3)).rejects.toThrow(JournalIntegrityError);
  });

  it('starts empty', async () => {
    expect(await store.state()).toBeUndefined();
    expect(await store.latestHead()).toBeUndefined();
    expect(await journalWith().closeSliceIfDue()).toBeUndefined();
  });

  it('fauxqs accepts If-None-Match: * on a put without enforcing it (S3 answers 412)', async () => {
    expect(await mirror.putEntry(0, '{"a":1}')).toBe('created');
    // S3 would refuse this second put; fauxqs replaces the object. The journal only ever puts the same bytes.
    expect(await mirror.putEntry(0, '{"a":1}')).toBe('created');
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'probe.json', Body: 'one', IfNoneMatch: '*' }),
    );
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'probe.json', Body: 'two', IfNoneMatch: '*' }),
    );
    expect(await objectText('probe.json')).toBe('two');
  });
});
