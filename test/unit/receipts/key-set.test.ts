import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LocalReceiptSigner } from '../../../functions/adapters/local/local-signing';
import { canonicalJson, type Json } from '../../../functions/domain/money/canonical';
import { keysOperation } from '../../../functions/handlers/operations/checkout';
import type { PutOnceOutcome } from '../../../functions/ports/object-store';
import { keySetObject, publishKeySet, receiptKeySet } from '../../../functions/usecases/receipts/key-set';
import { proxyEvent } from '../support/lambda';

const signer = () => new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);

describe('the receipt key set (C10)', () => {
  it('lists the key in use first, then every retired key, once per kid', async () => {
    const current = signer();
    const retired = [signer(), signer()];
    const set = await receiptKeySet(current, [...retired, retired[0] as LocalReceiptSigner]);
    expect(set.keys.map((key) => key.kid)).toEqual([current.keyId, ...retired.map((key) => key.keyId)]);
  });

  it('is served by GET /keys with the retired keys', async () => {
    const current = signer();
    const old = signer();
    const answer = await keysOperation(current, [old])({
      event: proxyEvent({ resource: '/keys' }),
      route: {
        method: 'GET',
        path: '/keys',
        function: 'api',
        operation: 'getKeys',
        auth: 'none',
        summary: '',
      },
      traceId: 'trc_test',
    });
    expect((answer.body as { keys: { kid: string }[] }).keys.map((key) => key.kid)).toEqual([
      current.keyId,
      old.keyId,
    ]);
  });

  it('is stored under the SHA-256 of its canonical JSON, once per distinct set', async () => {
    const current = signer();
    const stored = new Map<string, Uint8Array>();
    const objects = {
      putOnce: async (key: string, body: Uint8Array): Promise<PutOnceOutcome> => {
        if (stored.has(key)) return 'exists';
        stored.set(key, body);
        return 'created';
      },
    };
    const first = await publishKeySet(objects, current, []);
    const again = await publishKeySet(objects, current, []);
    expect(first.outcome).toBe('created');
    expect(again).toEqual({ key: first.key, outcome: 'exists' });
    const body = Buffer.from(stored.get(first.key) ?? new Uint8Array());
    const jwks = await receiptKeySet(current, []);
    expect(body.toString('utf8')).toBe(canonicalJson(jwks as unknown as Json));
    expect(first.key).toBe(`keys/jwks-${createHash('sha256').update(body).digest('hex')}.json`);
    expect(keySetObject(jwks).key).toBe(first.key);
    const withRetired = await publishKeySet(objects, signer(), [current]);
    expect(withRetired.key).not.toBe(first.key);
  });
});
