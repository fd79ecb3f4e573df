/** A public key as served in the JWKS at `GET /keys`; `kid` is the signer's `keyId`. */
export interface PublicJwk {
  readonly kty: 'EC';
  readonly crv: 'P-256';
  readonly x: string;
  readonly y: string;
  readonly kid: string;
  readonly alg: 'ES256';
  readonly use: 'sig';
}

/**
 * Signs receipts: ECDSA P-256 over SHA-256 of the message, DER-encoded, so that
 * `crypto.verify('sha256', message, publicKey, signature)` checks it (KMS `ECDSA_SHA_256`, message type DIGEST).
 */
export interface ReceiptSigner {
  readonly keyId: string;
  sign(message: Uint8Array): Promise<Uint8Array>;
  publicKey(): Promise<PublicJwk>;
}

/** Largest message a MAC is computed over (KMS `GenerateMac`/`VerifyMac`); both adapters refuse longer ones. */
export const MAC_MESSAGE_MAX_BYTES = 4096;

/** Largest secret the data cipher encrypts (KMS `Encrypt` less the adapter's one-byte prefix). */
export const DATA_PLAINTEXT_MAX_BYTES = 4095;

/**
 * HMAC-SHA-256 with a key that never leaves its store (KMS `GenerateMac`/`VerifyMac` in AWS). */
export interface MacSigner {
  readonly keyId: string;
  generateMac(message: Uint8Array): Promise<Uint8Array>;
  verifyMac(message: Uint8Array, mac: Uint8Array): Promise<boolean>;
}

/**
 * Encrypts small secrets at rest (endpoint secrets, client keys), up to `DATA_PLAINTEXT_MAX_BYTES` (else
 * `RangeError`). The context is bound to the ciphertext: decrypting with another context, a tampered or an
 * unknown ciphertext throws `IntegrityError`.
 */
export interface DataCipher {
  encrypt(plaintext: Uint8Array, context: Readonly<Record<string, string>>): Promise<string>;
  decrypt(ciphertext: string, context: Readonly<Record<string, string>>): Promise<Uint8Array>;
}

/** Raised by adapters when a MAC, signature or ciphertext does not check out. */
export class IntegrityError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IntegrityError';
  }
}
