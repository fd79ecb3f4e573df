/**
 * The daily CSV summary (`summaries/dt=<date>.csv`): RFC 4180, CRLF-terminated, a header record and then one
 * record per object of the manifest in key order. Written by hand: RFC 4180 quoting is one rule, the bytes must
 * stay exactly these (the offline verification compares them), and the Lambda bundle stays free of a CSV package.
 */
import { canonicalJson, type Json } from '../../money/canonical';
import { type ExportDocument, isJsonObject, SUMMARY_DOCUMENT_FIELDS, utf8 } from './documents';
import { byKey } from './keys';

/** One object of the summary: the exported document and the SHA-256 of its bytes. */
export interface SummaryItem {
  readonly item: ExportDocument;
  readonly sha256: string;
}

/** The summary's columns, in order. */
export const SUMMARY_COLUMNS = [
  'key',
  'type',
  'receipt_id',
  'refund_id',
  'at',
  ...SUMMARY_DOCUMENT_FIELDS,
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
  const totals = isJsonObject(document.computed_totals) ? document.computed_totals : {};
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
export const summaryCsv = (items: readonly SummaryItem[]): string =>
  [
    SUMMARY_COLUMNS,
    ...[...items].sort((a, b) => byKey(a.item, b.item)).map(({ item, sha256 }) => summaryRow(item, sha256)),
  ]
    .map(csvRecord)
    .join('');

/** The bytes the day's CSV summary is stored as (UTF-8). */
export const summaryBytes = (items: readonly SummaryItem[]): Uint8Array => utf8(summaryCsv(items));
