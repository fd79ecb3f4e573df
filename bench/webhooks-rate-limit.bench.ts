/**
 * A per-endpoint rate limit (C31 `rate_limit.per_second`) against a fast receiver: the in-memory local stack, one
 * loopback receiver answering 204 at once, one endpoint limited to `WEBHOOK_RATE_LIMIT` per second (default 20).
 * A burst of `WEBHOOK_RATE_LIMIT_EVENTS` events (default 20 s worth) is published as fast as the API takes it;
 * the limiter spreads the deliveries out (each waits for its reserved start without using an attempt).
 *
 * Figures: the achieved rate at the receiver (deliveries − 1 over the time from the first to the last), its
 * deviation from the limit (target within ±10 %), the most deliveries in any one-second window, how long the burst
 * took, and lost (published, never received within the drain) and duplicated deliveries; then the same for a
 * second endpoint that has `max_in_flight: 1` besides the rate, answered in 20 ms, with the most requests the
 * receiver saw at once (must be 1).
 */
import { mapConcurrently } from '../functions/shared/concurrency';
import { arrivalCounts, deliveryBenchWorld, sleep } from './arrivals-receiver';
import { type BenchModule, type BenchResult, nowMs, positiveNumber } from './harness';

const DEFAULT_LIMIT = 20;
const PUBLISH_CONCURRENCY = 16;

const bench: BenchModule = {
  name: 'webhooks-rate-limit',
  description:
    'deliveries of a burst to an endpoint limited to 20/s (WEBHOOK_RATE_LIMIT) through the local stack; target: ' +
    'achieved rate within ±10 % of the limit, nothing lost or duplicated',
  run: async (ctx) => {
    const limit = positiveNumber('WEBHOOK_RATE_LIMIT', DEFAULT_LIMIT);
    const events = Math.round(positiveNumber('WEBHOOK_RATE_LIMIT_EVENTS', limit * 20));
    const { receiver, call, stop } = await deliveryBenchWorld(ctx, (path) =>
      path === 'one-at-a-time' ? 20 : 0,
    );
    const results: BenchResult[] = [];
    try {
      for (const [path, rateLimit] of [
        ['limited', { per_second: limit }],
        ['one-at-a-time', { per_second: limit, max_in_flight: 1 }],
      ] as const) {
        const topic = path.replace(/-/g, '');
        const created = await call('POST', '/webhooks/endpoints', {
          url: `${receiver.baseUrl}/${path}`,
          topics: [topic],
          rate_limit: rateLimit,
        });
        if (created.status !== 201) throw new Error(`endpoint refused: ${JSON.stringify(created.body)}`);
        ctx.log(
          `${path}: publishing a burst of ${events} events to an endpoint limited by ${JSON.stringify(rateLimit)}`,
        );
        const publishedAt = nowMs();
        const ids = await mapConcurrently(
          Array.from({ length: events }, (_, seq) => seq),
          PUBLISH_CONCURRENCY,
          async (seq) => {
            const answer = await call('POST', '/webhooks/events', {
              type: `${topic}.changed`,
              data: { seq },
            });
            if (answer.status !== 202) throw new Error(`publish refused: ${answer.status}`);
            return String(answer.body.event_id);
          },
        );
        const published = nowMs() - publishedAt;
        // The burst drains at the limit: wait for it, plus ten seconds for anything late or duplicated.
        const deadline = nowMs() + (events / limit) * 1000 * 2 + 30_000;
        while ((receiver.arrivals.get(path)?.length ?? 0) < events && nowMs() < deadline) await sleep(100);
        await sleep(10_000);
        const arrivals = receiver.arrivals.get(path) ?? [];
        const name = `webhooks-rate-limit.${path}`;
        const counts = arrivalCounts(name, ids, arrivals);
        const { lost, duplicates } = counts;
        const times = arrivals.map((arrival) => arrival.at).sort((a, b) => a - b);
        const spanMs = (times.at(-1) ?? 0) - (times[0] ?? 0);
        const achieved = spanMs > 0 ? ((times.length - 1) * 1000) / spanMs : Number.NaN;
        let busiest = 0;
        for (let first = 0, last = 0; last < times.length; last += 1) {
          while ((times[last] ?? 0) - (times[first] ?? 0) >= 1000) first += 1;
          busiest = Math.max(busiest, last - first + 1);
        }
        ctx.log(
          `${path}: published in ${(published / 1000).toFixed(1)} s; ${arrivals.length} deliveries over ` +
            `${(spanMs / 1000).toFixed(1)} s = ${achieved.toFixed(2)}/s (limit ${limit}/s), busiest second ${busiest}, ` +
            `lost ${lost}, duplicates ${duplicates}`,
        );
        const most = receiver.inFlight.get(path)?.most ?? 0;
        results.push(
          { bench: name, metric: 'limit', value: limit, unit: 'deliveries/s' },
          { bench: name, metric: 'achieved rate', value: achieved, unit: 'deliveries/s' },
          // The rate alone is the target (±10 %); with one in flight, the round trips bound the rate too.
          ...(rateLimit.max_in_flight === undefined
            ? [{ bench: name, metric: 'deviation', value: ((achieved - limit) / limit) * 100, unit: '%' }]
            : [{ bench: name, metric: 'most in flight', value: most, unit: 'count' }]),
          { bench: name, metric: 'busiest second', value: busiest, unit: 'count' },
          { bench: name, metric: 'burst drained in', value: spanMs, unit: 'ms' },
          ...counts.rows,
        );
      }
      return results;
    } finally {
      await stop();
    }
  },
};

export default bench;
