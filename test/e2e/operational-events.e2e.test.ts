/**
 * Operational events (C32) on the local stack, over HTTP, with a real loopback receiver: an endpoint subscribed to
 * topic `operations` receives the service's own signals, signed with its secret, through the same pipeline as any
 * event (and listed in the history): a dead delivery, an endpoint disabled by a 410, a replay that completed and a
 * change request waiting for review. Producers cannot publish `operations.*` themselves. (The FX breaker's signal
 * is covered by `test/unit/rates/ingest.test.ts`, whose runs open a breaker on demand.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import { eventTypeDefinition } from '../../functions/schemas/event-types';
import {
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
} from '../../functions/schemas/webhooks';
import { priceChangeOf } from '../support/change-requests';
import { eventually } from '../support/engines';
import { demoStackWithReceiver, operatorCalls } from '../support/stack-with-receiver';
import { type ReceivedRequest, signedBy } from '../support/webhook-receiver';

const API_KEY = 'key_ops_e2e_0123456789abcdef';
const ADMIN = 'adm_ops_e2e_0123456789abcdef';
const POLICY: RetryPolicy = {
  backoffSeconds: [1, 1],
  dailyRetryDays: 0,
  jitter: { min: 1, max: 1 },
  attemptTimeoutMs: 1_000,
};
const PATIENCE = { timeoutMs: 30_000, intervalMs: 100 };

let failing = true;
const world = demoStackWithReceiver({ apiKey: API_KEY, adminToken: ADMIN, webhookPolicy: POLICY });
const admin = operatorCalls(() => world.stack.url, ADMIN);

const register = async (path: string, topics: string[]) => {
  const created = await admin('POST', '/webhooks/endpoints', {
    url: `${world.receiver.baseUrl}/${path}`,
    topics,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return endpointWithSecretResponseSchema.parse(created.body);
};

/** The first `operations.*` request of `type` whose data matches, as the operations endpoint received it. */
const signal = async (type: string, match: Record<string, unknown>): Promise<ReceivedRequest> => {
  const request = await eventually(
    async () =>
      world.receiver.requests.find(
        (request) =>
          request.path === '/webhooks/v1/ops/operations' &&
          request.envelope.type === type &&
          Object.entries(match).every(
            ([key, value]) => (request.envelope.data as Record<string, unknown>)[key] === value,
          ),
      ),
    PATIENCE,
  );
  // What was sent is what the event-type catalog (GET /webhooks/event-types, the AsyncAPI document) says.
  const definition = eventTypeDefinition(type);
  expect(definition, `${type} is in the event-type catalog`).toBeDefined();
  const checked = definition?.data.safeParse(request.envelope.data);
  expect(checked?.success, JSON.stringify(checked?.error?.issues)).toBe(true);
  return request;
};

beforeAll(() => {
  world.receiver.react = (request) => {
    if (request.path.startsWith('/webhooks/v1/failing/'))
      return { kind: 'respond', status: failing ? 500 : 200 };
    if (request.path.startsWith('/webhooks/v1/gone/')) return { kind: 'respond', status: 410 };
    return { kind: 'respond', status: 200 };
  };
});

describe('operational events (topic operations)', () => {
  it('reports a dead delivery, a disabled endpoint and a completed replay, signed, in the history', async () => {
    const ops = await register('ops', ['operations']);
    const dying = await register('failing', ['payout']);
    const gone = await register('gone', ['payout']);

    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      data: { payout_id: 'po_ops1', status: 'paid', amount_minor: 700, currency: 'EUR' },
    });
    expect(published.status).toBe(202);
    const eventId = String(published.body.event_id);

    const dead = await signal('operations.delivery_dead', {
      event_id: eventId,
      endpoint_id: dying.endpoint_id,
    });
    expect(signedBy(dead, ops.secret)).toBe(true);
    expect(dead.envelope).toMatchObject({
      producer: 'operations',
      data: {
        event_type: 'payout.processed',
        attempts: 3,
        reason: 'retries_exhausted_after_http_500',
      },
    });
    const disabled = await signal('operations.endpoint_disabled', { endpoint_id: gone.endpoint_id });
    expect(disabled.envelope.data).toMatchObject({ reason: 'gone', event_id: eventId });
    expect(signedBy(disabled, ops.secret)).toBe(true);

    // Signals are events like any other: in the history, delivered to the operations endpoint.
    const history = await eventually(async () => {
      const answer = await admin('GET', `/webhooks/events/${dead.envelope.event_id}`);
      const parsed = eventHistoryResponseSchema.parse(answer.body);
      return parsed.deliveries[0]?.status === 'delivered' ? parsed : undefined;
    }, PATIENCE);
    expect(history.deliveries.map((delivery) => delivery.endpoint_id)).toEqual([ops.endpoint_id]);

    // The receiver recovers; a replay of the dead delivery completes and says so.
    failing = false;
    const replay = await admin('POST', '/webhooks/replay', {
      event_ids: [eventId],
      endpoint_id: dying.endpoint_id,
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    const replayId = String(replay.body.replay_id);
    const completed = await signal('operations.replay_completed', { replay_id: replayId });
    expect(completed.envelope.data).toEqual({
      replay_id: replayId,
      enqueued: 1,
      delivered: 1,
      dead: 0,
      stopped: 0,
    });
    // Each signal once.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const count = (type: string) =>
      new Set(
        world.receiver.requests
          .filter((request) => request.envelope.type === type)
          .map((request) => request.envelope.event_id),
      ).size;
    expect(count('operations.delivery_dead')).toBe(1);
    expect(count('operations.endpoint_disabled')).toBe(1);
    expect(count('operations.replay_completed')).toBe(1);
  }, 90_000);

  it('announces a change request waiting for review', async () => {
    const exported = (await admin('GET', '/admin/catalog/export')).body as unknown as CatalogDocument;
    const opened = await admin('POST', '/admin/change-requests', {
      kind: 'pricelist',
      payload: priceChangeOf(exported, '77.00').payload,
      note: 'ops e2e',
    });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const pending = await signal('operations.change_request_pending', { cr_id: opened.body.cr_id });
    expect(pending.envelope.data).toMatchObject({
      kind: 'pricelist',
      guardrail_findings: expect.any(Number),
    });
  });

  it('refuses operations.* from producers', async () => {
    const refused = await admin('POST', '/webhooks/events', { type: 'operations.delivery_dead', data: {} });
    expect(refused.status).toBe(400);
    expect(String(refused.body.error_description)).toMatch(/the service’s own signals/);
  });
});
