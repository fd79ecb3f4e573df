import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUCKET_COUNT,
  LatencyHistogram,
  RELATIVE_ERROR,
} from '../../../functions/adapters/local/latency-histogram';

/** The oracle: nearest-rank percentile of the values (rounded to the microsecond, as recorded) by sorting. */
const nearestRank = (values: readonly number[], q: number): number => {
  const sorted = values.map((value) => Math.round(value * 1000)).sort((a, b) => a - b);
  return (sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number) / 1000;
};

const histogramOf = (values: readonly number[]): LatencyHistogram => {
  const histogram = new LatencyHistogram();
  for (const value of values) histogram.record(value);
  return histogram;
};

/** Latencies in ms from sub-millisecond reads to half-hour deliveries (the range the buckets cover). */
const latencyMs = fc.oneof(
  fc.double({ min: 0, max: 2, noNaN: true }),
  fc.double({ min: 0, max: 500, noNaN: true }),
  fc.double({ min: 0, max: 2_000_000, noNaN: true }),
  fc.integer({ min: 0, max: 200 }),
);

describe('LatencyHistogram', () => {
  it('has no percentile without samples', () => {
    expect(new LatencyHistogram().percentile(0.95)).toBeNull();
    expect(new LatencyHistogram().count).toBe(0);
  });

  it('p95 is never below the sorted-array p95 and at most 1/64 above it', () => {
    fc.assert(
      fc.property(fc.array(latencyMs, { minLength: 1, maxLength: 400 }), (values) => {
        const estimate = histogramOf(values).percentile(0.95) as number;
        const exact = nearestRank(values, 0.95);
        expect(estimate).toBeGreaterThanOrEqual(exact);
        expect(estimate).toBeLessThanOrEqual(exact * (1 + RELATIVE_ERROR) + 1e-9);
      }),
      { numRuns: 300 },
    );
  });

  it('any percentile keeps the same bound, and the count is exact', () => {
    fc.assert(
      fc.property(
        fc.array(latencyMs, { minLength: 1, maxLength: 200 }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (values, q) => {
          const histogram = histogramOf(values);
          const exact = nearestRank(values, q);
          const estimate = histogram.percentile(q) as number;
          expect(histogram.count).toBe(values.length);
          expect(estimate).toBeGreaterThanOrEqual(exact);
          expect(estimate).toBeLessThanOrEqual(exact * (1 + RELATIVE_ERROR) + 1e-9);
        },
      ),
    );
  });

  it('is exact below 128 µs and for a single value', () => {
    expect(histogramOf([0.005, 0.1, 0.127]).percentile(1)).toBe(0.127);
    expect(histogramOf([37.25]).percentile(0.95)).toBe(37.25);
    expect(histogramOf([3_000]).percentile(0.5)).toBe(3_000);
  });

  it('counts negative and non-finite values at the ends instead of failing', () => {
    const histogram = histogramOf([-5, Number.POSITIVE_INFINITY, Number.NaN]);
    expect(histogram.count).toBe(3);
    expect(histogram.percentile(1 / 3)).toBe(0);
    expect(histogram.percentile(1)).toBeCloseTo((2 ** 31 - 1) / 1000, 6);
  });

  it('keeps a fixed memory however many values it records', () => {
    const histogram = new LatencyHistogram();
    expect(histogram.size).toBe(BUCKET_COUNT);
    for (let index = 0; index < 200_000; index += 1) histogram.record((index * 7919) % 5_000_000);
    expect(histogram.size).toBe(BUCKET_COUNT);
    expect(histogram.count).toBe(200_000);
    expect(BUCKET_COUNT).toBe(1664);
  });
});
