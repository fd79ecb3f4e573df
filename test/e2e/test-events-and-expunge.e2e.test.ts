/**
 * Test events and expunction (C32) on the local stack, over HTTP, with a real loopback receiver:
 * - `POST /webhooks/endpoints/{id}/test {"type"}` sends that type's example, signed with the endpoint's secret and
 *   marked `test: true`, to that endpoint only (another endpoint subscribed to the topic gets nothing, and the
 *   endpoint's own filter does not hold it back), recorded in the history as the endpoint's delivery;
 * - `POST /webhooks/events/{id}/expunge` removes the body and keeps every attempt, with when and by whom; a
 *   replay cannot send it again, and a delivery still retrying stops with `event_expunged`.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_EXAMPLES } from '../../functions/schemas/event-examples';
import {
  endpointWithSecretResponseSchema,
  eventExpungedResponseSchema,
  eventHistoryResponseSchema,
  testEventResponseSchema,
} from '../../functions/schemas/webhooks';
import { eventually } from '../support/engines';
import { demoStackWithReceiver, operatorCalls } from '../support/stack-with-receiver';
import { signedBy } from '../support/webhook-receiver';

const API_KEY = 'key_tools_e2e_0123456789abcdef';
const ADMIN_TOKEN = 'adm_tools_e2e_0123456789abcdef';
const world = demoStackWithReceiver({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });
const PATIENCE = { timeoutMs: 30_000, intervalMs: 100 };

const admin = operatorCalls(() => world.stack.url, ADMIN_TOKEN);

const register = async (path: string, extra: Record<string, unknown> = {}) => {
  const created = await admin('POST', '/webhooks/endpoints', {
    url: `${world.receiver.baseUrl}/${path}`,
    ...extra,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return endpointWithSecretResponseSchema.parse(created.body);
};

const history = async (eventId: string) => {
  const answer = await admin('GET', `/webhooks/events/${eventId}`);
  expect(answer.status).toBe(200);
  return eventHistoryResponseSchema.parse(answer.body);
};

describe('test events', () => {
  it('send the example of a type, signed and marked test, to that endpoint only, recorded in its history', async () => {
    // The endpoint subscribes to catalog events only and filters payouts out: a test goes through anyway.
    const target = await register('tested', { topics: ['catalog'], filter: { 'data.currency': 'JPY' } });
    const bystander = await register('bystander', { topics: ['payout'] });

    const sent = await admin('POST', `/webhooks/endpoints/${target.endpoint_id}/test`, {
      type: 'payout.processed',
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const accepted = testEventResponseSchema.parse(sent.body);
    expect(accepted).toMatchObject({ endpoint_id: target.endpoint_id, type: 'payout.processed', test: true });
    expect(sent.headers.get('location')).toBe(`/webhooks/events/${accepted.event_id}`);

    const request = await eventually(
      async () =>
        world.receiver.requests.find((candidate) => candidate.envelope.event_id === accepted.event_id),
      PATIENCE,
    );
    expect(request.path).toBe('/webhooks/v1/tested/payout');
    expect(signedBy(request, target.secret)).toBe(true);
    expect(request.envelope).toMatchObject({
      type: 'payout.processed',
      test: true,
      data: EVENT_EXAMPLES['payout.processed'].data,
    });
    const recorded = await eventually(async () => {
      const read = await history(accepted.event_id);
      return read.deliveries[0]?.status === 'delivered' ? read : undefined;
    }, PATIENCE);
    expect(recorded.deliveries.map((delivery) => delivery.endpoint_id)).toEqual([target.endpoint_id]);
    expect(recorded.envelope).toMatchObject({ test: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      world.receiver.requests.filter((candidate) => candidate.path.startsWith('/webhooks/v1/bystander/')),
    ).toEqual([]);
    // The bystander does get a real payout: it was only the test event it was spared.
    const real = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      data: { payout_id: 'po_real', status: 'paid', amount_minor: 100, currency: 'EUR' },
    });
    await eventually(
      async () =>
        world.receiver.requests.find(
          (candidate) =>
            candidate.path.startsWith('/webhooks/v1/bystander/') &&
            candidate.envelope.event_id === real.body.event_id,
        ),
      PATIENCE,
    );
    expect(bystander.endpoint_id).not.toBe(target.endpoint_id);
  });

  it('refuses a type without an example (400) and an unknown endpoint (404)', async () => {
    const target = await register('refusals');
    const unknownType = await admin('POST', `/webhooks/endpoints/${target.endpoint_id}/test`, {
      type: 'widget.made',
    });
    expect(unknownType.status).toBe(400);
    expect(JSON.stringify(unknownType.body.problems)).toContain('$.type');
    const unknownEndpoint = await admin('POST', '/webhooks/endpoints/ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7E/test', {
      type: 'catalog.PriceListUpdated',
    });
    expect(unknownEndpoint.status).toBe(404);
  });
});

describe('expunge', () => {
  it('removes the body, keeps the attempts and who expunged it; a replay cannot send it again', async () => {
    const endpoint = await register('expunged', { topics: ['payout'] });
    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      data: { payout_id: 'po_exp1', status: 'paid', amount_minor: 900, currency: 'EUR' },
    });
    expect(published.status).toBe(202);
    const eventId = String(published.body.event_id);
    const before = await eventually(async () => {
      const read = await history(eventId);
      return read.deliveries.find((d) => d.endpoint_id === endpoint.endpoint_id)?.status === 'delivered'
        ? read
        : undefined;
    }, PATIENCE);

    const expunged = await admin('POST', `/webhooks/events/${eventId}/expunge`);
    expect(expunged.status, JSON.stringify(expunged.body)).toBe(200);
    const answer = eventExpungedResponseSchema.parse(expunged.body);
    expect(answer).toMatchObject({ event_id: eventId, body: 'expunged', expunged_by: expect.any(String) });

    const after = await history(eventId);
    expect(after.envelope).not.toHaveProperty('data');
    expect(after.envelope).toMatchObject({ event_id: eventId, type: 'payout.processed' });
    expect(after).toMatchObject({ expunged_at: answer.expunged_at, expunged_by: answer.expunged_by });
    // This endpoint's delivery (the earlier tests' endpoints may still be receiving the event) is unchanged.
    const ours = (read: typeof before) => read.deliveries.find((d) => d.endpoint_id === endpoint.endpoint_id);
    expect(ours(after)).toEqual(ours(before));

    // Again: the first record answers. A replay of it is refused; nothing more reaches the receiver.
    const again = await admin('POST', `/webhooks/events/${eventId}/expunge`);
    expect(again.body).toEqual(expunged.body);
    const reachedBefore = world.receiver.requests.filter(
      (request) => request.envelope.event_id === eventId,
    ).length;
    const replay = await admin('POST', '/webhooks/replay', { event_ids: [eventId], force: true });
    expect(replay.status).toBe(404);
    expect(replay.body.missing_event_ids).toEqual([eventId]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(world.receiver.requests.filter((request) => request.envelope.event_id === eventId)).toHaveLength(
      reachedBefore,
    );
    const unknown = await admin('POST', '/webhooks/events/evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7E/expunge');
    expect(unknown.status).toBe(404);
  });

  it('stops a delivery still retrying: its next attempt is recorded stopped, event_expunged', async () => {
    world.receiver.react = (request) =>
      request.path.startsWith('/webhooks/v1/failing/')
        ? { kind: 'respond', status: 503 }
        : { kind: 'respond', status: 200 };
    const endpoint = await register('failing', { topics: ['payout'] });
    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      data: { payout_id: 'po_exp2', status: 'paid', amount_minor: 100, currency: 'EUR' },
    });
    const eventId = String(published.body.event_id);
    await eventually(async () => {
      const read = await history(eventId);
      return read.deliveries.find((d) => d.endpoint_id === endpoint.endpoint_id)?.status === 'retrying'
        ? read
        : undefined;
    }, PATIENCE);
    expect((await admin('POST', `/webhooks/events/${eventId}/expunge`)).status).toBe(200);
    const stopped = await eventually(
      async () => {
        const read = await history(eventId);
        const delivery = read.deliveries.find((d) => d.endpoint_id === endpoint.endpoint_id);
        return delivery?.status === 'stopped' ? delivery : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(stopped.stop_reason).toBe('event_expunged');
    expect(stopped.attempts.at(-1)).toMatchObject({ outcome: 'stopped', reason: 'event_expunged' });
  }, 90_000);
});
