/**
 * Endpoint signing secrets (C12): `whsec_` + standard base64 (padded) of 32 random bytes. The HMAC key is the
 * decoded bytes, never the text. Randomness is injected so the domain stays pure.
 */

export const SECRET_PREFIX = 'whsec_';

/** Length of the HMAC key a secret carries, in bytes. */
export const SECRET_BYTES = 32;

/** Standard (RFC 4648 §4) base64 with padding, nothing else. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export type InvalidSecretCode =
  | 'secret_prefix_missing'
  | 'secret_not_base64'
  | 'secret_wrong_length'
  | 'random_source_wrong_length';

/**
 * A secret (or a random source) that cannot make an HMAC key. The message is the code only: it never echoes
 * the secret, so it is safe to log.
 */
export class InvalidSecretError extends Error {
  constructor(
    readonly code: InvalidSecretCode,
    options?: ErrorOptions,
  ) {
    super(code, options);
    this.name = 'InvalidSecretError';
  }
}

/**
 * A new endpoint secret: `whsec_` + base64 of {@link SECRET_BYTES} bytes from `randomBytes` (in production
 * `crypto.randomBytes`). Throws InvalidSecretError when the source returns another number of bytes.
 */
export const generateSecret = (randomBytes: (size: number) => Uint8Array): string => {
  const bytes = randomBytes(SECRET_BYTES);
  if (bytes.length !== SECRET_BYTES) throw new InvalidSecretError('random_source_wrong_length');
  return `${SECRET_PREFIX}${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
};

/**
 * The HMAC key bytes of a secret. Throws InvalidSecretError when the prefix is missing, the rest is not
 * canonical padded standard base64, or it does not decode to exactly {@link SECRET_BYTES} bytes.
 */
export const secretBytes = (secret: string): Uint8Array => {
  if (!secret.startsWith(SECRET_PREFIX)) throw new InvalidSecretError('secret_prefix_missing');
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) throw new InvalidSecretError('secret_not_base64');
  const bytes = Buffer.from(encoded, 'base64');
  // Non-zero bits in the last character's unused part decode silently; demand the one canonical spelling.
  if (bytes.toString('base64') !== encoded) throw new InvalidSecretError('secret_not_base64');
  if (bytes.length !== SECRET_BYTES) throw new InvalidSecretError('secret_wrong_length');
  return new Uint8Array(bytes);
};
