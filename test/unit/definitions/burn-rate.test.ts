import { describe, expect, it } from 'vitest';
import { burnRateOf } from '../../../functions/definitions/objectives';

describe('error budget burn rate of a ratio objective', () => {
  const ratio = { comparison: 'at_least' as const, unit: 'ratio', target: 0.9995 };
  it('is misses over the budget: 1 at budget, more above it, 0 without misses', () => {
    expect(burnRateOf({ ...ratio, measured: 0.9995 })).toBeCloseTo(1, 9);
    expect(burnRateOf({ ...ratio, measured: 0.9928 })).toBeCloseTo(14.4, 9);
    expect(burnRateOf({ ...ratio, measured: 1 })).toBe(0);
  });
  it('has none for latencies, counts or no measurement; an objective without budget burns at any miss', () => {
    expect(burnRateOf({ comparison: 'at_most', unit: 'ms', target: 120, measured: 80 })).toBeUndefined();
    expect(burnRateOf({ ...ratio, measured: null })).toBeUndefined();
    expect(burnRateOf({ ...ratio, target: 1, measured: 0.999 })).toBe(Number.POSITIVE_INFINITY);
    expect(burnRateOf({ ...ratio, target: 1, measured: 1 })).toBe(0);
  });
});
