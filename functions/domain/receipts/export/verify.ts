/**
 * The offline verification of one exported day (what `npm run receipts -- export` checks after downloading it):
 * the manifest's form, signature, count and Merkle root; every object against it; the totals; the CSV summary.
 * Pure: the CLI downloads, this checks what was downloaded.
 */
import { canonicalJson, type Json } from '../../money/canonical';
import { type JsonObject, type Jwk, type ReceiptCheck, verifyReceipt } from '../receipt';
import { type SummaryItem, summaryBytes } from './csv';
import { decodeJsonObject, type ExportDocument, exportBytes, exportDocumentOf, sha256Hex } from './documents';
import { manifestKey, partitionPrefix, summaryKey } from './keys';
import { asManifest, type Manifest, merkleRootOfDigests } from './manifest';
import { type CurrencyTotals, totalsOf } from './totals';

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

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, index) => byte === b[index]);

/** Whether bytes are exactly the RFC 8785 text of the object they hold. */
const isCanonical = (bytes: Uint8Array, object: JsonObject): boolean => sameBytes(bytes, exportBytes(object));

const describeCheck = (reason: Extract<ReceiptCheck, { valid: false }>['reason']): string =>
  ({
    hash_mismatch: 'hash does not match its content',
    unknown_key: 'key_id is not in the JWKS',
    signature_mismatch: 'signature does not verify',
    malformed: 'hash, key_id or signature is missing or malformed',
  })[reason];

/** Checks a manifest's own form and signature; answers the manifest when it can be used to check objects. */
const checkManifest = (
  date: string,
  bytes: Uint8Array,
  keys: readonly Jwk[],
  problems: string[],
): Manifest | undefined => {
  const key = manifestKey(date);
  const decoded = decodeJsonObject(bytes);
  if ('problem' in decoded) {
    problems.push(`${key}: not a JSON object`);
    return undefined;
  }
  const parsed = asManifest(decoded.object);
  if ('problem' in parsed) {
    problems.push(`${key}: not a manifest (${parsed.problem})`);
    return undefined;
  }
  const { manifest } = parsed;
  const check = verifyReceipt(decoded.object, keys);
  if (!check.valid) problems.push(`${key}: the manifest's ${describeCheck(check.reason)}`);
  if (!isCanonical(bytes, decoded.object)) problems.push(`${key}: not in RFC 8785 canonical form`);
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
  const documents: SummaryItem[] = [];
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
    const decoded = decodeJsonObject(bytes);
    if ('problem' in decoded) {
      problems.push(`${key}: not a JSON object`);
      continue;
    }
    const document = decoded.object;
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
    if (!isCanonical(bytes, document)) problems.push(`${key}: not in RFC 8785 canonical form`);
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
    problems.push(`${prefix}: ${(error as Error).message}`);
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
  } else if (problems.length === 0 && !sameBytes(day.summary, summaryBytes(documents))) {
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
