import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { canonicalJson } from '../money/canonical';

/**
 * DSSE v1 (Dead Simple Signing Envelope, https://github.com/secure-systems-lab/dsse, protocol.md and
 * envelope.md) for release signatures (issue 7 §2): the pre-authentication encoding, the JSON envelope, signing
 * through an injected signer (the `ReceiptSigner` shape: ECDSA P-256, DER over SHA-256 of the message) and
 * offline verification against public JWKs.
 */

/** Payload type of a release envelope (issue 7 §2). */
export const RELEASE_PAYLOAD_TYPE = 'application/vnd.pricing.release+json';

const encoder = new TextEncoder();

/**
 * DSSE v1 pre-authentication encoding:
 * `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, LEN being the ASCII decimal byte length (UTF-8 for the
 * type). This, not the payload alone, is what gets signed.
 */
export const pae = (payloadType: string, payload: Uint8Array): Uint8Array => {
  const type = encoder.encode(payloadType);
  const header = encoder.encode(`DSSEv1 ${type.length} `);
  const middle = encoder.encode(` ${payload.length} `);
  const out = new Uint8Array(header.length + type.length + middle.length + payload.length);
  out.set(header, 0);
  out.set(type, header.length);
  out.set(middle, header.length + type.length);
  out.set(payload, header.length + type.length + middle.length);
  return out;
};

/** The versions a release puts in force. */
export interface ReleaseVersions {
  readonly pricelist_version: number;
  readonly fx_version: string;
  readonly tax_rule_version: number;
}

/** What a release payload states (issue 7 §2); nothing else is signed. */
export interface ReleasePayloadInput {
  readonly cr_id: string;
  readonly kind: string;
  readonly versions: ReleaseVersions;
  readonly content_sha256: string;
  readonly author: string;
  readonly approvers: readonly string[];
  readonly effective_from: string;
}

/**
 * The release payload: UTF-8 of the RFC 8785 (JCS) form of exactly the fields of `ReleasePayloadInput` (extra
 * properties of the argument are not signed). Approvers keep the order given. Throws `CanonicalizationError`
 * for a non-finite version number.
 */
export const releasePayload = (input: ReleasePayloadInput): Uint8Array =>
  encoder.encode(
    canonicalJson({
      cr_id: input.cr_id,
      kind: input.kind,
      versions: {
        pricelist_version: input.versions.pricelist_version,
        fx_version: input.versions.fx_version,
        tax_rule_version: input.versions.tax_rule_version,
      },
      content_sha256: input.content_sha256,
      author: input.author,
      approvers: [...input.approvers],
      effective_from: input.effective_from,
    }),
  );

/** One DSSE signature: `keyid` names the signing key (the JWK `kid`), `sig` is Base64 of the DER signature. */
export interface DsseSignature {
  readonly keyid: string;
  readonly sig: string;
}

/** The DSSE JSON envelope; `payload` is Base64 of the serialized body. */
export interface DsseEnvelope {
  readonly payloadType: string;
  readonly payload: string;
  readonly signatures: readonly DsseSignature[];
}

/** Signs a message: the `ReceiptSigner` shape (ECDSA P-256, DER-encoded, over SHA-256 of the message). */
export interface DsseSigner {
  readonly keyId: string;
  sign(message: Uint8Array): Promise<Uint8Array>;
}

const toBase64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** Signs `PAE(payloadType, payload)` with the signer and wraps the result in a one-signature envelope. */
export const signEnvelope = async (
  payloadType: string,
  payload: Uint8Array,
  signer: DsseSigner,
): Promise<DsseEnvelope> => {
  const signature = await signer.sign(pae(payloadType, payload));
  return {
    payloadType,
    payload: toBase64(payload),
    signatures: [{ keyid: signer.keyId, sig: toBase64(signature) }],
  };
};

/** A public key to verify with: an EC P-256 JWK (the `PublicJwk` served at `GET /keys` fits). */
export interface DsseVerificationKey {
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly kid?: string;
}

/** Keys to verify with: a list of JWKs or a JWKS document (`{ keys: [...] }`). */
export type DsseKeys = readonly DsseVerificationKey[] | { readonly keys: readonly DsseVerificationKey[] };

/** Why an envelope was refused. */
export type DsseFailure =
  | 'malformed_envelope'
  | 'unknown_keyid'
  | 'malformed_key'
  | 'bad_signature'
  | 'wrong_payload_type';

/** Raised by `verifyEnvelope` when an envelope does not verify; `reason` says why. */
export class DsseVerificationError extends Error {
  readonly reason: DsseFailure;

  constructor(reason: DsseFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DsseVerificationError';
    this.reason = reason;
  }
}

/** What a verified envelope carries: its payload type, the decoded payload, and the key that signed it. */
export interface VerifiedEnvelope {
  readonly payloadType: string;
  readonly payload: Uint8Array;
  readonly keyid: string;
}

/** Options of `verifyEnvelope`. */
export interface VerifyEnvelopeOptions {
  /** When given, an envelope of any other payload type is refused (`wrong_payload_type`). */
  readonly expectedPayloadType?: string;
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE_BASE64 = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Strict Base64 (standard or URL-safe, as DSSE allows; padding optional): refuses characters outside the
 * alphabet and non-canonical encodings (stray bits in the last character), so that one encoded text has
 * exactly one byte sequence. Returns `undefined` when the text is not such an encoding.
 */
const fromBase64 = (text: string): Uint8Array | undefined => {
  const encoding = STANDARD_BASE64.test(text)
    ? 'base64'
    : URL_SAFE_BASE64.test(text)
      ? 'base64url'
      : undefined;
  if (encoding === undefined || (text.includes('=') && text.length % 4 !== 0)) return undefined;
  const bytes = Buffer.from(text, encoding);
  const unpadded = text.replace(/=+$/, '');
  return bytes.toString(encoding).replace(/=+$/, '') === unpadded ? new Uint8Array(bytes) : undefined;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface DecodedSignature {
  readonly keyid: string;
  readonly sig: Uint8Array;
}

const malformed = (message: string) => new DsseVerificationError('malformed_envelope', message);

const decodeEnvelope = (
  envelope: unknown,
): { payloadType: string; payload: Uint8Array; signatures: DecodedSignature[] } => {
  if (!isRecord(envelope)) throw malformed('the envelope is not a JSON object');
  const { payloadType, payload, signatures } = envelope;
  if (typeof payloadType !== 'string') throw malformed('payloadType is not a string');
  if (typeof payload !== 'string') throw malformed('payload is not a string');
  const body = fromBase64(payload);
  if (body === undefined) throw malformed('payload is not Base64');
  if (!Array.isArray(signatures) || signatures.length === 0) {
    throw malformed('signatures is not a non-empty array');
  }
  const decoded = signatures.map((entry: unknown, index): DecodedSignature => {
    if (!isRecord(entry) || typeof entry.keyid !== 'string' || typeof entry.sig !== 'string') {
      throw malformed(`signatures[${index}] needs a string keyid and sig`);
    }
    const sig = fromBase64(entry.sig);
    if (sig === undefined || sig.length === 0) throw malformed(`signatures[${index}].sig is not Base64`);
    return { keyid: entry.keyid, sig };
  });
  return { payloadType, payload: body, signatures: decoded };
};

const publicKeyOf = (jwk: DsseVerificationKey): KeyObject => {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new DsseVerificationError('malformed_key', `key ${String(jwk.kid)} is not an EC P-256 JWK`);
  }
  try {
    return createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
  } catch (error) {
    throw new DsseVerificationError('malformed_key', `key ${String(jwk.kid)} is not a valid P-256 point`, {
      cause: error,
    });
  }
};

const isKey = (value: unknown): value is DsseVerificationKey =>
  isRecord(value) && typeof value.kty === 'string';

const isKeyList = (keys: DsseKeys): keys is readonly DsseVerificationKey[] => Array.isArray(keys);

const keyListOf = (keys: DsseKeys): readonly DsseVerificationKey[] => {
  const list: unknown = isKeyList(keys) ? keys : keys.keys;
  if (!Array.isArray(list)) throw new DsseVerificationError('malformed_key', 'keys is not a list of JWKs');
  return list.filter(isKey);
};

/**
 * Verifies a DSSE envelope (protocol.md): decodes it, picks the keys whose `kid` equals a signature's
 * `keyid`, checks the DER ECDSA P-256 / SHA-256 signature over `PAE(payloadType, payload)`, and only then checks
 * the payload type. The first signature that verifies wins. `envelope` is taken as parsed JSON of unknown
 * shape. Throws `DsseVerificationError`: `malformed_envelope`, `unknown_keyid` (no signature names a known
 * key), `malformed_key`, `bad_signature`, `wrong_payload_type` (an expected type was given and differs).
 */
export const verifyEnvelope = (
  envelope: unknown,
  keys: DsseKeys,
  options: VerifyEnvelopeOptions = {},
): VerifiedEnvelope => {
  const { payloadType, payload, signatures } = decodeEnvelope(envelope);
  const keyList = keyListOf(keys);
  const message = pae(payloadType, payload);
  let known = false;
  let keyid: string | undefined;
  for (const signature of signatures) {
    for (const jwk of keyList.filter((key) => key.kid === signature.keyid)) {
      known = true;
      const publicKey = publicKeyOf(jwk);
      // Node answers false (it does not throw) for a signature that is not valid DER.
      if (verify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, signature.sig)) {
        keyid = signature.keyid;
        break;
      }
    }
    if (keyid !== undefined) break;
  }
  if (keyid === undefined) {
    const ids = signatures.map((signature) => signature.keyid).join(', ');
    throw known
      ? new DsseVerificationError('bad_signature', `no signature verifies (keyids: ${ids})`)
      : new DsseVerificationError('unknown_keyid', `no known key for keyids: ${ids}`);
  }
  if (options.expectedPayloadType !== undefined && payloadType !== options.expectedPayloadType) {
    throw new DsseVerificationError(
      'wrong_payload_type',
      `payload type ${payloadType} is not the expected ${options.expectedPayloadType}`,
    );
  }
  return { payloadType, payload, keyid };
};
