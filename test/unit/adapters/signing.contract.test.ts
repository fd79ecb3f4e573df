import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { KmsDataCipher, KmsMacSigner, KmsReceiptSigner } from '../../../functions/adapters/aws/kms-signing';
import {
  LocalDataCipher,
  LocalMacSigner,
  LocalReceiptSigner,
} from '../../../functions/adapters/local/local-signing';
import {
  type DataCipher,
  IntegrityError,
  type MacSigner,
  type PublicJwk,
  type ReceiptSigner,
} from '../../../functions/ports/signing';
import { createFakeKms, type FakeKms } from '../../support/fake-kms';

/*
 * One contract per port, run against the KMS adapter (over the fake KMS, which does real crypto) and the local
 * twin: whatever the domain relies on must hold for both.
 */

const fakes: FakeKms[] = [];
const fakeKms = (): FakeKms => {
  const fake = createFakeKms();
  fakes.push(fake);
  return fake;
};

afterEach(() => {
  for (const fake of fakes.splice(0)) fake.restore();
});

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

const flipByte = (data: Uint8Array, index: number): Uint8Array => {
  const copy = new Uint8Array(data);
  copy[index] = (copy[index] ?? 0) ^ 0x01;
  return copy;
};

const verifies = (jwk: PublicJwk, message: Uint8Array, signature: Uint8Array): boolean =>
  verify('sha256', message, createPublicKey({ key: { ...jwk }, format: 'jwk' }), signature);

interface Subject<Port> {
  readonly name: string;
  readonly create: () => Port;
}

const receiptSigners: Subject<ReceiptSigner>[] = [
  {
    name: 'KmsReceiptSigner (fake KMS)',
    create: () => {
      const fake = fakeKms();
      return new KmsReceiptSigner(fake.client, fake.createKey('ECC_NIST_P256'));
    },
  },
  {
    name: 'LocalReceiptSigner',
    create: () => new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
  },
];

describe.each(receiptSigners)('ReceiptSigner contract: $name', ({ create }) => {
  const message = bytes('{"amount":"12.30","currency":"EUR","key_id":"k1"}');

  it('produces a DER ECDSA P-256 signature that crypto.verify checks with the published JWK', async () => {
    const signer = create();
    const signature = await signer.sign(message);
    expect(signature[0]).toBe(0x30);
    expect(verifies(await signer.publicKey(), message, signature)).toBe(true);
  });

  it('signs messages of any length, including empty and larger than a KMS message', async () => {
    const signer = create();
    const jwk = await signer.publicKey();
    for (const candidate of [new Uint8Array(0), randomBytes(10_000)]) {
      expect(verifies(jwk, candidate, await signer.sign(candidate))).toBe(true);
    }
  });

  it('a signature does not verify a message with one byte changed', async () => {
    const signer = create();
    const signature = await signer.sign(message);
    const jwk = await signer.publicKey();
    expect(verifies(jwk, flipByte(message, 3), signature)).toBe(false);
    expect(verifies(jwk, message, flipByte(signature, signature.byteLength - 1))).toBe(false);
  });

  it('publishes a P-256 ES256 signing JWK whose kid is the keyId', async () => {
    const signer = create();
    const jwk = await signer.publicKey();
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: signer.keyId });
    expect(Buffer.from(jwk.x, 'base64url')).toHaveLength(32);
    expect(Buffer.from(jwk.y, 'base64url')).toHaveLength(32);
  });

  it('two signatures of the same message both verify', async () => {
    const signer = create();
    const jwk = await signer.publicKey();
    const [first, second] = await Promise.all([signer.sign(message), signer.sign(message)]);
    expect(first && verifies(jwk, message, first)).toBe(true);
    expect(second && verifies(jwk, message, second)).toBe(true);
  });

  it("another key's signature does not verify", async () => {
    const [signer, other] = [create(), create()];
    expect(other.keyId).not.toBe(signer.keyId);
    expect(verifies(await signer.publicKey(), message, await other.sign(message))).toBe(false);
  });
});

const macSigners: Subject<MacSigner>[] = [
  {
    name: 'KmsMacSigner (fake KMS)',
    create: () => {
      const fake = fakeKms();
      return new KmsMacSigner(fake.client, fake.createKey('HMAC_256'));
    },
  },
  { name: 'LocalMacSigner', create: () => new LocalMacSigner(randomBytes(32)) },
];

describe.each(macSigners)('MacSigner contract: $name', ({ create }) => {
  const message = bytes('{"quote_id":"q_01","total":"99.00"}');

  it('a generated 32-byte MAC verifies, and the same message gives the same MAC', async () => {
    const signer = create();
    const mac = await signer.generateMac(message);
    expect(mac).toHaveLength(32);
    expect(await signer.verifyMac(message, mac)).toBe(true);
    expect(Buffer.from(await signer.generateMac(message))).toEqual(Buffer.from(mac));
  });

  it('a tampered message or MAC does not verify', async () => {
    const signer = create();
    const mac = await signer.generateMac(message);
    expect(await signer.verifyMac(flipByte(message, 0), mac)).toBe(false);
    expect(await signer.verifyMac(message, flipByte(mac, 31))).toBe(false);
  });

  it('a MAC of the wrong length does not verify', async () => {
    const signer = create();
    const mac = await signer.generateMac(message);
    expect(await signer.verifyMac(message, mac.subarray(0, 31))).toBe(false);
    expect(await signer.verifyMac(message, new Uint8Array([...mac, 0]))).toBe(false);
    expect(await signer.verifyMac(message, new Uint8Array(0))).toBe(false);
  });

  it("another key's MAC does not verify", async () => {
    const [signer, other] = [create(), create()];
    expect(await signer.verifyMac(message, await other.generateMac(message))).toBe(false);
  });

  it('accepts messages of 1..4096 bytes and throws RangeError outside (the KMS limit)', async () => {
    const signer = create();
    const largest = randomBytes(4096);
    expect(await signer.verifyMac(largest, await signer.generateMac(largest))).toBe(true);
    await expect(signer.generateMac(randomBytes(4097))).rejects.toThrow(RangeError);
    await expect(signer.generateMac(new Uint8Array(0))).rejects.toThrow(RangeError);
    await expect(signer.verifyMac(randomBytes(4097), new Uint8Array(32))).rejects.toThrow(RangeError);
  });
});

interface CipherSubject extends Subject<DataCipher> {
  readonly prefix: string;
}

const ciphers: CipherSubject[] = [
  {
    name: 'KmsDataCipher (fake KMS)',
    prefix: 'kms:v1:',
    create: () => {
      const fake = fakeKms();
      return new KmsDataCipher(fake.client, fake.createKey('SYMMETRIC_DEFAULT'));
    },
  },
  { name: 'LocalDataCipher', prefix: 'local:v1:', create: () => new LocalDataCipher(randomBytes(32)) },
];

/** Splits `<scheme>:v1:<base64>` and rebuilds it with the payload changed. */
const withPayload = (ciphertext: string, change: (payload: Uint8Array) => Uint8Array): string => {
  const at = ciphertext.lastIndexOf(':') + 1;
  const payload = Buffer.from(ciphertext.slice(at), 'base64');
  return `${ciphertext.slice(0, at)}${Buffer.from(change(payload)).toString('base64')}`;
};

describe.each(ciphers)('DataCipher contract: $name', ({ create, prefix }) => {
  const secret = bytes('whsec_c2VjcmV0LWJ5dGVz');
  const context = { purpose: 'endpoint-secret', endpoint_id: 'ep_01' };

  it('roundtrips, in its versioned format, with the context keys in any order', async () => {
    const cipher = create();
    const ciphertext = await cipher.encrypt(secret, context);
    expect(ciphertext.startsWith(prefix)).toBe(true);
    expect(Buffer.from(await cipher.decrypt(ciphertext, context))).toEqual(Buffer.from(secret));
    const reordered = { endpoint_id: 'ep_01', purpose: 'endpoint-secret' };
    expect(Buffer.from(await cipher.decrypt(ciphertext, reordered))).toEqual(Buffer.from(secret));
  });

  it('roundtrips an empty plaintext and an empty context', async () => {
    const cipher = create();
    expect(await cipher.decrypt(await cipher.encrypt(new Uint8Array(0), context), context)).toHaveLength(0);
    const plain = await cipher.decrypt(await cipher.encrypt(secret, {}), {});
    expect(Buffer.from(plain)).toEqual(Buffer.from(secret));
  });

  it('encrypts the same plaintext differently each time', async () => {
    const cipher = create();
    expect(await cipher.encrypt(secret, context)).not.toBe(await cipher.encrypt(secret, context));
  });

  it.each([
    ['a changed value', { ...context, endpoint_id: 'ep_02' }],
    ['an extra key', { ...context, tenant: 't1' }],
    ['a missing key', { purpose: 'endpoint-secret' }],
    ['no context', {}],
  ])('refuses to decrypt with %s in the context (IntegrityError)', async (_label, otherContext) => {
    const cipher = create();
    const ciphertext = await cipher.encrypt(secret, context);
    await expect(cipher.decrypt(ciphertext, otherContext)).rejects.toThrow(IntegrityError);
  });

  it('refuses a tampered ciphertext (IntegrityError)', async () => {
    const cipher = create();
    const ciphertext = await cipher.encrypt(secret, context);
    for (const index of [0, 20, -1]) {
      const tampered = withPayload(ciphertext, (payload) =>
        flipByte(payload, index < 0 ? payload.byteLength + index : index),
      );
      await expect(cipher.decrypt(tampered, context)).rejects.toThrow(IntegrityError);
    }
    const truncated = withPayload(ciphertext, (payload) => payload.subarray(0, payload.byteLength - 1));
    await expect(cipher.decrypt(truncated, context)).rejects.toThrow(IntegrityError);
  });

  it('refuses an unknown prefix or a malformed payload (IntegrityError)', async () => {
    const cipher = create();
    const ciphertext = await cipher.encrypt(secret, context);
    const payload = ciphertext.slice(prefix.length);
    for (const candidate of [
      `xyz:v1:${payload}`,
      `${prefix.replace('v1', 'v2')}${payload}`,
      prefix === 'kms:v1:' ? `local:v1:${payload}` : `kms:v1:${payload}`,
      payload,
      prefix,
      `${prefix}not base64!`,
      '',
    ]) {
      await expect(cipher.decrypt(candidate, context)).rejects.toThrow(IntegrityError);
    }
  });

  it('throws RangeError for a plaintext above 4095 bytes (the KMS limit)', async () => {
    const cipher = create();
    const largest = randomBytes(4095);
    expect(Buffer.from(await cipher.decrypt(await cipher.encrypt(largest, context), context))).toEqual(
      largest,
    );
    await expect(cipher.encrypt(randomBytes(4096), context)).rejects.toThrow(RangeError);
  });
});
