/**
 * The receipt keys' JWKS (C10): the signing key in use and every retired key, which stay listed as long as
 * receipts they signed are kept (7–10 years). Served by `GET /keys` and written, content-addressed, to the
 * receipts bucket (Object Lock), so a verifier can pin a JWKS that nobody can change later.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, type Json } from '../../domain/money/canonical';
import type { ObjectStore, PutOnceOutcome } from '../../ports/object-store';
import type { PublicJwk, ReceiptSigner } from '../../ports/signing';

/** A key whose public half can be read (a retired signing key: never used to sign again). */
export type PublicKeySource = Pick<ReceiptSigner, 'publicKey'>;

/** Where the key sets go in the receipts bucket: `keys/jwks-<sha256 of the canonical JWKS>.json`. */
export const KEY_SET_PREFIX = 'keys/';

/** The current key first, then the retired ones; one entry per `kid`. */
export const receiptKeySet = async (
  signer: PublicKeySource,
  retired: readonly PublicKeySource[],
): Promise<{ keys: PublicJwk[] }> => {
  const all = await Promise.all([signer, ...retired].map((key) => key.publicKey()));
  const seen = new Set<string>();
  return { keys: all.filter((key) => !seen.has(key.kid) && seen.add(key.kid)) };
};

/** The object key and bytes of a key set: RFC 8785 JSON, named by its SHA-256. */
export const keySetObject = (jwks: { keys: readonly PublicJwk[] }): { key: string; body: Buffer } => {
  const body = Buffer.from(canonicalJson(jwks as unknown as Json), 'utf8');
  const digest = createHash('sha256').update(body).digest('hex');
  return { key: `${KEY_SET_PREFIX}jwks-${digest}.json`, body };
};

/**
 * Writes the key set in force to the bucket once (a set already there is `exists`): each distinct set of keys
 * is kept, write-once, for as long as the bucket's retention.
 */
export const publishKeySet = async (
  objects: Pick<ObjectStore, 'putOnce'>,
  signer: PublicKeySource,
  retired: readonly PublicKeySource[],
): Promise<{ key: string; outcome: PutOnceOutcome }> => {
  const { key, body } = keySetObject(await receiptKeySet(signer, retired));
  return { key, outcome: await objects.putOnce(key, body, 'application/jwk-set+json') };
};
