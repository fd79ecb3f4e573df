/**
 * The partner portal's API (partner key): a partner reads and acts on its own endpoint only — its deliveries and their
 * attempts, replays and recoveries, its secret, test events — and nothing a URL names of another partner's: another
 * endpoint's event is not found, its replay is not found, a replay naming only its events is the same 404, and a
 * cursor of another partner's listing is never an error of the service (the listing is keyed by the key's own
 * endpoint, so it can only page that endpoint's rows).
 */
import { describe, expect, it } from 'vitest';
import {
  endpointResponseSchema,
  endpointStatsResponseSchema,
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  replayAcceptedResponseSchema,
  replayProgressResponseSchema,
} from '../../functions/schemas/webhooks';
import { deliveryWorld, sleep } from '../support/delivery-world';
import { operatorCalls } from '../support/stack-with-receiver';

const world = deliveryWorld({
  apiKey: 'key_portal_api_0123456789ab',
  adminToken: 'adm_portal_api_0123456789ab',
  // Two attempts a second apart: a failing delivery is dead within seconds.
  policy: { backoffSeconds: [1], dailyRetryDays: 0, jitter: { min: 0.8, max: 1.2 }, attemptTimeoutMs: 2_000 },
  // Partner A's receiver fails until told otherwise; B's answers 204.
  react: (request) =>
    request.path.startsWith('/webhooks/v1/a/') && !healthy.a
      ? { kind: 'respond', status: 500 }
      : { kind: 'respond', status: 204 },
});
const healthy = { a: false };

const partner = (key: string) => operatorCalls(() => world.url(), key);

const settled = async (call: ReturnType<typeof partner>, eventId: string, wanted: string[]) => {
  for (const deadline = Date.now() + 60_000; ; ) {
    const answer = await call('GET', `/partner/deliveries/${eventId}`);
    if (answer.status === 200) {
      const status = eventHistoryResponseSchema.parse(answer.body).deliveries[0]?.status ?? '';
      if (wanted.includes(status)) return status;
    }
    if (Date.now() > deadline) throw new Error(`${eventId} did not reach ${wanted.join('/')}`);
    await sleep(250);
  }
};

describe("the partner portal's API: its own endpoint, never another's", () => {
  it('reads, tests, rotates, replays and recovers its own; refuses every way to another partner', async () => {
    const endpointA = await world.register('a', 'portal');
    const endpointB = await world.register('b', 'portal');
    const a = partner(endpointA.partner_key ?? '');
    const b = partner(endpointB.partner_key ?? '');

    // Its endpoint, never a secret.
    const own = await a('GET', '/partner/endpoint');
    expect(own.status).toBe(200);
    expect(endpointResponseSchema.parse(own.body).endpoint_id).toBe(endpointA.endpoint_id);
    expect(JSON.stringify(own.body)).not.toContain('whsec_');
    expect(JSON.stringify(own.body)).not.toContain('partner_key');

    // One event to both; A's delivery fails until dead.
    const { eventId } = await world.publish('portal', 1);
    expect(await settled(b, eventId, ['delivered'])).toBe('delivered');
    await settled(a, eventId, ['dead']);

    // Listing: one row per own delivery, with that delivery only.
    const listed = eventsPageResponseSchema.parse((await a('GET', '/partner/deliveries')).body);
    expect(listed.items.map((item) => item.event_id)).toContain(eventId);
    for (const item of listed.items)
      expect(item.deliveries.map((delivery) => delivery.endpoint_id)).toEqual([endpointA.endpoint_id]);

    // The event as A sees it: its delivery only, no operator record.
    const history = (await a('GET', `/partner/deliveries/${eventId}`)).body;
    const parsed = eventHistoryResponseSchema.parse(history);
    expect(parsed.deliveries.map((delivery) => delivery.endpoint_id)).toEqual([endpointA.endpoint_id]);
    expect(parsed.deliveries[0]?.attempts[0]).toMatchObject({ http_status: 500, outcome: 'retry' });
    expect(history).not.toHaveProperty('published_by');
    expect(history).not.toHaveProperty('fanned_out_to');

    // A test event of B's own is not A's to see; nor is one that does not exist (the same 404).
    const test = await b('POST', '/partner/endpoint/test', { type: 'catalog.PriceListUpdated' });
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    const testId = String(test.body.event_id);
    expect(await settled(b, testId, ['delivered'])).toBe('delivered');
    const foreign = await a('GET', `/partner/deliveries/${testId}`);
    const missing = await a('GET', '/partner/deliveries/evt_01JD8ZK4Q7000000000000000Z');
    expect([foreign.status, missing.status]).toEqual([404, 404]);
    expect(foreign.body.error).toBe(missing.body.error);

    // Naming only another endpoint's events: the same 404 as for events that do not exist, naming none of them.
    const onlyB = await a('POST', '/partner/replay', { event_ids: [testId] });
    const nowhere = await a('POST', '/partner/replay', { event_ids: ['evt_01JD8ZK4Q7000000000000000Z'] });
    expect([onlyB.status, nowhere.status]).toEqual([404, 404]);
    expect(onlyB.body.error_description).toBe(nowhere.body.error_description);
    expect(JSON.stringify(onlyB.body)).not.toContain(testId);
    // A replay by B naming A's event matches nothing of A's; A's own replay delivers once A's receiver is healthy.
    const bReplay = await b('POST', '/partner/replay', { event_ids: [testId, eventId] });
    expect(bReplay.status, JSON.stringify(bReplay.body)).toBe(202);
    const bProgress = replayProgressResponseSchema.parse(
      (await b('GET', `/partner/replays/${replayAcceptedResponseSchema.parse(bReplay.body).replay_id}`)).body,
    );
    expect(bProgress.deliveries.every((delivery) => delivery.endpoint_id === endpointB.endpoint_id)).toBe(
      true,
    );
    expect(bProgress.deliveries.length).toBeGreaterThan(0);

    healthy.a = true;
    const aReplay = await a('POST', '/partner/replay', { event_ids: [eventId] });
    expect(aReplay.status, JSON.stringify(aReplay.body)).toBe(202);
    const aReplayId = replayAcceptedResponseSchema.parse(aReplay.body).replay_id;
    expect(await settled(a, eventId, ['delivered'])).toBe('delivered');
    const progress = replayProgressResponseSchema.parse(
      (await a('GET', `/partner/replays/${aReplayId}`)).body,
    );
    expect(progress.deliveries).toEqual([
      { event_id: eventId, endpoint_id: endpointA.endpoint_id, status: 'delivered' },
    ]);
    // B cannot read A's replay.
    expect((await b('GET', `/partner/replays/${aReplayId}`)).status).toBe(404);

    // A recovery of its own window.
    const now = Date.now();
    const recovery = await a('POST', '/partner/recover', {
      since: new Date(now - 3_600_000).toISOString(),
      until: new Date(now).toISOString(),
    });
    expect(recovery.status, JSON.stringify(recovery.body)).toBe(202);
    expect((await b('GET', `/partner/replays/${String(recovery.body.recovery_id)}`)).status).toBe(404);

    // A cursor of A's listing is no key into B's.
    const second = await world.publish('portal', 2);
    await settled(a, second.eventId, ['delivered']);
    const page = eventsPageResponseSchema.parse((await a('GET', '/partner/deliveries?limit=1')).body);
    expect(page.cursor).toBeDefined();
    {
      const crossed = await b(
        'GET',
        `/partner/deliveries?limit=1&cursor=${encodeURIComponent(page.cursor ?? '')}`,
      );
      // Only a position in time: B's own listing goes on from there, with B's deliveries alone (the second
      // event went to both).
      expect(crossed.status).toBeLessThan(500);
      expect(crossed.status).toBe(200);
      const rows = eventsPageResponseSchema.parse(crossed.body).items;
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.deliveries[0]?.endpoint_id).toBe(endpointB.endpoint_id);
    }

    // Stats and a secret rotation of its own.
    const stats = endpointStatsResponseSchema.parse(
      (await a('GET', '/partner/endpoint/stats?window=1h')).body,
    );
    expect(stats.endpoint_id).toBe(endpointA.endpoint_id);
    expect(stats.attempts).toBeGreaterThanOrEqual(2);
    // Ending the old secret at once is an operator's call: a leaked partner key cannot cut the receiver off.
    const emergency = await a('POST', '/partner/endpoint/rotate-secret', { overlap_hours: 0 });
    expect(emergency.status).toBe(400);
    const rotated = await a('POST', '/partner/endpoint/rotate-secret', {});
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const withSecret = endpointWithSecretResponseSchema.parse(rotated.body);
    expect(withSecret.endpoint_id).toBe(endpointA.endpoint_id);
    expect(withSecret.secret).not.toBe(endpointA.secret);

    // Without a partner key, or with an operator's token: 401 on every portal route.
    for (const [method, path] of [
      ['GET', '/partner/endpoint'],
      ['GET', '/partner/deliveries'],
      ['POST', '/partner/replay'],
    ] as const) {
      const anonymous = await partner('not-a-key')(method, path, method === 'POST' ? {} : undefined);
      expect(anonymous.status).toBe(401);
      const operator = await world.admin(method, path, method === 'POST' ? {} : undefined);
      expect(operator.status).toBe(401);
    }
  }, 120_000);
});
