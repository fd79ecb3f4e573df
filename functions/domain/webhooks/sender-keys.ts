/**
 * The service's Ed25519 webhook signing keys (C33 `signing_algorithm: "ed25519"`): which key signs at a given
 * moment, which public keys the JWKS (`GET /webhooks/jwks.json`) lists, and the signatures themselves.
 *
 * A key is made with an activation time. The newest key whose activation has come signs; a rotation adds a key
 * that activates later (by default a day later), so the JWKS lists it before anything is signed with it and
 * receivers with a cached JWKS are not surprised. A key that a newer one superseded stays in the JWKS for the
 * overlap after that (7 days by default), for deliveries signed before and retried receivers' caches.
 *
 * Signatures: native scheme `X-Signature: v1a=<base64>` over the canonical string of C13, with the key's id in
 * `X-Signature-Key-Id`; Standard Webhooks `webhook-signature: v1a,<base64>` over `<id>.<timestamp>.<body>`
 * (the specification's asymmetric version), with the same key id header. Ed25519 as RFC 8032 defines it (pure, no
 * prehash); base64 standard and padded.
 */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

export interface SenderKey {
  /** The key id (`kid` in the JWKS and `X-Signature-Key-Id`). */
  readonly kid: string;
  /** The public key as a JWK (`kty: OKP`, `crv: Ed25519`, `x`). */
  readonly public_jwk: { readonly kty: 'OKP'; readonly crv: 'Ed25519'; readonly x: string };
  readonly created_at: string;
  /** From when it signs (until a newer key's activation). */
  readonly activates_at: string;
  /** An emergency rotation: once it signs, the keys before it leave the JWKS at once (no overlap). */
  readonly retires_previous?: boolean;
}

export interface KeyTimings {
  /** How long after a rotation the new key starts signing (it is published at once). */
  readonly activationDelayMs: number;
  /** How long a superseded key stays published. */
  readonly overlapMs: number;
}

export const DEFAULT_KEY_TIMINGS: KeyTimings = {
  activationDelayMs: 24 * 3_600_000,
  overlapMs: 7 * 24 * 3_600_000,
};

/** Rotation order: a later key is a later rotation, whatever activation it was given. */
const byCreation = (a: SenderKey, b: SenderKey): number =>
  a.created_at === b.created_at ? a.kid.localeCompare(b.kid) : a.created_at.localeCompare(b.created_at);

/**
 * The key that signs at `now`: the latest rotation whose activation has come (so an emergency rotation is never
 * undone when an earlier, slower one activates); undefined when none has activated yet.
 */
export const signingKeyAt = (keys: readonly SenderKey[], now: Date): SenderKey | undefined => {
  const at = now.toISOString();
  return [...keys]
    .sort(byCreation)
    .filter((key) => key.activates_at <= at)
    .at(-1);
};

/**
 * The keys the JWKS lists at `now`, oldest rotation first: every key no later rotation has superseded yet (the
 * signing one and those still to activate), and each superseded one until the overlap after the first later key
 * took over — unless that later key retires the earlier ones at once (an emergency: a key thought compromised).
 */
export const publishedKeysAt = (
  keys: readonly SenderKey[],
  now: Date,
  timings: Pick<KeyTimings, 'overlapMs'> = DEFAULT_KEY_TIMINGS,
): SenderKey[] => {
  const at = now.toISOString();
  const sorted = [...keys].sort(byCreation);
  return sorted.filter((_key, index) => {
    const active = sorted.slice(index + 1).filter((later) => later.activates_at <= at);
    if (active.length === 0) return true;
    if (active.some((later) => later.retires_previous === true)) return false;
    const supersededAt = Math.min(...active.map((later) => Date.parse(later.activates_at)));
    return now.getTime() < supersededAt + timings.overlapMs;
  });
};

/** PKCS #8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The Ed25519 key pair of a 32-byte seed: the private key and the public JWK (`x`). */
export const ed25519KeyOfSeed = (
  seed: Uint8Array,
): { readonly privateKey: KeyObject; readonly publicJwk: SenderKey['public_jwk'] } => {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes');
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string };
  return { privateKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', x } };
};

/** A JWKS entry (RFC 7517/8037) of a key. */
export const jwkOf = (key: SenderKey) => ({
  ...key.public_jwk,
  kid: key.kid,
  alg: 'EdDSA' as const,
  use: 'sig' as const,
});

const NATIVE_PREFIX = 'v1a=';
const STANDARD_PREFIX = 'v1a,';

/** Ed25519 signature of `content`, standard padded base64. */
export const ed25519Sign = (privateKey: KeyObject, content: Uint8Array | string): string =>
  sign(null, typeof content === 'string' ? Buffer.from(content, 'utf8') : content, privateKey).toString(
    'base64',
  );

/** `X-Signature: v1a=<base64>` over the C13 canonical string. */
export const nativeAsymmetricSignature = (privateKey: KeyObject, canonical: string): string =>
  `${NATIVE_PREFIX}${ed25519Sign(privateKey, canonical)}`;

/** `webhook-signature: v1a,<base64>` over `<id>.<timestamp>.<body>` (Standard Webhooks). */
export const standardAsymmetricSignature = (privateKey: KeyObject, signedContent: Uint8Array): string =>
  `${STANDARD_PREFIX}${ed25519Sign(privateKey, signedContent)}`;

/**
 * Public keys already imported, by their `x`: a receiver checks every delivery against the same one or two keys,
 * and importing a JWK costs about as much as the check itself. Bounded (a JWKS holds two or three keys; a
 * receiver of many senders' keys keeps the most recent ones).
 */
const PUBLIC_KEYS = new Map<string, KeyObject>();
const PUBLIC_KEYS_KEPT = 32;

const publicKeyOf = (jwk: SenderKey['public_jwk']): KeyObject => {
  const cached = PUBLIC_KEYS.get(jwk.x);
  if (cached) return cached;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  if (PUBLIC_KEYS.size >= PUBLIC_KEYS_KEPT) PUBLIC_KEYS.delete(PUBLIC_KEYS.keys().next().value as string);
  PUBLIC_KEYS.set(jwk.x, key);
  return key;
};

/** Checks an Ed25519 signature (base64) of `content` against a public JWK; false for anything malformed. */
export const ed25519Verify = (
  jwk: SenderKey['public_jwk'],
  content: Uint8Array | string,
  signature: string,
): boolean => {
  try {
    const key = publicKeyOf(jwk);
    const bytes = Buffer.from(signature, 'base64');
    if (bytes.length !== 64 || bytes.toString('base64') !== signature) return false;
    return verify(null, typeof content === 'string' ? Buffer.from(content, 'utf8') : content, key, bytes);
  } catch {
    return false;
  }
};

/** The `v1a` entries of a signature header, either scheme's separator. */
export const asymmetricSignaturesOf = (header: string): string[] =>
  header
    .split(/[ \t]+/)
    .filter((entry) => entry.startsWith(NATIVE_PREFIX) || entry.startsWith(STANDARD_PREFIX))
    .map((entry) => entry.slice(NATIVE_PREFIX.length));
