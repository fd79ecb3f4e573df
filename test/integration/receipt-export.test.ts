import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoReceiptItemSource } from '../../functions/adapters/aws/checkout-repository';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoJournalStore } from '../../functions/adapters/aws/journal-store';
import { S3ObjectStore } from '../../functions/adapters/aws/object-store';
import { canonicalJson } from '../../functions/domain/money/canonical';
import { exportBytes, receiptImageOf, sha256Hex } from '../../functions/domain/receipts/export/documents';
import { documentKey, manifestKey, summaryKey } from '../../functions/domain/receipts/export/keys';
import { type Manifest, merkleRootOfDigests } from '../../functions/domain/receipts/export/manifest';
import { verifyExportedDay } from '../../functions/domain/receipts/export/verify';
import type { JsonObject, Jwk } from '../../functions/domain/receipts/receipt';
import type { Clock } from '../../functions/ports/clock';
import { ObjectConflictError } from '../../functions/ports/object-store';
import { Journal } from '../../functions/usecases/audit/journal';
import {
  type ExportLogger,
  ManifestRefusedError,
  ReceiptExport,
  type ReceiptExportDependencies,
} from '../../functions/usecases/receipts/export';
import { engineClients, provisionIsolated } from '../support/engines';
import {
  receiptItem,
  receiptPayload,
  refundPayload,
  signDocument,
  testSigner,
} from '../support/export-documents';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const signer = testSigner();
let keys: Jwk[];
beforeAll(async () => {
  keys = [await signer.publicKey()];
});

const DAY = '2026-11-20';
let now: number;
const clock: Clock = { now: () => new Date(now) };
let bucket: string;
let store: S3ObjectStore;
let journalStore: DynamoJournalStore;
let journal: Journal;
let receiptItems: DynamoReceiptItemSource;
let receiptsTable: string;
let logged: { level: string; message: string; fields: Record<string, unknown> }[];

const logger = {
  info: (message: string, fields: Record<string, unknown> = {}) =>
    logged.push({ level: 'info', message, fields }),
  warn: (message: string, fields: Record<string, unknown> = {}) =>
    logged.push({ level: 'warn', message, fields }),
  error: (message: string, fields: Record<string, unknown> = {}) =>
    logged.push({ level: 'error', message, fields }),
} as unknown as ExportLogger;

const exporterWith = (overrides: Partial<ReceiptExportDependencies> = {}) =>
  new ReceiptExport({
    objects: store,
    journal,
    signer,
    clock,
    settings: { graceMinutes: 15, lookbackDays: 3 },
    logger,
    receipts: receiptItems,
    ...overrides,
  });

beforeEach(async () => {
  const resources = await provisionIsolated(clients);
  bucket = resources.bucketNames.receipts;
  store = new S3ObjectStore(clients.s3, bucket, 2);
  receiptsTable = resources.tableNames.receipts;
  receiptItems = new DynamoReceiptItemSource(clients.documents, receiptsTable);
  journalStore = new DynamoJournalStore(clients.documents, resources.tableNames.journal);
  now = Date.parse(`${DAY}T18:00:00.000Z`);
  journal = new Journal({
    store: journalStore,
    signer,
    clock,
    logId: 'it-export',
    sliceSize: 100,
    sliceSeconds: 3600,
  });
  logged = [];
});

const text = async (key: string) =>
  (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body?.transformToString('utf8');

const receipt = (id: string, hour: number, currency = 'EUR', total = '12.50', day = DAY) =>
  signDocument(
    signer,
    receiptPayload(signer, {
      id,
      issuedAt: `${day}T${String(hour).padStart(2, '0')}:00:00.000Z`,
      currency,
      total,
    }),
  );

const refund = (id: string, receiptId: string, kind: 'return' | 'chargeback', createdAt: string) =>
  signDocument(
    signer,
    refundPayload(signer, {
      id,
      receiptId,
      kind,
      createdAt,
      currency: 'EUR',
      amount: '2.00',
      fee: kind === 'return' ? '0.50' : '0.00',
      net: kind === 'return' ? '1.50' : '2.00',
    }),
  );

const insert = (document: JsonObject) => ({
  eventName: 'INSERT' as const,
  newImage: receiptImageOf(receiptItem(document)),
});

describe('S3ObjectStore on fauxqs', () => {
  it('puts once with its SHA-256, reads, heads and lists across pages', async () => {
    const body = new TextEncoder().encode('{"a":1}');
    expect(await store.putOnce('p/a.json', body, 'application/json')).toBe('created');
    const head = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'p/a.json' }));
    expect({ type: head.ContentType, sha256: head.Metadata?.sha256 }).toEqual({
      type: 'application/json',
      sha256: sha256Hex(body),
    });
    expect(await store.head('p/a.json')).toEqual({ size: body.length, sha256: sha256Hex(body) });
    expect(Buffer.from((await store.get('p/a.json')) as Uint8Array).toString('utf8')).toBe('{"a":1}');
    expect(await store.head('p/none.json')).toBeUndefined();
    expect(await store.get('p/none.json')).toBeUndefined();
    for (const name of ['e', 'b', 'd', 'c']) {
      await store.putOnce(`p/${name}.json`, new TextEncoder().encode(name), 'application/json');
    }
    await store.putOnce('q/z.json', body, 'application/json');
    // Two keys per page: three pages for five keys, in key order, nothing of another prefix.
    expect((await store.list('p/')).map((object) => object.key)).toEqual([
      'p/a.json',
      'p/b.json',
      'p/c.json',
      'p/d.json',
      'p/e.json',
    ]);
    expect(await store.list('nothing/')).toEqual([]);
  });

  it('a second put of the same bytes writes nothing; other bytes are a conflict and the object stays', async () => {
    const body = new TextEncoder().encode('{"a":1}');
    await store.putOnce('k.json', body, 'application/json');
    const before = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k.json' }));
    expect(await store.putOnce('k.json', body, 'application/json')).toBe('exists');
    const after = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k.json' }));
    expect(after.LastModified).toEqual(before.LastModified);
    await expect(
      store.putOnce('k.json', new TextEncoder().encode('{"a":2}'), 'application/json'),
    ).rejects.toThrow(ObjectConflictError);
    expect(await text('k.json')).toBe('{"a":1}');
  });

  it('an object written without the metadata is compared by its bytes', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'plain.json', Body: '{"b":1}' }));
    expect(await store.putOnce('plain.json', new TextEncoder().encode('{"b":1}'), 'application/json')).toBe(
      'exists',
    );
    await expect(
      store.putOnce('plain.json', new TextEncoder().encode('{"b":2}'), 'application/json'),
    ).rejects.toThrow(ObjectConflictError);
  });
});

describe('receipt export on fauxqs and DynamoDB Local', () => {
  it('exports a receipt as its RFC 8785 bytes; a record delivered twice leaves one object', async () => {
    const document = await receipt('rcpt_1', 9);
    const exporter = exporterWith();
    expect(await exporter.exportChange(insert(document))).toEqual([
      { key: documentKey(DAY, 'rcpt_1'), type: 'receipt', outcome: 'created' },
    ]);
    expect(await exporter.exportChange(insert(document))).toEqual([
      { key: documentKey(DAY, 'rcpt_1'), type: 'receipt', outcome: 'exists' },
    ]);
    expect((await store.list('receipts/')).map((object) => object.key)).toEqual([documentKey(DAY, 'rcpt_1')]);
    expect(await text(documentKey(DAY, 'rcpt_1'))).toBe(canonicalJson(document));
  });

  it('exports the refunds a change adds, under the day each was created', async () => {
    const document = await receipt('rcpt_2', 10);
    const first = await refund('rfd_1', 'rcpt_2', 'return', `${DAY}T11:00:00.000Z`);
    const second = await refund('rfd_2', 'rcpt_2', 'chargeback', '2026-11-21T02:00:00.000Z');
    const exporter = exporterWith();
    await exporter.exportChange(insert(document));
    await exporter.exportChange({
      eventName: 'MODIFY',
      oldImage: receiptImageOf(receiptItem(document)),
      newImage: receiptImageOf(receiptItem(document, [first])),
    });
    const exported = await exporter.exportChange({
      eventName: 'MODIFY',
      oldImage: receiptImageOf(receiptItem(document, [first])),
      newImage: receiptImageOf(receiptItem(document, [first, second])),
    });
    expect(exported).toEqual([
      { key: documentKey('2026-11-21', 'rfd_2'), type: 'chargeback', outcome: 'created' },
    ]);
    expect((await store.list('receipts/')).map((object) => object.key)).toEqual([
      documentKey(DAY, 'rcpt_2'),
      documentKey(DAY, 'rfd_1'),
      documentKey('2026-11-21', 'rfd_2'),
    ]);
  });

  it('refuses to overwrite a document with other bytes', async () => {
    const document = await receipt('rcpt_3', 9);
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: documentKey(DAY, 'rcpt_3'), Body: '{}' }),
    );
    await expect(exporterWith().exportChange(insert(document))).rejects.toThrow(ObjectConflictError);
    expect(await text(documentKey(DAY, 'rcpt_3'))).toBe('{}');
  });

  it("builds a closed day's manifest once: Merkle root, totals, summary and one journal entry", async () => {
    const exporter = exporterWith();
    const documents = await Promise.all([
      receipt('rcpt_a', 1),
      receipt('rcpt_b', 2, 'JPY', '1500'),
      receipt('rcpt_c', 3),
      receipt('rcpt_d', 4),
      receipt('rcpt_e', 5),
    ]);
    for (const document of documents) await exporter.exportChange(insert(document));

    await expect(exporter.buildManifest(DAY)).rejects.toThrow(ManifestRefusedError);
    await expect(exporter.buildManifest('2026-02-30')).rejects.toMatchObject({ code: 'invalid_request' });
    now = Date.parse('2026-11-21T00:14:59.999Z');
    await expect(exporter.buildManifest(DAY)).rejects.toMatchObject({ code: 'day_not_closed' });

    now = Date.parse('2026-11-21T00:15:00.000Z');
    const built = await exporter.buildManifest(DAY);
    const manifest = JSON.parse((await text(manifestKey(DAY))) as string) as Manifest;
    const digests = documents
      .map((document) => ({
        key: documentKey(DAY, String(document.receipt_id)),
        sha256: sha256Hex(exportBytes(document)),
      }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    expect(manifest.objects.map(({ key, sha256 }) => ({ key, sha256 }))).toEqual(digests);
    expect(manifest).toMatchObject({
      date: DAY,
      count: 5,
      tree_size: 5,
      merkle_root: merkleRootOfDigests(digests.map((digest) => digest.sha256)),
      generated_at: '2026-11-21T00:15:00.000Z',
      key_id: signer.keyId,
      totals: {
        EUR: { receipts: 4, gross: '50.00', net: '50.00' },
        JPY: { receipts: 1, gross: '1500', net: '1500' },
      },
    });
    expect(built).toEqual({
      date: DAY,
      outcome: 'created',
      count: 5,
      merkle_root: manifest.merkle_root,
      journal_index: 0,
    });
    // The journal holds the root, and the manifest's own bytes by their digest.
    const entry = await journalStore.entry(
      (await journalStore.indexOf(`receipts-manifest:${DAY}`)) as number,
    );
    expect(entry?.entry).toMatchObject({
      type: 'receipts_manifest',
      data: {
        merkle_root: manifest.merkle_root,
        count: 5,
        manifest_key: manifestKey(DAY),
        manifest_sha256: sha256Hex(new TextEncoder().encode((await text(manifestKey(DAY))) as string)),
      },
    });
    // What was written verifies offline, summary included.
    const listed = (await store.list(`receipts/dt=${DAY}/`)).map((object) => object.key);
    const day = {
      date: DAY,
      manifest: (await store.get(manifestKey(DAY))) as Uint8Array,
      summary: (await store.get(summaryKey(DAY))) as Uint8Array,
      listed,
      objects: new Map(
        await Promise.all(listed.map(async (key) => [key, (await store.get(key)) as Uint8Array] as const)),
      ),
    };
    expect(verifyExportedDay(day, keys).problems).toEqual([]);

    // Again: nothing rebuilt, nothing journaled twice.
    now += 3_600_000;
    expect(await exporter.buildManifest(DAY)).toEqual({
      date: DAY,
      outcome: 'exists',
      count: 5,
      merkle_root: manifest.merkle_root,
    });
    expect((await journalStore.state())?.size).toBe(1);
    expect(await text(manifestKey(DAY))).toBe(canonicalJson(manifest as unknown as JsonObject));
  });

  it('a run stopped after the manifest is finished from the stored manifest by the next one', async () => {
    for (const document of await Promise.all([
      receipt('rcpt_w', 9, 'EUR', '1.00', '2026-11-18'),
      receipt('rcpt_x', 1),
      receipt('rcpt_y', 2),
    ])) {
      await exporterWith().exportChange(insert(document));
    }
    now = Date.parse('2026-11-21T01:00:00.000Z');
    const failing = exporterWith({
      journal: {
        has: (entryId) => journal.has(entryId),
        append: async () => {
          throw new Error('DynamoDB is down');
        },
      },
    });
    await expect(failing.buildManifest(DAY)).rejects.toThrow('DynamoDB is down');
    expect(await store.head(manifestKey(DAY))).toBeDefined();
    expect(await journal.has(`receipts-manifest:${DAY}`)).toBe(false);

    const report = await exporterWith().buildDueManifests();
    expect(report.checked).toEqual(['2026-11-18', '2026-11-19', DAY]);
    expect(report.failed).toEqual([]);
    // A day without documents after the first one gets an empty manifest; the interrupted day is finished,
    // not rebuilt.
    expect(report.created.map((result) => [result.date, result.count])).toEqual([
      ['2026-11-18', 1],
      ['2026-11-19', 0],
    ]);
    expect(await journal.has(`receipts-manifest:${DAY}`)).toBe(true);
    const empty = JSON.parse((await text(manifestKey('2026-11-19'))) as string) as Manifest;
    expect(empty.merkle_root).toBe(merkleRootOfDigests([]));
    // A run with everything in place writes nothing.
    const size = (await journalStore.state())?.size;
    expect((await exporterWith().buildDueManifests()).created).toEqual([]);
    expect((await journalStore.state())?.size).toBe(size);
  });

  it('reports a document exported after its day was closed and its manifest written', async () => {
    now = Date.parse('2026-11-21T01:00:00.000Z');
    await exporterWith().buildManifest(DAY);
    await exporterWith().exportChange(insert(await receipt('rcpt_late', 23)));
    expect(logged.filter((line) => line.level === 'error').map((line) => line.fields)).toEqual([
      {
        alarm: 'ReceiptExportLate',
        key: documentKey(DAY, 'rcpt_late'),
        manifest: manifestKey(DAY),
      },
    ]);
  });

  it('reports a document written while the manifest was being built, which the manifest does not list', async () => {
    await exporterWith().exportChange(insert(await receipt('rcpt_on_time', 9)));
    now = Date.parse('2026-11-21T01:00:00.000Z');
    const late = await receipt('rcpt_racing', 22);
    const racing = exporterWith({
      objects: {
        ...store,
        list: (prefix) => store.list(prefix),
        head: (key) => store.head(key),
        get: (key) => store.get(key),
        firstKey: (prefix) => store.firstKey(prefix),
        putOnce: async (key, body, contentType) => {
          // The stream delivers a late document between the day's listing and its manifest's write.
          if (key === manifestKey(DAY)) await exporterWith().exportChange(insert(late));
          return store.putOnce(key, body, contentType);
        },
      },
    });
    const result = await racing.buildManifest(DAY);
    expect(result).toMatchObject({ outcome: 'created', count: 1 });
    expect(logged.filter((line) => line.level === 'error').map((line) => line.fields)).toEqual([
      { alarm: 'ReceiptExportLate', key: documentKey(DAY, 'rcpt_racing'), manifest: manifestKey(DAY) },
    ]);
  });

  it('a backfill exports, page by page, the stored documents of its days that the bucket lacks', async () => {
    const [a, b, c, older] = await Promise.all([
      receipt('rcpt_a', 8),
      receipt('rcpt_b', 9),
      receipt('rcpt_c', 10),
      receipt('rcpt_older', 10, 'EUR', '5.00', '2026-11-18'),
    ]);
    const returned = await refund('rfd_b1', 'rcpt_b', 'return', `${DAY}T11:00:00.000Z`);
    const items = [receiptItem(a), receiptItem(b, [returned]), receiptItem(c), receiptItem(older)];
    for (const item of items) {
      await clients.documents.send(new PutCommand({ TableName: receiptsTable, Item: item }));
    }
    // The stream exported rcpt_a; the records of the others were lost.
    await exporterWith().exportChange(insert(a));
    const first = await exporterWith().reexport({ from: DAY, to: DAY, pageSize: 1, maxPages: 2 });
    expect(first.scanned).toBe(2);
    expect(first.cursor).toBeDefined();
    const reports = [first];
    while (reports.at(-1)?.cursor) {
      const cursor = reports.at(-1)?.cursor as string;
      reports.push(await exporterWith().reexport({ from: DAY, to: DAY, cursor, pageSize: 1, maxPages: 2 }));
    }
    expect(reports.reduce((sum, report) => sum + report.scanned, 0)).toBe(4);
    expect(reports.flatMap((report) => report.created).sort()).toEqual(
      [documentKey(DAY, 'rcpt_b'), documentKey(DAY, 'rcpt_c'), documentKey(DAY, 'rfd_b1')].sort(),
    );
    expect(reports.reduce((sum, report) => sum + report.existing, 0)).toBe(1);
    expect(await store.head(documentKey('2026-11-18', 'rcpt_older'))).toBeUndefined();
    expect(await text(documentKey(DAY, 'rfd_b1'))).toBe(canonicalJson(returned));
    // Everything there: a second backfill writes nothing.
    const again = await exporterWith().reexport({ from: '2026-11-18', to: DAY });
    expect([again.created, again.existing, again.cursor]).toEqual([
      [documentKey('2026-11-18', 'rcpt_older')],
      4,
      undefined,
    ]);
    expect(logged.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('a backfill into a day whose manifest exists reports the document late; a bad range is refused', async () => {
    now = Date.parse('2026-11-21T01:00:00.000Z');
    await exporterWith().buildManifest(DAY);
    const lost = await receipt('rcpt_lost', 12);
    await clients.documents.send(new PutCommand({ TableName: receiptsTable, Item: receiptItem(lost) }));
    expect((await exporterWith().reexport({ from: DAY, to: DAY })).created).toEqual([
      documentKey(DAY, 'rcpt_lost'),
    ]);
    expect(logged.filter((line) => line.level === 'error').map((line) => line.fields)).toEqual([
      { alarm: 'ReceiptExportLate', key: documentKey(DAY, 'rcpt_lost'), manifest: manifestKey(DAY) },
    ]);
    await expect(exporterWith().reexport({ from: DAY, to: '2026-11-01' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(exporterWith().reexport({ from: 'yesterday', to: DAY })).rejects.toBeInstanceOf(
      ManifestRefusedError,
    );
  });

  it('nothing exported yet: no manifests; days before the first document get none', async () => {
    now = Date.parse('2026-11-21T01:00:00.000Z');
    expect(await exporterWith().buildDueManifests()).toEqual({ checked: [], created: [], failed: [] });
    await exporterWith().exportChange(insert(await receipt('rcpt_first', 8, 'EUR', '3.00', '2026-11-19')));
    const report = await exporterWith().buildDueManifests();
    expect(report.checked).toEqual(['2026-11-19', DAY]);
    expect(report.created.map((result) => [result.date, result.count])).toEqual([
      ['2026-11-19', 1],
      [DAY, 0],
    ]);
    expect(await store.head(manifestKey('2026-11-18'))).toBeUndefined();
    // Once manifests exist they mark the first day, whatever the documents' partitions hold.
    now = Date.parse('2026-11-22T01:00:00.000Z');
    expect((await exporterWith().buildDueManifests()).checked).toEqual(['2026-11-19', DAY, '2026-11-21']);
  });

  it('a failing day is reported and the others are still built', async () => {
    await exporterWith().exportChange(insert(await receipt('rcpt_v', 9, 'EUR', '1.00', '2026-11-18')));
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: `receipts/dt=2026-11-19/junk.json`, Body: 'not json' }),
    );
    now = Date.parse('2026-11-21T01:00:00.000Z');
    const report = await exporterWith().buildDueManifests();
    expect(report.created.map((result) => result.date)).toEqual(['2026-11-18', DAY]);
    expect(report.failed).toEqual([
      { date: '2026-11-19', error: 'receipts/dt=2026-11-19/junk.json is not JSON' },
    ]);
    expect(logged.find((line) => line.level === 'error')?.fields).toMatchObject({
      alarm: 'ReceiptExportFailed',
      date: '2026-11-19',
    });
  });
});
