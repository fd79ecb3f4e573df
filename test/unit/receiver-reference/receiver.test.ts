import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signedRequestHeaders } from '../../../functions/domain/webhooks/request-signing';
import { secretBytes } from '../../../functions/domain/webhooks/secret';
import {
  ed25519KeyOfSeed,
  nativeAsymmetricSignature,
  standardAsymmetricSignature,
} from '../../../functions/domain/webhooks/sender-keys';
import { canonicalString } from '../../../functions/domain/webhooks/signature';
import { standardSignedContent, unixSeconds } from '../../../functions/domain/webhooks/standard-webhooks';
import {
  EventInProgressError,
  EventTooOldError,
  type ReceivedEnvelope,
  type ReceiverStatus,
  type TransactItem,
} from '../../../functions/receiver';
import { JwksCache } from '../../../functions/receiver/jwks';
import { EffectRejectedError } from '../../../functions/receiver/reference/effect';
import {
  ackRequestSchema,
  createReferenceReceiver,
  type ReceiverStore,
  type ReferenceReceiverOptions,
  signedPathOf,
  UNAUTHORIZED_DESCRIPTION,
} from '../../../functions/receiver/reference/receiver';
import {
  ackEvent,
  deliveryEvent,
  envelopeOf,
  newEventId,
  newSecret,
  parsed,
  proxyEvent,
  ROUTE_TEMPLATES,
  recordingLogger,
  signedRequest,
  silentLogger,
  statusEvent,
} from './support';

const NOW = new Date('2026-11-01T12:00:00.000Z');
const SECRET = newSecret();

/** An in-memory stand-in for the kit's store: enough to check the HTTP mapping (DynamoDB is covered in integration). */
const memoryStore = () => {
  const seen = new Map<string, ReceiverStatus>();
  const applied: { envelope: ReceivedEnvelope; items: readonly TransactItem[] }[] = [];
  const store: ReceiverStore = {
    processTransactional: async (envelope, handler) => {
      const existing = seen.get(envelope.event_id);
      if (existing) return { kind: 'duplicate', status: existing };
      const items = await handler(envelope);
      const status: ReceiverStatus = {
        seen: true,
        status: 'processed',
        processed_at: NOW.toISOString(),
        handler_version: 'test-1',
      };
      seen.set(envelope.event_id, status);
      applied.push({ envelope, items });
      return { kind: 'processed', status };
    },
    status: async (eventId) => seen.get(eventId) ?? { seen: false },
    acknowledge: async (eventId, input) => {
      const existing = seen.get(eventId);
      if (existing) return existing;
      const status: ReceiverStatus = {
        seen: true,
        status: 'acknowledged',
        processed_at: NOW.toISOString(),
        handler_version: 'test-1',
        acknowledged_by: input.acknowledged_by,
        ...(input.note === undefined ? {} : { note: input.note }),
      };
      seen.set(eventId, status);
      return status;
    },
  };
  return { store, seen, applied };
};

const receiverWith = (options: Partial<ReferenceReceiverOptions> = {}) => {
  const memory = memoryStore();
  const receive = createReferenceReceiver({
    store: memory.store,
    secrets: [SECRET],
    clock: () => NOW,
    handlerVersion: 'test-1',
    tableName: 'receiver',
    logger: silentLogger,
    ...options,
  });
  return { ...memory, receive };
};

const signed = (overrides: Partial<Parameters<typeof deliveryEvent>[0]> = {}) =>
  deliveryEvent({
    envelope: envelopeOf({ ts: NOW.toISOString() }),
    secrets: [SECRET],
    timestamp: NOW.toISOString(),
    ...overrides,
  });

/** Every error answer: C6 body with exactly three fields, X-Trace-Id equal to trace_id, JSON content type. */
const expectC6 = (result: APIGatewayProxyResult, status: number, error: string) => {
  expect(result.statusCode).toBe(status);
  const body = parsed(result);
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'trace_id']);
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  expect(result.headers?.['X-Trace-Id']).toBe(body.trace_id);
  expect(result.headers?.['Content-Type']).toBe('application/json');
};

describe('POST /webhooks/v1/{topic}: every signing scheme the service sends (C13, C33)', () => {
  const seed = new Uint8Array(32).fill(9);
  const { privateKey, publicJwk } = ed25519KeyOfSeed(seed);
  const kid = 'whk_1_reference';
  const jwks = new JwksCache({
    url: 'https://sender.example/webhooks/jwks.json',
    fetch: async () => ({
      ok: true,
      status: 200,
      json: async () => ({ keys: [{ ...publicJwk, kid, alg: 'EdDSA', use: 'sig' }] }),
    }),
  });
  const deliveryWith = (headers: Record<string, string>, body: Buffer) =>
    proxyEvent({
      method: 'POST',
      path: '/webhooks/v1/catalog',
      resource: ROUTE_TEMPLATES.deliver,
      pathParameters: { topic: 'catalog' },
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    });

  it('accepts Standard Webhooks HMAC, Ed25519 native and Ed25519 Standard Webhooks deliveries', async () => {
    const endpointId = 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7E';
    const { receive, applied } = receiverWith({ jwks, endpointId });
    const bodyOf = (forEndpoint = endpointId) => {
      const envelope: Record<string, unknown> = {
        ...envelopeOf({ ts: NOW.toISOString() }),
        endpoint_id: forEndpoint,
      };
      return { id: String(envelope.event_id), body: Buffer.from(JSON.stringify(envelope)) };
    };
    const hmac = bodyOf();
    const standardHeaders = signedRequestHeaders(
      { algorithm: 'hmac-sha256', secrets: [secretBytes(SECRET)] },
      'standard-webhooks',
      {
        id: hmac.id,
        at: NOW,
        body: hmac.body,
        path: '/',
      },
    );
    expect((await receive(deliveryWith(standardHeaders, hmac.body))).statusCode).toBe(200);

    const native = bodyOf();
    const timestamp = NOW.toISOString();
    const canonical = canonicalString({
      timestamp,
      method: 'POST',
      path: '/webhooks/v1/catalog',
      body: native.body,
    });
    const nativeHeaders = {
      'X-Event-Id': native.id,
      'X-Timestamp': timestamp,
      'X-Signature': nativeAsymmetricSignature(privateKey, canonical),
      'X-Signature-Key-Id': kid,
    };
    expect((await receive(deliveryWith(nativeHeaders, native.body))).statusCode).toBe(200);

    const standard = bodyOf();
    const seconds = unixSeconds(NOW);
    const edHeaders = {
      'webhook-id': standard.id,
      'webhook-timestamp': seconds,
      'webhook-signature': standardAsymmetricSignature(
        privateKey,
        standardSignedContent({ id: standard.id, timestamp: seconds, body: standard.body }),
      ),
      'X-Signature-Key-Id': kid,
    };
    expect((await receive(deliveryWith(edHeaders, standard.body))).statusCode).toBe(200);
    expect(applied).toHaveLength(3);

    // A key id the JWKS does not hold is refused like any bad signature.
    const other = bodyOf();
    const forged = { ...nativeHeaders, 'X-Event-Id': other.id, 'X-Signature-Key-Id': 'whk_9_unknown' };
    expect((await receive(deliveryWith(forged, other.body))).statusCode).toBe(401);
    // A delivery signed for another endpoint (replayed by its receiver) is refused too.
    const elsewhere = bodyOf('ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7Z');
    const replayed = {
      ...nativeHeaders,
      'X-Event-Id': elsewhere.id,
      'X-Signature': nativeAsymmetricSignature(
        privateKey,
        canonicalString({ timestamp, method: 'POST', path: '/webhooks/v1/catalog', body: elsewhere.body }),
      ),
    };
    expect((await receive(deliveryWith(replayed, elsewhere.body))).statusCode).toBe(401);
  });
});

describe('POST /webhooks/v1/{topic}', () => {
  it('answers 200 processed and runs the counting effect on the path topic', async () => {
    const { receive, applied } = receiverWith();
    const event = signed({ topic: 'payout' });
    const result = await receive(event);
    expect(result.statusCode).toBe(200);
    expect(parsed(result)).toMatchObject({ status: 'processed', processed_at: NOW.toISOString() });
    expect(applied).toHaveLength(1);
    expect(applied[0]?.items.map((item) => Object.keys(item)[0])).toEqual(['Update', 'Put']);
    expect(applied[0]?.items[0]?.Update?.Key).toEqual({ event_id: 'effects#payout' });
  });

  it('answers a duplicate 200 without running the handler again', async () => {
    let runs = 0;
    const { receive } = receiverWith({
      handler: async () => {
        runs += 1;
        return [];
      },
    });
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    const first = await receive(signed({ envelope }));
    const second = await receive(signed({ envelope: { ...envelope, attempt: 2 } }));
    expect([parsed(first).status, parsed(second).status, runs]).toEqual(['processed', 'duplicate', 1]);
  });

  it('passes the envelope and the topic to an injected handler', async () => {
    const calls: { eventId: string; topic: string }[] = [];
    const { receive } = receiverWith({
      handler: async (envelope, context) => {
        calls.push({ eventId: envelope.event_id, topic: context.topic });
        return [];
      },
    });
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    await receive(signed({ envelope, topic: 'catalog' }));
    expect(calls).toEqual([{ eventId: envelope.event_id, topic: 'catalog' }]);
  });

  it('accepts a body API Gateway passed as text (not base64)', async () => {
    const { receive } = receiverWith();
    const request = signedRequest({
      envelope: envelopeOf({ ts: NOW.toISOString() }),
      secrets: [SECRET],
      timestamp: NOW.toISOString(),
    });
    const event = proxyEvent({
      method: 'POST',
      path: request.path,
      resource: ROUTE_TEMPLATES.deliver,
      pathParameters: { topic: 'catalog' },
      headers: request.headers,
      body: request.body,
      base64: false,
    });
    expect((await receive(event)).statusCode).toBe(200);
  });

  it('verifies against the path the sender signed: the stage prefix from requestContext.path', async () => {
    const { receive } = receiverWith();
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    const event = signed({ envelope, signedPath: '/live/webhooks/v1/catalog' });
    expect((await receive(event)).statusCode).toBe(200);
    const unstaged = { ...event, requestContext: { ...event.requestContext, path: '/webhooks/v1/catalog' } };
    expectC6(await receive(unstaged), 401, 'unauthorized');
  });

  it('refuses every verification failure with the same 401 body, and logs the reason', async () => {
    const { lines, logger } = recordingLogger();
    const { receive, applied } = receiverWith({ logger });
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    const base = { envelope, secrets: [SECRET], timestamp: NOW.toISOString(), traceId: 'trace-0000-refused' };
    const withoutHeader = (name: string): APIGatewayProxyEvent => {
      const event = signed(base);
      const headers = Object.fromEntries(Object.entries(event.headers).filter(([key]) => key !== name));
      return { ...event, headers };
    };
    const cases: [string, APIGatewayProxyEvent][] = [
      ['signature_mismatch', signed({ ...base, secrets: [newSecret()] })],
      [
        'timestamp_out_of_window',
        signed({ ...base, timestamp: new Date(NOW.getTime() + 301_000).toISOString() }),
      ],
      [
        'timestamp_out_of_window',
        signed({ ...base, timestamp: new Date(NOW.getTime() - 301_000).toISOString() }),
      ],
      ['event_id_mismatch', signed({ ...base, eventIdHeader: newEventId() })],
      ['missing_header', withoutHeader('X-Signature')],
      ['missing_header', withoutHeader('X-Timestamp')],
      ['missing_header', withoutHeader('X-Event-Id')],
      ['malformed_header', signed({ ...base, timestamp: '2026-11-01 12:00:00' })],
      ['malformed_body', signed({ ...base, body: '{"event_id":' })],
      ['malformed_body', signed({ ...base, body: JSON.stringify({ ...envelope, attempt: 0 }) })],
      ['signature_mismatch', signed({ ...base, sentBody: JSON.stringify({ ...envelope, tenant: 'other' }) })],
    ];
    const bodies = new Set<string>();
    for (const [, event] of cases) {
      const result = await receive(event);
      expectC6(result, 401, 'unauthorized');
      expect(parsed(result).error_description).toBe(UNAUTHORIZED_DESCRIPTION);
      expect(result.headers?.['Retry-After']).toBeUndefined();
      bodies.add(result.body);
    }
    expect(bodies.size).toBe(1);
    expect(
      lines.filter((line) => line.message === 'webhook refused').map((line) => line.fields.reason),
    ).toEqual(cases.map(([reason]) => reason));
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    expect(applied).toHaveLength(0);
  });

  it('answers 413 for a body over 256 KiB, base64 or text, before verifying', async () => {
    const { receive } = receiverWith();
    const big = randomBytes(256 * 1024 + 1);
    for (const base64 of [true, false]) {
      const event = proxyEvent({
        method: 'POST',
        path: '/webhooks/v1/catalog',
        resource: ROUTE_TEMPLATES.deliver,
        pathParameters: { topic: 'catalog' },
        body: base64 ? big : 'x'.repeat(256 * 1024 + 1),
        base64,
      });
      expectC6(await receive(event), 413, 'payload_too_large');
    }
  });

  it('accepts a body of exactly 256 KiB (the limit is inclusive)', async () => {
    const { receive } = receiverWith();
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    const json = JSON.stringify(envelope);
    const body = `${json}${' '.repeat(256 * 1024 - Buffer.byteLength(json))}`;
    expect(Buffer.byteLength(body)).toBe(256 * 1024);
    expect((await receive(signed({ envelope, body }))).statusCode).toBe(200);
  });

  it('maps EventTooOldError to 422 event_too_old', async () => {
    const { receive } = receiverWith({
      store: {
        ...memoryStore().store,
        processTransactional: async (envelope) => {
          throw new EventTooOldError(envelope.event_id, envelope.ts, NOW.toISOString());
        },
      },
    });
    expectC6(await receive(signed()), 422, 'event_too_old');
  });

  it('maps EventInProgressError to 409 request_in_progress with its Retry-After', async () => {
    const { receive } = receiverWith({
      store: {
        ...memoryStore().store,
        processTransactional: async (envelope) => {
          throw new EventInProgressError(envelope.event_id, 7);
        },
      },
    });
    const result = await receive(signed());
    expectC6(result, 409, 'request_in_progress');
    expect(result.headers?.['Retry-After']).toBe('7');
  });

  it('maps EffectRejectedError to its 4xx code with its description', async () => {
    const { receive, seen } = receiverWith({
      handler: async () => {
        throw new EffectRejectedError('invalid_state', 'the referenced payout was not found');
      },
    });
    const result = await receive(signed());
    expectC6(result, 422, 'invalid_state');
    expect(parsed(result).error_description).toBe('the referenced payout was not found');
    expect(seen.size).toBe(0);
  });

  it('answers a transient store failure 503 and any other 500, both with Retry-After and no internals', async () => {
    const failing = (error: Error) =>
      receiverWith({
        store: {
          ...memoryStore().store,
          processTransactional: async () => {
            throw error;
          },
        },
      }).receive;
    const throttled = Object.assign(new Error('Throughput exceeds the current capacity'), {
      name: 'ProvisionedThroughputExceededException',
    });
    const unavailable = await failing(throttled)(signed());
    expectC6(unavailable, 503, 'unavailable');
    expect(unavailable.headers?.['Retry-After']).toBe('5');
    const broken = await failing(new TypeError('cannot read properties of undefined (reading secret)'))(
      signed(),
    );
    expectC6(broken, 500, 'internal_error');
    expect(broken.headers?.['Retry-After']).toBe('5');
    expect(broken.body).not.toMatch(/TypeError|undefined|secret/);
  });

  it('answers 503 with Retry-After when the secrets cannot be loaded (never 401)', async () => {
    const { receive } = receiverWith({
      secrets: async () => {
        throw new Error('SSM unreachable');
      },
    });
    const result = await receive(signed());
    expectC6(result, 503, 'unavailable');
    expect(result.headers?.['Retry-After']).toBe('30');
  });

  it('answers 500 (retried by the sender) when a configured secret is not a whsec_ secret', async () => {
    const { receive } = receiverWith({ secrets: ['not-a-secret'] });
    const result = await receive(signed());
    expectC6(result, 500, 'internal_error');
    expect(result.headers?.['Retry-After']).toBe('60');
  });

  it('loads secrets per request from a loader (rotation without restart)', async () => {
    let secrets: readonly string[] = [newSecret()];
    const { receive } = receiverWith({ secrets: async () => secrets });
    expect((await receive(signed())).statusCode).toBe(401);
    secrets = [secrets[0] as string, SECRET];
    expect((await receive(signed())).statusCode).toBe(200);
  });

  it('needs a handler or a table name', () => {
    expect(() =>
      createReferenceReceiver({ store: memoryStore().store, secrets: [SECRET], handlerVersion: 'x' }),
    ).toThrow(/tableName/);
  });
});

describe('routing', () => {
  it('routes by path when the resource is not one of its templates (a proxy+ resource, a base path)', async () => {
    const { receive } = receiverWith();
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    const request = signedRequest({
      envelope,
      secrets: [SECRET],
      timestamp: NOW.toISOString(),
      signedPath: '/partner/webhooks/v1/catalog',
    });
    const event = proxyEvent({
      method: 'POST',
      path: '/partner/webhooks/v1/catalog',
      resource: '/{proxy+}',
      headers: request.headers,
      body: request.body,
    });
    expect((await receive(event)).statusCode).toBe(200);
    const status = await receive(
      proxyEvent({
        method: 'GET',
        path: `/partner/webhooks/status/${String(envelope.event_id)}`,
        resource: '/{proxy+}',
      }),
    );
    expect(parsed(status)).toMatchObject({ seen: true });
  });

  it('answers 404 for unknown paths and malformed topics or event ids', async () => {
    const { receive } = receiverWith();
    for (const event of [
      proxyEvent({ method: 'GET', path: '/' }),
      proxyEvent({ method: 'POST', path: '/webhooks/v2/catalog' }),
      proxyEvent({ method: 'POST', path: '/webhooks/v1/cata%2Flog' }),
      proxyEvent({ method: 'POST', path: '/webhooks/v1/%E0%A4%A' }),
      proxyEvent({
        method: 'POST',
        path: '/webhooks/v1/x',
        resource: ROUTE_TEMPLATES.deliver,
        pathParameters: { topic: 'a b' },
      }),
      statusEvent('effects#catalog'),
      statusEvent('x'.repeat(257)),
    ]) {
      expectC6(await receive(event), 404, 'not_found');
    }
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const { receive } = receiverWith();
    const cases: [APIGatewayProxyEvent, string][] = [
      [proxyEvent({ method: 'GET', path: '/webhooks/v1/catalog' }), 'POST'],
      [proxyEvent({ method: 'DELETE', path: '/webhooks/status/evt_1' }), 'GET'],
      [proxyEvent({ method: 'GET', path: '/webhooks/ack' }), 'POST'],
    ];
    for (const [event, allow] of cases) {
      const result = await receive(event);
      expectC6(result, 405, 'method_not_allowed');
      expect(result.headers?.Allow).toBe(allow);
    }
  });

  it('echoes a well-formed X-Trace-Id and replaces a malformed one', async () => {
    const { receive } = receiverWith();
    const given = await receive(
      proxyEvent({ method: 'GET', path: '/nowhere', headers: { 'x-trace-id': 'trace-abc-12345' } }),
    );
    expect(given.headers?.['X-Trace-Id']).toBe('trace-abc-12345');
    const replaced = await receive(
      proxyEvent({ method: 'GET', path: '/nowhere', headers: { 'X-Trace-Id': 'bad id\nwith newline' } }),
    );
    expect(replaced.headers?.['X-Trace-Id']).not.toContain('bad');
  });
});

describe('GET /webhooks/status/{event_id}', () => {
  it('shows seen false for an unknown event and the record for a processed one', async () => {
    const { receive } = receiverWith();
    const envelope = envelopeOf({ ts: NOW.toISOString() });
    const eventId = String(envelope.event_id);
    expect(parsed(await receive(statusEvent(eventId)))).toEqual({ event_id: eventId, seen: false });
    await receive(signed({ envelope }));
    expect(parsed(await receive(statusEvent(eventId)))).toEqual({
      event_id: eventId,
      seen: true,
      processed_at: NOW.toISOString(),
      handler_version: 'test-1',
      status: 'processed',
    });
  });

  it('answers 503 when the store is throttled', async () => {
    const { receive } = receiverWith({
      store: {
        ...memoryStore().store,
        status: async () => {
          throw Object.assign(new Error('slow down'), { name: 'ThrottlingException' });
        },
      },
    });
    expectC6(await receive(statusEvent(newEventId())), 503, 'unavailable');
  });
});

describe('POST /webhooks/ack', () => {
  it('records an acknowledgement and answers the status', async () => {
    const { receive } = receiverWith();
    const eventId = newEventId();
    const result = await receive(
      ackEvent({ event_id: eventId, acknowledged_by: 'ops', note: 'paid by hand' }),
    );
    expect(result.statusCode).toBe(200);
    expect(parsed(result)).toEqual({
      event_id: eventId,
      seen: true,
      processed_at: NOW.toISOString(),
      handler_version: 'test-1',
      status: 'acknowledged',
      acknowledged_by: 'ops',
      note: 'paid by hand',
    });
  });

  it('refuses invalid bodies with 400 invalid_request naming the fields', async () => {
    const { receive } = receiverWith();
    const cases: [APIGatewayProxyEvent, RegExp][] = [
      [ackEvent({ acknowledged_by: 'ops' }), /event_id/],
      [ackEvent({ event_id: newEventId() }), /acknowledged_by/],
      [ackEvent({ event_id: newEventId(), acknowledged_by: '   ' }), /acknowledged_by/],
      [ackEvent({ event_id: newEventId(), acknowledged_by: 'ops', note: 'x'.repeat(2001) }), /note/],
      [ackEvent({ event_id: newEventId(), acknowledged_by: 'ops', extra: 1 }), /\(body\)/],
      [ackEvent([1, 2]), /\(body\)/],
      [ackEvent(undefined, { raw: 'not json' }), /JSON/],
      [ackEvent(undefined, { raw: '' }), /JSON/],
    ];
    for (const [event, description] of cases) {
      const result = await receive(event);
      expectC6(result, 400, 'invalid_request');
      expect(parsed(result).error_description).toMatch(description);
    }
  });

  it('refuses a body that is not UTF-8', async () => {
    const { receive } = receiverWith();
    const event = proxyEvent({
      method: 'POST',
      path: '/webhooks/ack',
      resource: ROUTE_TEMPLATES.ack,
      body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expectC6(await receive(event), 400, 'invalid_request');
  });

  it('maps a live lock to 409 with Retry-After', async () => {
    const { receive } = receiverWith({
      store: {
        ...memoryStore().store,
        acknowledge: async (eventId) => {
          throw new EventInProgressError(eventId, 12);
        },
      },
    });
    const result = await receive(ackEvent({ event_id: newEventId(), acknowledged_by: 'ops' }));
    expectC6(result, 409, 'request_in_progress');
    expect(result.headers?.['Retry-After']).toBe('12');
  });

  it('has a schema matching the kit limits', () => {
    expect(
      ackRequestSchema.safeParse({ event_id: 'e'.repeat(256), acknowledged_by: 'a'.repeat(256) }).success,
    ).toBe(true);
    expect(ackRequestSchema.safeParse({ event_id: 'e'.repeat(257), acknowledged_by: 'a' }).success).toBe(
      false,
    );
    expect(ackRequestSchema.safeParse({ event_id: 'e', acknowledged_by: 'a'.repeat(257) }).success).toBe(
      false,
    );
  });
});

describe('signedPathOf', () => {
  it('prefers requestContext.path (stage or base path included) and rebuilds the query', () => {
    const event = proxyEvent({
      method: 'POST',
      path: '/webhooks/v1/catalog',
      contextPath: '/live/webhooks/v1/catalog',
      query: { tenant: ['tn_01'], tag: ['a b', 'c'] },
    });
    expect(signedPathOf(event)).toBe('/live/webhooks/v1/catalog?tenant=tn_01&tag=a%20b&tag=c');
  });

  it('falls back to the path without a query', () => {
    const event = proxyEvent({ method: 'POST', path: '/webhooks/v1/catalog', contextPath: '' });
    expect(signedPathOf(event)).toBe('/webhooks/v1/catalog');
  });
});

describe('no request content produces a 500', () => {
  const header = fc.constantFrom(
    'X-Signature',
    'X-Timestamp',
    'X-Event-Id',
    'Content-Type',
    'X-Trace-Id',
    'x-SIGNATURE',
  );
  const value = fc.oneof(
    fc.string(),
    fc.constant('v1='),
    fc.constant(`v1=${'A'.repeat(43)}=`),
    fc.constant(NOW.toISOString()),
    fc.constant('evt_1'),
  );
  const request = fc.record({
    method: fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'post', ''),
    path: fc.oneof(
      fc.constantFrom(
        '/webhooks/v1/catalog',
        '/webhooks/status/evt_1',
        '/webhooks/ack',
        '/',
        '/webhooks/v1/',
      ),
      fc.string().map((text) => `/webhooks/v1/${text}`),
      fc.string().map((text) => `/webhooks/status/${text}`),
      fc.string(),
    ),
    headers: fc.dictionary(header, value, { maxKeys: 5 }),
    body: fc.option(
      fc.oneof(
        fc.string(),
        fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
        fc.json(),
        fc.constant(JSON.stringify(envelopeOf({ ts: NOW.toISOString(), event_id: 'evt_1' }))),
        fc.constant(JSON.stringify({ event_id: 'evt_1', acknowledged_by: 'ops' })),
      ),
    ),
    base64: fc.boolean(),
  });

  it('answers every generated request with a 2xx or a C6 4xx', async () => {
    const { receive } = receiverWith();
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const event = proxyEvent({
          method: input.method,
          path: input.path,
          headers: input.headers,
          body: input.body,
          base64: input.base64,
        });
        const result = await receive(event);
        expect(result.statusCode).toBeLessThan(500);
        const body = parsed(result);
        if (result.statusCode >= 400) {
          expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'trace_id']);
        }
      }),
      { numRuns: 300 },
    );
  });
});
