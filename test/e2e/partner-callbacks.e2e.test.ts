/**
 * Partner callbacks end to end on the local stack (real DynamoDB Local, the gateway, the webhooks function):
 * `POST /partner/confirmations` records an outcome once however often and however concurrently it is retried,
 * with a required Idempotency-Key; an endpoint registered with a DPoP key needs a valid proof on each callback,
 * and every refused proof changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { credentialHash } from '../../functions/domain/webhooks/dpop';
import { confirmationResponseSchema, eventHistoryResponseSchema } from '../../functions/schemas/webhooks';
import { startDemoStack } from '../support/demo-stack';
import { eventually } from '../support/engines';
import { startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_partner_callbacks_0123456789';
const ADMIN = 'adm_partner_callbacks_0123456789';

let stack: LocalStack;
let receiver: TestReceiver;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

const call = async (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> => {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
};

const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, { authorization: `Bearer ${ADMIN}` }, body);

interface Partner {
  readonly endpointId: string;
  readonly partnerKey: string;
}

const register = async (
  extra: Record<string, unknown> = {},
): Promise<Partner & { readonly answer: Answer }> => {
  const answer = await admin('POST', '/webhooks/endpoints', { url: receiver.baseUrl, ...extra });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return {
    endpointId: String(answer.body.endpoint_id),
    partnerKey: String(answer.body.partner_key),
    answer,
  };
};

const publish = async (payoutId: string): Promise<string> => {
  const answer = await admin('POST', '/webhooks/events', {
    type: 'payout.processed',
    producer: 'payments',
    data: { payout_id: payoutId, status: 'paid', amount_minor: 1250, currency: 'EUR' },
  });
  expect(answer.status).toBe(202);
  return String(answer.body.event_id);
};

/** Waits until the event has a delivery record for each of the endpoints (fan-out ran). */
const fannedOut = (eventId: string, endpointIds: readonly string[]) =>
  eventually(async () => {
    const history = await admin('GET', `/webhooks/events/${eventId}`);
    const deliveries = (history.body.deliveries ?? []) as { endpoint_id: string }[];
    return endpointIds.every((id) => deliveries.some((delivery) => delivery.endpoint_id === id))
      ? true
      : undefined;
  });

const confirm = (
  partner: Partner,
  body: unknown,
  options: { readonly key?: string; readonly dpop?: string; readonly headers?: Record<string, string> } = {},
) =>
  call(
    'POST',
    '/partner/confirmations',
    {
      authorization: `Bearer ${partner.partnerKey}`,
      ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
      ...(options.dpop === undefined ? {} : { dpop: options.dpop }),
      ...options.headers,
    },
    body,
  );

/** The delivery record as stored (the source of truth of the confirmation). */
const storedDelivery = async (eventId: string, endpointId: string) => {
  const result = await stack.clients.documents.send(
    new GetCommand({
      TableName: stack.resources.tableNames.deliveries,
      Key: { event_id: eventId, endpoint_id: endpointId },
      ConsistentRead: true,
    }),
  );
  return result.Item as Record<string, unknown> | undefined;
};

const historyConfirmation = async (eventId: string, endpointId: string) => {
  const history = await admin('GET', `/webhooks/events/${eventId}`);
  const parsed = eventHistoryResponseSchema.parse(history.body);
  return parsed.deliveries.find((delivery) => delivery.endpoint_id === endpointId)?.confirmation;
};

const expectC6 = (answer: Answer, status: number, error: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body).toMatchObject({
    error,
    error_description: expect.any(String),
    trace_id: expect.any(String),
  });
  expect(answer.headers.get('x-trace-id')).toBe(answer.body.trace_id);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
};

/** Retries a 409 request_in_progress (as a client following Retry-After would) until another answer. */
const settle = async (first: Answer, retry: () => Promise<Answer>): Promise<Answer> => {
  let answer = first;
  while (answer.status === 409 && answer.body.error === 'request_in_progress') {
    expect(answer.headers.get('retry-after')).toBe('1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer = await retry();
  }
  return answer;
};

let plain: Partner;
let outsider: Partner;
let events: string[] = [];

beforeAll(async () => {
  stack = await startDemoStack({ apiKey: API_KEY, adminToken: ADMIN, streamPollIntervalMs: 50 });
  receiver = await startReceiver();
  plain = await register({ topics: ['payout'] });
  // Subscribed to catalog events only: payout events are never delivered to it.
  outsider = await register({ topics: ['catalog'] });
  events = await Promise.all(['po_c1', 'po_c2', 'po_c3', 'po_c4'].map(publish));
  for (const eventId of events) await fannedOut(eventId, [plain.endpointId]);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

describe('POST /partner/confirmations: the outcome happens once', () => {
  it('20 concurrent calls with one Idempotency-Key produce one confirmation and one answer', async () => {
    const eventId = events[0] as string;
    const body = { event_id: eventId, outcome: 'accepted', reference: 'po_c1/booked' };
    const key = `confirm-${randomUUID()}`;
    const send = () => confirm(plain, body, { key });
    const first = await Promise.all(Array.from({ length: 20 }, send));
    for (const answer of first) {
      // Every answer is the 201 or a 409 request_in_progress (the first request still running).
      if (answer.status !== 201) expectC6(answer, 409, 'request_in_progress');
    }
    expect(first.some((answer) => answer.status === 201)).toBe(true);
    const settled = await Promise.all(first.map((answer) => settle(answer, send)));
    const bodies = new Set(settled.map((answer) => JSON.stringify(answer.body)));
    expect(settled.map((answer) => answer.status)).toEqual(Array(20).fill(201));
    expect(bodies.size).toBe(1);
    const confirmation = confirmationResponseSchema.parse(settled[0]?.body);
    expect(confirmation).toMatchObject({
      event_id: eventId,
      endpoint_id: plain.endpointId,
      outcome: 'accepted',
      reference: 'po_c1/booked',
    });
    // Exactly one run wrote it: the others are the stored answer, replayed.
    expect(settled.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);

    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(settled[0]?.body);

    const stored = await storedDelivery(eventId, plain.endpointId);
    expect(stored?.confirmation).toMatchObject({
      outcome: 'accepted',
      reference: 'po_c1/booked',
      confirmed_at: confirmation.confirmed_at,
    });
    expect(await historyConfirmation(eventId, plain.endpointId)).toEqual({
      outcome: 'accepted',
      reference: 'po_c1/booked',
      confirmed_at: confirmation.confirmed_at,
    });
  });

  it('20 concurrent confirmations with different keys: one is recorded, the others answer 409 conflict with it', async () => {
    const eventId = events[1] as string;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        confirm(
          plain,
          {
            event_id: eventId,
            outcome: index % 2 === 0 ? 'rejected' : 'failed',
            reference: `attempt-${index}`,
          },
          { key: `conflict-${index}-${randomUUID()}` },
        ),
      ),
    );
    const created = answers.filter((answer) => answer.status === 201);
    expect(created).toHaveLength(1);
    const winner = created[0]?.body;
    for (const answer of answers.filter((candidate) => candidate.status !== 201)) {
      expectC6(answer, 409, 'conflict');
      expect(answer.body.confirmation).toEqual(winner);
    }
    const stored = await storedDelivery(eventId, plain.endpointId);
    expect(stored?.confirmation).toMatchObject({ outcome: winner?.outcome, reference: winner?.reference });
  });

  it('the same key with another body is 422; a missing key is 400; both store nothing', async () => {
    const eventId = events[2] as string;
    const missing = await confirm(plain, { event_id: eventId, outcome: 'accepted', reference: 'r-1' });
    expectC6(missing, 400, 'invalid_request');
    expect(String(missing.body.error_description)).toMatch(/Idempotency-Key/);
    const empty = await confirm(
      plain,
      { event_id: eventId, outcome: 'accepted', reference: 'r-1' },
      { key: '' },
    );
    expectC6(empty, 400, 'invalid_request');
    expect((await storedDelivery(eventId, plain.endpointId))?.confirmation).toBeUndefined();

    const key = `reuse-${randomUUID()}`;
    const first = await confirm(plain, { event_id: eventId, outcome: 'accepted', reference: 'r-1' }, { key });
    expect(first.status).toBe(201);
    const other = await confirm(plain, { event_id: eventId, outcome: 'rejected', reference: 'r-1' }, { key });
    expectC6(other, 422, 'idempotency_key_reused');
    expect((await storedDelivery(eventId, plain.endpointId))?.confirmation).toMatchObject({
      outcome: 'accepted',
    });
  });

  it('an event the partner never received is 404; a bad body is 400; no partner key is 401', async () => {
    const unknown = await confirm(
      plain,
      { event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7E', outcome: 'accepted', reference: 'x' },
      { key: `unknown-${randomUUID()}` },
    );
    expectC6(unknown, 404, 'not_found');
    // A real event, delivered to another endpoint but not to this partner's.
    const elsewhere = await confirm(
      outsider,
      { event_id: events[3], outcome: 'accepted', reference: 'x' },
      { key: `elsewhere-${randomUUID()}` },
    );
    expectC6(elsewhere, 404, 'not_found');
    expect(await storedDelivery(events[3] as string, outsider.endpointId)).toBeUndefined();

    const invalid = await confirm(
      plain,
      { event_id: events[3], outcome: 'done', reference: 'a\u0000b' },
      { key: `invalid-${randomUUID()}` },
    );
    expectC6(invalid, 400, 'invalid_request');
    const anonymous = await call(
      'POST',
      '/partner/confirmations',
      { 'idempotency-key': 'k-1' },
      { event_id: events[3], outcome: 'accepted', reference: 'x' },
    );
    expectC6(anonymous, 401, 'unauthorized');
    expect((await storedDelivery(events[3] as string, plain.endpointId))?.confirmation).toBeUndefined();
  });
});

describe('DPoP (RFC 9449) on partner callbacks', () => {
  interface ProofKey {
    readonly privateKey: CryptoKey;
    readonly jwk: JWK;
    readonly alg: 'ES256' | 'EdDSA';
  }
  const proofKey = async (alg: 'ES256' | 'EdDSA'): Promise<ProofKey> => {
    const pair = await generateKeyPair(alg, { extractable: true });
    return { privateKey: pair.privateKey, jwk: await exportJWK(pair.publicKey), alg };
  };
  const htu = () => `https://${new URL(stack.url).host}/partner/confirmations`;
  const proof = (
    key: ProofKey,
    options: { readonly claims?: Record<string, unknown>; readonly jwk?: JWK } = {},
  ): Promise<string> =>
    new SignJWT({
      htm: 'POST',
      htu: htu(),
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
      // Bound to the partner key it comes with (required).
      ath: credentialHash(bound.partnerKey),
      ...options.claims,
    })
      .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: options.jwk ?? key.jwk })
      .sign(key.privateKey);

  let ecKey: ProofKey;
  let bound: Partner;
  let dpopEvents: string[] = [];

  beforeAll(async () => {
    ecKey = await proofKey('ES256');
    const registered = await register({
      topics: ['payout'],
      dpop_jwk: { ...ecKey.jwk, kid: 'partner-key-1' },
    });
    bound = registered;
    expect(registered.answer.body.dpop_jwk).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: ecKey.jwk.x,
      y: ecKey.jwk.y,
    });
    expect(registered.answer.body.dpop_jkt).toBe(await calculateJwkThumbprint(ecKey.jwk));
    dpopEvents = await Promise.all(['po_d1', 'po_d2', 'po_d3'].map(publish));
    for (const eventId of dpopEvents) await fannedOut(eventId, [bound.endpointId]);
  }, 60_000);

  const expectDpopRefusal = (answer: Answer) => {
    expectC6(answer, 401, 'unauthorized');
    expect(answer.headers.get('www-authenticate')).toMatch(
      /^DPoP error="invalid_dpop_proof", error_description="[^"]+", algs="ES256"$/,
    );
  };

  it('refuses registering a private key', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    const refused = await admin('POST', '/webhooks/endpoints', {
      url: receiver.baseUrl,
      dpop_jwk: await exportJWK(pair.privateKey),
    });
    expectC6(refused, 400, 'invalid_request');
    expect(String(refused.body.error_description)).toMatch(
      /\$\.dpop_jwk\.d: a private key is never accepted/,
    );
  });

  it('a missing proof, another key, a stale iat and a replayed jti are each refused with 401 and change nothing', async () => {
    const eventId = dpopEvents[0] as string;
    const body = { event_id: eventId, outcome: 'accepted', reference: 'dpop-1' };
    // One Idempotency-Key throughout: had a refused request stored anything, the valid one would be answered
    // from it (or refused as a reuse) instead of confirming.
    const key = `dpop-${randomUUID()}`;
    const otherKey = await proofKey('ES256');

    expectDpopRefusal(await confirm(bound, body, { key }));
    // Signed by another key: carrying that key, or claiming the registered one.
    expectDpopRefusal(await confirm(bound, body, { key, dpop: await proof(otherKey) }));
    expectDpopRefusal(await confirm(bound, body, { key, dpop: await proof(otherKey, { jwk: ecKey.jwk }) }));
    const stale = await proof(ecKey, { claims: { iat: Math.floor(Date.now() / 1000) - 120 } });
    expectDpopRefusal(await confirm(bound, body, { key, dpop: stale }));
    const future = await proof(ecKey, { claims: { iat: Math.floor(Date.now() / 1000) + 120 } });
    expectDpopRefusal(await confirm(bound, body, { key, dpop: future }));
    const elsewhere = await proof(ecKey, { claims: { htu: `${htu()}/x` } });
    expectDpopRefusal(await confirm(bound, body, { key, dpop: elsewhere }));
    const wrongMethod = await proof(ecKey, { claims: { htm: 'GET' } });
    expectDpopRefusal(await confirm(bound, body, { key, dpop: wrongMethod }));
    // A proof not bound to this partner key (no ath, or another key's) is refused too.
    expectDpopRefusal(
      await confirm(bound, body, { key, dpop: await proof(ecKey, { claims: { ath: undefined } }) }),
    );
    const otherAth = await proof(ecKey, { claims: { ath: credentialHash('pk_someone_else') } });
    expectDpopRefusal(await confirm(bound, body, { key, dpop: otherAth }));

    expect((await storedDelivery(eventId, bound.endpointId))?.confirmation).toBeUndefined();
    expect(await historyConfirmation(eventId, bound.endpointId)).toBeUndefined();

    const valid = await proof(ecKey);
    const accepted = await confirm(bound, body, { key, dpop: valid });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.headers.get('idempotent-replayed')).toBeNull();
    expect(accepted.body).toMatchObject({
      event_id: eventId,
      endpoint_id: bound.endpointId,
      outcome: 'accepted',
    });

    // The same proof again (same jti): refused, even for the request it was made for, and for another event.
    expectDpopRefusal(await confirm(bound, body, { key, dpop: valid }));
    const secondEvent = dpopEvents[1] as string;
    const replayed = await confirm(
      bound,
      { event_id: secondEvent, outcome: 'rejected', reference: 'dpop-2' },
      { key: `dpop-${randomUUID()}`, dpop: valid },
    );
    expectDpopRefusal(replayed);
    expect(replayed.headers.get('www-authenticate')).toContain('jti was already used');
    expect((await storedDelivery(secondEvent, bound.endpointId))?.confirmation).toBeUndefined();

    // A retry of the accepted request with a fresh proof gets the stored answer.
    const retried = await confirm(bound, body, { key, dpop: await proof(ecKey) });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body).toEqual(accepted.body);
    expect((await storedDelivery(eventId, bound.endpointId))?.confirmation).toMatchObject({
      outcome: 'accepted',
      reference: 'dpop-1',
    });

    // The jti cache lives in the idempotency table, under its own prefix, with the table's TTL attribute.
    const cache = await stack.clients.documents.send(
      new ScanCommand({
        TableName: stack.resources.tableNames.idempotency,
        FilterExpression: 'begins_with(id, :prefix)',
        ExpressionAttributeValues: { ':prefix': 'dpop-jti#' },
        ConsistentRead: true,
      }),
    );
    expect(cache.Items?.length).toBe(2);
    for (const item of cache.Items ?? []) expect(item.expiration).toEqual(expect.any(Number));
  });

  it('X-Forwarded-Proto names the scheme of the htu; an Ed25519 key works as well', async () => {
    const eventId = dpopEvents[1] as string;
    const httpProof = await proof(ecKey, {
      claims: { htu: `http://${new URL(stack.url).host}/partner/confirmations` },
    });
    const answer = await confirm(
      bound,
      { event_id: eventId, outcome: 'failed', reference: 'dpop-http' },
      { key: `dpop-${randomUUID()}`, dpop: httpProof, headers: { 'x-forwarded-proto': 'http' } },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);

    const edKey = await proofKey('EdDSA');
    const patched = await admin('PATCH', `/webhooks/endpoints/${bound.endpointId}`, { dpop_jwk: edKey.jwk });
    expect(patched.status).toBe(200);
    expect(patched.body.dpop_jkt).toBe(await calculateJwkThumbprint(edKey.jwk));
    const thirdEvent = dpopEvents[2] as string;
    const body = { event_id: thirdEvent, outcome: 'accepted', reference: 'dpop-ed' };
    // The old key no longer works; the new one does.
    const old = await confirm(bound, body, { key: `dpop-${randomUUID()}`, dpop: await proof(ecKey) });
    expectC6(old, 401, 'unauthorized');
    expect(old.headers.get('www-authenticate')).toContain('algs="EdDSA Ed25519"');
    const ed = await confirm(bound, body, { key: `dpop-${randomUUID()}`, dpop: await proof(edKey) });
    expect(ed.status, JSON.stringify(ed.body)).toBe(201);

    // Removing the key: callbacks need no proof any more.
    const removed = await admin('PATCH', `/webhooks/endpoints/${bound.endpointId}`, { dpop_jwk: null });
    expect(removed.status).toBe(200);
    expect(removed.body.dpop_jwk).toBeUndefined();
    const again = await confirm(bound, body, { key: `dpop-${randomUUID()}` });
    expectC6(again, 409, 'conflict');
    expect(again.body.confirmation).toEqual(ed.body);
  });

  it('the partner GET routes (resync) stay bearer-only for an endpoint with a DPoP key', async () => {
    const key = await proofKey('ES256');
    const partner = await register({ topics: ['payout'], dpop_jwk: key.jwk });
    const events = await call('GET', '/partner/events', { authorization: `Bearer ${partner.partnerKey}` });
    expect(events.status).toBe(200);
  });
});
