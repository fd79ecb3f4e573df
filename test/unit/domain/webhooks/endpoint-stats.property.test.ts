/**
 * Endpoint stats (C32) from 5-minute slots: counting attempts slot by slot and summing the slots gives the same
 * figures as counting them all at once (any split, any order); the success rate is the 2xx share; p50/p95 are the
 * upper bounds of the buckets that hold those ranks; slots floor to 5 minutes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addAttempt,
  emptyTally,
  endpointStats,
  LATENCY_BOUNDS_MS,
  type SentAttempt,
  slotOf,
  statusClassOf,
  sumTallies,
} from '../../../../functions/domain/webhooks/endpoint-stats';

const attempt = fc.record({
  http_status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
  duration_ms: fc.integer({ min: 0, max: 60_000 }),
});
const tallyOf = (attempts: readonly SentAttempt[]) =>
  attempts.reduce((tally, one) => addAttempt(tally, one), emptyTally());

describe('endpoint stats', () => {
  it('summing slots equals counting everything at once, however the attempts are split', () => {
    fc.assert(
      fc.property(fc.array(fc.array(attempt, { maxLength: 30 }), { maxLength: 8 }), (slots) => {
        const all = slots.flat();
        expect(sumTallies(slots.map(tallyOf))).toEqual(tallyOf(all));
        const stats = endpointStats(tallyOf(all));
        expect(stats.attempts).toBe(all.length);
        const ok = all.filter(
          (one) => one.http_status !== undefined && one.http_status < 300 && one.http_status >= 200,
        );
        if (all.length === 0) expect(stats.success_rate).toBeNull();
        else expect(stats.success_rate).toBe(Math.round((ok.length / all.length) * 10_000) / 10_000);
      }),
    );
  });

  it('p50 and p95 are the upper bounds of the buckets holding those ranks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 29_000 }), { minLength: 1, maxLength: 200 }),
        (durations) => {
          const stats = endpointStats(
            tallyOf(durations.map((duration_ms) => ({ http_status: 200, duration_ms }))),
          );
          const sorted = [...durations].sort((a, b) => a - b);
          for (const [q, value] of [
            [0.5, stats.latency_ms.p50],
            [0.95, stats.latency_ms.p95],
          ] as const) {
            const exact = sorted[Math.ceil(q * sorted.length) - 1] ?? 0;
            const bound = LATENCY_BOUNDS_MS.find((candidate) => exact <= candidate);
            expect(value).toBe(bound);
          }
        },
      ),
    );
  });

  it('classes statuses and network errors, and floors slots to 5 minutes', () => {
    expect(
      [204, 302, 429, 503, undefined].map((http_status) => statusClassOf({ http_status, duration_ms: 1 })),
    ).toEqual(['2xx', '3xx', '4xx', '5xx', 'network']);
    expect(slotOf(new Date('2026-11-26T12:34:59.999Z'))).toBe('2026-11-26T12:30');
    expect(slotOf(new Date('2026-11-26T12:35:00.000Z'))).toBe('2026-11-26T12:35');
    expect(endpointStats(tallyOf([{ http_status: 200, duration_ms: 45_000 }])).latency_ms).toEqual({
      p50: null,
      p95: null,
    });
  });
});
