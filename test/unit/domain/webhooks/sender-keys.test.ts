import { createHash, createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  asymmetricSignaturesOf,
  ed25519KeyOfSeed,
  ed25519Verify,
  jwkOf,
  nativeAsymmetricSignature,
  publishedKeysAt,
  type SenderKey,
  signingKeyAt,
  standardAsymmetricSignature,
} from '../../../../functions/domain/webhooks/sender-keys';

const seedOf = (label: string) => createHash('sha256').update(label).digest();
const keyAt = (kid: string, activates: string, created = activates): SenderKey => ({
  kid,
  public_jwk: ed25519KeyOfSeed(seedOf(kid)).publicJwk,
  created_at: created,
  activates_at: activates,
});
const DAY = 86_400_000;
const t = (iso: string) => new Date(iso);

describe('webhook signing keys (C33): which signs, which are published', () => {
  const first = keyAt('k1', '2026-11-01T00:00:00.000Z');
  const second = keyAt('k2', '2026-11-10T00:00:00.000Z', '2026-11-09T00:00:00.000Z');

  it('the newest activated key signs; a rotated key waits for its activation', () => {
    expect(signingKeyAt([], t('2026-11-05T00:00:00.000Z'))).toBeUndefined();
    expect(signingKeyAt([second, first], t('2026-11-09T12:00:00.000Z'))?.kid).toBe('k1');
    expect(signingKeyAt([second, first], t('2026-11-10T00:00:00.000Z'))?.kid).toBe('k2');
  });

  it('publishes a key from its rotation, and the superseded one until 7 days after its successor activated', () => {
    const kids = (at: string) => publishedKeysAt([second, first], t(at)).map((key) => key.kid);
    expect(kids('2026-11-09T12:00:00.000Z')).toEqual(['k1', 'k2']);
    expect(kids('2026-11-16T23:59:59.000Z')).toEqual(['k1', 'k2']);
    expect(kids('2026-11-17T00:00:00.000Z')).toEqual(['k2']);
    expect(
      publishedKeysAt([first, second], t('2026-11-12T00:00:00.000Z'), { overlapMs: DAY }).map((k) => k.kid),
    ).toEqual(['k2']);
  });

  it('an emergency rotation is never undone by an earlier, slower one activating later', () => {
    const slow = keyAt('k2', '2026-11-11T00:00:00.000Z', '2026-11-10T00:00:00.000Z');
    const emergency = { ...keyAt('k3', '2026-11-10T06:00:00.000Z', '2026-11-10T06:00:00.000Z') };
    const keys = [first, slow, emergency];
    expect(signingKeyAt(keys, t('2026-11-10T07:00:00.000Z'))?.kid).toBe('k3');
    expect(signingKeyAt(keys, t('2026-11-12T00:00:00.000Z'))?.kid).toBe('k3');
    // Both earlier keys stay listed for the overlap after k3 took over, then leave.
    expect(publishedKeysAt(keys, t('2026-11-12T00:00:00.000Z')).map((key) => key.kid)).toEqual([
      'k1',
      'k2',
      'k3',
    ]);
    expect(publishedKeysAt(keys, t('2026-11-17T06:00:00.000Z')).map((key) => key.kid)).toEqual(['k3']);
  });

  it('a rotation that retires the previous keys drops them from the JWKS as soon as it signs', () => {
    const retiring = { ...keyAt('k2', '2026-11-10T00:00:00.000Z'), retires_previous: true };
    expect(publishedKeysAt([first, retiring], t('2026-11-09T23:59:59.000Z')).map((key) => key.kid)).toEqual([
      'k1',
      'k2',
    ]);
    expect(publishedKeysAt([first, retiring], t('2026-11-10T00:00:00.000Z')).map((key) => key.kid)).toEqual([
      'k2',
    ]);
  });

  it('a JWKS entry is an OKP Ed25519 key with its kid, EdDSA, for signatures', () => {
    const jwk = jwkOf(first);
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: 'k1', alg: 'EdDSA', use: 'sig' });
    expect(Buffer.from(jwk.x, 'base64url')).toHaveLength(32);
  });
});

describe('Ed25519 signatures (RFC 8032)', () => {
  const { privateKey, publicJwk } = ed25519KeyOfSeed(seedOf('signer'));

  it('derives the RFC 8032 test vector 1 public key from its seed', () => {
    // RFC 8032 §7.1 TEST 1: the secret key and its public key.
    const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
    expect(Buffer.from(ed25519KeyOfSeed(seed).publicJwk.x, 'base64url').toString('hex')).toBe(
      'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    );
    // …and its signature of the empty message.
    const signature = standardAsymmetricSignature(ed25519KeyOfSeed(seed).privateKey, new Uint8Array());
    expect(Buffer.from(signature.slice(4), 'base64').toString('hex')).toBe(
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    );
  });

  it('signs the native canonical string (v1a=) and the Standard Webhooks content (v1a,), verifiable with the public JWK', () => {
    const native = nativeAsymmetricSignature(privateKey, 'canonical\nstring');
    const standard = standardAsymmetricSignature(privateKey, Buffer.from('id.1700000000.{}'));
    expect(native).toMatch(/^v1a=[A-Za-z0-9+/]{86}==$/);
    expect(standard).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const key = createPublicKey({ key: { ...publicJwk }, format: 'jwk' });
    expect(verify(null, Buffer.from('canonical\nstring'), key, Buffer.from(native.slice(4), 'base64'))).toBe(
      true,
    );
    const [fromHeader] = asymmetricSignaturesOf(`v1=AAAA ${standard}`);
    expect(ed25519Verify(publicJwk, Buffer.from('id.1700000000.{}'), fromHeader as string)).toBe(true);
    expect(ed25519Verify(publicJwk, Buffer.from('id.1700000000.{ }'), fromHeader as string)).toBe(false);
    expect(ed25519Verify(publicJwk, 'x', 'not base64!')).toBe(false);
    expect(ed25519Verify({ ...publicJwk, x: 'AAAA' }, 'x', fromHeader as string)).toBe(false);
  });
});
