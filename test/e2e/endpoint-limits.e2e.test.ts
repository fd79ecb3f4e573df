/**
 * Per-endpoint limits (C31 `rate_limit`) on the local stack, over HTTP, with a real loopback receiver:
 * - an endpoint limited to 5/s receives a burst of 100 at no more than 5.5/s, each event once, none lost, and no
 *   attempt is used for waiting;
 * - a 429 with `Retry-After` pauses the whole endpoint: nothing reaches it before the pause ends.
 * (Isolation of a hanging endpoint: `endpoint-isolation.e2e.test.ts`.)
 */
import { describe, expect, it } from 'vitest';
import { endpointResponseSchema } from '../../functions/schemas/webhooks';
import { mapConcurrently } from '../../functions/shared/concurrency';
import { deliveryWorld, sleep } from '../support/delivery-world';
import { eventually } from '../support/engines';

/** Events the pausing receiver refused with 429 and Retry-After (only the first). */
const pauses = new Set<string>();

const { admin, register, publish, requestsTo } = deliveryWorld({
  apiKey: 'key_limits_e2e_0123456789abcdef',
  adminToken: 'adm_limits_e2e_0123456789abcdef',
  react: (request) => {
    if (
      request.path.startsWith('/webhooks/v1/pausing/') &&
      request.envelope.attempt === 1 &&
      pauses.size === 0
    ) {
      pauses.add(request.envelope.event_id);
      return { kind: 'respond', status: 429, headers: { 'retry-after': '3' } };
    }
    return { kind: 'respond', status: 200 };
  },
});

describe('throughput limits (rate_limit)', () => {
  it('an endpoint limited to 5/s receives a burst of 100 at ≤ 5.5/s, each event once, none lost', async () => {
    await register('limited', 'burst', { rate_limit: { per_second: 5 } });
    const events = await mapConcurrently(
      Array.from({ length: 100 }, (_, seq) => seq),
      20,
      (seq) => publish('burst', seq),
    );
    const received = await eventually(
      async () => (requestsTo('limited').length >= 100 ? requestsTo('limited') : undefined),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await sleep(1_500);
    const all = requestsTo('limited');
    expect(all).toHaveLength(100);
    expect(new Set(all.map((request) => request.envelope.event_id))).toEqual(
      new Set(events.map((event) => event.eventId)),
    );
    const times = received.map((request) => request.receivedAt).sort((a, b) => a - b);
    const rate = (times.length - 1) / (((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000);
    console.log(`rate limit 5/s: a burst of 100 arrived at ${rate.toFixed(2)}/s`);
    expect(rate).toBeLessThanOrEqual(5.5);
    expect(rate).toBeGreaterThanOrEqual(4);
    // No attempt was used for waiting: every one of the 100 arrived as attempt 1, and the last ten published
    // (those that waited longest) recorded exactly that one attempt.
    expect(all.every((request) => request.envelope.attempt === 1)).toBe(true);
    for (const { eventId } of events.slice(-10)) {
      const history = await admin('GET', `/webhooks/events/${eventId}`);
      const [delivery] = history.body.deliveries as { attempts: unknown[]; status: string }[];
      expect(delivery?.status).toBe('delivered');
      expect(delivery?.attempts).toHaveLength(1);
    }
  }, 120_000);

  it('a 429 with Retry-After pauses the whole endpoint: nothing reaches it before the pause ends', async () => {
    const endpoint = await register('pausing', 'pause');
    const first = await publish('pause', 0);
    const refused = await eventually(async () => requestsTo('pausing')[0], {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    const pausedFrom = refused.receivedAt;
    const view = await eventually(
      async () => {
        const read = endpointResponseSchema.parse(
          (await admin('GET', `/webhooks/endpoints/${endpoint.endpoint_id}`)).body,
        );
        return read.paused_until ? read : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(Date.parse(view.paused_until ?? '')).toBeGreaterThanOrEqual(pausedFrom + 2_000);
    const others = await Promise.all([1, 2, 3, 4].map((seq) => publish('pause', seq)));
    const delivered = await eventually(
      async () => {
        const ids = new Set(
          requestsTo('pausing')
            .slice(1)
            .map((request) => request.envelope.event_id),
        );
        return [first, ...others].every((event) => ids.has(event.eventId))
          ? requestsTo('pausing').slice(1)
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    for (const request of delivered) expect(request.receivedAt).toBeGreaterThanOrEqual(pausedFrom + 2_900);
  }, 60_000);
});
