import { createHash, createPublicKey, verify } from 'node:crypto';
import { canonicalJson, type Json } from '../money/canonical';

export type JsonObject = { readonly [key: string]: Json };

/** RFC 8785 bytes of a JSON object. */
export const canonicalBytes = (value: JsonObject): Buffer => Buffer.from(canonicalJson(value), 'utf8');

/** C10: `hash` = `sha256:` + lowercase hex of SHA-256 over the JCS bytes of the receipt without hash and signature. */
export const receiptHash = (payload: JsonObject): string =>
  `sha256:${createHash('sha256').update(canonicalBytes(payload)).digest('hex')}`;

/** The signed part of a receipt: everything but `hash` and `signature`. */
export const receiptPayload = (receipt: JsonObject): JsonObject => {
  const { hash: _hash, signature: _signature, ...payload } = receipt;
  return payload;
};

/**
 * The receipt as issued (and signed) from a receipt as read: a read adds `refunds` and the current `status`, which
 * the signature never covered (a receipt is signed once, at commit, with status `issued`).
 */
export const issuedReceiptOf = (read: JsonObject): JsonObject => {
  const { refunds: _refunds, ...issued } = read;
  return { ...issued, status: 'issued' };
};

export type ReceiptCheck =
  | { readonly valid: true }
  | {
      readonly valid: false;
      readonly reason: 'hash_mismatch' | 'unknown_key' | 'signature_mismatch' | 'malformed';
    };

export interface Jwk {
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly kid?: string;
}

/**
 * Verifies a receipt offline (C10): its hash matches the JCS bytes of its payload, and its signature is a DER
 * ECDSA P-256 signature over SHA-256 of those bytes by the key named `key_id` in the JWKS.
 */
export const verifyReceipt = (receipt: JsonObject, keys: readonly Jwk[]): ReceiptCheck => {
  const { hash, signature, key_id: keyId } = receipt;
  if (typeof hash !== 'string' || typeof signature !== 'string' || typeof keyId !== 'string') {
    return { valid: false, reason: 'malformed' };
  }
  const payload = receiptPayload(receipt);
  if (receiptHash(payload) !== hash) return { valid: false, reason: 'hash_mismatch' };
  const jwk = keys.find((key) => key.kid === keyId);
  if (!jwk) return { valid: false, reason: 'unknown_key' };
  try {
    const publicKey = createPublicKey({
      key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
      format: 'jwk',
    });
    const ok = verify('sha256', canonicalBytes(payload), publicKey, Buffer.from(signature, 'base64'));
    return ok ? { valid: true } : { valid: false, reason: 'signature_mismatch' };
  } catch {
    return { valid: false, reason: 'malformed' };
  }
};

/** The digest a quote MAC covers (C9; see docs/decisions.md for why the MAC is over the digest). */
export const quoteDigest = (payload: JsonObject): Buffer =>
  createHash('sha256').update(canonicalBytes(payload)).digest();
