/**
 * `GET /admin/slo` on the local stack (demo catalog with its rate policy): after a run of price reads,
 * webhook deliveries to a loopback receiver (a third of the events refused on their first attempt, delivered
 * on the retry), quotes and commits (some after the rate lock ended, on a clock moved past `lock_ttl`), the
 * report gives each objective's measured value and sample count from the in-process counters, the delivery
 * DLQ depth and the FX breakers read live; an open breaker and a dead letter turn their objectives not met.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InProcessMetrics } from '../../functions/adapters/local/in-process-metrics';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { OBJECTIVES } from '../../functions/definitions/objectives';
import type { Clock } from '../../functions/ports/clock';
import { serviceObjectivesResponseSchema } from '../../functions/schemas/responses';
import { eventHistoryResponseSchema } from '../../functions/schemas/webhooks';
import { testAdmins } from '../support/change-requests';
import { demoCatalog } from '../support/demo-stack';
import { startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_slo_0123456789abcdef';
const ADMIN = 'adm_slo_0123456789abcdef';
const TENANT = 'tenant-slo';
const LOCK_TTL_SECONDS = 300;
const PRICE_READS = 20;
const EVENTS = 6;
const COMMITTED = 4;
const EXPIRED = 2;
/** Events whose first attempt the receiver refuses (503): every third one. */
const refusedFirst = (seq: number) => seq % 3 === 0;

let stack: LocalStack;
let receiver: TestReceiver;
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

type Json = Record<string, unknown>;

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
};
const api = (method: string, path: string, body?: unknown) =>
  call(method, path, body, { 'x-api-key': API_KEY });
const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, body, { authorization: `Bearer ${ADMIN}` });

const report = async () => {
  const answer = await admin('GET', '/admin/slo');
  expect(answer.status).toBe(200);
  return serviceObjectivesResponseSchema.parse(answer.body);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the report until `ready` holds (measurements land after the answers they measure). */
const reportWhen = async (
  ready: (value: Awaited<ReturnType<typeof report>>) => boolean,
  timeoutMs = 30_000,
) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await report();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`report not ready: ${JSON.stringify(value.objectives)}`);
    await sleep(200);
  }
};

beforeAll(async () => {
  receiver = await startReceiver((request) => {
    const seq = (request.envelope.data as { seq?: number } | undefined)?.seq ?? 0;
    return refusedFirst(seq) && request.envelope.attempt === 1
      ? { kind: 'respond', status: 503 }
      : { kind: 'respond', status: 200 };
  });
  stack = await startLocalStack({
    port: 0,
    apiKey: API_KEY,
    adminToken: ADMIN,
    admins: testAdmins(ADMIN),
    logLevel: 'SILENT',
    clock,
    seedCatalog: demoCatalog(),
    rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
    streamPollIntervalMs: 50,
    webhooks: {
      policy: {
        backoffSeconds: [1, 1, 1],
        dailyRetryDays: 0,
        jitter: { min: 1, max: 1 },
        attemptTimeoutMs: 5_000,
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

describe('GET /admin/slo (local stack)', () => {
  it('refuses callers without admin credentials', async () => {
    expect([401, 403]).toContain((await call('GET', '/admin/slo')).status);
    expect([401, 403]).toContain((await api('GET', '/admin/slo')).status);
    expect([401, 403]).toContain(
      (await call('GET', '/admin/slo', undefined, { authorization: 'Bearer adm_wrong_0123456789abcdef' }))
        .status,
    );
  });

  it('reports every objective from a run of reads, deliveries, quotes and commits', async () => {
    const before = await report();
    expect(before.source).toBe('in_process');
    expect(Object.keys(before.objectives).sort()).toEqual(Object.keys(OBJECTIVES).sort());
    expect(before.objectives.totals_match).toMatchObject({ samples: 0, measured: null, status: 'no_data' });
    // The rates run at start reported the policy's breakers (all closed).
    const recorder = stack.deps.metrics.figures as InProcessMetrics;
    expect(recorder.lastBreakerStates()).toEqual({ pairs: 3, open: 0 });

    // Price reads.
    for (let index = 0; index < PRICE_READS; index += 1) {
      const price = await api('GET', '/catalog/prices?sku=GAME-STARFALL-PS5&currency=EUR&region=DE');
      expect(price.status).toBe(200);
    }

    // Webhook deliveries: every third event is refused once, then delivered by the 1 s retry.
    const endpoint = await admin('POST', '/webhooks/endpoints', {
      url: receiver.baseUrl,
      tenant: TENANT,
      topics: ['payout'],
    });
    expect(endpoint.status).toBe(201);
    const eventIds: string[] = [];
    for (let seq = 1; seq <= EVENTS; seq += 1) {
      const published = await admin('POST', '/webhooks/events', {
        type: 'payout.processed',
        tenant: TENANT,
        data: { payout_id: `po_slo_${seq}`, status: 'paid', amount_minor: 1000 + seq, currency: 'EUR', seq },
      });
      expect(published.status).toBe(202);
      eventIds.push(String(published.body.event_id));
    }
    const refused = Array.from({ length: EVENTS }, (_, index) => index + 1).filter(refusedFirst).length;
    const delivered = await reportWhen((value) => value.objectives.delivery_latency_p95.samples === EVENTS);

    // Quotes and commits: four inside the lock, two after it ended (refused `quote_expired`).
    const quotes: Json[] = [];
    for (let index = 0; index < COMMITTED + EXPIRED; index += 1) {
      const quoted = await api('POST', '/pricing/quote', {
        items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: index + 1 }],
        region: 'DE',
        currency: 'EUR',
        buyer_type: 'consumer',
        lock_ttl: LOCK_TTL_SECONDS,
      });
      expect(quoted.status, JSON.stringify(quoted.body)).toBe(201);
      quotes.push(quoted.body);
    }
    const commit = (quote: Json) =>
      api('POST', '/pricing/commit', { quote_id: quote.quote_id, signature: quote.signature });
    for (const quote of quotes.slice(0, COMMITTED)) expect((await commit(quote)).status).toBe(201);
    // Committing a quote again answers its receipt: still one receipt issued.
    expect((await commit(quotes[0] as Json)).status).toBe(201);
    offsetMs += (LOCK_TTL_SECONDS + 1) * 1000;
    for (const quote of quotes.slice(COMMITTED)) {
      const late = await commit(quote);
      expect(late.status).toBe(409);
      expect(late.body.error).toBe('quote_expired');
    }

    const after = await report();
    const { objectives } = after;
    expect(Date.parse(after.window_start)).toBeLessThanOrEqual(Date.parse(after.window_end));
    expect(objectives.totals_match).toMatchObject({ measured: 1, samples: COMMITTED, status: 'met' });
    expect(objectives.signed_receipts).toMatchObject({ measured: 1, samples: COMMITTED, status: 'met' });
    expect(objectives.lock_window).toMatchObject({
      samples: COMMITTED + EXPIRED,
      status: 'not_met',
      target: 0.99,
    });
    expect(objectives.lock_window.measured).toBeCloseTo(COMMITTED / (COMMITTED + EXPIRED), 12);
    expect(objectives.price_latency_p95.samples).toBe(PRICE_READS);
    expect(objectives.price_latency_p95.measured).toBeGreaterThan(0);
    expect(objectives.quote_latency_p95.samples).toBe(COMMITTED + EXPIRED);
    expect(objectives.quote_latency_p95.measured).toBeGreaterThan(0);
    expect(objectives.delivery_first_attempt_success).toMatchObject({ samples: EVENTS, status: 'not_met' });
    expect(objectives.delivery_first_attempt_success.measured).toBeCloseTo((EVENTS - refused) / EVENTS, 12);
    expect(objectives.delivery_dlq_depth).toMatchObject({
      measured: 0,
      samples: 1,
      status: 'met',
      basis: 'live',
    });
    expect(objectives.fx_breakers_open).toMatchObject({
      measured: 0,
      samples: 3,
      status: 'met',
      basis: 'live',
    });
    expect(after.open_breakers).toEqual([]);
    expect(objectives.availability).toMatchObject({ measured: 1, status: 'met' });
    expect(objectives.availability.samples).toBeGreaterThan(PRICE_READS + EVENTS + COMMITTED + EXPIRED);

    // Delivery latency: p95 of the times from attempt 1 to the 2xx, as the attempt records show them
    // (nearest rank of six is the largest; the histogram answers within 1/64 above it).
    const latencies: number[] = [];
    for (const [index, eventId] of eventIds.entries()) {
      const history = eventHistoryResponseSchema.parse(
        (await admin('GET', `/webhooks/events/${eventId}`)).body,
      );
      const attempts = history.deliveries[0]?.attempts ?? [];
      const first = attempts.find((attempt) => attempt.attempt === 1);
      const success = attempts.find((attempt) => attempt.outcome === 'delivered');
      expect(first && success).toBeTruthy();
      latencies.push(
        Date.parse(String(success?.at)) + Number(success?.duration_ms) - Date.parse(String(first?.at)),
      );
      expect(attempts).toHaveLength(refusedFirst(index + 1) ? 2 : 1);
    }
    const slowest = Math.max(...latencies);
    const measured = delivered.objectives.delivery_latency_p95.measured ?? 0;
    expect(measured).toBeGreaterThanOrEqual(slowest);
    expect(measured).toBeLessThanOrEqual(slowest * (1 + 1 / 64));
    // A retried delivery waited at least its 1 s backoff.
    expect(slowest).toBeGreaterThanOrEqual(1_000);
  });

  it('reports an open FX breaker and a dead letter live, as not met', async () => {
    const pair = 'EUR→BTC';
    for (;;) {
      const state = await stack.deps.rates.state.get(pair);
      const opened = await stack.deps.rates.state.put({
        ...state,
        breaker: { status: 'open', opened_at: clock.now().toISOString() },
      });
      if (opened.saved) break;
    }
    await stack.deps.queue.send('deliveryDlq', JSON.stringify({ dead_reason: 'test' }));
    const value = await reportWhen((current) => current.objectives.delivery_dlq_depth.measured === 1);
    expect(value.objectives.fx_breakers_open).toMatchObject({ measured: 1, samples: 3, status: 'not_met' });
    expect(value.open_breakers).toEqual([{ pair, opened_at: expect.any(String) }]);
    expect(value.objectives.delivery_dlq_depth).toMatchObject({ measured: 1, status: 'not_met' });
  });
});
