import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import {
  DisabledException,
  EncryptCommand,
  GenerateMacCommand,
  GetPublicKeyCommand,
  IncorrectKeyException,
  KMSInternalException,
  NotFoundException,
  SignCommand,
} from '@aws-sdk/client-kms';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  KMS_MAC_MESSAGE_MAX_BYTES,
  KmsDataCipher,
  KmsMacSigner,
  KmsReceiptSigner,
  KmsResponseError,
} from '../../../functions/adapters/aws/kms-signing';
import { IntegrityError } from '../../../functions/ports/signing';
import {
  createFakeKms,
  derSignature,
  type FakeKms,
  privateScalarOf,
  signP256Digest,
} from '../../support/fake-kms';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const metadata = { $metadata: {} };
/** What the SDK throws for AccessDeniedException, which the KMS model does not declare. */
const accessDenied = (): Error =>
  Object.assign(new Error('not authorized to perform kms:*'), { name: 'AccessDeniedException' });

let fake: FakeKms;

beforeEach(() => {
  fake = createFakeKms();
});

afterEach(() => {
  fake.restore();
});

describe('KmsReceiptSigner', () => {
  it('hashes locally and asks KMS to sign the SHA-256 digest with ECDSA_SHA_256, MessageType DIGEST', async () => {
    const keyId = fake.createKey('ECC_NIST_P256');
    const message = bytes('{"receipt_id":"rcpt_01"}');
    await new KmsReceiptSigner(fake.client, keyId).sign(message);
    const [input] = fake.inputsOf('Sign');
    expect(input).toEqual({
      KeyId: keyId,
      Message: createHash('sha256').update(message).digest(),
      MessageType: 'DIGEST',
      SigningAlgorithm: 'ECDSA_SHA_256',
    });
  });

  it('fetches the public key once per instance, also for concurrent callers', async () => {
    const signer = new KmsReceiptSigner(fake.client, fake.createKey('ECC_NIST_P256'));
    const [first, second] = await Promise.all([signer.publicKey(), signer.publicKey()]);
    const third = await signer.publicKey();
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(fake.inputsOf('GetPublicKey')).toEqual([{ KeyId: signer.keyId }]);
  });

  it('does not cache a failed GetPublicKey', async () => {
    const signer = new KmsReceiptSigner(fake.client, fake.createKey('ECC_NIST_P256'));
    const outage = new KMSInternalException({ message: 'internal', ...metadata });
    fake.injectNext('GetPublicKey', outage);
    await expect(signer.publicKey()).rejects.toBe(outage);
    await expect(signer.publicKey()).resolves.toMatchObject({ kid: signer.keyId });
  });

  it('refuses a public key that is not P-256', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
      format: 'der',
      type: 'spki',
    });
    fake.injectNext('GetPublicKey', { PublicKey: new Uint8Array(rsa), KeySpec: 'RSA_2048' });
    const signer = new KmsReceiptSigner(fake.client, 'arn:aws:kms:eu-west-1:111122223333:key/rsa');
    await expect(signer.publicKey()).rejects.toThrow(/not an ECC_NIST_P256 key \(key spec RSA_2048\)/);
  });

  it('propagates KMS errors and reports a response without a signature', async () => {
    const signer = new KmsReceiptSigner(fake.client, 'arn:aws:kms:eu-west-1:111122223333:key/missing');
    await expect(signer.sign(bytes('x'))).rejects.toBeInstanceOf(NotFoundException);
    fake.injectNext('Sign', {});
    await expect(signer.sign(bytes('x'))).rejects.toThrow(KmsResponseError);
  });
});

describe('KmsMacSigner', () => {
  it('sends GenerateMac and VerifyMac with HMAC_SHA_256 and the key id', async () => {
    const keyId = fake.createKey('HMAC_256');
    const signer = new KmsMacSigner(fake.client, keyId);
    const message = bytes('quote');
    const mac = await signer.generateMac(message);
    expect(await signer.verifyMac(message, mac)).toBe(true);
    expect(fake.inputsOf('GenerateMac')).toEqual([
      { KeyId: keyId, Message: message, MacAlgorithm: 'HMAC_SHA_256' },
    ]);
    expect(fake.inputsOf('VerifyMac')).toEqual([
      { KeyId: keyId, Message: message, Mac: mac, MacAlgorithm: 'HMAC_SHA_256' },
    ]);
  });

  it(`throws RangeError above ${KMS_MAC_MESSAGE_MAX_BYTES} bytes without calling KMS`, async () => {
    const signer = new KmsMacSigner(fake.client, fake.createKey('HMAC_256'));
    const tooLong = new Uint8Array(KMS_MAC_MESSAGE_MAX_BYTES + 1);
    await expect(signer.generateMac(tooLong)).rejects.toThrow(/1\.\.4096 bytes \(KMS limit\), got 4097/);
    await expect(signer.verifyMac(tooLong, new Uint8Array(32))).rejects.toThrow(RangeError);
    await expect(signer.generateMac(new Uint8Array(0))).rejects.toThrow(RangeError);
    expect(fake.calls).toEqual([]);
    await signer.generateMac(new Uint8Array(KMS_MAC_MESSAGE_MAX_BYTES));
    expect(fake.inputsOf('GenerateMac')).toHaveLength(1);
  });

  it('answers false for a MAC that is not 32 bytes long without calling KMS', async () => {
    const signer = new KmsMacSigner(fake.client, fake.createKey('HMAC_256'));
    expect(await signer.verifyMac(bytes('quote'), new Uint8Array(31))).toBe(false);
    expect(fake.calls).toEqual([]);
  });

  it('answers false on KMSInvalidMacException', async () => {
    const signer = new KmsMacSigner(fake.client, fake.createKey('HMAC_256'));
    expect(await signer.verifyMac(bytes('quote'), new Uint8Array(32))).toBe(false);
    expect(fake.inputsOf('VerifyMac')).toHaveLength(1);
  });

  it('propagates every other KMS error from VerifyMac and GenerateMac', async () => {
    const signer = new KmsMacSigner(fake.client, fake.createKey('HMAC_256'));
    const disabled = new DisabledException({ message: 'key is disabled', ...metadata });
    fake.injectNext('VerifyMac', disabled);
    await expect(signer.verifyMac(bytes('quote'), new Uint8Array(32))).rejects.toBe(disabled);
    const denied = accessDenied();
    fake.injectNext('GenerateMac', denied);
    await expect(signer.generateMac(bytes('quote'))).rejects.toBe(denied);
  });

  it('answers false when KMS says MacValid false instead of throwing', async () => {
    fake.injectNext('VerifyMac', { MacValid: false });
    const signer = new KmsMacSigner(fake.client, fake.createKey('HMAC_256'));
    expect(await signer.verifyMac(bytes('quote'), new Uint8Array(32))).toBe(false);
  });
});

describe('KmsDataCipher', () => {
  const context = { purpose: 'endpoint-secret', endpoint_id: 'ep_01' };

  it('passes KeyId and EncryptionContext to Encrypt and Decrypt, and frames the plaintext', async () => {
    const keyId = fake.createKey('SYMMETRIC_DEFAULT');
    const cipher = new KmsDataCipher(fake.client, keyId);
    const ciphertext = await cipher.encrypt(bytes('secret'), context);
    await cipher.decrypt(ciphertext, context);
    const [encrypt] = fake.inputsOf('Encrypt');
    expect(encrypt).toEqual({
      KeyId: keyId,
      Plaintext: new Uint8Array([0x01, ...bytes('secret')]),
      EncryptionContext: context,
    });
    const [decrypt] = fake.inputsOf('Decrypt');
    expect(decrypt?.KeyId).toBe(keyId);
    expect(decrypt?.EncryptionContext).toEqual(context);
    expect(`kms:v1:${Buffer.from(decrypt?.CiphertextBlob ?? []).toString('base64')}`).toBe(ciphertext);
  });

  it('answers a foreign prefix or malformed base64 with IntegrityError without calling KMS', async () => {
    const cipher = new KmsDataCipher(fake.client, fake.createKey('SYMMETRIC_DEFAULT'));
    await expect(cipher.decrypt('local:v1:AAAA', context)).rejects.toThrow(IntegrityError);
    await expect(cipher.decrypt('kms:v1:AAA', context)).rejects.toThrow(IntegrityError);
    await expect(cipher.decrypt('kms:v1:AA\nAA==', context)).rejects.toThrow(IntegrityError);
    expect(fake.calls).toEqual([]);
  });

  it('wraps InvalidCiphertextException in IntegrityError with the cause', async () => {
    const cipher = new KmsDataCipher(fake.client, fake.createKey('SYMMETRIC_DEFAULT'));
    const ciphertext = await cipher.encrypt(bytes('secret'), context);
    const error = await cipher.decrypt(ciphertext, { purpose: 'other' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IntegrityError);
    expect((error as IntegrityError).cause).toMatchObject({ name: 'InvalidCiphertextException' });
  });

  it('propagates other KMS errors: another key, throttling, access', async () => {
    const cipher = new KmsDataCipher(fake.client, fake.createKey('SYMMETRIC_DEFAULT'));
    const other = new KmsDataCipher(fake.client, fake.createKey('SYMMETRIC_DEFAULT'));
    const ciphertext = await other.encrypt(bytes('secret'), context);
    await expect(cipher.decrypt(ciphertext, context)).rejects.toBeInstanceOf(IncorrectKeyException);
    const internal = new KMSInternalException({ message: 'internal', ...metadata });
    fake.injectNext('Decrypt', internal);
    await expect(cipher.decrypt(ciphertext, context)).rejects.toBe(internal);
    const denied = accessDenied();
    fake.injectNext('Encrypt', denied);
    await expect(cipher.encrypt(bytes('secret'), context)).rejects.toBe(denied);
  });

  it('refuses a decrypted plaintext without the v1 frame', async () => {
    fake.injectNext('Decrypt', { Plaintext: bytes('unframed') });
    const cipher = new KmsDataCipher(fake.client, fake.createKey('SYMMETRIC_DEFAULT'));
    await expect(cipher.decrypt('kms:v1:AAAA', context)).rejects.toThrow(IntegrityError);
  });
});

describe('fake KMS', () => {
  it('signs a raw digest with ECDSA P-256 as RFC 6979 A.2.5 specifies (SHA-256, "sample")', () => {
    const d = 0xc9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721n;
    const digest = createHash('sha256').update('sample').digest();
    expect(signP256Digest(d, digest)).toEqual({
      r: 0xefd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716n,
      s: 0xf7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8n,
    });
  });

  it('produces DER signatures that crypto.verify accepts, for many keys and digests', () => {
    for (let round = 0; round < 16; round++) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const message = bytes(`message ${round}`);
      const { r, s } = signP256Digest(
        privateScalarOf(privateKey),
        createHash('sha256').update(message).digest(),
      );
      expect(verify('sha256', message, publicKey, derSignature(r, s))).toBe(true);
    }
  });

  it('encodes DER integers minimally, with a zero byte before a high bit', () => {
    expect(Buffer.from(derSignature(0x80n, 0x7fn)).toString('hex')).toBe('3007020200800201' + '7f');
    expect(Buffer.from(derSignature(0x0100n, 0x01n)).toString('hex')).toBe('300702020100020101');
  });

  it('checks KMS request limits: a DIGEST must be 32 bytes; keys are used only for their usage', async () => {
    const signingKey = fake.createKey('ECC_NIST_P256');
    const sign = (message: Uint8Array) =>
      fake.client.send(
        new SignCommand({
          KeyId: signingKey,
          Message: message,
          MessageType: 'DIGEST',
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      );
    await expect(sign(new Uint8Array(31))).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(
      fake.client.send(
        new GenerateMacCommand({ KeyId: signingKey, Message: bytes('x'), MacAlgorithm: 'HMAC_SHA_256' }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidKeyUsageException' });
    await expect(
      fake.client.send(
        new EncryptCommand({ KeyId: fake.createKey('SYMMETRIC_DEFAULT'), Plaintext: new Uint8Array(0) }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException' });
  });

  it('signs a RAW message by hashing it first, like KMS', async () => {
    const keyId = fake.createKey('ECC_NIST_P256');
    const message = bytes('raw message');
    const result = await fake.client.send(
      new SignCommand({
        KeyId: keyId,
        Message: message,
        MessageType: 'RAW',
        SigningAlgorithm: 'ECDSA_SHA_256',
      }),
    );
    const spki =
      (await fake.client.send(new GetPublicKeyCommand({ KeyId: keyId }))).PublicKey ?? new Uint8Array();
    const publicKey = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
    expect(verify('sha256', message, publicKey, result.Signature ?? new Uint8Array())).toBe(true);
  });
});
