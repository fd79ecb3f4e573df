import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OPERATION_SCHEMAS } from '../../../functions/schemas/operations';
import {
  confirmationResponseSchema,
  confirmEventSchema,
  createEndpointSchema,
  dpopJwkSchema,
  endpointResponseSchema,
  eventHistoryResponseSchema,
  updateEndpointSchema,
} from '../../../functions/schemas/webhooks';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const ecPublic = ec.publicKey.export({ format: 'jwk' });
const edPublic = ed.publicKey.export({ format: 'jwk' });
const ecPrivate = ec.privateKey.export({ format: 'jwk' });

const EVENT_ID = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7E';
const ENDPOINT_ID = 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7F';

const messages = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => (result.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`);

describe('dpopJwkSchema', () => {
  it('accepts public P-256 and Ed25519 keys, with alg, use and kid', () => {
    expect(dpopJwkSchema.safeParse(ecPublic).success).toBe(true);
    expect(dpopJwkSchema.safeParse(edPublic).success).toBe(true);
    expect(dpopJwkSchema.safeParse({ ...ecPublic, alg: 'ES256', use: 'sig', kid: 'partner-1' }).success).toBe(
      true,
    );
  });

  it('refuses a private key, naming d', () => {
    const result = dpopJwkSchema.safeParse(ecPrivate);
    expect(result.success).toBe(false);
    expect(messages(result)).toEqual(['d: a private key is never accepted: register the public key only']);
  });

  it('refuses unknown members, other curves, bad coordinates, mismatched alg and invalid points', () => {
    expect(messages(dpopJwkSchema.safeParse({ ...ecPublic, x5c: ['x'] }))[0]).toMatch(/x5c/);
    expect(messages(dpopJwkSchema.safeParse({ ...ecPublic, crv: 'P-384' }))[0]).toMatch(/^crv:/);
    expect(messages(dpopJwkSchema.safeParse({ ...ecPublic, crv: 'Ed25519' }))).toEqual([
      'crv: an EC key must be on P-256',
    ]);
    expect(messages(dpopJwkSchema.safeParse({ ...ecPublic, x: 'short' }))[0]).toMatch(/^x:/);
    const { y: _y, ...noY } = ecPublic;
    expect(messages(dpopJwkSchema.safeParse(noY))).toEqual([
      'y: y must be 32 bytes in base64url without padding',
    ]);
    expect(messages(dpopJwkSchema.safeParse({ ...edPublic, alg: 'ES256' }))).toEqual([
      'alg: alg must be one of EdDSA, Ed25519 for this key',
    ]);
    expect(
      messages(dpopJwkSchema.safeParse({ kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) })),
    ).toEqual([': not a valid public key of its curve']);
    expect(dpopJwkSchema.safeParse({ ...ecPublic, kty: 'RSA' }).success).toBe(false);
  });

  it('is optional at registration and removable (null) in a PATCH, never null at registration', () => {
    const url = 'https://partner.example/webhooks/v1';
    expect(createEndpointSchema.safeParse({ url }).success).toBe(true);
    expect(createEndpointSchema.safeParse({ url, dpop_jwk: ecPublic }).success).toBe(true);
    expect(createEndpointSchema.safeParse({ url, dpop_jwk: null }).success).toBe(false);
    expect(createEndpointSchema.safeParse({ url, dpop_jwk: ecPrivate }).success).toBe(false);
    expect(updateEndpointSchema.safeParse({ dpop_jwk: edPublic }).success).toBe(true);
    expect(updateEndpointSchema.safeParse({ dpop_jwk: null }).success).toBe(true);
    expect(updateEndpointSchema.safeParse({ dpop_jwk: ecPrivate }).success).toBe(false);
  });

  it('shows the registered key and its thumbprint on the endpoint, never more', () => {
    const endpoint = {
      endpoint_id: ENDPOINT_ID,
      url: 'https://partner.example/webhooks/v1',
      topics: [],
      version: '2026-11-01',
      status: 'enabled',
      dpop_jwk: { kty: 'EC', crv: 'P-256', x: ecPublic.x, y: ecPublic.y },
      dpop_jkt: 'thumbprint',
      created_at: '2026-11-22T10:00:00.000Z',
      updated_at: '2026-11-22T10:00:00.000Z',
    };
    expect(endpointResponseSchema.safeParse(endpoint).success).toBe(true);
  });
});

describe('confirmEventSchema', () => {
  const valid = { event_id: EVENT_ID, outcome: 'accepted', reference: 'po-123/booked' };

  it('accepts each outcome and references of 1 to 200 characters, any script', () => {
    for (const outcome of ['accepted', 'rejected', 'failed']) {
      expect(confirmEventSchema.safeParse({ ...valid, outcome }).success).toBe(true);
    }
    for (const reference of ['x', 'r'.repeat(200), 'Überweisung 42 – ok ✓', '予約 #7']) {
      expect(confirmEventSchema.safeParse({ ...valid, reference }).success, reference).toBe(true);
    }
  });

  it('refuses other outcomes, bad ids, unknown fields and missing fields', () => {
    expect(confirmEventSchema.safeParse({ ...valid, outcome: 'done' }).success).toBe(false);
    expect(confirmEventSchema.safeParse({ ...valid, outcome: 'ACCEPTED' }).success).toBe(false);
    expect(confirmEventSchema.safeParse({ ...valid, event_id: 'evt 1' }).success).toBe(false);
    expect(confirmEventSchema.safeParse({ ...valid, event_id: 'e'.repeat(129) }).success).toBe(false);
    expect(confirmEventSchema.safeParse({ ...valid, extra: 1 }).success).toBe(false);
    for (const field of ['event_id', 'outcome', 'reference'] as const) {
      const { [field]: _removed, ...rest } = valid;
      expect(confirmEventSchema.safeParse(rest).success, field).toBe(false);
    }
  });

  it('refuses empty, oversized, control characters and lone surrogates in the reference', () => {
    for (const reference of [
      '',
      'r'.repeat(201),
      'a\nb',
      'a\tb',
      'a\u0000b',
      'a\u007fb',
      'a\u0085b',
      'a\ud800b',
      42,
    ]) {
      expect(confirmEventSchema.safeParse({ ...valid, reference }).success, JSON.stringify(reference)).toBe(
        false,
      );
    }
  });

  it('registers the operation: body, 201 response, idempotent, and an example the body schema accepts', () => {
    const entry = OPERATION_SCHEMAS.confirmEvent;
    expect(entry?.body).toBe(confirmEventSchema);
    expect(entry?.response.status).toBe(201);
    expect(entry?.response.schema).toBe(confirmationResponseSchema);
    expect(entry?.idempotent).toBe(true);
    expect(confirmEventSchema.safeParse(entry?.example).success).toBe(true);
    expect(entry?.errors).toEqual(expect.arrayContaining([400, 401, 404, 409, 422]));
  });

  it('answers and shows the confirmation in the event history', () => {
    const confirmation = { outcome: 'rejected', reference: 'r-1', confirmed_at: '2026-11-22T10:00:00.000Z' };
    expect(
      confirmationResponseSchema.safeParse({ event_id: EVENT_ID, endpoint_id: ENDPOINT_ID, ...confirmation })
        .success,
    ).toBe(true);
    const history = {
      event_id: EVENT_ID,
      envelope: null,
      deliveries: [{ endpoint_id: ENDPOINT_ID, status: 'delivered', attempts: [], confirmation }],
    };
    expect(eventHistoryResponseSchema.safeParse(history).success).toBe(true);
  });
});
