import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../functions/domain/money/canonical';
import {
  csvField,
  csvRecord,
  SUMMARY_COLUMNS,
  summaryCsv,
  summaryRow,
} from '../../../../functions/domain/receipts/export/csv';
import {
  addDays,
  closedDays,
  datesBetween,
  dueDays,
  isDayClosed,
  isExportDate,
  partitionDate,
} from '../../../../functions/domain/receipts/export/dates';
import {
  documentsOfChange,
  exportBytes,
  exportDocumentOf,
  receiptImageOf,
  sha256Hex,
  summaryFieldsOf,
} from '../../../../functions/domain/receipts/export/documents';
import { ExportFormatError } from '../../../../functions/domain/receipts/export/errors';
import {
  documentKey,
  manifestKey,
  parseDocumentKey,
  parseManifestKey,
  partitionPrefix,
  summaryKey,
} from '../../../../functions/domain/receipts/export/keys';
import {
  buildManifestPayload,
  manifestEntryData,
  manifestEntryId,
  merkleRootOfDigests,
} from '../../../../functions/domain/receipts/export/manifest';
import { sumTotals, totalsOf } from '../../../../functions/domain/receipts/export/totals';
import { type ExportedDay, verifyExportedDay } from '../../../../functions/domain/receipts/export/verify';
import type { JsonObject, Jwk } from '../../../../functions/domain/receipts/receipt';
import {
  receiptItem,
  receiptPayload,
  refundPayload,
  signDocument,
  testSigner,
} from '../../../support/export-documents';

// ---------------------------------------------------------------------------------------------------------
// Independent references, written from the RFCs (nothing below imports the module under test)
// ---------------------------------------------------------------------------------------------------------

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** RFC 9162 §2.1.1 MTH over entries, recursively. */
const mth = (entries: readonly Uint8Array[]): Buffer => {
  if (entries.length === 0) return sha256();
  if (entries.length === 1) return sha256(Uint8Array.of(0), entries[0] as Uint8Array);
  let k = 1;
  while (k * 2 < entries.length) k *= 2;
  return sha256(Uint8Array.of(1), mth(entries.slice(0, k)), mth(entries.slice(k)));
};

/** RFC 4180 records back into fields (quoted fields with doubled quotes, CRLF line breaks). */
const parseCsv = (text: string): string[][] => {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      fields.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
      i += 1;
    } else field += char;
  }
  return records;
};

const formatUnits = (units: bigint, decimals: number): string => {
  if (decimals === 0) return units.toString();
  const digits = units.toString().padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
};

// ---------------------------------------------------------------------------------------------------------

describe('keys and partition dates', () => {
  it('partitions by the UTC date of the timestamp', () => {
    expect(partitionDate('2026-11-22T23:59:59.999Z')).toBe('2026-11-22');
    expect(partitionDate('2026-11-22T23:30:00-02:00')).toBe('2026-11-23');
    expect(partitionDate('2026-11-23T00:30:00+01:00')).toBe('2026-11-22');
    expect(partitionDate('2024-02-29T12:00:00Z')).toBe('2024-02-29');
  });

  it('refuses what is not an ISO 8601 timestamp', () => {
    for (const bad of ['2026-11-22', 'yesterday', '2026-13-01T00:00:00Z', '']) {
      expect(() => partitionDate(bad)).toThrow(ExportFormatError);
    }
  });

  it('knows calendar dates', () => {
    expect(isExportDate('2024-02-29')).toBe(true);
    expect(['2026-02-29', '2026-02-30', '2026-1-01', '20261101', 2026].map(isExportDate)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('names documents, manifests and summaries by day', () => {
    expect(documentKey('2026-11-22', 'rcpt_01ABC')).toBe('receipts/dt=2026-11-22/rcpt_01ABC.json');
    expect(partitionPrefix('2026-11-22')).toBe('receipts/dt=2026-11-22/');
    expect(manifestKey('2026-11-22')).toBe('manifests/dt=2026-11-22.json');
    expect(summaryKey('2026-11-22')).toBe('summaries/dt=2026-11-22.csv');
  });

  it('refuses ids that would leave the partition', () => {
    for (const bad of ['../x', 'a/b', '', 'a.json', ' x']) {
      expect(() => documentKey('2026-11-22', bad)).toThrow(ExportFormatError);
    }
    expect(() => manifestKey('2026-02-30')).toThrow(ExportFormatError);
  });

  it('reads back the date and id of any key it makes (property)', () => {
    const dateArb = fc
      .date({
        min: new Date('2000-01-01T00:00:00Z'),
        max: new Date('2099-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((date) => date.toISOString().slice(0, 10));
    const idArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,40}$/);
    fc.assert(
      fc.property(dateArb, idArb, (date, id) => {
        expect(parseDocumentKey(documentKey(date, id))).toEqual({ date, id });
      }),
    );
    expect(parseDocumentKey('manifests/dt=2026-11-22.json')).toBeUndefined();
    expect(parseDocumentKey('receipts/dt=2026-02-30/rcpt_1.json')).toBeUndefined();
  });

  it('counts days across months and years', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(datesBetween('2026-12-30', '2027-01-02')).toEqual([
      '2026-12-30',
      '2026-12-31',
      '2027-01-01',
      '2027-01-02',
    ]);
    expect(() => datesBetween('2026-01-02', '2026-01-01')).toThrow(ExportFormatError);
    expect(() => datesBetween('2026-01-01', '2027-12-31', 366)).toThrow(/more than 366 days/);
  });
});

describe('closing days', () => {
  it('closes a day at midnight UTC plus the grace', () => {
    expect(isDayClosed('2026-11-22', new Date('2026-11-23T00:14:59.999Z'), 15)).toBe(false);
    expect(isDayClosed('2026-11-22', new Date('2026-11-23T00:15:00.000Z'), 15)).toBe(true);
    expect(isDayClosed('2026-11-22', new Date('2026-11-23T00:00:00.000Z'), 0)).toBe(true);
  });

  it('lists the closed days of the lookback window, oldest first', () => {
    expect(closedDays(new Date('2026-11-23T00:10:00Z'), 15, 3)).toEqual([
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
    ]);
    expect(closedDays(new Date('2026-11-23T00:15:00Z'), 15, 3)).toEqual([
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
    ]);
  });

  it('due days start at the first day the export knows; nothing exported, nothing due', () => {
    const closed = ['2026-11-19', '2026-11-20', '2026-11-21'];
    expect(dueDays(closed, undefined)).toEqual([]);
    expect(dueDays(closed, '2026-11-20')).toEqual(['2026-11-20', '2026-11-21']);
    expect(dueDays(closed, '2026-01-01')).toEqual(closed);
    expect(dueDays(closed, '2026-11-22')).toEqual([]);
  });

  it('reads the date of a manifest key, and nothing else', () => {
    expect(parseManifestKey('manifests/dt=2026-11-22.json')).toBe('2026-11-22');
    expect(parseManifestKey('manifests/dt=2026-02-30.json')).toBeUndefined();
    expect(parseManifestKey('summaries/dt=2026-11-22.csv')).toBeUndefined();
    expect(parseManifestKey('manifests/dt=2026-11-22.json.bak')).toBeUndefined();
  });

  it('every listed day is closed and the next one is not yet (property)', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('2001-01-01T00:00:00Z'),
          max: new Date('2090-01-01T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: 0, max: 1440 }),
        fc.integer({ min: 1, max: 30 }),
        (now, grace, lookback) => {
          const days = closedDays(now, grace, lookback);
          expect(days).toHaveLength(lookback);
          for (const day of days) expect(isDayClosed(day, now, grace)).toBe(true);
          expect(isDayClosed(addDays(days.at(-1) as string, 1), now, grace)).toBe(false);
        },
      ),
    );
  });
});

describe('RFC 4180 CSV', () => {
  it('quotes only what needs it, doubling inner quotes', () => {
    expect(csvField('rcpt_1')).toBe('rcpt_1');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvField('')).toBe('');
    expect(csvRecord(['a', 'b,c', ''])).toBe('a,"b,c",\r\n');
  });

  it('any fields survive a round trip through an RFC 4180 reader (property)', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ',', '"', '\r', '\n', ' ', 'é', '=') });
    fc.assert(
      fc.property(
        fc.array(fc.array(field, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        (rows) => {
          expect(parseCsv(rows.map(csvRecord).join(''))).toEqual(rows);
        },
      ),
    );
  });
});

const currencies = [
  { code: 'EUR', decimals: 2 },
  { code: 'JPY', decimals: 0 },
  { code: 'KWD', decimals: 3 },
  { code: 'BTC', decimals: 8 },
] as const;

interface Generated {
  readonly type: 'receipt' | 'return' | 'chargeback';
  readonly currency: (typeof currencies)[number];
  readonly units: bigint;
  readonly feeUnits: bigint;
  readonly second: number;
}

const generatedArb = fc.record({
  type: fc.constantFrom('receipt' as const, 'return' as const, 'chargeback' as const),
  currency: fc.constantFrom(...currencies),
  units: fc.bigInt({ min: 0n, max: 10n ** 14n }),
  feeUnits: fc.bigInt({ min: 0n, max: 10n ** 6n }),
  second: fc.integer({ min: 0, max: 86_399 }),
});

const DAY = '2026-11-22';
const signer = testSigner();

/** Unsigned documents of DAY (the manifest builder does not verify; the verifier tests sign theirs). */
const documentOf = (generated: Generated, index: number): JsonObject => {
  const at = new Date(Date.parse(`${DAY}T00:00:00Z`) + generated.second * 1000).toISOString();
  const format = (units: bigint) => formatUnits(units, generated.currency.decimals);
  if (generated.type === 'receipt') {
    return receiptPayload(signer, {
      id: `rcpt_${index.toString().padStart(4, '0')}`,
      issuedAt: at,
      currency: generated.currency.code,
      total: format(generated.units),
    });
  }
  const fee = generated.type === 'return' ? generated.feeUnits : 0n;
  return refundPayload(signer, {
    id: `rfd_${index.toString().padStart(4, '0')}`,
    receiptId: 'rcpt_0000',
    kind: generated.type,
    createdAt: at,
    currency: generated.currency.code,
    amount: format(generated.units + fee),
    fee: format(fee),
    net: format(generated.units),
  });
};

const found = (document: JsonObject) => {
  const item = exportDocumentOf(document);
  return { key: item.key, sha256: sha256Hex(exportBytes(document)), document };
};

describe('manifest', () => {
  it('lists the objects in key order with the Merkle root an independent MTH gives, and the totals per currency (property)', () => {
    fc.assert(
      fc.property(
        fc.array(generatedArb, { maxLength: 40 }),
        fc.infiniteStream(fc.nat()),
        (generated, seeds) => {
          const documents = generated.map(documentOf);
          // Any order in, the same manifest out.
          const shuffled = documents
            .map((document) => ({ document, seed: seeds.next().value as number }))
            .sort((a, b) => a.seed - b.seed)
            .map(({ document }) => found(document));
          const manifest = buildManifestPayload({
            date: DAY,
            objects: shuffled,
            generatedAt: '2026-11-23T01:00:00.000Z',
            keyId: signer.keyId,
          });
          expect(
            buildManifestPayload({
              date: DAY,
              objects: documents.map(found),
              generatedAt: '2026-11-23T01:00:00.000Z',
              keyId: signer.keyId,
            }),
          ).toEqual(manifest);
          expect(manifest.count).toBe(documents.length);
          expect(manifest.tree_size).toBe(documents.length);
          const keys = manifest.objects.map((object) => object.key);
          expect(keys).toEqual([...keys].sort());
          expect(manifest.merkle_root).toBe(
            mth(manifest.objects.map((object) => Buffer.from(object.sha256, 'hex'))).toString('hex'),
          );
          for (const object of manifest.objects) {
            const document = documents.find((candidate) => found(candidate).key === object.key) as JsonObject;
            expect(object.sha256).toBe(createHash('sha256').update(canonicalJson(document)).digest('hex'));
          }
          // Totals: integer minor units per currency, summed independently.
          const expected: Record<string, Record<string, string | number>> = {};
          for (const currency of currencies) {
            const mine = generated.filter((entry) => entry.currency.code === currency.code);
            if (mine.length === 0) continue;
            const sum = (type: Generated['type']) =>
              mine.filter((entry) => entry.type === type).reduce((total, entry) => total + entry.units, 0n);
            const count = (type: Generated['type']) => mine.filter((entry) => entry.type === type).length;
            const format = (units: bigint) =>
              units < 0n
                ? `-${formatUnits(-units, currency.decimals)}`
                : formatUnits(units, currency.decimals);
            expected[currency.code] = {
              receipts: count('receipt'),
              gross: format(sum('receipt')),
              refunds_count: count('return'),
              refunds: format(sum('return')),
              chargebacks_count: count('chargeback'),
              chargebacks: format(sum('chargeback')),
              net: format(sum('receipt') - sum('return') - sum('chargeback')),
            };
          }
          expect(manifest.totals).toEqual(expected);
          expect(Object.keys(manifest.totals)).toEqual(Object.keys(manifest.totals).sort());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the root of no objects is the empty tree hash, of one the leaf hash of its digest', () => {
    expect(merkleRootOfDigests([])).toBe(sha256().toString('hex'));
    const digest = sha256(Buffer.from('x'));
    expect(merkleRootOfDigests([digest.toString('hex')])).toBe(
      sha256(Uint8Array.of(0), digest).toString('hex'),
    );
    expect(() => merkleRootOfDigests(['ABC'])).toThrow(ExportFormatError);
  });

  it('refuses an object stored under another key or day, or listed twice', () => {
    const receipt = receiptPayload(signer, {
      id: 'rcpt_1',
      issuedAt: `${DAY}T10:00:00.000Z`,
      currency: 'EUR',
      total: '1.00',
    });
    const build = (objects: { key: string; sha256: string; document: JsonObject }[], date = DAY) =>
      buildManifestPayload({ date, objects, generatedAt: 'x', keyId: 'k' });
    expect(() => build([{ ...found(receipt), key: `receipts/dt=${DAY}/rcpt_2.json` }])).toThrow(/belongs at/);
    expect(() => build([found(receipt)], '2026-11-21')).toThrow(/belongs at/);
    expect(() => build([found(receipt), found(receipt)])).toThrow(/listed twice/);
  });

  it('adds up the totals of several days per currency', () => {
    const day = (gross: string, refunds: string) => ({
      EUR: {
        receipts: 1,
        gross,
        refunds_count: 1,
        refunds,
        chargebacks_count: 0,
        chargebacks: '0.00',
        net: (Number(gross) - Number(refunds)).toFixed(2),
      },
    });
    const usd = { USD: { ...day('1.00', '0.00').EUR } };
    expect(Object.keys(sumTotals([usd, day('1.00', '0.00')]))).toEqual(['EUR', 'USD']);
    expect(sumTotals([day('10.00', '2.50'), day('5.25', '0.25'), {}])).toEqual({
      EUR: {
        receipts: 2,
        gross: '15.25',
        refunds_count: 2,
        refunds: '2.75',
        chargebacks_count: 0,
        chargebacks: '0.00',
        net: '12.50',
      },
    });
  });

  it('refuses a found object whose digest is not SHA-256 hex', () => {
    const receipt = receiptPayload(signer, {
      id: 'rcpt_1',
      issuedAt: `${DAY}T10:00:00.000Z`,
      currency: 'EUR',
      total: '1.00',
    });
    expect(() =>
      buildManifestPayload({
        date: DAY,
        objects: [{ ...found(receipt), sha256: 'XYZ' }],
        generatedAt: 'x',
        keyId: 'k',
      }),
    ).toThrow(/not a SHA-256 digest/);
  });

  it('journals a manifest under one id per day, with its root, digest and totals', () => {
    const manifest = {
      ...buildManifestPayload({
        date: DAY,
        objects: [],
        generatedAt: '2026-11-23T00:20:00.000Z',
        keyId: 'k1',
      }),
      hash: 'sha256:00',
      signature: 'c2ln',
    };
    expect(manifestEntryId(DAY)).toBe(`receipts-manifest:${DAY}`);
    expect(manifestEntryData(manifest, 'ab'.repeat(32))).toEqual({
      date: DAY,
      manifest_key: manifestKey(DAY),
      manifest_sha256: 'ab'.repeat(32),
      manifest_hash: 'sha256:00',
      count: 0,
      tree_size: 0,
      merkle_root: sha256().toString('hex'),
      totals: {},
      key_id: 'k1',
    });
  });

  it('a summary row leaves out what a document does not have and writes other values as JSON', () => {
    const receipt = receiptPayload(signer, {
      id: 'rcpt_1',
      issuedAt: `${DAY}T10:00:00.000Z`,
      currency: 'EUR',
      total: '1.00',
    });
    const row = summaryRow(
      exportDocumentOf({ ...receipt, pricelist_version: null, fx_version: { v: 1 }, tax_rule_version: true }),
      'h',
    );
    expect(row.slice(7)).toEqual(['', '1.00', '', '{"v":1}', 'true', 'h']);
  });

  it('a document reduced to its summary fields gives the same manifest entry, totals and summary row', () => {
    fc.assert(
      fc.property(fc.array(generatedArb, { minLength: 1, maxLength: 10 }), (generated) => {
        const documents = generated.map(documentOf);
        const slim = documents.map(summaryFieldsOf);
        const build = (objects: JsonObject[]) =>
          buildManifestPayload({
            date: DAY,
            objects: objects.map((document, index) => ({
              ...found(document),
              sha256: found(documents[index] as JsonObject).sha256,
            })),
            generatedAt: 'x',
            keyId: 'k',
          });
        expect(build(slim)).toEqual(build(documents));
        const rows = (objects: JsonObject[]) =>
          summaryCsv(objects.map((document) => ({ item: exportDocumentOf(document), sha256: 'h' })));
        expect(rows(slim)).toBe(rows(documents));
      }),
      { numRuns: 30 },
    );
    expect(
      summaryFieldsOf({ receipt_id: 'r', basket: { items: [] }, computed_totals: { taxes: [] } }),
    ).toEqual({
      receipt_id: 'r',
      computed_totals: {},
    });
  });

  it('refuses a document without an amount', () => {
    const receipt = receiptPayload(signer, {
      id: 'rcpt_1',
      issuedAt: `${DAY}T10:00:00.000Z`,
      currency: 'EUR',
      total: '1.00',
    });
    expect(() =>
      totalsOf([
        {
          type: 'receipt',
          id: 'rcpt_1',
          document: { ...receipt, computed_totals: { currency: 'EUR', total: 1 } },
        },
      ]),
    ).toThrow(ExportFormatError);
    expect(() =>
      totalsOf([
        { type: 'receipt', id: 'rcpt_1', document: { ...receipt, computed_totals: { currency: 'EUR' } } },
      ]),
    ).toThrow(/is not a decimal amount: null/);
    expect(() => totalsOf([{ type: 'receipt', id: 'rcpt_1', document: { receipt_id: 'rcpt_1' } }])).toThrow(
      /has no computed_totals/,
    );
  });
});

describe('documents of a stream change', () => {
  const receipt = receiptPayload(signer, {
    id: 'rcpt_A',
    issuedAt: '2026-11-22T23:59:00.000Z',
    currency: 'EUR',
    total: '9.00',
  });
  const refund = (id: string, kind: 'return' | 'chargeback', createdAt: string) =>
    refundPayload(signer, {
      id,
      receiptId: 'rcpt_A',
      kind,
      createdAt,
      currency: 'EUR',
      amount: '1.00',
      fee: '0.00',
      net: '1.00',
    });

  it('INSERT exports the receipt under the day it was issued', () => {
    const documents = documentsOfChange({
      eventName: 'INSERT',
      newImage: receiptImageOf(receiptItem(receipt)),
    });
    expect(documents.map(({ key, type, id }) => ({ key, type, id }))).toEqual([
      { key: 'receipts/dt=2026-11-22/rcpt_A.json', type: 'receipt', id: 'rcpt_A' },
    ]);
  });

  it('MODIFY exports only the refunds the old image did not have, under the day each was created', () => {
    const first = refund('rfd_1', 'return', '2026-11-23T08:00:00.000Z');
    const second = refund('rfd_2', 'chargeback', '2026-11-24T08:00:00.000Z');
    const documents = documentsOfChange({
      eventName: 'MODIFY',
      oldImage: receiptImageOf(receiptItem(receipt, [first])),
      newImage: receiptImageOf(receiptItem(receipt, [first, second])),
    });
    expect(documents.map(({ key, type }) => ({ key, type }))).toEqual([
      { key: 'receipts/dt=2026-11-24/rfd_2.json', type: 'chargeback' },
    ]);
  });

  it('REMOVE exports nothing; a malformed item is refused', () => {
    expect(
      documentsOfChange({ eventName: 'REMOVE', oldImage: receiptImageOf(receiptItem(receipt)) }),
    ).toEqual([]);
    expect(() => receiptImageOf({ receipt_id: 'x', receipt_json: '{' })).toThrow(ExportFormatError);
    expect(() => receiptImageOf({ receipt_id: 'x', receipt_json: '{}', refunds_json: '{}' })).toThrow(
      ExportFormatError,
    );
    expect(() => exportDocumentOf({ refund_id: 'rfd_1', kind: 'gift' })).toThrow(/not return or chargeback/);
    expect(() => exportDocumentOf({ refund_id: 'rfd_1', kind: 'return' })).toThrow(
      /refund rfd_1 has no created_at/,
    );
    expect(() => exportDocumentOf({ receipt_id: '', issued_at: '2026-11-22T00:00:00Z' })).toThrow(
      /has no receipt_id/,
    );
    expect(() => exportDocumentOf({ hello: 'world' })).toThrow(/neither a receipt nor a refund/);
    expect(() => receiptImageOf({ refunds_json: '[]' })).toThrow(/\(no receipt_id\) has no receipt_json/);
    expect(() => receiptImageOf({ receipt_id: 'x', receipt_json: '[]' })).toThrow(
      /receipt_json is not an object/,
    );
    expect(receiptImageOf({ receipt_id: 'x', receipt_json: '{"a":1}' })).toEqual({
      receipt: { a: 1 },
      refunds: [],
    });
  });

  it('MODIFY without an old image exports every refund of the new one', () => {
    const first = refund('rfd_1', 'return', '2026-11-23T08:00:00.000Z');
    const documents = documentsOfChange({
      eventName: 'MODIFY',
      newImage: receiptImageOf(receiptItem(receipt, [first])),
    });
    expect(documents.map(({ id }) => id)).toEqual(['rfd_1']);
  });

  it('the bytes of a document are its RFC 8785 text, whatever the key order it came in', () => {
    const reordered = Object.fromEntries(Object.entries(receipt).reverse()) as JsonObject;
    expect(Buffer.from(exportBytes(reordered)).toString('utf8')).toBe(canonicalJson(receipt));
  });
});

// ---------------------------------------------------------------------------------------------------------
// Verifying an exported day: a real signed day, then one failure at a time
// ---------------------------------------------------------------------------------------------------------

describe('verification of an exported day', () => {
  let keys: Jwk[];
  let day: ExportedDay;
  let documents: JsonObject[];

  const encode = (value: JsonObject) => exportBytes(value);

  beforeAll(async () => {
    keys = [await signer.publicKey()];
    const at = (hour: number) => `${DAY}T${String(hour).padStart(2, '0')}:00:00.000Z`;
    documents = await Promise.all([
      signDocument(
        signer,
        receiptPayload(signer, { id: 'rcpt_1', issuedAt: at(1), currency: 'EUR', total: '10.00' }),
      ),
      signDocument(
        signer,
        receiptPayload(signer, { id: 'rcpt_2', issuedAt: at(2), currency: 'JPY', total: '1500' }),
      ),
      signDocument(
        signer,
        receiptPayload(signer, { id: 'rcpt_3', issuedAt: at(3), currency: 'EUR', total: '4.50' }),
      ),
      signDocument(
        signer,
        refundPayload(signer, {
          id: 'rfd_1',
          receiptId: 'rcpt_1',
          kind: 'return',
          createdAt: at(4),
          currency: 'EUR',
          amount: '2.00',
          fee: '0.50',
          net: '1.50',
        }),
      ),
      signDocument(
        signer,
        refundPayload(signer, {
          id: 'rfd_2',
          receiptId: 'rcpt_2',
          kind: 'chargeback',
          createdAt: at(5),
          currency: 'JPY',
          amount: '1500',
          fee: '0',
          net: '1500',
        }),
      ),
    ]);
    const objects = new Map(documents.map((document) => [exportDocumentOf(document).key, encode(document)]));
    const payload = buildManifestPayload({
      date: DAY,
      objects: documents.map(found),
      generatedAt: '2026-11-23T01:00:00.000Z',
      keyId: signer.keyId,
    }) as unknown as JsonObject;
    const manifest = await signDocument(signer, payload);
    const summary = summaryCsv(
      documents.map((document) => ({ item: exportDocumentOf(document), sha256: found(document).sha256 })),
    );
    day = {
      date: DAY,
      manifest: encode(manifest),
      summary: new TextEncoder().encode(summary),
      listed: [...objects.keys()],
      objects,
    };
  });

  const manifestOf = (exported: ExportedDay) =>
    JSON.parse(Buffer.from(exported.manifest as Uint8Array).toString('utf8')) as JsonObject & {
      readonly objects: readonly JsonObject[];
    };

  it('verifies a day as exported, with its totals', () => {
    const result = verifyExportedDay(day, keys);
    expect(result.problems).toEqual([]);
    expect(result.documents).toHaveLength(5);
    expect(result.totals).toEqual({
      EUR: {
        receipts: 2,
        gross: '14.50',
        refunds_count: 1,
        refunds: '1.50',
        chargebacks_count: 0,
        chargebacks: '0.00',
        net: '13.00',
      },
      JPY: {
        receipts: 1,
        gross: '1500',
        refunds_count: 0,
        refunds: '0',
        chargebacks_count: 1,
        chargebacks: '1500',
        net: '0',
      },
    });
  });

  it('the summary has a header and one row per object, in key order', () => {
    const rows = parseCsv(Buffer.from(day.summary as Uint8Array).toString('utf8'));
    expect(rows[0]).toEqual([...SUMMARY_COLUMNS]);
    expect(rows.slice(1).map((row) => row[0])).toEqual([...day.listed].sort());
    const refund = rows.find((row) => row[3] === 'rfd_1');
    expect(refund).toEqual([
      `receipts/dt=${DAY}/rfd_1.json`,
      'refund',
      'rcpt_1',
      'rfd_1',
      `${DAY}T04:00:00.000Z`,
      'EUR',
      '2.00',
      '0.50',
      '1.50',
      '3',
      'fx-7',
      '2',
      found(documents[3] as JsonObject).sha256,
    ]);
  });

  const key = (id: string) => `receipts/dt=${DAY}/${id}.json`;

  it('names an object one byte of which changed', () => {
    const bytes = new Uint8Array(day.objects.get(key('rcpt_2')) as Uint8Array);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 1;
    const result = verifyExportedDay(
      { ...day, objects: new Map([...day.objects, [key('rcpt_2'), bytes]]) },
      keys,
    );
    expect(result.problems).toContain(`${key('rcpt_2')}: sha256 does not match the manifest`);
  });

  it('names an object the manifest lists that the bucket does not have', () => {
    const result = verifyExportedDay(
      { ...day, listed: day.listed.filter((listed) => listed !== key('rfd_1')) },
      keys,
    );
    expect(result.problems).toEqual([`${key('rfd_1')}: in the manifest but missing from the bucket`]);
  });

  it('names an object in the bucket that the manifest does not list', async () => {
    const extra = await signDocument(
      signer,
      receiptPayload(signer, {
        id: 'rcpt_9',
        issuedAt: `${DAY}T09:00:00.000Z`,
        currency: 'EUR',
        total: '1.00',
      }),
    );
    const result = verifyExportedDay(
      {
        ...day,
        listed: [...day.listed, key('rcpt_9')],
        objects: new Map([...day.objects, [key('rcpt_9'), encode(extra)]]),
      },
      keys,
    );
    expect(result.problems).toEqual([`${key('rcpt_9')}: in the bucket but not in the manifest`]);
  });

  it('names a document whose signature does not verify', async () => {
    const other = testSigner();
    const original = documents[0] as JsonObject;
    const forged = {
      ...original,
      signature: Buffer.from(await other.sign(new Uint8Array([1]))).toString('base64'),
    };
    const result = verifyExportedDay(
      { ...day, objects: new Map([...day.objects, [key('rcpt_1'), encode(forged)]]) },
      keys,
    );
    expect(result.problems).toEqual(
      expect.arrayContaining([
        `${key('rcpt_1')}: sha256 does not match the manifest`,
        `${key('rcpt_1')}: signature does not verify`,
      ]),
    );
    expect(result.documents.map((document) => document.id)).not.toContain('rcpt_1');
  });

  it('names a manifest whose Merkle root is not the root of its objects', async () => {
    const { hash: _hash, signature: _signature, ...payload } = manifestOf(day);
    const resigned = await signDocument(signer, { ...payload, merkle_root: '0'.repeat(64) });
    const result = verifyExportedDay({ ...day, manifest: encode(resigned) }, keys);
    expect(result.problems).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${manifestKey(DAY)}: merkle_root does not match the objects' digests \\(recomputed [0-9a-f]{64}\\)$`,
        ),
      ),
    ]);
  });

  it('names a manifest changed after it was signed, and a count that is not the number of objects', () => {
    const changed = { ...manifestOf(day), count: 4 };
    const result = verifyExportedDay({ ...day, manifest: encode(changed) }, keys);
    expect(result.problems).toEqual([
      `${manifestKey(DAY)}: the manifest's hash does not match its content`,
      `${manifestKey(DAY)}: count 4 but 5 objects listed`,
    ]);
  });

  it('names a manifest signed by an unknown key', () => {
    expect(verifyExportedDay(day, []).problems).toContain(
      `${manifestKey(DAY)}: the manifest's key_id is not in the JWKS`,
    );
  });

  it('names a missing manifest and a missing summary', () => {
    const { manifest: _manifest, ...withoutManifest } = day;
    expect(verifyExportedDay(withoutManifest, keys).problems).toEqual([
      `${manifestKey(DAY)}: no manifest (the day is closed, but its manifest was not built)`,
    ]);
    const { summary: _summary, ...withoutSummary } = day;
    expect(verifyExportedDay(withoutSummary, keys).problems).toEqual([`${summaryKey(DAY)}: no CSV summary`]);
  });

  it('an open day without a manifest verifies its documents one by one and reports itself open', () => {
    const { manifest: _manifest, summary: _summary, ...neither } = day;
    const verification = verifyExportedDay({ ...neither, open: true }, keys);
    expect(verification.problems).toEqual([]);
    expect(verification.open).toBe(true);
    expect(verification.documents).toHaveLength(day.listed.length);
    const tampered = new Map(day.objects);
    const [first] = day.listed;
    tampered.set(first as string, new TextEncoder().encode('{"receipt_id":"rcpt_forged"}'));
    expect(verifyExportedDay({ ...neither, objects: tampered, open: true }, keys).problems).not.toEqual([]);
    // With a manifest, an open day is checked as a closed one.
    expect(verifyExportedDay({ ...day, open: true }, keys)).toMatchObject({ problems: [] });
    expect(verifyExportedDay({ ...day, open: true }, keys).open).toBeUndefined();
  });

  it('names a summary that does not match the documents', () => {
    const summary = new TextEncoder().encode(
      Buffer.from(day.summary as Uint8Array)
        .toString('utf8')
        .replace('10.00', '11.00'),
    );
    expect(verifyExportedDay({ ...day, summary }, keys).problems).toEqual([
      `${summaryKey(DAY)}: does not match the documents`,
    ]);
  });

  it('names a document under the key of another, and objects that are not documents', () => {
    const moved = day.objects.get(key('rcpt_3')) as Uint8Array;
    const result = verifyExportedDay(
      {
        ...day,
        listed: [...day.listed, key('rcpt_8'), key('rcpt_7'), key('rcpt_6')],
        objects: new Map([
          ...day.objects,
          [key('rcpt_1'), moved],
          [key('rcpt_8'), new TextEncoder().encode('[1]')],
          [key('rcpt_7'), new TextEncoder().encode('{}')],
        ]),
      },
      keys,
    );
    expect(result.problems).toEqual([
      `${key('rcpt_1')}: sha256 does not match the manifest`,
      `${key('rcpt_1')}: holds receipt rcpt_3, which belongs at ${key('rcpt_3')}`,
      `${key('rcpt_1')}: the manifest lists receipt rcpt_1, the object is receipt rcpt_3`,
      `${key('rcpt_6')}: in the bucket but not in the manifest`,
      `${key('rcpt_6')}: could not be read`,
      `${key('rcpt_7')}: in the bucket but not in the manifest`,
      `${key('rcpt_7')}: a document that is neither a receipt nor a refund`,
      `${key('rcpt_8')}: in the bucket but not in the manifest`,
      `${key('rcpt_8')}: not a JSON object`,
    ]);
  });

  it('names a signed document without the amounts the totals need', async () => {
    const bare = await signDocument(signer, {
      receipt_id: 'rcpt_5',
      issued_at: `${DAY}T05:00:00.000Z`,
      key_id: signer.keyId,
    });
    const { manifest: _manifest, summary: _summary, ...rest } = day;
    const result = verifyExportedDay(
      { ...rest, listed: [key('rcpt_5')], objects: new Map([[key('rcpt_5'), encode(bare)]]) },
      keys,
    );
    expect(result.problems).toEqual([
      `${manifestKey(DAY)}: no manifest (the day is closed, but its manifest was not built)`,
      `${partitionPrefix(DAY)}: receipt rcpt_5 has no computed_totals`,
    ]);
  });

  it("names manifest totals that are not the documents'", async () => {
    const { hash: _hash, signature: _signature, ...payload } = manifestOf(day);
    const resigned = await signDocument(signer, { ...payload, totals: {} });
    expect(verifyExportedDay({ ...day, manifest: encode(resigned) }, keys).problems).toEqual([
      expect.stringMatching(
        new RegExp(`^${manifestKey(DAY)}: totals do not match the documents' \\(recomputed `),
      ),
    ]);
  });

  it('names a manifest that is not one, not canonical, out of order, or of another day', async () => {
    const manifestProblems = (manifest: Uint8Array) =>
      verifyExportedDay({ ...day, manifest }, keys).problems.filter((problem) =>
        problem.startsWith('manifests/'),
      );
    expect(manifestProblems(new TextEncoder().encode('nope'))).toEqual([
      `${manifestKey(DAY)}: not a JSON object`,
    ]);
    expect(manifestProblems(encode({ date: DAY }))).toEqual([
      `${manifestKey(DAY)}: not a manifest (no count, objects, merkle_root, tree_size, totals, generated_at)`,
    ]);
    const { hash: _hash, signature: _signature, ...payload } = manifestOf(day);
    expect(manifestProblems(encode({ ...payload, objects: [{ key: 1 }] }))).toEqual([
      `${manifestKey(DAY)}: not a manifest (malformed objects)`,
    ]);
    const pretty = new TextEncoder().encode(JSON.stringify(manifestOf(day), null, 1));
    expect(manifestProblems(pretty)).toEqual([`${manifestKey(DAY)}: not in RFC 8785 canonical form`]);
    const reversed = await signDocument(signer, {
      ...payload,
      objects: [...payload.objects].reverse(),
      date: '2026-11-21',
      tree_size: 9,
    });
    expect(manifestProblems(encode(reversed))).toEqual([
      `${manifestKey(DAY)}: states date 2026-11-21`,
      `${manifestKey(DAY)}: tree_size 9 but 5 objects listed`,
      `${manifestKey(DAY)}: objects are not in strict key order`,
      expect.stringMatching(/merkle_root does not match/),
    ]);
    const foreign = await signDocument(signer, {
      ...payload,
      objects: [
        ...payload.objects,
        { key: 'receipts/dt=2026-11-30/rcpt_x.json', sha256: 'nothex', type: 'receipt', id: 'rcpt_x' },
      ],
      count: 6,
      tree_size: 6,
    });
    const problems = verifyExportedDay({ ...day, manifest: encode(foreign) }, keys).problems;
    expect(problems).toEqual([
      `${manifestKey(DAY)}: not a SHA-256 digest in lowercase hex: nothex`,
      'receipts/dt=2026-11-30/rcpt_x.json: listed in the manifest of another day',
    ]);
  });

  it('names a missing manifest and summary once each', () => {
    const { manifest: _manifest, summary: _summary, ...neither } = day;
    expect(verifyExportedDay(neither, keys).problems).toEqual([
      `${manifestKey(DAY)}: no manifest (the day is closed, but its manifest was not built)`,
    ]);
  });

  it('names bytes that are not canonical even when the document verifies', () => {
    const document = documents[2] as JsonObject;
    const pretty = new TextEncoder().encode(JSON.stringify(document, null, 2));
    const result = verifyExportedDay(
      { ...day, objects: new Map([...day.objects, [key('rcpt_3'), pretty]]) },
      keys,
    );
    expect(result.problems).toEqual([
      `${key('rcpt_3')}: sha256 does not match the manifest`,
      `${key('rcpt_3')}: not in RFC 8785 canonical form`,
    ]);
  });
});
