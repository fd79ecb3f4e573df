import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  timingSafeEqual,
} from 'node:crypto';
import { chmod, link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { KEYS } from '../../definitions';
import {
  DATA_PLAINTEXT_MAX_BYTES,
  type DataCipher,
  IntegrityError,
  MAC_MESSAGE_MAX_BYTES,
  type MacSigner,
  type PublicJwk,
  type ReceiptSigner,
} from '../../ports/signing';
import { derSignature, privateScalarOf, signP256Digest } from './ecdsa-p256';

/**
 * The local stack's twins of the KMS adapters (`../aws/kms-signing.ts`), on `node:crypto` only. They keep the
 * KMS adapters' limits (MAC message 1..4096 bytes, plaintext ≤ 4095 bytes) so that an input AWS would refuse
 * fails locally too.
 */

export const LOCAL_MAC_MESSAGE_MAX_BYTES = MAC_MESSAGE_MAX_BYTES;
export const LOCAL_DATA_PLAINTEXT_MAX_BYTES = DATA_PLAINTEXT_MAX_BYTES;
/** Length of the HMAC key and of the AES-256 key, in bytes. */
export const LOCAL_SECRET_KEY_BYTES = 32;
export const LOCAL_CIPHERTEXT_PREFIX = 'local:v1:';
/** `keyId` of the local quote MAC key: a fixed name, never derived from the secret key. */
export const LOCAL_QUOTE_MAC_KEY_ID = `local-${KEYS.quoteMac.id}`;

const HMAC_SHA_256_MAC_BYTES = 32;
const GCM_IV_BYTES = 12;
const GCM_TAG_BYTES = 16;
const KEYS_DIR_MODE = 0o700;
const KEY_FILE_MODE = 0o600;

/** A key file exists but cannot be read or does not hold a valid key. Never repaired automatically. */
export class LocalKeyFileError extends Error {
  constructor(
    readonly file: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(
      `key file ${file} ${problem}; it is never regenerated automatically (that would invalidate every ` +
        'signature and ciphertext made with it): restore the file, or delete it to start over with a new key',
      options,
    );
    this.name = 'LocalKeyFileError';
  }
}

const checkSecretKey = (key: Uint8Array, what: string): Buffer => {
  if (key.byteLength !== LOCAL_SECRET_KEY_BYTES) {
    throw new RangeError(`${what} key must be ${LOCAL_SECRET_KEY_BYTES} bytes, got ${key.byteLength}`);
  }
  return Buffer.from(key);
};

const isP256PrivateKey = (key: KeyObject): boolean =>
  key.type === 'private' &&
  key.asymmetricKeyType === 'ec' &&
  key.asymmetricKeyDetails?.namedCurve === 'prime256v1';

/**
 * Receipt signatures with a local P-256 private key: ECDSA over SHA-256, DER-encoded, exactly what the KMS
 * adapter produces. `keyId` = `local-` + the first 16 hex digits of SHA-256 over the public key's SPKI DER, so it
 * is stable across restarts, public, and changes with the key.
 */
export class LocalReceiptSigner implements ReceiptSigner {
  readonly keyId: string;
  readonly #privateKey: KeyObject;
  readonly #jwk: PublicJwk;

  constructor(privateKey: KeyObject) {
    if (!isP256PrivateKey(privateKey)) throw new TypeError('receipt signing key must be a P-256 private key');
    this.#privateKey = privateKey;
    const publicKey = createPublicKey(privateKey);
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    this.keyId = `local-${createHash('sha256').update(spki).digest('hex').slice(0, 16)}`;
    const jwk = publicKey.export({ format: 'jwk' });
    this.#jwk = {
      kty: 'EC',
      crv: 'P-256',
      x: jwk.x ?? '',
      y: jwk.y ?? '',
      kid: this.keyId,
      alg: 'ES256',
      use: 'sig',
    };
  }

  async sign(message: Uint8Array): Promise<Uint8Array> {
    return new Uint8Array(sign('sha256', message, this.#privateKey));
  }

  async publicKey(): Promise<PublicJwk> {
    return this.#jwk;
  }
}

const checkMacMessage = (message: Uint8Array): void => {
  if (message.byteLength === 0 || message.byteLength > LOCAL_MAC_MESSAGE_MAX_BYTES) {
    throw new RangeError(
      `MAC message must be 1..${LOCAL_MAC_MESSAGE_MAX_BYTES} bytes (KMS limit), got ${message.byteLength}`,
    );
  }
};

/**
 * HMAC-SHA-256 with a local 32-byte key; `verifyMac` compares in constant time. The message limits are those of
 * KMS (`RangeError` outside 1..4096 bytes). `keyId` is a name given by the caller ({@link LOCAL_QUOTE_MAC_KEY_ID}
 * for the quote key), never derived from the secret.
 */
export class LocalMacSigner implements MacSigner {
  readonly #key: Buffer;

  constructor(
    key: Uint8Array,
    readonly keyId: string = LOCAL_QUOTE_MAC_KEY_ID,
  ) {
    this.#key = checkSecretKey(key, 'HMAC');
  }

  async generateMac(message: Uint8Array): Promise<Uint8Array> {
    checkMacMessage(message);
    return new Uint8Array(createHmac('sha256', this.#key).update(message).digest());
  }

  async verifyMac(message: Uint8Array, mac: Uint8Array): Promise<boolean> {
    checkMacMessage(message);
    if (mac.byteLength !== HMAC_SHA_256_MAC_BYTES) return false;
    const expected = createHmac('sha256', this.#key).update(message).digest();
    return timingSafeEqual(expected, mac);
  }
}

/** The AAD that binds a context: JSON of its entries sorted by key (UTF-16 code units, as RFC 8785). */
export const canonicalContext = (context: Readonly<Record<string, string>>): Buffer => {
  const sorted = Object.keys(context)
    .sort()
    .map((key) => [key, context[key]]);
  return Buffer.from(JSON.stringify(Object.fromEntries(sorted)), 'utf8');
};

/** Decodes canonical, non-empty base64; anything else is `undefined`. */
const strictBase64 = (text: string): Buffer | undefined => {
  if (text.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
};

/** AES-256-GCM with a random 12-byte IV: `iv ‖ tag ‖ ciphertext`, the AAD bound. */
const sealAesGcm = (key: Buffer, plaintext: Uint8Array, aad: Uint8Array): Buffer => {
  const iv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: GCM_TAG_BYTES });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
};

/** Opens what {@link sealAesGcm} sealed with the same key and AAD; anything else is an `IntegrityError`. */
const openAesGcm = (key: Buffer, payload: Uint8Array, aad: Uint8Array): Uint8Array => {
  if (payload.byteLength < GCM_IV_BYTES + GCM_TAG_BYTES) {
    throw new IntegrityError('ciphertext is not valid base64 of iv, tag and body');
  }
  try {
    const iv = payload.subarray(0, GCM_IV_BYTES);
    const tag = payload.subarray(GCM_IV_BYTES, GCM_IV_BYTES + GCM_TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    const body = payload.subarray(GCM_IV_BYTES + GCM_TAG_BYTES);
    return new Uint8Array(Buffer.concat([decipher.update(body), decipher.final()]));
  } catch (error) {
    throw new IntegrityError('ciphertext does not decrypt with this key and context', { cause: error });
  }
};

/**
 * AES-256-GCM with a local 32-byte key, a random 12-byte IV per message and the canonical JSON of the context
 * as AAD. Ciphertext string: `local:v1:<base64(iv ‖ tag ‖ ciphertext)>`. Any failure to decrypt is an
 * `IntegrityError`.
 */
export class LocalDataCipher implements DataCipher {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    this.#key = checkSecretKey(key, 'AES-256');
  }

  async encrypt(plaintext: Uint8Array, context: Readonly<Record<string, string>>): Promise<string> {
    if (plaintext.byteLength > LOCAL_DATA_PLAINTEXT_MAX_BYTES) {
      throw new RangeError(
        `plaintext must be at most ${LOCAL_DATA_PLAINTEXT_MAX_BYTES} bytes (KMS limit), got ${plaintext.byteLength}`,
      );
    }
    const payload = sealAesGcm(this.#key, plaintext, canonicalContext(context));
    return `${LOCAL_CIPHERTEXT_PREFIX}${payload.toString('base64')}`;
  }

  async decrypt(ciphertext: string, context: Readonly<Record<string, string>>): Promise<Uint8Array> {
    if (!ciphertext.startsWith(LOCAL_CIPHERTEXT_PREFIX)) {
      throw new IntegrityError(`ciphertext is not in format ${LOCAL_CIPHERTEXT_PREFIX}`);
    }
    const payload = strictBase64(ciphertext.slice(LOCAL_CIPHERTEXT_PREFIX.length));
    if (!payload) throw new IntegrityError('ciphertext is not valid base64 of iv, tag and body');
    return openAesGcm(this.#key, payload, canonicalContext(context));
  }
}

export interface LocalKeys {
  readonly receiptSigner: LocalReceiptSigner;
  readonly quoteMac: LocalMacSigner;
  /** Application secrets (endpoint secrets, client-certificate keys, sealed answers): the `secrets` key. */
  readonly secretsCipher: LocalDataCipher;
  /** The same keys as the KMS twin serves them to the bundles (`aws-twin.ts`). */
  readonly kms: LocalKmsKeys;
}

/**
 * The local keys with KMS's operations on them, for the KMS twin: the bundles of `LOCAL_BUNDLES=1 npm start` and
 * of the bundle test call KMS as in AWS, and the twin answers with the keys the in-process stack uses.
 */
export interface LocalKmsKeys {
  readonly receiptSigning: {
    /** KMS `Sign` with `MessageType: 'DIGEST'`: ECDSA over the given SHA-256 digest, DER-encoded. */
    signDigest(digest: Uint8Array): Uint8Array;
    /** KMS `GetPublicKey`: the public half as SPKI DER. */
    readonly publicKeySpki: Uint8Array;
  };
  readonly quoteMac: MacSigner;
  readonly secrets: {
    /** KMS `Encrypt` with the given AAD (the encryption context's canonical form): `iv ‖ tag ‖ ciphertext`. */
    seal(plaintext: Uint8Array, aad: Uint8Array): Uint8Array;
    /** KMS `Decrypt`: an `IntegrityError` for anything not sealed with this key and AAD. */
    open(blob: Uint8Array, aad: Uint8Array): Uint8Array;
  };
}

const localKmsKeys = (receiptKey: KeyObject, macKey: Uint8Array, secretsKey: Uint8Array): LocalKmsKeys => {
  const scalar = privateScalarOf(receiptKey);
  const key = checkSecretKey(secretsKey, 'AES-256');
  return {
    receiptSigning: {
      signDigest: (digest) => {
        const { r, s } = signP256Digest(scalar, digest);
        return derSignature(r, s);
      },
      publicKeySpki: new Uint8Array(createPublicKey(receiptKey).export({ format: 'der', type: 'spki' })),
    },
    quoteMac: new LocalMacSigner(macKey, LOCAL_QUOTE_MAC_KEY_ID),
    secrets: {
      seal: (plaintext, aad) => sealAesGcm(key, plaintext, aad),
      open: (blob, aad) => openAesGcm(key, blob, aad),
    },
  };
};

const hasCode = (error: unknown, code: string): boolean =>
  error instanceof Error && 'code' in error && error.code === code;

/**
 * Creates `file` with `contents` (mode 0600) unless it exists. The contents go to a temporary file first, which is
 * then hard-linked to the final name: `link` never overwrites, so of two racing processes exactly one key wins,
 * and no reader ever sees a half-written key file.
 */
const createExclusively = async (file: string, contents: string): Promise<void> => {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', KEY_FILE_MODE);
  try {
    try {
      await handle.chmod(KEY_FILE_MODE);
      await handle.writeFile(contents, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temporary, file).catch((error: unknown) => {
      if (!hasCode(error, 'EEXIST')) throw error;
    });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
};

/** Reads `file`, creating it first when absent; a file that exists but does not parse is an error, never replaced. */
const loadOrCreate = async <T>(
  file: string,
  create: () => string,
  parse: (contents: string) => T,
  kind: string,
): Promise<T> => {
  const read = async (): Promise<string | undefined> => {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return undefined;
      throw new LocalKeyFileError(file, 'cannot be read', { cause: error });
    }
  };
  let contents = await read();
  if (contents === undefined) {
    await createExclusively(file, create());
    contents = await read();
    if (contents === undefined) throw new LocalKeyFileError(file, 'disappeared right after it was created');
  }
  try {
    return parse(contents);
  } catch (error) {
    throw new LocalKeyFileError(file, `does not hold ${kind}`, { cause: error });
  }
};

const parseP256Pem = (contents: string): KeyObject => {
  const key = createPrivateKey({ key: contents, format: 'pem' });
  if (!isP256PrivateKey(key))
    throw new TypeError(`expected an EC P-256 private key, got ${key.asymmetricKeyType}`);
  return key;
};

const parseSecretKey = (contents: string): Uint8Array => {
  const bytes = strictBase64(contents.trim());
  if (!bytes || bytes.byteLength !== LOCAL_SECRET_KEY_BYTES) {
    throw new RangeError(`expected base64 of ${LOCAL_SECRET_KEY_BYTES} bytes`);
  }
  return new Uint8Array(bytes);
};

const newP256Pem = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();

const newSecretKey = (): string => `${randomBytes(LOCAL_SECRET_KEY_BYTES).toString('base64')}\n`;

/**
 * The local stack's keys, from the files named by `KEYS.*.localFile` under `keysDir`. On first start the
 * directory (mode 0700) and each missing file (mode 0600) are created: the receipt key as a PKCS#8 PEM P-256
 * key, the quote MAC and data keys as base64 of 32 random bytes. Safe when several processes start at once:
 * they all end up with the same keys. A file that exists but cannot be read or parsed fails with a
 * {@link LocalKeyFileError} naming it; it is never regenerated.
 */
export const loadOrCreateLocalKeys = async (keysDir: string): Promise<LocalKeys> => {
  await mkdir(keysDir, { recursive: true, mode: KEYS_DIR_MODE });
  const directory = await stat(keysDir);
  if ((directory.mode & 0o077) !== 0) await chmod(keysDir, KEYS_DIR_MODE);
  // Data directories from before the secrets key held their secrets under the data key: their secrets key
  // starts as a copy of it, so what they stored still decrypts. A new directory gets a key of its own.
  const legacyDataKey = await readFile(join(keysDir, KEYS.data.localFile), 'utf8').catch(() => undefined);
  const [receiptKey, macKey, , secretsKey] = await Promise.all([
    loadOrCreate(
      join(keysDir, KEYS.receiptSigning.localFile),
      newP256Pem,
      parseP256Pem,
      'a PEM P-256 private key',
    ),
    loadOrCreate(
      join(keysDir, KEYS.quoteMac.localFile),
      newSecretKey,
      parseSecretKey,
      'a base64 32-byte key',
    ),
    loadOrCreate(join(keysDir, KEYS.data.localFile), newSecretKey, parseSecretKey, 'a base64 32-byte key'),
    loadOrCreate(
      join(keysDir, KEYS.secrets.localFile),
      () => legacyDataKey ?? newSecretKey(),
      parseSecretKey,
      'a base64 32-byte key',
    ),
  ]);
  return {
    receiptSigner: new LocalReceiptSigner(receiptKey),
    quoteMac: new LocalMacSigner(macKey, LOCAL_QUOTE_MAC_KEY_ID),
    secretsCipher: new LocalDataCipher(secretsKey),
    kms: localKmsKeys(receiptKey, macKey, secretsKey),
  };
};
