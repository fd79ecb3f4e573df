/**
 * The finance export's formats: where each signed document goes in the receipts bucket and the bytes it is
 * stored as, the daily manifest (its Merkle root and totals), the daily CSV summary, which days are closed, and
 * the offline verification of one exported day. Pure: the use case and the CLI do the I/O.
 *
 * Layout of the bucket:
 * - `receipts/dt=YYYY-MM-DD/<receipt_id>.json`: a signed receipt, `dt` the UTC date of its `issued_at`;
 * - `receipts/dt=YYYY-MM-DD/<refund_id>.json`: a signed refund (a return or a chargeback), `dt` the UTC date of
 *   its `created_at`;
 * - `manifests/dt=YYYY-MM-DD.json`: the day's manifest, signed like a receipt (C10: `hash`, `key_id`,
 *   `signature`);
 * - `summaries/dt=YYYY-MM-DD.csv`: one RFC 4180 row per object of the manifest.
 *
 * An object's bytes are the RFC 8785 (JCS) text of the signed document, so exporting a document again always
 * gives the same bytes and the same SHA-256. The manifest's `merkle_root` is the RFC 9162 Merkle tree hash
 * whose entries are the objects' 32-byte SHA-256 digests in key order: leaf i = SHA-256(0x00 ‖ digest_i).
 */
import { createHash } from 'node:crypto';
import { hashFromHex, toHex } from '../audit/journal-verify';
import { merkleTreeHash } from '../audit/merkle';
import { canonicalJson, type Json } from '../money/canonical';
import { DECIMAL_STRING, Decimal } from '../money/decimal';
import { type JsonObject, type Jwk, verifyReceipt } from './receipt';

/** What an exported object is: a receipt, a return (`refund`) or a chargeback. */
export type ExportType = 'receipt' | 'refund' | 'chargeback';

/** A document that cannot be exported or a manifest that cannot be built from what was found. */
export class ExportFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportFormatError';
  }
}

export const RECEIPTS_PREFIX = 'receipts/';
export const MANIFESTS_PREFIX = 'manifests/';
export const SUMMARIES_PREFIX = 'summaries/';

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const DOCUMENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Whether a text is a calendar date `YYYY-MM-DD` (a real day: no 2026-02-30). */
export const isExportDate = (text: unknown): text is string => {
  if (typeof text !== 'string') return false;
  const match = DATE.exec(text);
  if (!match) return false;
  const time = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(time).toISOString().slice(0, 10) === text;
};

const requireDate = (date: string): void => {
  if (!isExportDate(date)) throw new ExportFormatError(`not a date (YYYY-MM-DD): ${JSON.stringify(date)}`);
};

/** Epoch milliseconds of 00:00 UTC of a date. */
export const dayStart = (date: string): number => {
  requireDate(date);
  return Date.parse(`${date}T00:00:00.000Z`);
};

/** The date `days` days after (before, if negative) a date. */
export const addDays = (date: string, days: number): string =>
  new Date(dayStart(date) + days * DAY_MS).toISOString().slice(0, 10);

/** The UTC date of an instant. */
export const utcDate = (instant: Date): string => instant.toISOString().slice(0, 10);

/** The UTC date (`dt` partition) of an ISO 8601 timestamp. */
export const partitionDate = (timestamp: string): string => {
  const time = Date.parse(timestamp);
  if (!ISO_TIMESTAMP.test(timestamp) || Number.isNaN(time)) {
    throw new ExportFormatError(`not an ISO 8601 timestamp: ${JSON.stringify(timestamp)}`);
  }
  return utcDate(new Date(time));
};

/** Every date from `from` to `to`, both included; at most `limit` of them. */
export const datesBetween = (from: string, to: string, limit = 366): string[] => {
  const days = Math.round((dayStart(to) - dayStart(from)) / DAY_MS);
  if (days < 0) throw new ExportFormatError(`${from} is after ${to}`);
  if (days + 1 > limit) throw new ExportFormatError(`${from} to ${to} is more than ${limit} days`);
  return Array.from({ length: days + 1 }, (_, offset) => addDays(from, offset));
};

/** `receipts/dt=<date>/`: the partition of one day. */
export const partitionPrefix = (date: string): string => {
  requireDate(date);
  return `${RECEIPTS_PREFIX}dt=${date}/`;
};

/** `receipts/dt=<date>/<id>.json`: where a document of that day is exported. */
export const documentKey = (date: string, id: string): string => {
  if (!DOCUMENT_ID.test(id)) throw new ExportFormatError(`not a document id: ${JSON.stringify(id)}`);
  return `${partitionPrefix(date)}${id}.json`;
};

/** `manifests/dt=<date>.json` */
export const manifestKey = (date: string): string => {
  requireDate(date);
  return `${MANIFESTS_PREFIX}dt=${date}.json`;
};

/** `summaries/dt=<date>.csv` */
export const summaryKey = (date: string): string => {
  requireDate(date);
  return `${SUMMARIES_PREFIX}dt=${date}.csv`;
};

const DOCUMENT_KEY = /^receipts\/dt=(\d{4}-\d{2}-\d{2})\/([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.json$/;

/** The date and id a document key names; `undefined` for any other key. */
export const parseDocumentKey = (key: string): { date: string; id: string } | undefined => {
  const match = DOCUMENT_KEY.exec(key);
  if (!match || !isExportDate(match[1])) return undefined;
  return { date: match[1] as string, id: match[2] as string };
};

const MANIFEST_KEY = /^manifests\/dt=(\d{4}-\d{2}-\d{2})\.json$/;

/** The date a manifest key names; `undefined` for any other key. */
export const parseManifestKey = (key: string): string | undefined => {
  const match = MANIFEST_KEY.exec(key);
  return match && isExportDate(match[1]) ? match[1] : undefined;
};

/**
 * The closed days that are due a manifest: those from the export's first day on (its earliest manifest or
 * document). Days before the first document have nothing to attest; every day after it gets a manifest, empty
 * or not. No first day (nothing exported yet) → none.
 */
export const dueDays = (closed: readonly string[], firstDay: string | undefined): string[] =>
  firstDay === undefined ? [] : closed.filter((date) => date >= firstDay);

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The bytes a document is stored as: the UTF-8 of its RFC 8785 text. */
export const exportBytes = (document: Json): Uint8Array => encoder.encode(canonicalJson(document));

/** SHA-256 of bytes, lowercase hex. */
export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** An exported document: the signed document with where it goes and what it is. */
export interface ExportDocument {
  readonly key: string;
  readonly date: string;
  readonly type: ExportType;
  /** `receipt_id` of a receipt, `refund_id` of a refund. */
  readonly id: string;
  readonly document: JsonObject;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (document: JsonObject, field: string, what: string): string => {
  const value = document[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new ExportFormatError(`${what} has no ${field}`);
  }
  return value;
};

/** What a signed document is, and where it is exported. Throws `ExportFormatError` for anything else. */
export const exportDocumentOf = (document: JsonObject): ExportDocument => {
  if (typeof document.refund_id === 'string') {
    const id = text(document, 'refund_id', 'a refund');
    const kind = document.kind;
    if (kind !== 'return' && kind !== 'chargeback') {
      throw new ExportFormatError(`refund ${id} has kind ${JSON.stringify(kind)}, not return or chargeback`);
    }
    const date = partitionDate(text(document, 'created_at', `refund ${id}`));
    return {
      key: documentKey(date, id),
      date,
      type: kind === 'return' ? 'refund' : 'chargeback',
      id,
      document,
    };
  }
  if (typeof document.receipt_id === 'string') {
    const id = text(document, 'receipt_id', 'a receipt');
    const date = partitionDate(text(document, 'issued_at', `receipt ${id}`));
    return { key: documentKey(date, id), date, type: 'receipt', id, document };
  }
  throw new ExportFormatError('a document that is neither a receipt nor a refund');
};

/** The fields of a document the manifest, its totals and the summary read. */
const SUMMARY_FIELDS = [
  'receipt_id',
  'refund_id',
  'kind',
  'issued_at',
  'created_at',
  'currency',
  'amount',
  'fee',
  'net',
  'pricelist_version',
  'fx_version',
  'tax_rule_version',
] as const;

/**
 * A document reduced to what the manifest, its totals and the summary read (receipts keep `currency` and
 * `total` of their `computed_totals`): a day of documents held in memory while its manifest is built stays
 * small whatever the baskets were.
 */
export const summaryFieldsOf = (document: JsonObject): JsonObject => {
  const kept: Record<string, Json> = {};
  for (const field of SUMMARY_FIELDS) {
    const value = document[field];
    if (value !== undefined) kept[field] = value;
  }
  const totals = document.computed_totals;
  if (isObject(totals)) {
    kept.computed_totals = {
      ...(totals.currency === undefined ? {} : { currency: totals.currency }),
      ...(totals.total === undefined ? {} : { total: totals.total }),
    };
  }
  return kept;
};

/** A receipts-table item as the stream carries it (unmarshalled): the signed receipt and its refunds. */
export interface ReceiptImage {
  readonly receipt: JsonObject;
  readonly refunds: readonly JsonObject[];
}

/** The documents of a receipts-table item (`receipt_json`, `refunds_json`: JSON text). */
export const receiptImageOf = (item: Readonly<Record<string, unknown>>): ReceiptImage => {
  const id = typeof item.receipt_id === 'string' ? item.receipt_id : '(no receipt_id)';
  const parse = (field: string): unknown => {
    const value = item[field];
    if (typeof value !== 'string') throw new ExportFormatError(`receipt item ${id} has no ${field}`);
    try {
      return JSON.parse(value);
    } catch {
      throw new ExportFormatError(`receipt item ${id}: ${field} is not JSON`);
    }
  };
  const receipt = parse('receipt_json');
  const refunds = item.refunds_json === undefined ? [] : parse('refunds_json');
  if (!isObject(receipt)) throw new ExportFormatError(`receipt item ${id}: receipt_json is not an object`);
  if (!Array.isArray(refunds) || !refunds.every(isObject)) {
    throw new ExportFormatError(`receipt item ${id}: refunds_json is not a list of objects`);
  }
  return { receipt, refunds };
};

/** One change of the receipts table, as its stream reports it. */
export interface ReceiptChange {
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly oldImage?: ReceiptImage;
  readonly newImage?: ReceiptImage;
}

/**
 * The documents a change brings: on INSERT the receipt and any refund it already has; on MODIFY the refunds of
 * the new image that the old one does not have (by `refund_id`); nothing on REMOVE.
 */
export const documentsOfChange = (change: ReceiptChange): ExportDocument[] => {
  const image = change.newImage;
  if (change.eventName === 'REMOVE' || !image) return [];
  const known = new Set(
    change.eventName === 'INSERT'
      ? []
      : (change.oldImage?.refunds ?? []).map((refund) => String(refund.refund_id)),
  );
  const documents = change.eventName === 'INSERT' ? [exportDocumentOf(image.receipt)] : [];
  for (const refund of image.refunds) {
    if (!known.has(String(refund.refund_id))) documents.push(exportDocumentOf(refund));
  }
  return documents;
};

// ---------------------------------------------------------------------------------------------------------
// Totals
// ---------------------------------------------------------------------------------------------------------

/**
 * One currency's figures over a set of documents. `gross`: Σ receipt totals; `refunds`: Σ `net` of returns (what
 * was paid back, after the refund fee); `chargebacks`: Σ `net` of chargebacks; `net` = gross − refunds −
 * chargebacks. Counts beside them. Amounts are decimal strings with the currency's decimals (the most any of
 * its amounts has).
 */
export interface CurrencyTotals {
  readonly receipts: number;
  readonly gross: string;
  readonly refunds_count: number;
  readonly refunds: string;
  readonly chargebacks_count: number;
  readonly chargebacks: string;
  readonly net: string;
}

const amountOf = (value: Json | undefined, what: string): string => {
  if (typeof value !== 'string' || !DECIMAL_STRING.test(value)) {
    throw new ExportFormatError(`${what} is not a decimal amount: ${JSON.stringify(value ?? null)}`);
  }
  return value;
};

const decimalsOf = (amount: string): number => amount.split('.')[1]?.length ?? 0;

/** What a document adds to its currency's totals. */
const contributionOf = (
  item: Pick<ExportDocument, 'type' | 'id' | 'document'>,
): { currency: string; amount: string } => {
  const { document } = item;
  if (item.type === 'receipt') {
    const totals = document.computed_totals;
    if (!isObject(totals)) throw new ExportFormatError(`receipt ${item.id} has no computed_totals`);
    return {
      currency: text(totals, 'currency', `receipt ${item.id}`),
      amount: amountOf(totals.total, `the total of receipt ${item.id}`),
    };
  }
  return {
    currency: text(document, 'currency', `refund ${item.id}`),
    amount: amountOf(document.net, `the net of refund ${item.id}`),
  };
};

/** Totals per currency (sorted by currency) of a set of documents. */
export const totalsOf = (
  items: readonly Pick<ExportDocument, 'type' | 'id' | 'document'>[],
): Record<string, CurrencyTotals> => {
  interface Running {
    receipts: number;
    gross: Decimal;
    refunds_count: number;
    refunds: Decimal;
    chargebacks_count: number;
    chargebacks: Decimal;
    decimals: number;
  }
  const running = new Map<string, Running>();
  for (const item of items) {
    const { currency, amount } = contributionOf(item);
    const current = running.get(currency) ?? {
      receipts: 0,
      gross: new Decimal(0),
      refunds_count: 0,
      refunds: new Decimal(0),
      chargebacks_count: 0,
      chargebacks: new Decimal(0),
      decimals: 0,
    };
    const value = new Decimal(amount);
    current.decimals = Math.max(current.decimals, decimalsOf(amount));
    if (item.type === 'receipt') {
      current.receipts += 1;
      current.gross = current.gross.plus(value);
    } else if (item.type === 'refund') {
      current.refunds_count += 1;
      current.refunds = current.refunds.plus(value);
    } else {
      current.chargebacks_count += 1;
      current.chargebacks = current.chargebacks.plus(value);
    }
    running.set(currency, current);
  }
  const totals: Record<string, CurrencyTotals> = {};
  for (const currency of [...running.keys()].sort()) {
    const sums = running.get(currency) as Running;
    const format = (value: Decimal) => value.toFixed(sums.decimals);
    totals[currency] = {
      receipts: sums.receipts,
      gross: format(sums.gross),
      refunds_count: sums.refunds_count,
      refunds: format(sums.refunds),
      chargebacks_count: sums.chargebacks_count,
      chargebacks: format(sums.chargebacks),
      net: format(sums.gross.minus(sums.refunds).minus(sums.chargebacks)),
    };
  }
  return totals;
};

/** Adds up per-currency totals (of several days), keeping each currency's decimals. */
export const sumTotals = (
  parts: readonly Readonly<Record<string, CurrencyTotals>>[],
): Record<string, CurrencyTotals> => {
  const merged = new Map<string, CurrencyTotals>();
  for (const part of parts) {
    for (const [currency, totals] of Object.entries(part)) {
      const before = merged.get(currency);
      if (!before) {
        merged.set(currency, totals);
        continue;
      }
      const decimals = Math.max(decimalsOf(before.gross), decimalsOf(totals.gross));
      const add = (a: string, b: string) => new Decimal(a).plus(new Decimal(b)).toFixed(decimals);
      merged.set(currency, {
        receipts: before.receipts + totals.receipts,
        gross: add(before.gross, totals.gross),
        refunds_count: before.refunds_count + totals.refunds_count,
        refunds: add(before.refunds, totals.refunds),
        chargebacks_count: before.chargebacks_count + totals.chargebacks_count,
        chargebacks: add(before.chargebacks, totals.chargebacks),
        net: add(before.net, totals.net),
      });
    }
  }
  return Object.fromEntries([...merged.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
};

// ---------------------------------------------------------------------------------------------------------
// Manifest
// ---------------------------------------------------------------------------------------------------------

/** One object of a manifest. `sha256`: lowercase hex of the SHA-256 of the object's bytes. */
export interface ManifestObject {
  readonly key: string;
  readonly sha256: string;
  readonly type: ExportType;
  readonly id: string;
}

/** The signed part of a manifest (the manifest without `hash` and `signature`). */
export interface ManifestPayload {
  readonly date: string;
  readonly count: number;
  readonly objects: readonly ManifestObject[];
  readonly merkle_root: string;
  readonly tree_size: number;
  readonly totals: Readonly<Record<string, CurrencyTotals>>;
  readonly generated_at: string;
  readonly key_id: string;
}

/** A manifest as stored: its payload with `hash` and `signature` (C10). */
export interface Manifest extends ManifestPayload {
  readonly hash: string;
  readonly signature: string;
}

/** RFC 9162 Merkle tree hash (hex) whose entries are the given SHA-256 digests (hex), in that order. */
export const merkleRootOfDigests = (digests: readonly string[]): string =>
  toHex(
    merkleTreeHash(
      digests.map((digest) => {
        const bytes = hashFromHex(digest);
        if (!bytes) throw new ExportFormatError(`not a SHA-256 digest in lowercase hex: ${digest}`);
        return bytes;
      }),
    ),
  );

/** An object found in a day's partition: its key, bytes' digest and parsed document. */
export interface FoundObject {
  readonly key: string;
  readonly sha256: string;
  readonly document: JsonObject;
}

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * The manifest payload of one day from the objects found in its partition: each must be a document of that day
 * stored under its own key (else `ExportFormatError`). Objects are listed in key order.
 */
export const buildManifestPayload = (input: {
  readonly date: string;
  readonly objects: readonly FoundObject[];
  readonly generatedAt: string;
  readonly keyId: string;
}): ManifestPayload => {
  requireDate(input.date);
  const sorted = [...input.objects].sort(byKey);
  const described = sorted.map((found) => {
    if (!SHA256_HEX.test(found.sha256)) throw new ExportFormatError(`${found.key}: not a SHA-256 digest`);
    const document = exportDocumentOf(found.document);
    if (document.key !== found.key || document.date !== input.date) {
      throw new ExportFormatError(
        `${found.key}: holds ${document.type} ${document.id}, which belongs at ${document.key}`,
      );
    }
    return { found, document };
  });
  for (let index = 1; index < sorted.length; index += 1) {
    if (sorted[index]?.key === sorted[index - 1]?.key) {
      throw new ExportFormatError(`${sorted[index]?.key}: listed twice`);
    }
  }
  const objects = described.map(({ found, document }) => ({
    key: found.key,
    sha256: found.sha256,
    type: document.type,
    id: document.id,
  }));
  return {
    date: input.date,
    count: objects.length,
    objects,
    merkle_root: merkleRootOfDigests(objects.map((object) => object.sha256)),
    tree_size: objects.length,
    totals: totalsOf(described.map(({ document }) => document)),
    generated_at: input.generatedAt,
    key_id: input.keyId,
  };
};

/** The journal entry id of a day's manifest: appending it twice appends it once. */
export const manifestEntryId = (date: string): string => {
  requireDate(date);
  return `receipts-manifest:${date}`;
};

/** The journal entry type of a day's manifest. */
export const MANIFEST_ENTRY_TYPE = 'receipts_manifest';

/** What the journal records of a manifest: enough to tie the manifest's bytes and its Merkle root to a head. */
export const manifestEntryData = (manifest: Manifest, manifestSha256: string): JsonObject => ({
  date: manifest.date,
  manifest_key: manifestKey(manifest.date),
  manifest_sha256: manifestSha256,
  manifest_hash: manifest.hash,
  count: manifest.count,
  tree_size: manifest.tree_size,
  merkle_root: manifest.merkle_root,
  totals: manifest.totals as unknown as Json,
  key_id: manifest.key_id,
});

// ---------------------------------------------------------------------------------------------------------
// Closing days
// ---------------------------------------------------------------------------------------------------------

/** Whether a day is closed at `now`: its next day has begun (UTC) `graceMinutes` ago or more. */
export const isDayClosed = (date: string, now: Date, graceMinutes: number): boolean =>
  now.getTime() >= dayStart(date) + DAY_MS + graceMinutes * 60_000;

/** The closed days among the last `lookbackDays` ones before `now` (oldest first). */
export const closedDays = (now: Date, graceMinutes: number, lookbackDays: number): string[] => {
  const latest = addDays(utcDate(new Date(now.getTime() - graceMinutes * 60_000)), -1);
  return Array.from({ length: lookbackDays }, (_, offset) => addDays(latest, offset - lookbackDays + 1));
};

// ---------------------------------------------------------------------------------------------------------
// CSV summary
// ---------------------------------------------------------------------------------------------------------

/** The summary's columns, in order. */
export const SUMMARY_COLUMNS = [
  'key',
  'type',
  'receipt_id',
  'refund_id',
  'at',
  'currency',
  'amount',
  'fee',
  'net',
  'pricelist_version',
  'fx_version',
  'tax_rule_version',
  'sha256',
] as const;

/** One field of an RFC 4180 record: quoted (with inner quotes doubled) when it holds `"`, `,`, CR or LF. */
export const csvField = (value: string): string =>
  /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

/** One RFC 4180 record, CRLF-terminated. */
export const csvRecord = (fields: readonly string[]): string => `${fields.map(csvField).join(',')}\r\n`;

const scalar = (value: Json | undefined): string =>
  value === undefined || value === null
    ? ''
    : typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? canonicalJson(value)
        : String(value);

/** The summary row of an exported document. */
export const summaryRow = (item: ExportDocument, sha256: string): string[] => {
  const { document } = item;
  const totals = isObject(document.computed_totals) ? document.computed_totals : {};
  const receipt = item.type === 'receipt';
  const row: Record<(typeof SUMMARY_COLUMNS)[number], string> = {
    key: item.key,
    type: item.type,
    receipt_id: scalar(document.receipt_id),
    refund_id: receipt ? '' : item.id,
    at: scalar(receipt ? document.issued_at : document.created_at),
    currency: scalar(receipt ? totals.currency : document.currency),
    amount: scalar(receipt ? totals.total : document.amount),
    fee: receipt ? '' : scalar(document.fee),
    net: scalar(receipt ? totals.total : document.net),
    pricelist_version: scalar(document.pricelist_version),
    fx_version: scalar(document.fx_version),
    tax_rule_version: scalar(document.tax_rule_version),
    sha256,
  };
  return SUMMARY_COLUMNS.map((column) => row[column]);
};

/** The day's CSV summary: a header record, then one record per object in key order. */
export const summaryCsv = (
  items: readonly { readonly item: ExportDocument; readonly sha256: string }[],
): string =>
  [
    SUMMARY_COLUMNS,
    ...[...items].sort((a, b) => byKey(a.item, b.item)).map(({ item, sha256 }) => summaryRow(item, sha256)),
  ]
    .map(csvRecord)
    .join('');

// ---------------------------------------------------------------------------------------------------------
// Verification of an exported day
// ---------------------------------------------------------------------------------------------------------

/** What was downloaded of one day. */
export interface ExportedDay {
  readonly date: string;
  /** The manifest's bytes; `undefined` when there is none. */
  readonly manifest?: Uint8Array;
  /** The CSV summary's bytes; `undefined` when there is none. */
  readonly summary?: Uint8Array;
  /** Every key found under the day's partition. */
  readonly listed: readonly string[];
  /** The day is not closed yet: no manifest is expected, its documents are verified one by one. */
  readonly open?: boolean;
  /** The bytes of each listed key that could be read. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
}

/** The outcome of verifying one day: every problem (`<key>: <what>`), and the documents that verified. */
export interface DayVerification {
  readonly date: string;
  readonly problems: readonly string[];
  /** Documents whose bytes, hash and signature check out (the totals are theirs). */
  readonly documents: readonly ExportDocument[];
  readonly totals: Record<string, CurrencyTotals>;
  readonly manifest?: Manifest;
  /** Not closed yet and without a manifest: its documents were verified, the day as a whole cannot be. */
  readonly open?: boolean;
}

const MANIFEST_FIELDS = ['date', 'count', 'objects', 'merkle_root', 'tree_size', 'totals', 'generated_at'];

const parseJsonObject = (bytes: Uint8Array): JsonObject | undefined => {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
};

const isManifestObject = (value: unknown): value is ManifestObject =>
  isObject(value) &&
  typeof value.key === 'string' &&
  typeof value.sha256 === 'string' &&
  typeof value.id === 'string' &&
  (value.type === 'receipt' || value.type === 'refund' || value.type === 'chargeback');

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, index) => byte === b[index]);

/** Checks a manifest's own form and signature; answers the manifest when it can be used to check objects. */
const checkManifest = (
  date: string,
  bytes: Uint8Array,
  keys: readonly Jwk[],
  problems: string[],
): Manifest | undefined => {
  const key = manifestKey(date);
  const parsed = parseJsonObject(bytes);
  if (!parsed) {
    problems.push(`${key}: not a JSON object`);
    return undefined;
  }
  const missing = MANIFEST_FIELDS.filter((field) => parsed[field] === undefined);
  if (missing.length > 0 || !Array.isArray(parsed.objects) || !parsed.objects.every(isManifestObject)) {
    problems.push(
      `${key}: not a manifest (${missing.length > 0 ? `no ${missing.join(', ')}` : 'malformed objects'})`,
    );
    return undefined;
  }
  const manifest = parsed as unknown as Manifest;
  const check = verifyReceipt(parsed, keys);
  if (!check.valid) problems.push(`${key}: the manifest's ${describeCheck(check.reason)}`);
  if (!sameBytes(bytes, exportBytes(parsed))) problems.push(`${key}: not in RFC 8785 canonical form`);
  if (manifest.date !== date) problems.push(`${key}: states date ${String(manifest.date)}`);
  if (manifest.count !== manifest.objects.length) {
    problems.push(`${key}: count ${String(manifest.count)} but ${manifest.objects.length} objects listed`);
  }
  if (manifest.tree_size !== manifest.objects.length) {
    problems.push(
      `${key}: tree_size ${String(manifest.tree_size)} but ${manifest.objects.length} objects listed`,
    );
  }
  const keysInOrder = manifest.objects.map((object) => object.key);
  if (keysInOrder.some((objectKey, index) => index > 0 && objectKey <= (keysInOrder[index - 1] as string))) {
    problems.push(`${key}: objects are not in strict key order`);
  }
  try {
    const root = merkleRootOfDigests(manifest.objects.map((object) => object.sha256));
    if (root !== manifest.merkle_root) {
      problems.push(`${key}: merkle_root does not match the objects' digests (recomputed ${root})`);
    }
  } catch (error) {
    problems.push(`${key}: ${(error as Error).message}`);
  }
  return manifest;
};

const describeCheck = (
  reason: 'hash_mismatch' | 'unknown_key' | 'signature_mismatch' | 'malformed',
): string =>
  ({
    hash_mismatch: 'hash does not match its content',
    unknown_key: 'key_id is not in the JWKS',
    signature_mismatch: 'signature does not verify',
    malformed: 'hash, key_id or signature is missing or malformed',
  })[reason];

/**
 * Verifies one exported day: the manifest (form, signature, count, Merkle root), every object against it (present
 * on both sides, SHA-256, document type and id, canonical bytes, hash and signature with the JWKS), the
 * manifest's totals against the documents', and the CSV summary against the documents. Every problem is named.
 */
export const verifyExportedDay = (day: ExportedDay, keys: readonly Jwk[]): DayVerification => {
  const problems: string[] = [];
  const manifest = day.manifest ? checkManifest(day.date, day.manifest, keys, problems) : undefined;
  if (!day.manifest && !day.open) {
    problems.push(
      `${manifestKey(day.date)}: no manifest (the day is closed, but its manifest was not built)`,
    );
  }
  const prefix = partitionPrefix(day.date);
  const listed = new Set(day.listed);
  const inManifest = new Map((manifest?.objects ?? []).map((object) => [object.key, object]));
  const documents: { item: ExportDocument; sha256: string }[] = [];
  for (const object of manifest?.objects ?? []) {
    if (!object.key.startsWith(prefix)) problems.push(`${object.key}: listed in the manifest of another day`);
    else if (!listed.has(object.key))
      problems.push(`${object.key}: in the manifest but missing from the bucket`);
  }
  for (const key of [...listed].sort()) {
    if (manifest && !inManifest.has(key)) problems.push(`${key}: in the bucket but not in the manifest`);
    const bytes = day.objects.get(key);
    if (!bytes) {
      problems.push(`${key}: could not be read`);
      continue;
    }
    const sha256 = sha256Hex(bytes);
    const listedObject = inManifest.get(key);
    if (listedObject && listedObject.sha256 !== sha256) {
      problems.push(`${key}: sha256 does not match the manifest`);
    }
    const document = parseJsonObject(bytes);
    if (!document) {
      problems.push(`${key}: not a JSON object`);
      continue;
    }
    let item: ExportDocument;
    try {
      item = exportDocumentOf(document);
    } catch (error) {
      problems.push(`${key}: ${(error as Error).message}`);
      continue;
    }
    if (item.key !== key)
      problems.push(`${key}: holds ${item.type} ${item.id}, which belongs at ${item.key}`);
    if (listedObject && (listedObject.type !== item.type || listedObject.id !== item.id)) {
      problems.push(
        `${key}: the manifest lists ${listedObject.type} ${listedObject.id}, the object is ${item.type} ${item.id}`,
      );
    }
    if (!sameBytes(bytes, exportBytes(document))) problems.push(`${key}: not in RFC 8785 canonical form`);
    const check = verifyReceipt(document, keys);
    if (!check.valid) {
      problems.push(`${key}: ${describeCheck(check.reason)}`);
      continue;
    }
    documents.push({ item, sha256 });
  }
  let totals: Record<string, CurrencyTotals> = {};
  try {
    totals = totalsOf(documents.map(({ item }) => item));
  } catch (error) {
    problems.push(`${partitionPrefix(day.date)}: ${(error as Error).message}`);
  }
  if (
    manifest &&
    problems.length === 0 &&
    canonicalJson(manifest.totals as unknown as Json) !== canonicalJson(totals as unknown as Json)
  ) {
    problems.push(
      `${manifestKey(day.date)}: totals do not match the documents' (recomputed ${canonicalJson(totals as unknown as Json)})`,
    );
  }
  if (day.summary === undefined) {
    if (manifest) problems.push(`${summaryKey(day.date)}: no CSV summary`);
  } else if (problems.length === 0) {
    const expected = encoder.encode(summaryCsv(documents));
    if (!sameBytes(day.summary, expected))
      problems.push(`${summaryKey(day.date)}: does not match the documents`);
  }
  return {
    date: day.date,
    problems,
    documents: documents.map(({ item }) => item),
    totals,
    ...(manifest ? { manifest } : { open: day.open === true }),
  };
};
