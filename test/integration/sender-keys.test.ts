/**
 * The service's Ed25519 webhook signing keys (C33) on DynamoDB Local: concurrent first uses make one key, two
 * rotations racing for the next generation make one (the other is a conflict), the signer decrypts the active key
 * and its signatures verify against the published JWKS, and a rotated key takes over at its activation.
 */
import { createPublicKey, sign as ed25519, randomBytes, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoSenderKeyStore } from '../../functions/adapters/aws/sender-key-store';
import { LocalDataCipher } from '../../functions/adapters/local/local-signing';
import { ed25519KeyOfSeed } from '../../functions/domain/webhooks/sender-keys';
import {
  ensureSenderKey,
  KeyRotationConflictError,
  rotateSenderKey,
  senderJwks,
  senderKeySigner,
} from '../../functions/usecases/webhooks/sender-keys';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let store: DynamoSenderKeyStore;
let now = new Date('2026-11-26T12:00:00.000Z');
const cipher = new LocalDataCipher(randomBytes(32));
const ctx = () => ({
  clock: { now: () => now },
  senderKeys: store,
  cipher,
  randomBytes: (size: number) => new Uint8Array(randomBytes(size)),
});

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  store = new DynamoSenderKeyStore(clients.documents, resources.tableNames.senderKeys);
});

describe('webhook signing keys on DynamoDB', () => {
  it('makes one first key however many endpoints ask at once, its private half stored encrypted', async () => {
    const made = await Promise.all(Array.from({ length: 6 }, () => ensureSenderKey(ctx())));
    expect(new Set(made.map((key) => key.kid)).size).toBe(1);
    const [stored] = await store.list();
    expect(stored?.generation).toBe(1);
    expect(stored?.private_key_ciphertext).not.toContain(stored?.public_jwk.x ?? '');
    // Encrypted with the secrets key under its own key id: it opens to the seed of the published public half, and
    // not under another key's context.
    if (!stored) throw new Error('no key stored');
    const seed = await cipher.decrypt(stored.private_key_ciphertext, {
      purpose: 'webhook-sender-key',
      kid: stored.kid,
    });
    expect(ed25519KeyOfSeed(seed).publicJwk.x).toBe(stored.public_jwk.x);
    await expect(
      cipher.decrypt(stored.private_key_ciphertext, { purpose: 'webhook-sender-key', kid: 'whk_other' }),
    ).rejects.toThrow();
    expect(await ensureSenderKey(ctx())).toMatchObject({ kid: stored?.kid });
  });

  it('signs with the active key, verifiable against the JWKS; a rotation takes over at its activation', async () => {
    const signer = senderKeySigner(ctx(), 0);
    const sign = async () => {
      const key = await signer.current();
      if (!key) throw new Error('no key');
      return { kid: key.kid, signature: ed25519(null, Buffer.from('payload'), key.privateKey) };
    };
    const verifiedWith = async (signed: { kid: string; signature: Buffer }) => {
      const jwk = (await senderJwks(ctx())).keys.find((key) => key.kid === signed.kid);
      if (!jwk) return false;
      const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
      return verify(null, Buffer.from('payload'), key, signed.signature);
    };
    const before = await sign();
    expect(await verifiedWith(before)).toBe(true);

    // Two operators rotate at once: one new key, the other told so.
    const outcomes = await Promise.allSettled([rotateSenderKey(ctx()), rotateSenderKey(ctx())]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(KeyRotationConflictError);
    const rotated = (
      outcomes.find((outcome) => outcome.status === 'fulfilled') as PromiseFulfilledResult<{
        kid: string;
        activates_at: string;
        previous_kid?: string;
      }>
    ).value;
    expect(rotated.previous_kid).toBe(before.kid);
    expect(rotated.activates_at).toBe('2026-11-27T12:00:00.000Z');
    // Published at once, not signing yet.
    expect((await senderJwks(ctx())).keys.map((key) => key.kid)).toEqual([before.kid, rotated.kid]);
    expect((await sign()).kid).toBe(before.kid);
    now = new Date('2026-11-27T12:00:00.000Z');
    const after = await sign();
    expect(after.kid).toBe(rotated.kid);
    expect(await verifiedWith(after)).toBe(true);
    // The superseded key is listed for 7 days after the new one took over, then no more.
    now = new Date('2026-12-04T11:59:59.000Z');
    expect(await verifiedWith(before)).toBe(true);
    now = new Date('2026-12-04T12:00:00.000Z');
    expect(await verifiedWith(before)).toBe(false);
  });

  it('a first key made by a rotation signs at once; an emergency rotation retires the previous key at once', async () => {
    const resources = await provisionIsolated(clients);
    store = new DynamoSenderKeyStore(clients.documents, resources.tableNames.senderKeys);
    now = new Date('2026-12-10T00:00:00.000Z');
    const first = await rotateSenderKey(ctx());
    expect(first.activates_at).toBe(now.toISOString());
    expect((await senderKeySigner(ctx(), 0).current())?.kid).toBe(first.kid);
    const emergency = await rotateSenderKey(ctx(), { retirePrevious: true, activateInSeconds: 86_400 });
    expect(emergency).toMatchObject({ activates_at: now.toISOString(), previous_kid: first.kid });
    expect(emergency.previous_published_until).toBe(now.toISOString());
    expect((await senderJwks(ctx())).keys.map((key) => key.kid)).toEqual([emergency.kid]);
    expect((await senderKeySigner(ctx(), 0).current())?.kid).toBe(emergency.kid);
  });
});
