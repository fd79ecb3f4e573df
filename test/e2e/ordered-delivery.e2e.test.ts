/**
 * Ordered delivery (C31 `ordering`) on the local stack under injected faults, over HTTP, with a real loopback
 * receiver: events over 20 keys (`data.account`) to one endpoint ordered by `data.account`; the receiver answers,
 * from a seeded PRNG, 10 % 5xx, 3 % no answer (timeouts), 3 % connection resets and 1 % 429 with `Retry-After`, and
 * always 500 for every 61st event, which therefore goes dead. Per key:
 * - no delivery starts before the one before it ended: the requests of each event form one run, and no two runs
 *   overlap (nothing of an earlier event arrives after a later one's first request);
 * - the events arrive in the order they were published (each key's events are published one after another);
 * - a dead head holds back only its key, and once dead its key moves on;
 * and nothing is lost: every other event delivered, each dead one (those and any that failed every attempt by
 * chance) `dead` after every attempt, then delivered by a replay (which numbers it again, at the end of its key).
 *
 * The acceptance is 1 000 events, run with `CI=true`; a local `npm test` runs 300 to keep the suite short;
 * `ORDERED_EVENTS=<n>` sets the number and `ORDERED_SEED=<uint32>` replays a fault mix.
 */
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import { endpointResponseSchema, eventHistoryResponseSchema } from '../../functions/schemas/webhooks';
import { mapConcurrently } from '../../functions/shared/concurrency';
import { deliveryWorld } from '../support/delivery-world';
import { eventually } from '../support/engines';
import { mulberry32 } from '../support/prng';
import { volume } from '../support/volume';
import type { Reaction, ReceivedRequest } from '../support/webhook-receiver';

const EVENTS = volume('ORDERED_EVENTS', { local: 300, ci: 1_000 });
const KEYS = 20;
const SEED = process.env.ORDERED_SEED ? Number(process.env.ORDERED_SEED) >>> 0 : randomInt(0, 2 ** 32 - 1);
/** Every event whose number is a multiple of this is refused until it goes dead. */
const FORCED_DEAD_EVERY = 61;
const POLICY: RetryPolicy = {
  backoffSeconds: [1, 1, 2],
  dailyRetryDays: 0,
  jitter: { min: 0.8, max: 1.2 },
  attemptTimeoutMs: 500,
};
const MAX_ATTEMPTS = 1 + POLICY.backoffSeconds.length;

interface OrderedData {
  readonly account: string;
  /** The event's number within its key (publication order). */
  readonly position: number;
  readonly n: number;
}

const dataOf = (request: ReceivedRequest): OrderedData => request.envelope.data as OrderedData;

const random = mulberry32(SEED);
/** What the receiver answered to each request. */
const answers = new WeakMap<ReceivedRequest, Reaction>();
/** Once the run settled, the receiver answers 200 to everything (the dead ones' replay). */
let healthy = false;
const faulty = (request: ReceivedRequest): Reaction => {
  if (healthy) return { kind: 'respond', status: 200 };
  if (dataOf(request).n % FORCED_DEAD_EVERY === 0) return { kind: 'respond', status: 500 };
  const draw = random();
  if (draw < 0.1) return { kind: 'respond', status: 500 + Math.floor(draw * 40) };
  if (draw < 0.13) return { kind: 'hang' };
  if (draw < 0.16) return { kind: 'reset' };
  if (draw < 0.17) return { kind: 'respond', status: 429, headers: { 'retry-after': '1' } };
  return { kind: 'respond', status: 200 };
};
const { admin, register, requestsTo } = deliveryWorld({
  apiKey: 'key_ordered_e2e_0123456789abcdef',
  adminToken: 'adm_ordered_e2e_0123456789abcdef',
  policy: POLICY,
  react: (request) => {
    const reaction = faulty(request);
    answers.set(request, reaction);
    return reaction;
  },
});
const accepted = (request: ReceivedRequest): boolean => {
  const answer = answers.get(request);
  return answer?.kind === 'respond' && answer.status === 200;
};

describe('ordered delivery (ordering)', () => {
  it(`${EVENTS} events over ${KEYS} keys under injected faults: no key out of order, nothing lost`, async () => {
    console.log(`ordered delivery: seed ${SEED} (ORDERED_SEED=${SEED} to reuse), ${EVENTS} events`);
    const endpoint = await register('ordered', 'ledger', { ordering: { key: 'data.account' } });
    expect(endpointResponseSchema.parse(endpoint).ordering).toEqual({ key: 'data.account' });

    // Each key's events published one after another (the order the key must keep), the keys side by side.
    const perKey = Math.ceil(EVENTS / KEYS);
    const started = Date.now();
    const published = await mapConcurrently(
      Array.from({ length: KEYS }, (_, key) => key),
      KEYS,
      async (key) => {
        const ids: string[] = [];
        for (let position = 0; position < perKey; position += 1) {
          const n = key * perKey + position + 1;
          if (n > EVENTS) break;
          const answer = await admin('POST', '/webhooks/events', {
            type: 'ledger.changed',
            data: { account: `acct_${key}`, position, n },
          });
          expect(answer.status, JSON.stringify(answer.body)).toBe(202);
          ids.push(String(answer.body.event_id));
        }
        return ids;
      },
    );
    const all = published.flat();
    expect(all).toHaveLength(EVENTS);
    const forced = new Set(
      published.flatMap((ids, key) =>
        ids.filter((_, position) => (key * perKey + position + 1) % FORCED_DEAD_EVERY === 0),
      ),
    );

    // Settled: every event answered 2xx once, or refused MAX_ATTEMPTS times (dead).
    const unsettled = () => {
      const requests = requestsTo('ordered');
      const ok = new Set<string>();
      const refused = new Map<string, number>();
      for (const request of requests) {
        const id = request.envelope.event_id;
        if (forced.has(id)) refused.set(id, (refused.get(id) ?? 0) + 1);
        if (accepted(request)) ok.add(id);
      }
      return all.filter((id) => (forced.has(id) ? (refused.get(id) ?? 0) < MAX_ATTEMPTS : !ok.has(id)));
    };
    // Besides the forced ones, an event may go dead by chance (4 faults in a row): read from its history.
    const dead = new Set(forced);
    const statusOf = async (id: string) =>
      eventHistoryResponseSchema.parse((await admin('GET', `/webhooks/events/${id}`)).body).deliveries[0]
        ?.status;
    const settled = await eventually(
      async () => {
        const waiting = unsettled().filter((id) => !dead.has(id));
        if (waiting.length > KEYS) return undefined;
        for (const id of waiting) if ((await statusOf(id)) === 'dead') dead.add(id);
        return waiting.every((id) => dead.has(id)) ? requestsTo('ordered') : undefined;
      },
      { timeoutMs: 420_000, intervalMs: 500 },
    ).catch(async (error: unknown) => {
      // What each held key waits for: its first unsettled event's delivery.
      const waiting = unsettled();
      const heads = published.map((ids) => ids.find((id) => waiting.includes(id))).filter((id) => id);
      console.log(`ordered delivery: ${waiting.length} events unsettled on ${heads.length} keys`);
      for (const id of heads.slice(0, 5))
        console.log(JSON.stringify((await admin('GET', `/webhooks/events/${id}`)).body.deliveries));
      throw error;
    });
    const settledIn = Date.now() - started;

    // Per key: the requests of each event form one run, the runs follow publication order.
    const byKey = new Map<string, ReceivedRequest[]>();
    for (const request of settled) {
      const { account } = dataOf(request);
      byKey.set(account, [...(byKey.get(account) ?? []), request]);
    }
    expect(byKey.size).toBe(KEYS);
    let outOfOrder = 0;
    for (const [account, requests] of byKey) {
      const runs: number[] = [];
      for (const request of [...requests].sort((a, b) => a.receivedAt - b.receivedAt)) {
        const position = dataOf(request).position;
        if (runs.at(-1) !== position) runs.push(position);
      }
      const expected = [...new Set(runs)].sort((a, b) => a - b);
      if (runs.length !== expected.length || runs.some((position, index) => position !== expected[index])) {
        outOfOrder += 1;
        console.log(`key ${account} out of order: ${runs.join(',')}`);
      }
    }
    const attempts = settled.length;
    console.log(
      `ordered delivery: ${EVENTS} events over ${KEYS} keys settled in ${(settledIn / 1000).toFixed(1)} s, ` +
        `${attempts} requests, ${forced.size} dead by design and ${dead.size - forced.size} by chance, ` +
        `${outOfOrder} keys out of order`,
    );
    expect(outOfOrder).toBe(0);

    // Nothing lost: the dead ones are recorded dead after every attempt, the others delivered.
    for (const id of [...dead, ...all.filter((id) => !dead.has(id)).slice(0, 5)]) {
      const history = eventHistoryResponseSchema.parse((await admin('GET', `/webhooks/events/${id}`)).body);
      const [delivery] = history.deliveries;
      expect(delivery?.status).toBe(dead.has(id) ? 'dead' : 'delivered');
      if (dead.has(id)) expect(delivery?.attempts).toHaveLength(MAX_ATTEMPTS);
    }

    // The dead ones replayed join the end of their keys and are delivered.
    healthy = true;
    const replay = await admin('POST', '/webhooks/replay', { event_ids: [...dead] });
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    await eventually(
      async () => {
        const ok = new Set(
          requestsTo('ordered')
            .filter(accepted)
            .map((request) => request.envelope.event_id),
        );
        return [...dead].every((id) => ok.has(id)) ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }, 600_000);
});
