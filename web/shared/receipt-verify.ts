/**
 * Verifies a receipt in the browser (C10) with WebCrypto, against the service's published keys (`GET /keys`): the
 * same canonical bytes the service signs (RFC 8785, the domain's own `canonicalJson`), its `hash`, and its ES256
 * signature (DER, turned into the raw r‖s WebCrypto takes), over the receipt as issued (`issuedReceiptOf`: the
 * domain's own undoing of what a read adds).
 */
import { canonicalJson } from '../../functions/domain/money/canonical';
import {
  issuedReceiptOf,
  type JsonObject,
  type Jwk,
  receiptPayload,
} from '../../functions/domain/receipts/receipt';

export type ReceiptVerdict =
  | { readonly valid: true; readonly kid: string }
  | { readonly valid: false; readonly reason: string };

const hex = (bytes: ArrayBuffer): string =>
  [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('');

const base64Bytes = (text: string): Uint8Array => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));

/** An ECDSA DER signature (SEQUENCE of two INTEGERs) as the 64-byte r‖s of P-256, or undefined if malformed. */
export const derToRaw = (der: Uint8Array): Uint8Array<ArrayBuffer> | undefined => {
  if (der[0] !== 0x30) return undefined;
  let offset = 2;
  const integer = (): Uint8Array | undefined => {
    if (der[offset] !== 0x02) return undefined;
    const length = der[offset + 1] ?? 0;
    const value = der.subarray(offset + 2, offset + 2 + length);
    offset += 2 + length;
    const trimmed = value[0] === 0 ? value.subarray(1) : value;
    if (trimmed.length > 32) return undefined;
    const padded = new Uint8Array(32);
    padded.set(trimmed, 32 - trimmed.length);
    return padded;
  };
  const r = integer();
  const s = integer();
  if (!r || !s) return undefined;
  const raw = new Uint8Array(64);
  raw.set(r, 0);
  raw.set(s, 32);
  return raw;
};

export const verifyReceiptInBrowser = async (
  receipt: Readonly<Record<string, unknown>>,
  keys: readonly Jwk[],
): Promise<ReceiptVerdict> => {
  const { hash, signature, key_id: kid } = receipt;
  if (typeof hash !== 'string' || typeof signature !== 'string' || typeof kid !== 'string')
    return { valid: false, reason: 'the receipt has no hash, signature or key_id' };
  const payload = receiptPayload(issuedReceiptOf(receipt as JsonObject));
  const bytes = new TextEncoder().encode(canonicalJson(payload));
  const digest = `sha256:${hex(await crypto.subtle.digest('SHA-256', bytes))}`;
  if (digest !== hash)
    return { valid: false, reason: 'its content does not match its hash (it was changed)' };
  const jwk = keys.find((key) => key.kid === kid);
  if (!jwk?.x || !jwk.y) return { valid: false, reason: `no published key ${kid}` };
  const raw = derToRaw(base64Bytes(signature));
  if (!raw) return { valid: false, reason: 'the signature is malformed' };
  const key = await crypto.subtle.importKey(
    'jwk',
    { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, ext: true },
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['verify'],
  );
  const ok = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, raw, bytes);
  return ok
    ? { valid: true, kid }
    : { valid: false, reason: 'the signature does not verify with the published key' };
};
