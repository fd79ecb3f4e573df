/**
 * The exported documents: what a signed document is (a receipt, a return or a chargeback), where it goes, and
 * the bytes it is stored as. An object's bytes are the RFC 8785 (JCS) text of the signed document, so exporting
 * a document again always gives the same bytes and the same SHA-256.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, type Json } from '../../money/canonical';
import type { JsonObject } from '../receipt';
import { partitionDate } from './dates';
import { ExportFormatError } from './errors';
import { documentKey } from './keys';

/** What an exported object is: a receipt, a return (`refund`) or a chargeback. */
export type ExportType = 'receipt' | 'refund' | 'chargeback';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The UTF-8 bytes of a text. */
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

/** The bytes a document is stored as: the UTF-8 of its RFC 8785 text. */
export const exportBytes = (document: Json): Uint8Array => utf8(canonicalJson(document));

/** SHA-256 of bytes, lowercase hex. */
export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Whether a parsed JSON value is an object (not null, not an array). */
export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The JSON object stored bytes hold (strict UTF-8), or why they hold none. */
export const decodeJsonObject = (
  bytes: Uint8Array,
): { readonly object: JsonObject } | { readonly problem: 'not JSON' | 'not a JSON object' } => {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    return { problem: 'not JSON' };
  }
  return isJsonObject(value) ? { object: value } : { problem: 'not a JSON object' };
};

/** A non-empty text field; `ExportFormatError` naming `what` lacks it otherwise. */
export const requiredText = (document: JsonObject, field: string, what: string): string => {
  const value = document[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new ExportFormatError(`${what} has no ${field}`);
  }
  return value;
};

/** An exported document: the signed document with where it goes and what it is. */
export interface ExportDocument {
  readonly key: string;
  readonly date: string;
  readonly type: ExportType;
  /** `receipt_id` of a receipt, `refund_id` of a refund. */
  readonly id: string;
  readonly document: JsonObject;
}

/** What a signed document is, and where it is exported. Throws `ExportFormatError` for anything else. */
export const exportDocumentOf = (document: JsonObject): ExportDocument => {
  if (typeof document.refund_id === 'string') {
    const id = requiredText(document, 'refund_id', 'a refund');
    const kind = document.kind;
    if (kind !== 'return' && kind !== 'chargeback') {
      throw new ExportFormatError(`refund ${id} has kind ${JSON.stringify(kind)}, not return or chargeback`);
    }
    const date = partitionDate(requiredText(document, 'created_at', `refund ${id}`));
    return {
      key: documentKey(date, id),
      date,
      type: kind === 'return' ? 'refund' : 'chargeback',
      id,
      document,
    };
  }
  if (typeof document.receipt_id === 'string') {
    const id = requiredText(document, 'receipt_id', 'a receipt');
    const date = partitionDate(requiredText(document, 'issued_at', `receipt ${id}`));
    return { key: documentKey(date, id), date, type: 'receipt', id, document };
  }
  throw new ExportFormatError('a document that is neither a receipt nor a refund');
};

/**
 * The document fields the CSV summary has a column of the same name for (a receipt's currency and amounts are
 * read from its `computed_totals`).
 */
export const SUMMARY_DOCUMENT_FIELDS = [
  'currency',
  'amount',
  'fee',
  'net',
  'pricelist_version',
  'fx_version',
  'tax_rule_version',
] as const;

/** The fields of a document the manifest, its totals and the summary read. */
const SUMMARY_FIELDS = [
  'receipt_id',
  'refund_id',
  'kind',
  'issued_at',
  'created_at',
  ...SUMMARY_DOCUMENT_FIELDS,
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
  if (isJsonObject(totals)) {
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
  if (!isJsonObject(receipt))
    throw new ExportFormatError(`receipt item ${id}: receipt_json is not an object`);
  if (!Array.isArray(refunds) || !refunds.every(isJsonObject)) {
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
