import { describe, expect, it } from 'vitest';
import { InProcessMetrics } from '../../../functions/adapters/local/in-process-metrics';
import type { RouteDefinition } from '../../../functions/definitions';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import { createHttpApi, type Operation } from '../../../functions/handlers/middleware/http';
import { createLogger } from '../../../functions/shared/logger';
import { lambdaContext, proxyEvent } from '../support/lambda';
import { route } from '../support/routes';

const routes: readonly RouteDefinition[] = [
  route('GET', '/catalog/prices', 'getPrice'),
  route('POST', '/pricing/quote', 'quote'),
];

/** The local recorder, counting flushes (one per invocation is expected). */
class CountingMetrics extends InProcessMetrics {
  flushes = 0;
  override flush(): void {
    this.flushes += 1;
  }
}

/** A monotonic clock that moves only when read: each reading is `stepMs` after the previous one. */
const steppingClock = (startMs: number, stepMs: number) => {
  let next = startMs;
  return () => {
    const reading = next;
    next += stepMs;
    return reading;
  };
};

const apiWith = (operations: Record<string, Operation>, stepMs: number) => {
  const metrics = new CountingMetrics({ now: () => new Date('2026-11-22T10:00:00.000Z') });
  const api = createHttpApi({
    functionId: 'api',
    logger: createLogger({ logLevel: 'SILENT' }),
    operations,
    routes,
    metrics,
    now: steppingClock(1_000, stepMs),
  });
  return { api, metrics };
};

describe('createHttpApi: request measurement', () => {
  it('records each operation’s duration from the injected clock and its status, and flushes once per request', async () => {
    const { api, metrics } = apiWith(
      {
        getPrice: async () => ({ statusCode: 200, body: { ok: true } }),
        quote: async () => ({ statusCode: 201, body: {} }),
      },
      7.5,
    );
    const price = await api(proxyEvent({ resource: '/catalog/prices' }), lambdaContext());
    expect(price.statusCode).toBe(200);
    await api(proxyEvent({ method: 'POST', resource: '/pricing/quote', body: '{}' }), lambdaContext());
    const figures = await metrics.read();
    expect(figures.latency.getPrice).toEqual({ count: 1, p95Ms: 7.5 });
    expect(figures.latency.quote).toEqual({ count: 1, p95Ms: 7.5 });
    expect(figures.requests).toEqual({ total: 2, serverErrors: 0 });
    expect(metrics.flushes).toBe(2);
  });

  it('measures refused and failed requests with the status of their C6 answer', async () => {
    const { api, metrics } = apiWith(
      {
        getPrice: async () => {
          throw new HttpError('not_found', 'no such sku');
        },
        quote: async () => {
          throw new Error('boom');
        },
      },
      3,
    );
    const refused = await api(proxyEvent({ resource: '/catalog/prices' }), lambdaContext());
    expect(refused.statusCode).toBe(404);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'not_found' });
    const failed = await api(proxyEvent({ method: 'POST', resource: '/pricing/quote' }), lambdaContext());
    expect(failed.statusCode).toBe(500);
    const figures = await metrics.read();
    expect(figures.latency.getPrice).toEqual({ count: 1, p95Ms: 3 });
    expect(figures.latency.quote).toEqual({ count: 1, p95Ms: 3 });
    expect(figures.requests).toEqual({ total: 2, serverErrors: 1 });
    expect(metrics.flushes).toBe(2);
  });

  it('a request matching no route is answered 404 and not measured, but the invocation still flushes', async () => {
    const { api, metrics } = apiWith(
      { getPrice: async () => ({ statusCode: 200 }), quote: async () => ({ statusCode: 201 }) },
      1,
    );
    const answer = await api(proxyEvent({ resource: '/nowhere' }), lambdaContext());
    expect(answer.statusCode).toBe(404);
    expect((await metrics.read()).requests.total).toBe(0);
    expect(metrics.flushes).toBe(1);
  });

  it('without a recorder nothing is measured and answers are unchanged', async () => {
    const api = createHttpApi({
      functionId: 'api',
      logger: createLogger({ logLevel: 'SILENT' }),
      operations: {
        getPrice: async () => ({ statusCode: 200, body: { ok: true } }),
        quote: async () => ({ statusCode: 201 }),
      },
      routes,
    });
    const answer = await api(proxyEvent({ resource: '/catalog/prices' }), lambdaContext());
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
  });
});
