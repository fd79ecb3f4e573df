/**
 * The receiver kit's Ed25519 path (C33): the published Ed25519 vectors verify with their JWKS in both schemes,
 * through the kit and through `node:crypto` alone; a wrong key id, another key, a changed body or a non-canonical
 * signature are refused with the usual codes; the JWKS cache fetches again for an unknown key id, but not more
 * often than its refetch interval, and keeps its keys when a fetch fails.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ed25519KeyOfSeed,
  jwkOf,
  nativeAsymmetricSignature,
} from '../../../functions/domain/webhooks/sender-keys';
import { JwksCache, kidOf, type PublicJwk, verifyWebhook } from '../../../functions/receiver';
import { verificationFailureOf } from '../../support/verification';

const document = JSON.parse(
  readFileSync(new URL('../../../docs/webhook-signature-vectors.json', import.meta.url), 'utf8'),
) as {
  ed25519: {
    jwks: { keys: PublicJwk[] };
    vectors: {
      name: string;
      scheme: 'native' | 'standard-webhooks';
      kid: string;
      endpoint_id: string;
      body: string;
      signed_content: string;
      headers: Record<string, string>;
    }[];
  };
};
const { jwks, vectors } = document.ed25519;
const PATH_OF = (vector: (typeof vectors)[number]) => {
  // The native vectors sign C13's canonical string: its third line is the path.
  return vector.scheme === 'native'
    ? (vector.signed_content.split('\n')[2] as string)
    : '/webhooks/v1/catalog';
};
const nowOf = (vector: (typeof vectors)[number]) =>
  vector.scheme === 'native'
    ? new Date(vector.headers['X-Timestamp'] as string)
    : new Date(Number(vector.headers['webhook-timestamp']) * 1000);

describe('Ed25519 vectors (docs/webhook-signature-vectors.json)', () => {
  it('cover both schemes with one published key', () => {
    expect(new Set(vectors.map((vector) => vector.scheme))).toEqual(new Set(['native', 'standard-webhooks']));
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))(
    '%s verifies with node:crypto and the kit',
    (_name, vector) => {
      const jwk = jwks.keys.find((key) => key.kid === vector.headers['X-Signature-Key-Id']) as PublicJwk;
      const header = vector.headers['X-Signature'] ?? vector.headers['webhook-signature'] ?? '';
      const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
      expect(
        verify(null, Buffer.from(vector.signed_content, 'utf8'), key, Buffer.from(header.slice(4), 'base64')),
      ).toBe(true);
      if (vector.body.length === 0) return; // an empty body is no envelope: the kit refuses it after the signature
      const input = {
        body: vector.body,
        method: 'POST',
        path: PATH_OF(vector),
        headers: { ...vector.headers, 'X-Event-Id': 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C' },
        secrets: [],
        publicKeys: jwks.keys,
        endpointId: vector.endpoint_id,
        now: nowOf(vector),
      };
      expect(verifyWebhook(input).event_id).toBe('evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C');
      // Replayed to another endpoint's receiver: the signed envelope names the endpoint it was for.
      expect(
        verificationFailureOf(() => verifyWebhook({ ...input, endpointId: 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7Z' })),
      ).toBe('endpoint_mismatch');
      // Another key under the same id, a changed body, or no key of that id: refused.
      const other = jwkOf({
        kid: jwk.kid,
        public_jwk: ed25519KeyOfSeed(new Uint8Array(32).fill(7)).publicJwk,
        created_at: '',
        activates_at: '',
      });
      expect(verificationFailureOf(() => verifyWebhook({ ...input, publicKeys: [other] }))).toBe(
        'signature_mismatch',
      );
      expect(verificationFailureOf(() => verifyWebhook({ ...input, body: `${vector.body} ` }))).toBe(
        'signature_mismatch',
      );
      expect(
        verificationFailureOf(() =>
          verifyWebhook({ ...input, headers: { ...input.headers, 'X-Signature-Key-Id': 'whk_other' } }),
        ),
      ).toBe('signature_mismatch');
    },
  );

  it('refuses a v1a entry that is not canonical base64 of 64 bytes as a malformed header', () => {
    const vector = vectors.find((candidate) => candidate.scheme === 'native' && candidate.body.length > 0);
    if (!vector) throw new Error('no native vector');
    const input = {
      body: vector.body,
      method: 'POST',
      path: PATH_OF(vector),
      headers: {
        ...vector.headers,
        'X-Signature': 'v1a=AAAA',
        'X-Event-Id': 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
      },
      secrets: [],
      publicKeys: jwks.keys,
      endpointId: vector.endpoint_id,
      now: nowOf(vector),
    };
    expect(verificationFailureOf(() => verifyWebhook(input))).toBe('malformed_header');
    expect(() => verifyWebhook({ ...input, endpointId: undefined })).toThrow(/endpointId/);
    expect(kidOf(input.headers)).toBe(vector.kid);
    expect(() => verifyWebhook({ ...input, publicKeys: [] })).toThrow(RangeError);
  });
});

describe('JwksCache', () => {
  const key = (kid: string): PublicJwk => ({ kty: 'OKP', crv: 'Ed25519', x: 'x', kid });
  const world = () => {
    let now = 0;
    let served: PublicJwk[] = [key('a')];
    let failing = false;
    const fetches: number[] = [];
    const cache = new JwksCache({
      url: 'https://sender.example/webhooks/jwks.json',
      now: () => now,
      fetch: async () => {
        fetches.push(now);
        if (failing) return { ok: false, status: 503, json: async () => ({}) };
        return {
          ok: true,
          status: 200,
          json: async () => ({ keys: [...served, { kty: 'RSA', kid: 'ignored' }] }),
        };
      },
    });
    return {
      cache,
      fetches,
      at: (ms: number) => {
        now = ms;
      },
      serve: (keys: PublicJwk[]) => {
        served = keys;
      },
      fail: (value: boolean) => {
        failing = value;
      },
    };
  };

  it('fetches once, keeps the keys for their max age, and only Ed25519 keys', async () => {
    const w = world();
    expect((await w.cache.keysFor('a')).map((k) => k.kid)).toEqual(['a']);
    w.at(299_000);
    await w.cache.keysFor('a');
    expect(w.fetches).toEqual([0]);
    w.at(300_000);
    await w.cache.keysFor('a');
    expect(w.fetches).toEqual([0, 300_000]);
  });

  it('fetches again for an unknown key id, at most every 10 s, and keeps its keys when a fetch fails', async () => {
    const w = world();
    await w.cache.keysFor();
    w.serve([key('a'), key('b')]);
    w.at(5_000);
    expect((await w.cache.keysFor('b')).map((k) => k.kid)).toEqual(['a']); // too soon: no fetch
    w.at(10_000);
    expect((await w.cache.keysFor('b')).map((k) => k.kid)).toEqual(['a', 'b']);
    w.fail(true);
    w.at(400_000);
    expect((await w.cache.keysFor('b')).map((k) => k.kid)).toEqual(['a', 'b']);
    // Concurrent callers share one fetch.
    w.fail(false);
    w.at(800_000);
    await Promise.all([w.cache.keysFor('z'), w.cache.keysFor('z'), w.cache.keysFor('z')]);
    expect(w.fetches).toEqual([0, 10_000, 400_000, 800_000]);
    // Unconfirmed for more than a day (every fetch failing): the keys are dropped, not trusted forever.
    w.fail(true);
    w.at(800_000 + 86_400_000);
    expect(await w.cache.keysFor('a')).toEqual([key('a'), key('b')]);
    w.at(800_000 + 86_400_001 + 300_000);
    expect(await w.cache.keysFor('a')).toEqual([]);
  });

  it('refuses a native signature over a path with a line break, as the HMAC path does (one canonical string)', () => {
    const { privateKey, publicJwk } = ed25519KeyOfSeed(new Uint8Array(32).fill(7));
    const timestamp = new Date().toISOString();
    const vector = vectors.find((candidate) => candidate.scheme === 'native' && candidate.body.length > 0);
    if (!vector) throw new Error('no native vector');
    const { body } = vector;
    const eventId = (JSON.parse(body) as { event_id: string }).event_id;
    const path = '/webhooks/v1/catalog\nX';
    // What a signer without C13's guard would sign: the parts joined with their line break inside.
    const unguarded = `${timestamp}\nPOST\n${path}\n${createHash('sha256').update(body).digest('hex')}`;
    const input = {
      body,
      method: 'POST',
      path,
      headers: {
        'X-Timestamp': timestamp,
        'X-Signature': nativeAsymmetricSignature(privateKey, unguarded),
        'X-Signature-Key-Id': 'whk_line',
        'X-Event-Id': eventId,
      },
      secrets: [],
      publicKeys: [{ ...publicJwk, kid: 'whk_line' }],
      endpointId: vector.endpoint_id,
      now: new Date(),
    };
    expect(verificationFailureOf(() => verifyWebhook(input))).toBe('signature_mismatch');
    // The same signer over a clean path verifies: the refusal is the line break's.
    const clean = '/webhooks/v1/catalog';
    const signed = nativeAsymmetricSignature(
      privateKey,
      `${timestamp}\nPOST\n${clean}\n${createHash('sha256').update(body).digest('hex')}`,
    );
    expect(
      verifyWebhook({ ...input, path: clean, headers: { ...input.headers, 'X-Signature': signed } }).event_id,
    ).toBe(eventId);
  });
});
