/**
 * The one assembly of a request's signature headers (domain/webhooks/request-signing.ts): every pairing of scheme
 * and algorithm verifies with the receiver kit, with the right key material only, and carries exactly its
 * scheme's headers.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signedRequestHeaders, type WebhookSigner } from '../../../functions/domain/webhooks/request-signing';
import { secretBytes } from '../../../functions/domain/webhooks/secret';
import { ed25519KeyOfSeed, jwkOf } from '../../../functions/domain/webhooks/sender-keys';
import { verifyWebhook } from '../../../functions/receiver/verify';
import { verificationFailureOf } from '../../support/verification';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const ENDPOINT = 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7E';
const BODY = JSON.stringify({
  event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
  type: 'payout.processed',
  ts: NOW.toISOString(),
  tenant: 't1',
  version: '2026-11-01',
  attempt: 1,
  endpoint_id: ENDPOINT,
  data: { payout_id: 'po_1' },
});
const secretOf = () => `whsec_${randomBytes(32).toString('base64')}`;
const key = { kid: 'whk_1_test', ...ed25519KeyOfSeed(new Uint8Array(32).fill(3)) };
const jwk = jwkOf({ kid: key.kid, public_jwk: key.publicJwk, created_at: '', activates_at: '' });
const request = {
  id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
  at: NOW,
  path: '/hooks?x=1',
  body: Buffer.from(BODY),
};

/** The request as a receiver gets it: the signed body and path, the headers with the event id beside them. */
const received = (headers: Record<string, string>) => ({
  body: BODY,
  method: 'POST',
  path: '/hooks?x=1',
  headers: { ...headers, 'X-Event-Id': request.id },
  now: NOW,
});

describe('signedRequestHeaders', () => {
  it.each(['native', 'standard-webhooks'] as const)(
    'HMAC, %s: both secrets of a rotation verify, another does not',
    (scheme) => {
      const [newer, older] = [secretOf(), secretOf()];
      const signer: WebhookSigner = {
        algorithm: 'hmac-sha256',
        secrets: [secretBytes(newer), secretBytes(older)],
      };
      const headers = signedRequestHeaders(signer, scheme, request);
      expect(Object.keys(headers).sort()).toEqual(
        scheme === 'native'
          ? ['X-Signature', 'X-Timestamp']
          : ['webhook-id', 'webhook-signature', 'webhook-timestamp'],
      );
      const input = received(headers);
      for (const secret of [newer, older])
        expect(verifyWebhook({ ...input, secrets: [secret] }).event_id).toBe(request.id);
      expect(verificationFailureOf(() => verifyWebhook({ ...input, secrets: [secretOf()] }))).toBe(
        'signature_mismatch',
      );
      if (scheme === 'native')
        expect(
          verificationFailureOf(() => verifyWebhook({ ...input, path: '/hooks', secrets: [newer] })),
        ).toBe('signature_mismatch');
    },
  );

  it.each(['native', 'standard-webhooks'] as const)(
    'Ed25519, %s: names its key and verifies with its public key only',
    (scheme) => {
      const headers = signedRequestHeaders(
        { algorithm: 'ed25519', kid: key.kid, privateKey: key.privateKey },
        scheme,
        request,
      );
      expect(headers['X-Signature-Key-Id']).toBe(key.kid);
      expect(headers[scheme === 'native' ? 'X-Signature' : 'webhook-signature']).toMatch(
        scheme === 'native' ? /^v1a=/ : /^v1a,/,
      );
      const input = { ...received(headers), secrets: [], endpointId: ENDPOINT };
      expect(verifyWebhook({ ...input, publicKeys: [jwk] }).event_id).toBe(request.id);
      const other = jwkOf({
        kid: key.kid,
        public_jwk: ed25519KeyOfSeed(new Uint8Array(32).fill(4)).publicJwk,
        created_at: '',
        activates_at: '',
      });
      expect(verificationFailureOf(() => verifyWebhook({ ...input, publicKeys: [other] }))).toBe(
        'signature_mismatch',
      );
    },
  );

  it('refuses an HMAC signer without secrets, in either scheme', () => {
    for (const scheme of ['native', 'standard-webhooks'] as const)
      expect(() => signedRequestHeaders({ algorithm: 'hmac-sha256', secrets: [] }, scheme, request)).toThrow(
        'no_secret',
      );
  });
});
