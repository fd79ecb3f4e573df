/**
 * Ordered delivery (C31 `ordering`) against a fast receiver: the in-memory local stack, one loopback receiver
 * answering 204 after 5 ms, and two endpoints subscribed to the same events — one ordered by `data.account`, one
 * not. `WEBHOOK_ORDERING_EVENTS` events (default 1 000) over `WEBHOOK_ORDERING_KEYS` keys (default 20) are
 * published, each key's one after another and the keys side by side.
 *
 * Figures per endpoint: how long from the first publish until every event arrived, the throughput that makes,
 * latency from publish to arrival (p50, p95), keys that received anything out of publication order (must be 0 on
 * the ordered endpoint), lost and duplicated deliveries. The unordered endpoint is the baseline: what ordering
 * costs is the difference.
 */
import { mapConcurrently } from '../functions/shared/concurrency';
import { arrivalCounts, deliveryBenchWorld, sleep } from './arrivals-receiver';
import { type BenchModule, type BenchResult, nowMs, percentile, positiveNumber } from './harness';

const bench: BenchModule = {
  name: 'webhooks-ordering',
  description:
    'deliveries of 1 000 events over 20 keys to an endpoint ordered by key and to an unordered one, through the ' +
    'local stack; target: no key out of order, nothing lost or duplicated',
  run: async (ctx) => {
    const events = Math.round(positiveNumber('WEBHOOK_ORDERING_EVENTS', 1_000));
    const keys = Math.round(positiveNumber('WEBHOOK_ORDERING_KEYS', 20));
    const { receiver, call, stop } = await deliveryBenchWorld(ctx, () => 5);
    try {
      for (const [path, extra] of [
        ['ordered', { ordering: { key: 'data.account' } }],
        ['unordered', {}],
      ] as const) {
        const created = await call('POST', '/webhooks/endpoints', {
          url: `${receiver.baseUrl}/${path}`,
          topics: ['ledger'],
          ...extra,
        });
        if (created.status !== 201) throw new Error(`endpoint refused: ${JSON.stringify(created.body)}`);
      }
      ctx.log(`publishing ${events} events over ${keys} keys (each key's one after another)`);
      const perKey = Math.ceil(events / keys);
      /** Each event's key, its place in the key, and when it was published. */
      const published = new Map<string, { key: number; position: number; at: number }>();
      const started = nowMs();
      await mapConcurrently(
        Array.from({ length: keys }, (_, key) => key),
        keys,
        async (key) => {
          for (let position = 0; position < perKey && key * perKey + position < events; position += 1) {
            const at = nowMs();
            const answer = await call('POST', '/webhooks/events', {
              type: 'ledger.changed',
              data: { account: `acct_${key}`, position },
            });
            if (answer.status !== 202) throw new Error(`publish refused: ${answer.status}`);
            published.set(String(answer.body.event_id), { key, position, at });
          }
        },
      );
      const publishMs = nowMs() - started;
      const deadline = nowMs() + 300_000;
      const arrived = (path: string) =>
        new Set((receiver.arrivals.get(path) ?? []).map((a) => a.eventId)).size;
      while ((arrived('ordered') < events || arrived('unordered') < events) && nowMs() < deadline)
        await sleep(100);
      // Anything late or duplicated has time to show.
      await sleep(5_000);
      ctx.log(`published in ${(publishMs / 1000).toFixed(1)} s`);
      const results: BenchResult[] = [];
      for (const path of ['ordered', 'unordered']) {
        const arrivals = receiver.arrivals.get(path) ?? [];
        const name = `webhooks-ordering.${path}`;
        const counts = arrivalCounts(name, [...published.keys()], arrivals);
        const { received, lost, duplicates } = counts;
        const latencies = arrivals.map(
          (arrival) => arrival.at - (published.get(arrival.eventId)?.at ?? arrival.at),
        );
        const lastMs = Math.max(...arrivals.map((arrival) => arrival.at)) - started;
        const runs = new Map<number, number[]>();
        for (const arrival of arrivals) {
          const event = published.get(arrival.eventId);
          if (!event) continue;
          const list = runs.get(event.key) ?? [];
          if (list.at(-1) !== event.position) list.push(event.position);
          runs.set(event.key, list);
        }
        const outOfOrder = [...runs.values()].filter((list) =>
          list.some((position, index) => index > 0 && position <= (list[index - 1] ?? -1)),
        ).length;
        const p50 = percentile(latencies, 50);
        const p95 = percentile(latencies, 95);
        ctx.log(
          `${path}: all ${received.size} arrived ${(lastMs / 1000).toFixed(1)} s after the first publish ` +
            `(${((received.size * 1000) / lastMs).toFixed(1)} events/s); publish→arrival p50 ${p50.toFixed(0)} ms, ` +
            `p95 ${p95.toFixed(0)} ms; ${outOfOrder} keys out of order, lost ${lost}, duplicates ${duplicates}`,
        );
        results.push(
          { bench: name, metric: 'all arrived after', value: lastMs, unit: 'ms' },
          { bench: name, metric: 'throughput', value: (received.size * 1000) / lastMs, unit: 'events/s' },
          { bench: name, metric: 'latency p50', value: p50, unit: 'ms' },
          { bench: name, metric: 'latency p95', value: p95, unit: 'ms' },
          { bench: name, metric: 'keys out of order', value: outOfOrder, unit: 'count' },
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
