/**
 * Endpoint health (C32) on the local stack, over HTTP, with a real loopback receiver. The time after which a
 * failing endpoint is disabled is shortened through configuration to 6 s (`disableAfterDays`): an endpoint that
 * fails every attempt gets its warnings at 50, 75 and 90 % and is then disabled, each signal delivered once to an
 * endpoint subscribed to `operations`; events produced while it is disabled are recorded `skipped`, never sent;
 * once it is enabled again, `recover` re-delivers every one of them, each attempt in the history with the
 * recovery's id, and its progress reaches done; its stats count every attempt by status class.
 */
import { describe, expect, it } from 'vitest';
import {
  endpointResponseSchema,
  endpointStatsResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  recoveryAcceptedResponseSchema,
  replayProgressResponseSchema,
} from '../../functions/schemas/webhooks';
import { deliveryWorld, sleep } from '../support/delivery-world';
import { eventually } from '../support/engines';
import { signedBy } from '../support/webhook-receiver';

const DISABLE_AFTER_SECONDS = 6;
const PATIENCE = { timeoutMs: 15_000, intervalMs: 100 };
let healthy = false;

const { admin, register, publish, requestsTo } = deliveryWorld({
  apiKey: 'key_health_e2e_0123456789abcdef',
  adminToken: 'adm_health_e2e_0123456789abcdef',
  policy: { backoffSeconds: [1, 1], dailyRetryDays: 0, jitter: { min: 1, max: 1 }, attemptTimeoutMs: 1_000 },
  settings: { disableAfterDays: DISABLE_AFTER_SECONDS / 86_400 },
  react: (request) =>
    request.path.startsWith('/webhooks/v1/flaky/') && !healthy
      ? { kind: 'respond', status: 503 }
      : { kind: 'respond', status: 200 },
});

const opsOf = (type: string) => requestsTo('ops').filter((request) => request.envelope.type === type);

describe('endpoint health: auto-disable, skipped, recover', () => {
  it('disables an endpoint failing past N after warnings at 50/75/90 %, records skipped events, and recovers them all', async () => {
    const ops = await register('ops', 'operations');
    const flaky = await register('flaky', 'orders');
    const since = new Date().toISOString();

    // Every attempt fails (503): publish an event every 400 ms until the endpoint is disabled.
    const published: string[] = [];
    const disabledAt = await eventually(
      async () => {
        published.push((await publish('orders', published.length)).eventId);
        const view = endpointResponseSchema.parse(
          (await admin('GET', `/webhooks/endpoints/${flaky.endpoint_id}`)).body,
        );
        if (view.status === 'disabled') return Date.now();
        await sleep(400);
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 0 },
    );
    const view = endpointResponseSchema.parse(
      (await admin('GET', `/webhooks/endpoints/${flaky.endpoint_id}`)).body,
    );
    expect(view.disabled_reason).toMatch(/^failing since /);

    // The warnings, then the disabling, each once, signed for the operations endpoint, in that order.
    const shares = await eventually(
      async () => {
        const failing = opsOf('operations.endpoint_failing');
        return failing.length >= 3 && opsOf('operations.endpoint_disabled').length >= 1 ? failing : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(shares.map((request) => (request.envelope.data as { share: number }).share)).toEqual([50, 75, 90]);
    const disabled = opsOf('operations.endpoint_disabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0]?.envelope.data).toMatchObject({ endpoint_id: flaky.endpoint_id, reason: 'failing' });
    for (const request of [...shares, ...disabled]) expect(signedBy(request, ops.secret)).toBe(true);
    expect(shares.at(-1)?.receivedAt ?? 0).toBeLessThanOrEqual(disabled[0]?.receivedAt ?? 0);

    // While disabled: events are recorded skipped, never sent.
    const sentBefore = requestsTo('flaky').length;
    const whileDisabled: string[] = [];
    for (let seq = 0; seq < 5; seq += 1) whileDisabled.push((await publish('orders', 1000 + seq)).eventId);
    for (const eventId of whileDisabled) {
      const status = await eventually(
        async () => {
          const history = eventHistoryResponseSchema.parse(
            (await admin('GET', `/webhooks/events/${eventId}`)).body,
          );
          return history.deliveries.find((delivery) => delivery.endpoint_id === flaky.endpoint_id)?.status;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      expect(status).toBe('skipped');
    }
    await sleep(500);
    expect(requestsTo('flaky').length).toBe(sentBefore);
    const listed = eventsPageResponseSchema.parse(
      (await admin('GET', `/webhooks/events?status=skipped&endpoint_id=${flaky.endpoint_id}&from=${since}`))
        .body,
    );
    // Those, and any published before that was fanned out after the disabling.
    const skippedIds = listed.items.map((item) => item.event_id);
    expect(skippedIds).toEqual(expect.arrayContaining(whileDisabled));
    for (const eventId of skippedIds) expect([...published, ...whileDisabled]).toContain(eventId);

    // Recover needs the endpoint enabled; then everything it missed arrives, each attempt recorded.
    const refused = await admin('POST', `/webhooks/endpoints/${flaky.endpoint_id}/recover`, {
      since,
      until: new Date().toISOString(),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe('invalid_state');
    healthy = true;
    const enabled = await admin('PATCH', `/webhooks/endpoints/${flaky.endpoint_id}`, { status: 'enabled' });
    expect(enabled.status).toBe(200);
    expect(enabled.body.failing_since).toBeUndefined();
    await sleep(Math.max(0, disabledAt + 200 - Date.now()));
    const answer = await admin('POST', `/webhooks/endpoints/${flaky.endpoint_id}/recover`, {
      since,
      until: new Date().toISOString(),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    const recovery = recoveryAcceptedResponseSchema.parse(answer.body);
    expect(recovery.enqueued).toBeGreaterThanOrEqual(whileDisabled.length);

    const done = await eventually(
      async () => {
        const progress = replayProgressResponseSchema.parse(
          (await admin('GET', `/webhooks/replays/${recovery.recovery_id}`)).body,
        );
        return progress.done ? progress : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(done.progress.delivered).toBe(recovery.enqueued);
    const received = new Set(requestsTo('flaky').map((request) => request.envelope.event_id));
    for (const eventId of [...published, ...whileDisabled]) expect(received.has(eventId)).toBe(true);
    for (const eventId of whileDisabled) {
      const history = eventHistoryResponseSchema.parse(
        (await admin('GET', `/webhooks/events/${eventId}`)).body,
      );
      const delivery = history.deliveries.find((candidate) => candidate.endpoint_id === flaky.endpoint_id);
      expect(delivery?.status).toBe('delivered');
      expect(delivery?.attempts).toEqual([
        expect.objectContaining({ outcome: 'delivered', replay_id: recovery.recovery_id }),
      ]);
    }

    // Its figures: every attempt counted by class (the 503s, then the recovery's 2xx), the rate between. A batch's
    // counts are written after its deliveries are recorded, so they are read until they caught up.
    const attempts = requestsTo('flaky').length;
    const stats = await eventually(async () => {
      const read = endpointStatsResponseSchema.parse(
        (await admin('GET', `/webhooks/endpoints/${flaky.endpoint_id}/stats?window=24h`)).body,
      );
      return read.attempts === attempts ? read : undefined;
    }, PATIENCE);
    expect(stats).toMatchObject({ endpoint_id: flaky.endpoint_id, window: '24h', attempts });
    expect(stats.by_status_class['5xx']).toBe(attempts - received.size);
    expect(stats.by_status_class['2xx']).toBe(received.size);
    expect(stats.success_rate).toBeCloseTo(received.size / attempts, 3);
    const opsStats = await eventually(async () => {
      const read = endpointStatsResponseSchema.parse(
        (await admin('GET', `/webhooks/endpoints/${ops.endpoint_id}/stats`)).body,
      );
      return read.attempts === requestsTo('ops').length ? read : undefined;
    }, PATIENCE);
    expect(opsStats).toMatchObject({ window: '1h', success_rate: 1 });
    expect(opsStats.latency_ms.p95).toBeLessThanOrEqual(1_000);
    expect((await admin('GET', `/webhooks/endpoints/${ops.endpoint_id}/stats?window=2d`)).status).toBe(400);
  }, 120_000);
});
