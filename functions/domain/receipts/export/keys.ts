/**
 * The key layout of the receipts bucket:
 * - `receipts/dt=YYYY-MM-DD/<receipt_id>.json`: a signed receipt, `dt` the UTC date of its `issued_at`;
 * - `receipts/dt=YYYY-MM-DD/<refund_id>.json`: a signed refund (a return or a chargeback), `dt` the UTC date of
 *   its `created_at`;
 * - `manifests/dt=YYYY-MM-DD.json`: the day's manifest, signed like a receipt (C10: `hash`, `key_id`,
 *   `signature`);
 * - `summaries/dt=YYYY-MM-DD.csv`: one RFC 4180 row per object of the manifest.
 */
import { isExportDate, requireDate } from './dates';
import { ExportFormatError } from './errors';

export const RECEIPTS_PREFIX = 'receipts/';
export const MANIFESTS_PREFIX = 'manifests/';
export const SUMMARIES_PREFIX = 'summaries/';

/** A document id as it stands in a key (a receipt's or a refund's id). */
const ID = '[A-Za-z0-9][A-Za-z0-9_-]{0,127}';
/** The shape of a `dt=` date in a key; `isExportDate` decides whether it is a real day. */
const DT = '(\\d{4}-\\d{2}-\\d{2})';
const DOCUMENT_ID = new RegExp(`^${ID}$`);
const DOCUMENT_KEY = new RegExp(`^${RECEIPTS_PREFIX}dt=${DT}/(${ID})\\.json$`);
const MANIFEST_KEY = new RegExp(`^${MANIFESTS_PREFIX}dt=${DT}\\.json$`);

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

/** The date and id a document key names; `undefined` for any other key. */
export const parseDocumentKey = (key: string): { date: string; id: string } | undefined => {
  const match = DOCUMENT_KEY.exec(key);
  if (!match || !isExportDate(match[1])) return undefined;
  return { date: match[1] as string, id: match[2] as string };
};

/** The date a manifest key names; `undefined` for any other key. */
export const parseManifestKey = (key: string): string | undefined => {
  const match = MANIFEST_KEY.exec(key);
  return match && isExportDate(match[1]) ? match[1] : undefined;
};

/** Orders anything with a `key` by that key (code units): the order of a manifest's objects and summary rows. */
export const byKey = (a: { readonly key: string }, b: { readonly key: string }): number =>
  a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
