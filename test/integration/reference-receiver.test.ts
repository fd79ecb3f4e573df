/**
 * The reference receiver against real DynamoDB Local: the spec's processing order (verify → duplicate → effect
 * and seen mark in one transaction → 200 after the commit), counted exactly through the counting effect.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { IdempotencyStore, type TransactItem } from '../../functions/receiver';
import { appliedMarkerKey, effectCounterKey } from '../../functions/receiver/reference/effect';
import { rawTargetOf, serveProxyHandler } from '../../functions/receiver/reference/local-server';
import {
  createReferenceReceiver,
  type ReceiverStore,
  type ReferenceReceiverOptions,
  signedPathOf,
  UNAUTHORIZED_DESCRIPTION,
} from '../../functions/receiver/reference/receiver';
import { ensureReceiverTable } from '../../functions/receiver/reference/table';
import { engineClients, uniquePrefix } from '../support/engines';
import {
  ackEvent,
  deliveryEvent,
  envelopeOf,
  newEventId,
  newSecret,
  parsed,
  recordingLogger,
  signedRequest,
  silentLogger,
  statusEvent,
} from '../unit/receiver-reference/support';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const HANDLER_VERSION = 'reference-1';
const DAY_MS = 86_400_000;
/**
 * The tests' "now": the real time, to the second. Not a fixed date: DynamoDB Local deletes items whose TTL
 * attribute (`expires_at`) is past by the wall clock, so seen marks written under a clock days behind the real
 * one would vanish mid-test and make a duplicate look new.
 */
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000);

interface Fixture {
  readonly tableName: string;
  readonly secret: string;
  readonly clock: { now: Date };
  readonly store: IdempotencyStore;
  readonly receive: ReturnType<typeof createReferenceReceiver>;
  /** `applied` on `effects#<topic>` (0 when the item does not exist). */
  applied(topic?: string): Promise<number>;
  /** Whether `applied#<event_id>` exists. */
  marked(eventId: string): Promise<boolean>;
  /** A delivery of `envelope`, signed now (or at `timestamp`) with the fixture's secret. */
  deliver(
    envelope: Record<string, unknown>,
    options?: Partial<Parameters<typeof deliveryEvent>[0]>,
  ): Promise<APIGatewayProxyResult>;
}

/** A delivery answered 200 `duplicate`, with the effect still applied exactly once. */
const expectDuplicateWithoutEffect = async (f: Fixture, result: APIGatewayProxyResult): Promise<void> => {
  expect({ code: result.statusCode, status: parsed(result).status }).toEqual({
    code: 200,
    status: 'duplicate',
  });
  expect(await f.applied()).toBe(1);
};

/** A fresh table, store and receiver with a movable clock. */
const fixture = async (overrides: Partial<ReferenceReceiverOptions> = {}): Promise<Fixture> => {
  const tableName = `${uniquePrefix()}receiver`;
  await ensureReceiverTable(clients.dynamoDb, tableName);
  const secret = newSecret();
  const clock = { now: T0 };
  const now = () => clock.now;
  const store = new IdempotencyStore({
    documents: clients.documents,
    tableName,
    handlerVersion: HANDLER_VERSION,
    clock: now,
  });
  const receive = createReferenceReceiver({
    store,
    secrets: [secret],
    clock: now,
    handlerVersion: HANDLER_VERSION,
    tableName,
    logger: silentLogger,
    ...overrides,
  });
  const item = async (key: string) =>
    (
      await clients.documents.send(
        new GetCommand({ TableName: tableName, Key: { event_id: key }, ConsistentRead: true }),
      )
    ).Item;
  return {
    tableName,
    secret,
    clock,
    store,
    receive,
    applied: async (topic = 'catalog') => Number((await item(effectCounterKey(topic)))?.applied ?? 0),
    marked: async (eventId) => (await item(appliedMarkerKey(eventId))) !== undefined,
    deliver: (envelope, options = {}) =>
      receive(deliveryEvent({ envelope, secrets: [secret], timestamp: clock.now.toISOString(), ...options })),
  };
};

describe('a signed delivery', () => {
  it('is answered 200 processed after its effect committed, and its status is seen', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const result = await f.deliver(envelope, { traceId: 'trace-signed-delivery-1' });

    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Trace-Id': 'trace-signed-delivery-1',
    });
    expect(parsed(result)).toEqual({
      event_id: envelope.event_id,
      status: 'processed',
      processed_at: T0.toISOString(),
    });
    expect(await f.applied()).toBe(1);
    expect(await f.marked(String(envelope.event_id))).toBe(true);

    const status = await f.receive(statusEvent(String(envelope.event_id)));
    expect(status.statusCode).toBe(200);
    expect(parsed(status)).toEqual({
      event_id: envelope.event_id,
      seen: true,
      processed_at: T0.toISOString(),
      handler_version: HANDLER_VERSION,
      status: 'processed',
    });
  });

  it('shows an unknown event as not seen', async () => {
    const f = await fixture();
    const eventId = newEventId();
    const status = await f.receive(statusEvent(eventId));
    expect({ code: status.statusCode, body: parsed(status) }).toEqual({
      code: 200,
      body: { event_id: eventId, seen: false },
    });
  });

  it('is a duplicate the second time: 200, no second effect', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    await f.deliver(envelope);
    f.clock.now = new Date(T0.getTime() + 15_000);
    const again = await f.deliver({ ...envelope, attempt: 2 });
    expect({ code: again.statusCode, body: parsed(again) }).toEqual({
      code: 200,
      body: { event_id: envelope.event_id, status: 'duplicate', processed_at: T0.toISOString() },
    });
    expect(await f.applied()).toBe(1);
  });

  it('is applied exactly once when 50 copies arrive at the same time', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const results = await Promise.all(Array.from({ length: 50 }, () => f.deliver(envelope)));

    const outcomes = results.map((result) => ({ code: result.statusCode, status: parsed(result).status }));
    // Every copy is answered 200 (processed or duplicate), or refused with a retryable status and Retry-After.
    for (const result of results) {
      if (result.statusCode !== 200) {
        expect([409, 503]).toContain(result.statusCode);
        expect(result.headers?.['Retry-After']).toMatch(/^\d+$/);
      }
    }
    expect(outcomes.filter((outcome) => outcome.status === 'processed')).toHaveLength(1);
    expect(await f.applied()).toBe(1);

    const retry = await f.deliver({ ...envelope, attempt: 2 });
    expect(parsed(retry).status).toBe('duplicate');
    expect(await f.applied()).toBe(1);
  });

  it('applies distinct events once each, also concurrently', async () => {
    const f = await fixture();
    const envelopes = Array.from({ length: 20 }, () => envelopeOf({ ts: T0.toISOString() }));
    const results = await Promise.all(
      envelopes.flatMap((envelope) => [f.deliver(envelope), f.deliver(envelope)]),
    );
    expect(results.filter((result) => parsed(result).status === 'processed')).toHaveLength(20);
    expect(await f.applied()).toBe(20);
  });
});

describe('a process killed between the commit and the answer', () => {
  it('answered nothing but 5xx; the retry is a 200 duplicate and the effect stays applied once', async () => {
    const f = await fixture();
    const { lines, logger } = recordingLogger();
    // The store commits, then the "process dies" before the answer is built.
    const dying: ReceiverStore = {
      processTransactional: async (envelope, handler) => {
        await f.store.processTransactional(envelope, handler);
        throw new Error('process killed after the commit');
      },
      status: (eventId) => f.store.status(eventId),
      acknowledge: (eventId, input) => f.store.acknowledge(eventId, input),
    };
    const crashing = createReferenceReceiver({
      store: dying,
      secrets: [f.secret],
      clock: () => f.clock.now,
      handlerVersion: HANDLER_VERSION,
      tableName: f.tableName,
      logger,
    });
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const first = await crashing(
      deliveryEvent({ envelope, secrets: [f.secret], timestamp: T0.toISOString() }),
    );
    expect(first.statusCode).toBe(500);
    expect(first.headers?.['Retry-After']).toBe('5');
    expect(parsed(first)).toEqual({
      error: 'internal_error',
      error_description: 'an internal error occurred; retry later',
      trace_id: expect.any(String),
    });
    expect(JSON.stringify(lines)).not.toContain('process killed');
    expect(await f.applied()).toBe(1);

    // The sender retries 5 s later (attempt 2), to the healthy receiver.
    f.clock.now = new Date(T0.getTime() + 5_000);
    const retry = await f.deliver({ ...envelope, attempt: 2 });
    await expectDuplicateWithoutEffect(f, retry);
  });

  it('is the same when the commit happened outside the receiver (processTransactional called directly)', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const eventId = String(envelope.event_id);
    const { verifyWebhook } = await import('../../functions/receiver');
    const request = signedRequest({ envelope, secrets: [f.secret], timestamp: T0.toISOString() });
    const verified = verifyWebhook({
      body: request.body,
      method: 'POST',
      path: request.path,
      headers: request.headers,
      secrets: [f.secret],
      now: T0,
    });
    await f.store.processTransactional(verified, async () => [
      {
        Update: {
          TableName: f.tableName,
          Key: { event_id: effectCounterKey('catalog') },
          UpdateExpression: 'ADD applied :one',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ]);
    const retry = await f.deliver({ ...envelope, attempt: 2 });
    await expectDuplicateWithoutEffect(f, retry);
    expect(await f.marked(eventId)).toBe(false);
  });
});

describe('never a 200 before the commit', () => {
  it('answers 503 with Retry-After when the transaction is cancelled, and leaves nothing applied or seen', async () => {
    const f = await fixture({
      handler: async (envelope): Promise<readonly TransactItem[]> => [
        {
          Update: {
            TableName: f.tableName,
            Key: { event_id: effectCounterKey('catalog') },
            UpdateExpression: 'ADD applied :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
        {
          // A domain condition that fails: the whole transaction, seen mark included, is cancelled.
          ConditionCheck: {
            TableName: f.tableName,
            Key: { event_id: `precondition#${envelope.event_id}` },
            ConditionExpression: 'attribute_exists(event_id)',
          },
        },
      ],
    });
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const result = await f.deliver(envelope);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('5');
    expect(parsed(result).error).toBe('unavailable');
    expect(await f.applied()).toBe(0);
    expect(parsed(await f.receive(statusEvent(String(envelope.event_id)))).seen).toBe(false);
  });
});

describe('dedup memory', () => {
  it('still recognises a duplicate 24 hours later', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    expect(parsed(await f.deliver(envelope)).status).toBe('processed');
    f.clock.now = new Date(T0.getTime() + DAY_MS);
    const late = await f.deliver({ ...envelope, attempt: 13 });
    await expectDuplicateWithoutEffect(f, late);
  });

  it("still recognises a duplicate at the end of the sender's retry horizon (5.9 days)", async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    await f.deliver(envelope);
    f.clock.now = new Date(T0.getTime() + 5.9 * DAY_MS);
    const late = await f.deliver({ ...envelope, attempt: 16 });
    await expectDuplicateWithoutEffect(f, late);
  });

  it('refuses an event older than the memory with 422 event_too_old and applies nothing', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: new Date(T0.getTime() - 8 * DAY_MS).toISOString() });
    const result = await f.deliver(envelope, { traceId: 'trace-too-old-0001' });
    expect(result.statusCode).toBe(422);
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Trace-Id': 'trace-too-old-0001',
    });
    expect(parsed(result)).toEqual({
      error: 'event_too_old',
      error_description: "the event is older than the receiver's dedup memory; it was not applied",
      trace_id: 'trace-too-old-0001',
    });
    expect(await f.applied()).toBe(0);
    expect(parsed(await f.receive(statusEvent(String(envelope.event_id)))).seen).toBe(false);
  });
});

describe('manual acknowledgement', () => {
  it('records the handling; a later delivery of that event is a 200 duplicate with no effect', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const eventId = String(envelope.event_id);
    const ack = await f.receive(
      ackEvent({ event_id: eventId, acknowledged_by: 'ops@partner', note: 'fixed by hand' }),
    );
    expect(ack.statusCode).toBe(200);
    expect(parsed(ack)).toEqual({
      event_id: eventId,
      seen: true,
      processed_at: T0.toISOString(),
      handler_version: HANDLER_VERSION,
      status: 'acknowledged',
      acknowledged_by: 'ops@partner',
      note: 'fixed by hand',
    });

    f.clock.now = new Date(T0.getTime() + 60_000);
    const delivery = await f.deliver({ ...envelope, attempt: 9 });
    expect({ code: delivery.statusCode, status: parsed(delivery).status }).toEqual({
      code: 200,
      status: 'duplicate',
    });
    expect(await f.applied()).toBe(0);
    expect(await f.marked(eventId)).toBe(false);
    expect(parsed(await f.receive(statusEvent(eventId)))).toMatchObject({
      seen: true,
      status: 'acknowledged',
    });
  });

  it('keeps the processed status of an event that was already applied', async () => {
    const f = await fixture();
    const envelope = envelopeOf({ ts: T0.toISOString() });
    await f.deliver(envelope);
    const ack = await f.receive(ackEvent({ event_id: envelope.event_id, acknowledged_by: 'ops@partner' }));
    expect(parsed(ack)).toMatchObject({ seen: true, status: 'processed' });
    expect(await f.applied()).toBe(1);
  });

  it('refuses an invalid body with 400 in the C6 shape', async () => {
    const f = await fixture();
    for (const event of [
      ackEvent({ event_id: newEventId() }),
      ackEvent({ event_id: newEventId(), acknowledged_by: 'x', extra: true }),
      ackEvent(undefined, { raw: '{not json' }),
      ackEvent({ event_id: 'effects#catalog', acknowledged_by: 'x' }),
    ]) {
      const result = await f.receive(event);
      expect(result.statusCode).toBe(400);
      expect(parsed(result)).toEqual({
        error: 'invalid_request',
        error_description: expect.any(String),
        trace_id: result.headers?.['X-Trace-Id'],
      });
    }
  });
});

describe('refused signatures', () => {
  it('answers a bad signature, a stale timestamp and a mismatched X-Event-Id with the same 401 body', async () => {
    const f = await fixture();
    const { lines, logger } = recordingLogger();
    const receive = createReferenceReceiver({
      store: f.store,
      secrets: [f.secret],
      clock: () => f.clock.now,
      handlerVersion: HANDLER_VERSION,
      tableName: f.tableName,
      logger,
    });
    const envelope = envelopeOf({ ts: T0.toISOString() });
    const traceId = 'trace-refused-0001';
    const base = { envelope, secrets: [f.secret], timestamp: T0.toISOString(), traceId };
    const refused = await Promise.all([
      receive(deliveryEvent({ ...base, secrets: [newSecret()] })),
      receive(deliveryEvent({ ...base, timestamp: new Date(T0.getTime() - 301_000).toISOString() })),
      receive(deliveryEvent({ ...base, eventIdHeader: newEventId() })),
      receive(deliveryEvent({ ...base, sentBody: JSON.stringify({ ...envelope, attempt: 7 }) })),
    ]);
    for (const result of refused) {
      expect(result.statusCode).toBe(401);
      expect(result.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Trace-Id': traceId });
      expect(result.headers?.['Retry-After']).toBeUndefined();
      expect(result.body).toBe(refused[0]?.body);
    }
    expect(parsed(refused[0] as APIGatewayProxyResult)).toEqual({
      error: 'unauthorized',
      error_description: UNAUTHORIZED_DESCRIPTION,
      trace_id: traceId,
    });
    // The reason is in the partner's log, never in the answer.
    expect(
      lines.filter((line) => line.message === 'webhook refused').map((line) => line.fields.reason),
    ).toEqual(['signature_mismatch', 'timestamp_out_of_window', 'event_id_mismatch', 'signature_mismatch']);
    expect(await f.applied()).toBe(0);
    expect(parsed(await f.receive(statusEvent(String(envelope.event_id)))).seen).toBe(false);
  });

  it('accepts the old and the new key during a rotation, and refuses a wrong one', async () => {
    const f = await fixture();
    const next = newSecret();
    const receive = createReferenceReceiver({
      store: f.store,
      secrets: [next, f.secret],
      clock: () => f.clock.now,
      handlerVersion: HANDLER_VERSION,
      tableName: f.tableName,
      logger: silentLogger,
    });
    const timestamp = T0.toISOString();
    const byOld = await receive(
      deliveryEvent({ envelope: envelopeOf({ ts: timestamp }), secrets: [f.secret], timestamp }),
    );
    const byBoth = await receive(
      deliveryEvent({ envelope: envelopeOf({ ts: timestamp }), secrets: [next, f.secret], timestamp }),
    );
    const byWrong = await receive(
      deliveryEvent({ envelope: envelopeOf({ ts: timestamp }), secrets: [newSecret()], timestamp }),
    );
    expect([byOld.statusCode, byBoth.statusCode, byWrong.statusCode]).toEqual([200, 200, 401]);
    expect(await f.applied()).toBe(2);
  });
});

describe('over HTTP (the local server of `npm run receiver`)', () => {
  it('verifies the raw bytes and the path with its query exactly as sent; refuses a body over 256 KiB', async () => {
    const f = await fixture({ signedPath: (event) => rawTargetOf(event) ?? signedPathOf(event) });
    f.clock.now = new Date();
    const server = await serveProxyHandler({ handler: f.receive, port: 0 });
    try {
      const envelope = envelopeOf({ ts: f.clock.now.toISOString() });
      // Pretty-printed with CRLF line ends and non-ASCII text: any re-encoding would break the signature.
      const body = `${JSON.stringify({ ...envelope, data: { title: 'Café – 日本 🎉' } }, null, 2).replace(/\n/g, '\r\n')}\r\n`;
      const path = '/webhooks/v1/catalog?tenant=tn_01&region=eu%2Dwest&flag';
      const request = signedRequest({
        envelope,
        body,
        secrets: [f.secret],
        timestamp: f.clock.now.toISOString(),
        signedPath: path,
      });
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ event_id: envelope.event_id, status: 'processed' });

      const status = await fetch(`${server.url}/webhooks/status/${String(envelope.event_id)}`);
      expect(await status.json()).toMatchObject({ seen: true, handler_version: HANDLER_VERSION });

      const huge = await fetch(`${server.url}/webhooks/v1/catalog`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: randomBytes(256 * 1024 + 1),
      });
      expect(huge.status).toBe(413);
      expect(await huge.json()).toMatchObject({ error: 'payload_too_large' });
      expect(await f.applied()).toBe(1);
    } finally {
      await server.close();
    }
  });
});
