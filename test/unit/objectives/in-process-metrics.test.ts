import { describe, expect, it } from 'vitest';
import { InProcessMetrics } from '../../../functions/adapters/local/in-process-metrics';
import type { Clock } from '../../../functions/ports/clock';

const clockAt = (iso: string) => {
  let now = new Date(iso);
  const clock: Clock = { now: () => now };
  return { clock, set: (next: string) => (now = new Date(next)) };
};

describe('InProcessMetrics', () => {
  it('reports nothing measured at start, over a window from its creation', async () => {
    const time = clockAt('2026-11-22T10:00:00.000Z');
    const metrics = new InProcessMetrics(time.clock);
    time.set('2026-11-22T11:00:00.000Z');
    const figures = await metrics.read();
    expect(figures).toEqual({
      windowStart: new Date('2026-11-22T10:00:00.000Z'),
      windowEnd: new Date('2026-11-22T11:00:00.000Z'),
      source: 'in_process',
      receipts: { issued: 0, totalsMismatched: 0, unsigned: 0 },
      lockWindow: { decided: 0, inside: 0 },
      latency: { getPrice: { count: 0, p95Ms: null }, quote: { count: 0, p95Ms: null } },
      delivery: { firstAttempts: 0, firstAttemptSuccesses: 0, latency: { count: 0, p95Ms: null } },
      requests: { total: 0, serverErrors: 0 },
    });
  });

  it('counts commits, refusals, requests and deliveries as the objectives read them', async () => {
    const metrics = new InProcessMetrics(clockAt('2026-11-22T10:00:00.000Z').clock);
    metrics.commitIssued({ totalsEqual: true, insideLockWindow: true, signedWithVersions: true });
    metrics.commitIssued({ totalsEqual: false, insideLockWindow: true, signedWithVersions: false });
    metrics.commitRefusedExpired();
    for (let index = 1; index <= 20; index += 1)
      metrics.requestServed('getPrice', { durationMs: index, statusCode: 200 });
    metrics.requestServed('quote', { durationMs: 42, statusCode: 201 });
    metrics.requestServed('commit', { durationMs: 9, statusCode: 500 });
    metrics.deliveryAttempted({ firstAttempt: true, success: true, msSinceFirstAttempt: 12 });
    metrics.deliveryAttempted({ firstAttempt: true, success: false });
    metrics.deliveryAttempted({ firstAttempt: false, success: true, msSinceFirstAttempt: 2_012 });
    metrics.breakerStates({ pairs: 3, open: 1 });
    metrics.flush();
    const figures = await metrics.read();
    expect(figures.receipts).toEqual({ issued: 2, totalsMismatched: 1, unsigned: 1 });
    expect(figures.lockWindow).toEqual({ decided: 3, inside: 2 });
    // p95 of 1..20 ms is 19 ms; the histogram answers its bucket's upper bound (within 1/64).
    expect(figures.latency.getPrice.count).toBe(20);
    expect(figures.latency.getPrice.p95Ms).toBeGreaterThanOrEqual(19);
    expect(figures.latency.getPrice.p95Ms).toBeLessThanOrEqual(19 * (1 + 1 / 64));
    expect(figures.latency.quote).toEqual({ count: 1, p95Ms: 42 });
    expect(figures.delivery).toEqual({
      firstAttempts: 2,
      firstAttemptSuccesses: 1,
      latency: { count: 2, p95Ms: 2_012 },
    });
    expect(figures.requests).toEqual({ total: 22, serverErrors: 1 });
    expect(metrics.lastBreakerStates()).toEqual({ pairs: 3, open: 1 });
  });
});
