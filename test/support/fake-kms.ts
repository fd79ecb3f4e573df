import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} from 'node:crypto';
import {
  DecryptCommand,
  type DecryptCommandInput,
  type DecryptCommandOutput,
  EncryptCommand,
  type EncryptCommandInput,
  type EncryptCommandOutput,
  GenerateMacCommand,
  type GenerateMacCommandInput,
  type GenerateMacCommandOutput,
  GetPublicKeyCommand,
  type GetPublicKeyCommandInput,
  type GetPublicKeyCommandOutput,
  IncorrectKeyException,
  InvalidCiphertextException,
  InvalidKeyUsageException,
  KMSClient,
  type KMSClientResolvedConfig,
  KMSInvalidMacException,
  NotFoundException,
  type ServiceInputTypes,
  type ServiceOutputTypes,
  SignCommand,
  type SignCommandInput,
  type SignCommandOutput,
  VerifyMacCommand,
  type VerifyMacCommandInput,
  type VerifyMacCommandOutput,
} from '@aws-sdk/client-kms';
import { type AwsStub, mockClient } from 'aws-sdk-client-mock';
import { derSignature, privateScalarOf, signP256Digest } from '../../functions/adapters/local/ecdsa-p256';

/*
 * A fake AWS KMS for unit tests: `aws-sdk-client-mock` stubs `send` on one `KMSClient` instance and answers with
 * REAL cryptography, so adapters are checked against real signatures, MACs and ciphertexts:
 *
 * - ECC_NIST_P256 keys: `Sign` (ECDSA_SHA_256, MessageType RAW or DIGEST) and `GetPublicKey` (SPKI DER). Node's
 *   crypto cannot sign a pre-hashed digest, so DIGEST signing is ECDSA over P-256 written here with BigInt
 *   (RFC 6979 deterministic nonce, DER output).
 * - HMAC_256 keys: `GenerateMac`, `VerifyMac` (a mismatch throws `KMSInvalidMacException`, as KMS does).
 * - SYMMETRIC_DEFAULT keys: `Encrypt`, `Decrypt` (AES-256-GCM; the blob names its key and the
 *   EncryptionContext is bound as AAD; a mismatch throws `InvalidCiphertextException`).
 *
 * The request limits KMS enforces (message and plaintext lengths, digest length) are enforced too, with
 * `ValidationException`. Every request is recorded in `calls`; `injectNext` injects faults or odd answers.
 */

// ECDSA P-256 over a given digest: the local KMS twin's (RFC 6979 nonce), re-exported for the tests that check it.
export { derSignature, privateScalarOf, signP256Digest };

// ---------------------------------------------------------------------------------------------------------------
// The fake service.

export type FakeKeySpec = 'ECC_NIST_P256' | 'HMAC_256' | 'SYMMETRIC_DEFAULT';

interface FakeKey {
  readonly keyId: string;
  readonly arn: string;
  readonly spec: FakeKeySpec;
  readonly privateKey?: KeyObject;
  readonly secret?: Buffer;
}

interface KmsInputs {
  Sign: SignCommandInput;
  GetPublicKey: GetPublicKeyCommandInput;
  GenerateMac: GenerateMacCommandInput;
  VerifyMac: VerifyMacCommandInput;
  Encrypt: EncryptCommandInput;
  Decrypt: DecryptCommandInput;
}

interface KmsOutputs {
  Sign: SignCommandOutput;
  GetPublicKey: GetPublicKeyCommandOutput;
  GenerateMac: GenerateMacCommandOutput;
  VerifyMac: VerifyMacCommandOutput;
  Encrypt: EncryptCommandOutput;
  Decrypt: DecryptCommandOutput;
}

export type KmsOperation = keyof KmsInputs;
/** What an injected call answers: an error to throw, or the output (without `$metadata`) to return. */
export type Injection<Op extends KmsOperation> = Error | Omit<KmsOutputs[Op], '$metadata'>;
export type FakeKmsCall = {
  [Op in KmsOperation]: { readonly operation: Op; readonly input: KmsInputs[Op] };
}[KmsOperation];

export interface FakeKms {
  /** The client to hand to the adapters; only this instance is stubbed. */
  readonly client: KMSClient;
  /** The underlying stub (prefer {@link FakeKms.injectNext}: the stub's `*Once` behaviours count all calls). */
  readonly mock: AwsStub<ServiceInputTypes, ServiceOutputTypes, KMSClientResolvedConfig>;
  /** Every request that reached the fake, in order. */
  readonly calls: FakeKmsCall[];
  /** Creates a key; returns its ARN (requests may name it by ARN or by key id). */
  createKey(spec: FakeKeySpec): string;
  /**
   * The next request of `operation` (recorded like any other) answers `outcome` instead of the real
   * behaviour: an error is thrown, an output is returned. Several injections play in order.
   */
  injectNext<Op extends KmsOperation>(operation: Op, outcome: Injection<Op>): void;
  /** The inputs of the recorded requests of one operation. */
  inputsOf<Op extends KmsOperation>(operation: Op): KmsInputs[Op][];
  restore(): void;
}

const REGION = 'eu-west-1';
const ACCOUNT = '111122223333';
const metadata = { httpStatusCode: 200, requestId: 'fake-kms', attempts: 1, totalRetryDelay: 0 };
const BLOB_MAGIC = Buffer.from('FKMS', 'ascii');

const validation = (message: string): Error =>
  Object.assign(new Error(message), { name: 'ValidationException' });

const checkLength = (field: string, value: Uint8Array | undefined, max: number): Uint8Array => {
  if (!value || value.byteLength < 1 || value.byteLength > max) {
    throw validation(`${field} must be 1..${max} bytes, got ${value?.byteLength ?? 'none'}`);
  }
  return value;
};

/** The AAD that binds an EncryptionContext: order-insensitive, like KMS. */
const contextAad = (context: Record<string, string> | undefined): Buffer => {
  const entries = Object.entries(context ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(entries), 'utf8');
};

export const createFakeKms = (): FakeKms => {
  const client = new KMSClient({
    region: REGION,
    credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake-secret' },
  });
  const mock = mockClient(client);
  const keys = new Map<string, FakeKey>();
  const calls: FakeKmsCall[] = [];

  const resolve = (keyId: string | undefined, spec: FakeKeySpec, operation: string): FakeKey => {
    const key = keyId === undefined ? undefined : keys.get(keyId);
    if (!key) throw new NotFoundException({ message: `Key '${keyId}' does not exist`, $metadata: {} });
    if (key.spec !== spec) {
      throw new InvalidKeyUsageException({
        message: `${key.arn} (${key.spec}) cannot be used for ${operation}`,
        $metadata: {},
      });
    }
    return key;
  };

  const injections = new Map<KmsOperation, Injection<KmsOperation>[]>();

  /** Records the request, then plays the next injected outcome of this operation, if any. */
  const intercept = <Op extends KmsOperation>(
    operation: Op,
    input: KmsInputs[Op],
  ): KmsOutputs[Op] | undefined => {
    calls.push({ operation, input } as FakeKmsCall);
    const next = injections.get(operation)?.shift();
    if (next === undefined) return undefined;
    if (next instanceof Error) throw next;
    return { $metadata: metadata, ...next } as KmsOutputs[Op];
  };

  mock.on(SignCommand).callsFake((input: SignCommandInput): SignCommandOutput => {
    const injected = intercept('Sign', input);
    if (injected) return injected;
    const key = resolve(input.KeyId, 'ECC_NIST_P256', 'Sign');
    if (input.SigningAlgorithm !== 'ECDSA_SHA_256') throw validation('unsupported SigningAlgorithm');
    const message = checkLength('Message', input.Message, 4096);
    const digest = input.MessageType === 'DIGEST' ? message : createHash('sha256').update(message).digest();
    if (digest.byteLength !== 32) throw validation('an ECDSA_SHA_256 digest must be 32 bytes');
    const privateKey = key.privateKey;
    if (!privateKey) throw new Error('fake key without private key');
    const { r, s } = signP256Digest(privateScalarOf(privateKey), digest);
    return {
      $metadata: metadata,
      KeyId: key.arn,
      Signature: derSignature(r, s),
      SigningAlgorithm: 'ECDSA_SHA_256',
    };
  });

  mock.on(GetPublicKeyCommand).callsFake((input: GetPublicKeyCommandInput): GetPublicKeyCommandOutput => {
    const injected = intercept('GetPublicKey', input);
    if (injected) return injected;
    const key = resolve(input.KeyId, 'ECC_NIST_P256', 'GetPublicKey');
    if (!key.privateKey) throw new Error('fake key without private key');
    const spki = createPublicKey(key.privateKey).export({ format: 'der', type: 'spki' });
    return {
      $metadata: metadata,
      KeyId: key.arn,
      PublicKey: new Uint8Array(spki),
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      SigningAlgorithms: ['ECDSA_SHA_256'],
    };
  });

  const hmacOf = (key: FakeKey, message: Uint8Array): Buffer => {
    if (!key.secret) throw new Error('fake key without secret');
    return createHmac('sha256', key.secret).update(message).digest();
  };

  mock.on(GenerateMacCommand).callsFake((input: GenerateMacCommandInput): GenerateMacCommandOutput => {
    const injected = intercept('GenerateMac', input);
    if (injected) return injected;
    const key = resolve(input.KeyId, 'HMAC_256', 'GenerateMac');
    if (input.MacAlgorithm !== 'HMAC_SHA_256') throw validation('unsupported MacAlgorithm');
    const message = checkLength('Message', input.Message, 4096);
    return {
      $metadata: metadata,
      KeyId: key.arn,
      Mac: new Uint8Array(hmacOf(key, message)),
      MacAlgorithm: 'HMAC_SHA_256',
    };
  });

  mock.on(VerifyMacCommand).callsFake((input: VerifyMacCommandInput): VerifyMacCommandOutput => {
    const injected = intercept('VerifyMac', input);
    if (injected) return injected;
    const key = resolve(input.KeyId, 'HMAC_256', 'VerifyMac');
    if (input.MacAlgorithm !== 'HMAC_SHA_256') throw validation('unsupported MacAlgorithm');
    const message = checkLength('Message', input.Message, 4096);
    const mac = checkLength('Mac', input.Mac, 6144);
    const expected = hmacOf(key, message);
    if (mac.byteLength !== expected.byteLength || !timingSafeEqual(mac, expected)) {
      throw new KMSInvalidMacException({ message: 'MAC verification failed', $metadata: {} });
    }
    return { $metadata: metadata, KeyId: key.arn, MacValid: true, MacAlgorithm: 'HMAC_SHA_256' };
  });

  // Ciphertext blob: 'FKMS' ‖ key id length (1 byte) ‖ key id ‖ iv (12) ‖ tag (16) ‖ AES-256-GCM body.
  mock.on(EncryptCommand).callsFake((input: EncryptCommandInput): EncryptCommandOutput => {
    const injected = intercept('Encrypt', input);
    if (injected) return injected;
    const key = resolve(input.KeyId, 'SYMMETRIC_DEFAULT', 'Encrypt');
    if (!key.secret) throw new Error('fake key without secret');
    const plaintext = checkLength('Plaintext', input.Plaintext, 4096);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.secret, iv);
    cipher.setAAD(contextAad(input.EncryptionContext));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const id = Buffer.from(key.keyId, 'utf8');
    const blob = Buffer.concat([BLOB_MAGIC, Buffer.of(id.byteLength), id, iv, cipher.getAuthTag(), body]);
    return {
      $metadata: metadata,
      KeyId: key.arn,
      CiphertextBlob: new Uint8Array(blob),
      EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
    };
  });

  mock.on(DecryptCommand).callsFake((input: DecryptCommandInput): DecryptCommandOutput => {
    const injected = intercept('Decrypt', input);
    if (injected) return injected;
    const blob = Buffer.from(checkLength('CiphertextBlob', input.CiphertextBlob, 6144));
    const invalid = (): Error =>
      new InvalidCiphertextException({ message: 'invalid ciphertext', $metadata: {} });
    if (blob.byteLength < BLOB_MAGIC.byteLength + 1 || !blob.subarray(0, 4).equals(BLOB_MAGIC))
      throw invalid();
    const idLength = blob[4] ?? 0;
    const idEnd = 5 + idLength;
    const owner = keys.get(blob.subarray(5, idEnd).toString('utf8'));
    if (!owner?.secret) throw invalid();
    if (input.KeyId !== undefined) {
      const named = resolve(input.KeyId, 'SYMMETRIC_DEFAULT', 'Decrypt');
      if (named.keyId !== owner.keyId) {
        throw new IncorrectKeyException({
          message: 'ciphertext was encrypted under another key',
          $metadata: {},
        });
      }
    }
    if (blob.byteLength < idEnd + 28) throw invalid();
    try {
      const decipher = createDecipheriv('aes-256-gcm', owner.secret, blob.subarray(idEnd, idEnd + 12));
      decipher.setAAD(contextAad(input.EncryptionContext));
      decipher.setAuthTag(blob.subarray(idEnd + 12, idEnd + 28));
      const plaintext = Buffer.concat([decipher.update(blob.subarray(idEnd + 28)), decipher.final()]);
      return {
        $metadata: metadata,
        KeyId: owner.arn,
        Plaintext: new Uint8Array(plaintext),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    } catch {
      throw invalid();
    }
  });

  return {
    client,
    mock,
    calls,
    createKey(spec: FakeKeySpec): string {
      const keyId = randomUUID();
      const arn = `arn:aws:kms:${REGION}:${ACCOUNT}:key/${keyId}`;
      const key: FakeKey =
        spec === 'ECC_NIST_P256'
          ? { keyId, arn, spec, privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }
          : { keyId, arn, spec, secret: randomBytes(32) };
      keys.set(keyId, key);
      keys.set(arn, key);
      return arn;
    },
    injectNext<Op extends KmsOperation>(operation: Op, outcome: Injection<Op>): void {
      const queue = injections.get(operation) ?? [];
      queue.push(outcome as Injection<KmsOperation>);
      injections.set(operation, queue);
    },
    inputsOf<Op extends KmsOperation>(operation: Op): KmsInputs[Op][] {
      return calls.flatMap((call) => (call.operation === operation ? [call.input as KmsInputs[Op]] : []));
    },
    restore(): void {
      mock.restore();
      client.destroy();
    },
  };
};
