import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../../functions/domain/money/decimal';
import {
  AggregationError,
  isPositiveRate,
  MAX_TICKS,
  medianRate,
  parseRate,
  providerRate,
  roundRate,
  type Tick,
  trimTicks,
  twapRate,
  twapWeights,
} from '../../../functions/domain/rates/aggregate';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const tick = (rate: string, seconds: number, source?: string): Tick => ({
  rate,
  observed_at: at(seconds),
  ...(source ? { source } : {}),
});
const end = (seconds: number) => new Date(T0 + seconds * 1000);

/** Decimal strings with up to 6 decimals, from 0.000001 to 99 999.999999. */
const rateArb = fc
  .tuple(fc.integer({ min: 1, max: 99_999_999_999 }), fc.integer({ min: 0, max: 6 }))
  .map(([digits, scale]) =>
    dec(String(digits))
      .dividedBy(10 ** scale)
      .toFixed(scale),
  );

describe('rates and rounding', () => {
  it('recognises positive decimal strings only', () => {
    expect(isPositiveRate('1.0845')).toBe(true);
    expect(isPositiveRate('0')).toBe(false);
    expect(isPositiveRate('0.000')).toBe(false);
    expect(isPositiveRate('-1.2')).toBe(false);
    expect(isPositiveRate('1e3')).toBe(false);
    expect(isPositiveRate(' 1.2')).toBe(false);
    expect(isPositiveRate(1.2)).toBe(false);
    expect(() => parseRate('abc')).toThrow(RangeError);
  });

  it('rounds half to even with exactly `precision` decimals', () => {
    expect(roundRate(dec('1.08445'), 4)).toBe('1.0844');
    expect(roundRate(dec('1.08455'), 4)).toBe('1.0846');
    expect(roundRate(dec('1.2'), 4)).toBe('1.2000');
    expect(roundRate(dec('157.5'), 0)).toBe('158');
    expect(roundRate(dec('156.5'), 0)).toBe('156');
  });

  it('refuses a rate that rounds to zero and an invalid precision', () => {
    expect(() => roundRate(dec('0.00004'), 4)).toThrow(AggregationError);
    expect(() => roundRate(dec('0.00004'), 4)).toThrow('not a positive rate at 4 decimals');
    expect(() => roundRate(dec('1'), -1)).toThrow(RangeError);
    expect(() => roundRate(dec('1'), 13)).toThrow(RangeError);
    expect(() => roundRate(dec('1'), 1.5)).toThrow(RangeError);
  });
});

describe('provider', () => {
  it('takes the first available source in fallback order', () => {
    expect(providerRate(['1.08', '1.09'])).toBe('1.08');
    expect(providerRate([undefined, '1.09', '1.10'])).toBe('1.09');
    expect(providerRate([undefined, undefined])).toBeUndefined();
    expect(providerRate([])).toBeUndefined();
  });
});

describe('median', () => {
  it('of three sources ignores one outlier', () => {
    expect(medianRate(['1.0845', '1.0851', '9.9999'], 4)).toBe('1.0851');
    expect(medianRate(['0.0001', '1.0845', '1.0851'], 4)).toBe('1.0845');
  });

  it('of an even count is the exact mean of the two middle rates, rounded half-even', () => {
    expect(medianRate(['1.0845', '1.0850', '1.0900', '0.5'], 4)).toBe('1.0848');
    expect(medianRate(['1.0843', '1.0850', '1.0900', '0.5'], 5)).toBe('1.08465');
    expect(medianRate(['1.0843', '1.0850', '1.0900', '0.5'], 4)).toBe('1.0846');
  });

  it('needs at least three rates', () => {
    expect(() => medianRate(['1.08', '1.09'], 4)).toThrow(AggregationError);
    try {
      medianRate([], 4);
    } catch (error) {
      expect((error as AggregationError).reason).toBe('insufficient_sources');
    }
    expect(() => medianRate(['1', '2', 'x'], 4)).toThrow(RangeError);
    expect(() => medianRate(['1', '2', '3'], 20)).toThrow(RangeError);
  });

  it('is the same for every permutation of its inputs (property)', () => {
    fc.assert(
      fc.property(
        fc
          .array(rateArb, { minLength: 3, maxLength: 9 })
          .chain((rates) =>
            fc.tuple(fc.constant(rates), fc.shuffledSubarray(rates, { minLength: rates.length })),
          ),
        fc.integer({ min: 0, max: 12 }),
        ([rates, shuffled], precision) => {
          fc.pre(rates.some((rate) => dec(rate).gte(dec('1'))));
          let expected: string | undefined;
          try {
            expected = medianRate(rates, precision);
          } catch {
            return;
          }
          expect(medianRate(shuffled, precision)).toBe(expected);
        },
      ),
    );
  });

  it('lies between the smallest and the largest input (property)', () => {
    fc.assert(
      fc.property(fc.array(rateArb, { minLength: 3, maxLength: 9 }), (rates) => {
        const median = dec(medianRate(rates, 12));
        const sorted = rates.map((rate) => dec(rate)).sort((a, b) => a.comparedTo(b));
        expect(median.gte(sorted[0] as ReturnType<typeof dec>)).toBe(true);
        expect(median.lte(sorted.at(-1) as ReturnType<typeof dec>)).toBe(true);
      }),
    );
  });
});

describe('twap', () => {
  it('weights each tick by how long it was in force inside the window', () => {
    // Window [0, 600]: 1.00 for 0–300, 1.10 for 300–600 → 1.05.
    expect(twapRate([tick('1.00', 0), tick('1.10', 300)], { end: end(600), seconds: 600 }, 4)).toBe('1.0500');
    // 1.00 for 0–100, 1.30 for 100–600 → (100 × 1.00 + 500 × 1.30) / 600 = 1.25.
    expect(twapRate([tick('1.00', 0), tick('1.30', 100)], { end: end(600), seconds: 600 }, 4)).toBe('1.2500');
  });

  it('counts a tick from before the window from the window start, and ignores ticks after its end', () => {
    const ticks = [tick('5.00', -1000), tick('1.00', -300), tick('2.00', 300), tick('9.00', 900)];
    // Window [0, 600]: 1.00 (in force since −300) for 0–300, 2.00 for 300–600 → 1.50.
    expect(twapWeights(ticks, { end: end(600), seconds: 600 }).map((entry) => entry.weight_ms)).toEqual([
      300_000, 300_000,
    ]);
    expect(twapRate(ticks, { end: end(600), seconds: 600 }, 2)).toBe('1.50');
  });

  it('is exact in decimal and rounds half-even once', () => {
    // (1 × 1.0001 + 2 × 1.0004) / 3 = 1.0003 exactly.
    expect(twapRate([tick('1.0001', 0), tick('1.0004', 1)], { end: end(3), seconds: 3 }, 4)).toBe('1.0003');
    // 1/3 × 1 + 2/3 × 2 = 1.666… → 1.67.
    expect(twapRate([tick('1', 0), tick('2', 1)], { end: end(3), seconds: 3 }, 2)).toBe('1.67');
  });

  it('gives a tick observed at the window end no weight; alone, it is the rate in force', () => {
    expect(twapRate([tick('1.00', 0), tick('2.00', 600)], { end: end(600), seconds: 600 }, 2)).toBe('1.00');
    expect(twapRate([tick('2.00', 600)], { end: end(600), seconds: 600 }, 2)).toBe('2.00');
  });

  it('lets the later of two ticks at the same instant replace the earlier', () => {
    expect(twapRate([tick('1.00', 0), tick('3.00', 0)], { end: end(60), seconds: 60 }, 2)).toBe('3.00');
    expect(twapRate([tick('3.00', 60), tick('1.00', 60)], { end: end(60), seconds: 60 }, 2)).toBe('1.00');
  });

  it('uses the last tick in force when every tick is older than the window', () => {
    expect(twapRate([tick('1.10', -5000), tick('1.20', -4000)], { end: end(600), seconds: 600 }, 2)).toBe(
      '1.20',
    );
  });

  it('refuses an empty window, a window of no length and a tick without a time', () => {
    expect(() => twapRate([], { end: end(600), seconds: 600 }, 2)).toThrow(AggregationError);
    expect(() => twapRate([tick('1.00', 700)], { end: end(600), seconds: 600 }, 2)).toThrow(
      'no tick observed at or before the window end',
    );
    expect(() => twapRate([tick('1.00', 0)], { end: end(600), seconds: 0 }, 2)).toThrow(RangeError);
    expect(() =>
      twapRate([{ rate: '1', observed_at: 'yesterday' }], { end: end(60), seconds: 60 }, 2),
    ).toThrow(RangeError);
    expect(() => twapRate([tick('1.00', 0)], { end: end(60), seconds: 60 }, 99)).toThrow(RangeError);
  });

  it('lies between the smallest and the largest rate in force during the window (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(rateArb, fc.integer({ min: -900, max: 900 })), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 900 }),
        (entries, seconds) => {
          const ticks = entries.map(([rate, time]) => tick(rate, time));
          const window = { end: end(600), seconds };
          fc.pre(ticks.some((entry) => Date.parse(entry.observed_at) <= end(600).getTime()));
          const weighted = twapWeights(ticks, window).map(({ tick: entry }) => dec(entry.rate));
          const inForce = weighted.length > 0 ? weighted : [dec(twapRate(ticks, window, 12))];
          const value = dec(twapRate(ticks, window, 12));
          const min = inForce.reduce((a, b) => (a.lt(b) ? a : b));
          const max = inForce.reduce((a, b) => (a.gt(b) ? a : b));
          expect(value.gte(min)).toBe(true);
          expect(value.lte(max)).toBe(true);
          const total = twapWeights(ticks, window).reduce((sum, entry) => sum + entry.weight_ms, 0);
          expect(total).toBeLessThanOrEqual(seconds * 1000);
        },
      ),
    );
  });

  it('of a constant rate is that rate (property)', () => {
    fc.assert(
      fc.property(rateArb, fc.array(fc.integer({ min: -900, max: 600 }), { minLength: 1 }), (rate, times) => {
        expect(
          twapRate(
            times.map((time) => tick(rate, time)),
            { end: end(600), seconds: 600 },
            6,
          ),
        ).toBe(dec(rate).toFixed(6));
      }),
    );
  });
});

describe('trimTicks', () => {
  it('keeps the ticks of the window and the last one before it, in time order', () => {
    const ticks = [tick('4', 500), tick('1', -900), tick('2', -100), tick('3', 100)];
    expect(trimTicks(ticks, { end: end(600), seconds: 600 }).map((entry) => entry.rate)).toEqual([
      '2',
      '3',
      '4',
    ]);
    expect(trimTicks(ticks, { end: end(600), seconds: 100 }).map((entry) => entry.rate)).toEqual(['3', '4']);
    expect(trimTicks(ticks, { end: end(2000), seconds: 60 }).map((entry) => entry.rate)).toEqual(['4']);
    expect(trimTicks([], { end: end(600), seconds: 60 })).toEqual([]);
  });

  it('never keeps more than MAX_TICKS, the newest', () => {
    const many = Array.from({ length: MAX_TICKS + 10 }, (_, index) => tick(String(index + 1), index));
    const kept = trimTicks(many, { end: end(MAX_TICKS + 10), seconds: 10 * MAX_TICKS });
    expect(kept).toHaveLength(MAX_TICKS);
    expect(kept.at(-1)?.rate).toBe(String(MAX_TICKS + 10));
  });

  it('keeps what the TWAP needs: the TWAP of the trimmed ticks is the TWAP of all (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(rateArb, fc.integer({ min: -2000, max: 600 })), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 900 }),
        (entries, seconds) => {
          const ticks = entries.map(([rate, time]) => tick(rate, time));
          const window = { end: end(600), seconds };
          expect(twapRate(trimTicks(ticks, window), window, 12)).toBe(twapRate(ticks, window, 12));
        },
      ),
    );
  });
});
