import { createHash, createPublicKey } from 'node:crypto';
import {
  DecryptCommand,
  EncryptCommand,
  GenerateMacCommand,
  GetPublicKeyCommand,
  type KMSClient,
  SignCommand,
  VerifyMacCommand,
} from '@aws-sdk/client-kms';
import {
  DATA_PLAINTEXT_MAX_BYTES,
  type DataCipher,
  IntegrityError,
  MAC_MESSAGE_MAX_BYTES,
  type MacSigner,
  type PublicJwk,
  type ReceiptSigner,
} from '../../ports/signing';

export const KMS_MAC_MESSAGE_MAX_BYTES = MAC_MESSAGE_MAX_BYTES;

/** Length of an HMAC-SHA-256 tag. */
export const HMAC_SHA_256_MAC_BYTES = 32;

export const KMS_DATA_PLAINTEXT_MAX_BYTES = DATA_PLAINTEXT_MAX_BYTES;

/** Prefix of the ciphertext strings this adapter writes: `kms:v1:<base64 CiphertextBlob>`. */
export const KMS_CIPHERTEXT_PREFIX = 'kms:v1:';

/**
 * First byte of every plaintext handed to KMS `Encrypt` in format v1. KMS refuses an empty plaintext, while the
 * port accepts one; the framing byte makes every plaintext at least one byte long and is checked on decrypt.
 */
const V1_PLAINTEXT_FRAME = 0x01;

/** KMS answered without a field it always returns; the request may or may not have taken effect. */
export class KmsResponseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KmsResponseError';
  }
}

const errorNamed = (error: unknown, name: string): boolean => error instanceof Error && error.name === name;

const required = <T>(value: T | undefined, operation: string, field: string): T => {
  if (value === undefined) throw new KmsResponseError(`KMS ${operation} returned no ${field}`);
  return value;
};

const checkMacMessage = (message: Uint8Array): void => {
  if (message.byteLength === 0 || message.byteLength > KMS_MAC_MESSAGE_MAX_BYTES) {
    throw new RangeError(
      `MAC message must be 1..${KMS_MAC_MESSAGE_MAX_BYTES} bytes (KMS limit), got ${message.byteLength}`,
    );
  }
};

/** Decodes canonical, non-empty base64; anything else is `undefined`. */
const strictBase64 = (text: string): Uint8Array | undefined => {
  if (text.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
};

/**
 * Receipt signatures with a KMS `ECC_NIST_P256` / `SIGN_VERIFY` key. The message is hashed here with SHA-256 and
 * KMS signs the digest (`MessageType: 'DIGEST'`, `ECDSA_SHA_256`), so messages of any size can be signed and
 * the DER signature verifies with `crypto.verify('sha256', message, publicKey, signature)`.
 *
 * `keyId` is the configured key id, published as the JWK `kid` and pinned in receipts: configure the key ARN
 * (not an alias, which can be re-pointed at another key).
 */
export class KmsReceiptSigner implements ReceiptSigner {
  #publicKey: Promise<PublicJwk> | undefined;

  constructor(
    private readonly kms: KMSClient,
    readonly keyId: string,
  ) {}

  async sign(message: Uint8Array): Promise<Uint8Array> {
    const digest = createHash('sha256').update(message).digest();
    const result = await this.kms.send(
      new SignCommand({
        KeyId: this.keyId,
        Message: digest,
        MessageType: 'DIGEST',
        SigningAlgorithm: 'ECDSA_SHA_256',
      }),
    );
    return required(result.Signature, 'Sign', 'Signature');
  }

  /** The public key as a JWK; fetched once per instance (a failed fetch is retried on the next call). */
  publicKey(): Promise<PublicJwk> {
    if (!this.#publicKey) {
      this.#publicKey = this.fetchPublicKey();
      this.#publicKey.catch(() => {
        this.#publicKey = undefined;
      });
    }
    return this.#publicKey;
  }

  private async fetchPublicKey(): Promise<PublicJwk> {
    const result = await this.kms.send(new GetPublicKeyCommand({ KeyId: this.keyId }));
    const spki = required(result.PublicKey, 'GetPublicKey', 'PublicKey');
    const jwk = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }).export({
      format: 'jwk',
    });
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) {
      throw new KmsResponseError(
        `KMS key ${this.keyId} is not an ECC_NIST_P256 key (key spec ${result.KeySpec ?? 'unknown'})`,
      );
    }
    return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: this.keyId, alg: 'ES256', use: 'sig' };
  }
}

/**
 * Quote MACs with a KMS `HMAC_256` / `GENERATE_VERIFY_MAC` key (`HMAC_SHA_256`); the key never leaves KMS.
 *
 * KMS limits the message to 1..{@link KMS_MAC_MESSAGE_MAX_BYTES} bytes: `generateMac` and `verifyMac` throw a
 * `RangeError` outside that range, before calling KMS. A MAC that is not 32 bytes long is answered `false`
 * without a call.
 */
export class KmsMacSigner implements MacSigner {
  constructor(
    private readonly kms: KMSClient,
    readonly keyId: string,
  ) {}

  async generateMac(message: Uint8Array): Promise<Uint8Array> {
    checkMacMessage(message);
    const result = await this.kms.send(
      new GenerateMacCommand({ KeyId: this.keyId, Message: message, MacAlgorithm: 'HMAC_SHA_256' }),
    );
    return required(result.Mac, 'GenerateMac', 'Mac');
  }

  /** `false` when KMS answers `KMSInvalidMacException`; every other KMS error propagates. */
  async verifyMac(message: Uint8Array, mac: Uint8Array): Promise<boolean> {
    checkMacMessage(message);
    if (mac.byteLength !== HMAC_SHA_256_MAC_BYTES) return false;
    try {
      const result = await this.kms.send(
        new VerifyMacCommand({ KeyId: this.keyId, Message: message, Mac: mac, MacAlgorithm: 'HMAC_SHA_256' }),
      );
      return result.MacValid === true;
    } catch (error) {
      if (errorNamed(error, 'KMSInvalidMacException')) return false;
      throw error;
    }
  }
}

/**
 * Data at rest with a KMS symmetric key (`SYMMETRIC_DEFAULT`). The context is the KMS `EncryptionContext`, so
 * KMS binds it to the ciphertext (key order does not matter). Ciphertext string: `kms:v1:<base64
 * CiphertextBlob>`; the KMS plaintext is a framing byte followed by the data, so plaintexts are
 * 0..{@link KMS_DATA_PLAINTEXT_MAX_BYTES} bytes (`RangeError` above).
 *
 * `decrypt` throws `IntegrityError` for a foreign prefix, malformed base64, a wrong context or a tampered blob
 * (KMS `InvalidCiphertextException`); other KMS errors (access, throttling, disabled key, a ciphertext of another
 * key: `IncorrectKeyException`) propagate.
 */
export class KmsDataCipher implements DataCipher {
  constructor(
    private readonly kms: KMSClient,
    readonly keyId: string,
  ) {}

  async encrypt(plaintext: Uint8Array, context: Readonly<Record<string, string>>): Promise<string> {
    if (plaintext.byteLength > KMS_DATA_PLAINTEXT_MAX_BYTES) {
      throw new RangeError(
        `plaintext must be at most ${KMS_DATA_PLAINTEXT_MAX_BYTES} bytes (KMS limit), got ${plaintext.byteLength}`,
      );
    }
    const framed = new Uint8Array(plaintext.byteLength + 1);
    framed[0] = V1_PLAINTEXT_FRAME;
    framed.set(plaintext, 1);
    const result = await this.kms.send(
      new EncryptCommand({ KeyId: this.keyId, Plaintext: framed, EncryptionContext: { ...context } }),
    );
    const blob = required(result.CiphertextBlob, 'Encrypt', 'CiphertextBlob');
    return `${KMS_CIPHERTEXT_PREFIX}${Buffer.from(blob).toString('base64')}`;
  }

  async decrypt(ciphertext: string, context: Readonly<Record<string, string>>): Promise<Uint8Array> {
    if (!ciphertext.startsWith(KMS_CIPHERTEXT_PREFIX)) {
      throw new IntegrityError(`ciphertext is not in format ${KMS_CIPHERTEXT_PREFIX}`);
    }
    const blob = strictBase64(ciphertext.slice(KMS_CIPHERTEXT_PREFIX.length));
    if (!blob) throw new IntegrityError('ciphertext is not valid base64');
    let framed: Uint8Array;
    try {
      const result = await this.kms.send(
        new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: blob, EncryptionContext: { ...context } }),
      );
      framed = required(result.Plaintext, 'Decrypt', 'Plaintext');
    } catch (error) {
      if (errorNamed(error, 'InvalidCiphertextException')) {
        throw new IntegrityError('ciphertext does not decrypt with this key and context', { cause: error });
      }
      throw error;
    }
    if (framed[0] !== V1_PLAINTEXT_FRAME) throw new IntegrityError('decrypted plaintext has no v1 frame');
    return framed.slice(1);
  }
}
