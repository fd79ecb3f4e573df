/**
 * The daily manifest: the signed list of a day's objects (key, SHA-256, type, id) in key order, their RFC 9162
 * Merkle root, the day's totals, and the journal entry that seals it. Built from what a day's partition holds,
 * and read back (its form) by the export that finishes a stopped run and by the offline verification.
 *
 * `merkle_root` is the RFC 9162 Merkle tree hash whose entries are the objects' 32-byte SHA-256 digests in key
 * order: leaf i = SHA-256(0x00 ‖ digest_i).
 */
import { hashFromHex, toHex } from '../../audit/journal-verify';
import { merkleTreeHash } from '../../audit/merkle';
import type { Json } from '../../money/canonical';
import type { JsonObject } from '../receipt';
import { requireDate } from './dates';
import { type ExportType, exportDocumentOf, isJsonObject } from './documents';
import { ExportFormatError } from './errors';
import { byKey, manifestKey } from './keys';
import { type CurrencyTotals, totalsOf } from './totals';

const SHA256_HEX = /^[0-9a-f]{64}$/;

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

/** The fields every manifest has (besides `key_id`, `hash` and `signature`, which its signature check reads). */
const MANIFEST_FIELDS = ['date', 'count', 'objects', 'merkle_root', 'tree_size', 'totals', 'generated_at'];

const isManifestObject = (value: unknown): value is ManifestObject =>
  isJsonObject(value) &&
  typeof value.key === 'string' &&
  typeof value.sha256 === 'string' &&
  typeof value.id === 'string' &&
  (value.type === 'receipt' || value.type === 'refund' || value.type === 'chargeback');

/**
 * A stored manifest read back: the manifest a JSON object is, or what keeps it from being one (`no <fields>`,
 * `malformed objects`). Only its form: its signature, count, order, Merkle root and totals are the offline
 * verification's to check.
 */
export const asManifest = (
  object: JsonObject,
): { readonly manifest: Manifest } | { readonly problem: string } => {
  const missing = MANIFEST_FIELDS.filter((field) => object[field] === undefined);
  if (missing.length > 0 || !Array.isArray(object.objects) || !object.objects.every(isManifestObject)) {
    return { problem: missing.length > 0 ? `no ${missing.join(', ')}` : 'malformed objects' };
  }
  return { manifest: object as unknown as Manifest };
};
