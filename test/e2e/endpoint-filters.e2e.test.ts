/**
 * Endpoint subscriptions with payload filters and event types (C31) on the local stack, over HTTP: a filter routes
 * 3 of 5 events to the receiver, and the other 2 appear in the history as `filtered`, never sent (not even by a
 * forced replay); a bad filter is refused at registration with a 400 naming its path; `PATCH` replaces or removes
 * a filter, and event types narrow what an endpoint gets.
 */
import { describe, expect, it } from 'vitest';
import { endpointResponseSchema, eventsPageResponseSchema } from '../../functions/schemas/webhooks';
import { eventually } from '../support/engines';
import { demoStackWithReceiver, operatorCalls } from '../support/stack-with-receiver';

const API_KEY = 'key_filters_e2e_0123456789abcdef';
const ADMIN_TOKEN = 'adm_filters_e2e_0123456789abcdef';
const world = demoStackWithReceiver({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });
const PATIENCE = { timeoutMs: 30_000, intervalMs: 100 };

const admin = operatorCalls(() => world.stack.url, ADMIN_TOKEN);

const publishPayout = async (payoutId: string, amountMinor: number, currency = 'EUR') => {
  const answer = await admin('POST', '/webhooks/events', {
    type: 'payout.processed',
    producer: 'payments',
    data: { payout_id: payoutId, status: 'paid', amount_minor: amountMinor, currency },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return String(answer.body.event_id);
};

const statusOf = (eventId: string, endpointId: string) =>
  eventually(async () => {
    const history = await admin('GET', `/webhooks/events/${eventId}`);
    const deliveries = (history.body.deliveries ?? []) as { endpoint_id: string; status: string }[];
    const status = deliveries.find((delivery) => delivery.endpoint_id === endpointId)?.status;
    return status === 'delivered' || status === 'filtered' ? status : undefined;
  }, PATIENCE);

describe('payload filters (C31)', () => {
  it('route 3 of 5 events to the endpoint; the other 2 are recorded filtered and never sent, even by a forced replay', async () => {
    const filter = {
      'data.amount_minor': { $gte: 1_000 },
      $or: [{ 'data.currency': 'EUR' }, { tenant: { $exists: true } }],
    };
    const created = await admin('POST', '/webhooks/endpoints', {
      url: `${world.receiver.baseUrl}/filtered`,
      topics: ['payout'],
      event_types: ['payout.processed'],
      filter,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(endpointResponseSchema.parse(created.body)).toMatchObject({
      filter,
      event_types: ['payout.processed'],
    });
    const endpointId = String(created.body.endpoint_id);

    const amounts: [string, number, string][] = [
      ['po_f1', 500, 'EUR'],
      ['po_f2', 1_500, 'EUR'],
      ['po_f3', 2_500, 'EUR'],
      ['po_f4', 5_000, 'USD'],
      ['po_f5', 3_000, 'EUR'],
    ];
    const events = [];
    for (const [payoutId, amount, currency] of amounts)
      events.push(await publishPayout(payoutId, amount, currency));
    const statuses = [];
    for (const eventId of events) statuses.push(await statusOf(eventId, endpointId));
    expect(statuses).toEqual(['filtered', 'delivered', 'delivered', 'filtered', 'delivered']);

    const received = world.receiver.requests
      .filter((request) => request.path.includes('/filtered/'))
      .map((request) => (request.envelope.data as { payout_id: string }).payout_id)
      .sort();
    expect(received).toEqual(['po_f2', 'po_f3', 'po_f5']);

    // The history lists them by status, and a forced replay of everything restarts none of the filtered.
    const listed = await admin('GET', `/webhooks/events?status=filtered&endpoint_id=${endpointId}`);
    expect(listed.status).toBe(200);
    const page = eventsPageResponseSchema.parse(listed.body);
    expect(page.items.map((item) => item.event_id).sort()).toEqual([events[0], events[3]].sort());
    const replay = await admin('POST', '/webhooks/replay', {
      event_ids: [events[0], events[3]],
      force: true,
    });
    expect(replay.status, JSON.stringify(replay.body)).toBeLessThan(300);
    expect(replay.body.enqueued).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(world.receiver.requests.filter((request) => request.path.includes('/filtered/'))).toHaveLength(3);

    // The partner's resync gives what its endpoint was meant to get: not the 2 its filter kept from it.
    const resync = await fetch(`${world.stack.url}/partner/events?limit=50`, {
      headers: { authorization: `Bearer ${String(created.body.partner_key)}` },
    });
    expect(resync.status).toBe(200);
    const resynced = ((await resync.json()) as { items: { event_id: string }[] }).items.map(
      (item) => item.event_id,
    );
    expect(resynced.sort()).toEqual([events[1], events[2], events[4]].sort());
  });

  it('refuses a bad filter at registration with a 400 naming its path, and PATCH replaces or removes it', async () => {
    const refused = await admin('POST', '/webhooks/endpoints', {
      url: `${world.receiver.baseUrl}/bad`,
      filter: { 'data.amount_minor': { $gtt: 5 }, payload: 1 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.problems).toEqual([
      { path: '$.filter.data.amount_minor.$gtt', message: expect.stringMatching(/^unknown operator/) },
      {
        path: '$.filter.payload',
        message: expect.stringMatching(/^a path into type, tenant, producer, data/),
      },
    ]);
    const wrongType = await admin('POST', '/webhooks/endpoints', {
      url: `${world.receiver.baseUrl}/bad`,
      event_types: ['not a type'],
    });
    expect(wrongType.status).toBe(400);

    const created = await admin('POST', '/webhooks/endpoints', {
      url: `${world.receiver.baseUrl}/patched`,
      topics: ['payout'],
      filter: { 'data.currency': 'USD' },
    });
    const endpointId = String(created.body.endpoint_id);
    const blocked = await publishPayout('po_p1', 100);
    expect(await statusOf(blocked, endpointId)).toBe('filtered');

    const replaced = await admin('PATCH', `/webhooks/endpoints/${endpointId}`, {
      filter: { 'data.currency': 'EUR' },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.filter).toEqual({ 'data.currency': 'EUR' });
    expect(await statusOf(await publishPayout('po_p2', 100), endpointId)).toBe('delivered');

    const removed = await admin('PATCH', `/webhooks/endpoints/${endpointId}`, {
      filter: null,
      event_types: ['payout.failed'],
    });
    expect(removed.status).toBe(200);
    expect(removed.body).not.toHaveProperty('filter');
    expect(removed.body.event_types).toEqual(['payout.failed']);
    // payout.processed is no longer among its event types: no delivery record at all.
    const other = await publishPayout('po_p3', 100, 'USD');
    await eventually(async () => {
      const history = await admin('GET', `/webhooks/events/${other}`);
      return history.body.fanned_out_at ? true : undefined;
    }, PATIENCE);
    const history = await admin('GET', `/webhooks/events/${other}`);
    const deliveries = (history.body.deliveries ?? []) as { endpoint_id: string }[];
    expect(deliveries.some((delivery) => delivery.endpoint_id === endpointId)).toBe(false);
  });
});
