import { describe, expect, it } from 'vitest';
import { dec } from '../../../../functions/domain/money/decimal';
import {
  INTERMEDIATE_DECIMALS,
  ROUNDING_MODES,
  type RoundingMode,
  round,
  roundBankers,
  roundCeil,
  roundFloor,
  roundHalfUp,
  step,
} from '../../../../functions/domain/money/rounding';

const NAMED: Readonly<Record<RoundingMode, typeof roundHalfUp>> = {
  HALF_UP: roundHalfUp,
  BANKERS: roundBankers,
  FLOOR: roundFloor,
  CEIL: roundCeil,
};

/** [input, decimals, expected written with exactly `decimals` decimals]. */
type Row = readonly [input: string, decimals: number, expected: string];

const CASES: Readonly<Record<RoundingMode, readonly Row[]>> = {
  // Half away from zero.
  HALF_UP: [
    ['2.5', 0, '3'],
    ['-2.5', 0, '-3'],
    ['0.5', 0, '1'],
    ['2.4', 0, '2'],
    ['-2.4', 0, '-2'],
    ['2.345', 2, '2.35'],
    ['-2.345', 2, '-2.35'],
    ['2.344', 2, '2.34'],
    ['-2.344', 2, '-2.34'],
    ['2.346', 2, '2.35'],
    ['-2.346', 2, '-2.35'],
    ['1.0005', 3, '1.001'],
    ['-1.0005', 3, '-1.001'],
    ['1.0004', 3, '1.000'],
    ['-1.0006', 3, '-1.001'],
    ['0.000000005', 8, '0.00000001'],
    ['-0.000000005', 8, '-0.00000001'],
    ['0.000000014999', 8, '0.00000001'],
    ['-0.000000015001', 8, '-0.00000002'],
  ],
  // Half to even.
  BANKERS: [
    ['2.5', 0, '2'],
    ['3.5', 0, '4'],
    ['-2.5', 0, '-2'],
    ['-3.5', 0, '-4'],
    ['2.6', 0, '3'],
    ['-2.4', 0, '-2'],
    ['2.345', 2, '2.34'],
    ['2.355', 2, '2.36'],
    ['-2.345', 2, '-2.34'],
    ['-2.355', 2, '-2.36'],
    ['2.346', 2, '2.35'],
    ['-2.3451', 2, '-2.35'],
    ['1.0005', 3, '1.000'],
    ['1.0015', 3, '1.002'],
    ['-1.0005', 3, '-1.000'],
    ['-1.0015', 3, '-1.002'],
    ['1.00051', 3, '1.001'],
    ['0.000000015', 8, '0.00000002'],
    ['0.000000025', 8, '0.00000002'],
    ['-0.000000025', 8, '-0.00000002'],
    ['-0.000000035', 8, '-0.00000004'],
    ['0.0000000251', 8, '0.00000003'],
  ],
  // Toward −∞.
  FLOOR: [
    ['2.5', 0, '2'],
    ['2.9', 0, '2'],
    ['-2.1', 0, '-3'],
    ['-2.5', 0, '-3'],
    ['2.349', 2, '2.34'],
    ['-2.341', 2, '-2.35'],
    ['2.345', 2, '2.34'],
    ['-2.345', 2, '-2.35'],
    ['2.34', 2, '2.34'],
    ['1.0009', 3, '1.000'],
    ['-1.0001', 3, '-1.001'],
    ['0.000000019', 8, '0.00000001'],
    ['-0.000000011', 8, '-0.00000002'],
  ],
  // Toward +∞.
  CEIL: [
    ['2.1', 0, '3'],
    ['2.5', 0, '3'],
    ['-2.5', 0, '-2'],
    ['-2.9', 0, '-2'],
    ['2.341', 2, '2.35'],
    ['-2.349', 2, '-2.34'],
    ['2.345', 2, '2.35'],
    ['-2.345', 2, '-2.34'],
    ['-2.34', 2, '-2.34'],
    ['1.0001', 3, '1.001'],
    ['-1.0009', 3, '-1.000'],
    ['0.000000011', 8, '0.00000002'],
    ['-0.000000019', 8, '-0.00000001'],
  ],
};

const ROWS = ROUNDING_MODES.flatMap((mode) => CASES[mode].map((row) => [mode, ...row] as const));

describe('named rounding modes', () => {
  it('has exactly the four named modes', () => {
    expect([...ROUNDING_MODES].sort()).toEqual(['BANKERS', 'CEIL', 'FLOOR', 'HALF_UP']);
  });

  it('covers halves and non-halves of both signs at 0, 2, 3 and 8 decimals for every mode', () => {
    for (const mode of ROUNDING_MODES) {
      const rows = CASES[mode];
      expect(new Set(rows.map(([, decimals]) => decimals))).toEqual(new Set([0, 2, 3, 8]));
      expect(rows.some(([input]) => input.startsWith('-'))).toBe(true);
    }
  });

  it.each(ROWS)('%s rounds %s to %i decimals as %s', (mode, input, decimals, expected) => {
    const rounded = NAMED[mode](dec(input), decimals);
    expect(rounded.toFixed(decimals)).toBe(expected);
    expect(rounded.decimalPlaces()).toBeLessThanOrEqual(decimals);
  });

  it.each(ROWS)(
    'round(…, %s) dispatches to the named function for %s at %i decimals',
    (mode, input, decimals) => {
      const value = dec(input);
      expect(round(value, decimals, mode).toFixed(decimals)).toBe(
        NAMED[mode](value, decimals).toFixed(decimals),
      );
    },
  );

  it('leaves already-rounded values unchanged in every mode', () => {
    for (const mode of ROUNDING_MODES) {
      for (const input of ['0', '12.30', '-12.3', '1200', '0.125', '-0.00000001']) {
        expect(round(dec(input), 8, mode).eq(dec(input))).toBe(true);
      }
    }
  });

  it('does not change its argument (decimal.js values are immutable)', () => {
    const value = dec('2.345');
    roundHalfUp(value, 2);
    expect(value.toString()).toBe('2.345');
  });
});

describe('half-up line tax', () => {
  // "Half-up line tax": the usual retail POS explanation of rounding tax per line to the cent, half away from
  // zero: $0.43 × 15% = $0.0645 → $0.06 and $4.84 × 15% = $0.726 → $0.73.
  it.each([
    ['0.43', '0.15', '0.0645', '0.06'],
    ['4.84', '0.15', '0.726', '0.73'],
  ])('$%s × %s = %s → %s', (price, rate, exact, rounded) => {
    const tax = dec(price).times(dec(rate));
    expect(tax.toString()).toBe(exact);
    expect(roundHalfUp(tax, 2).toFixed(2)).toBe(rounded);
    expect(round(tax, 2, 'HALF_UP').toFixed(2)).toBe(rounded);
  });
});

describe('step (intermediate results, C19)', () => {
  it('keeps 9 decimal places', () => {
    expect(INTERMEDIATE_DECIMALS).toBe(9);
    expect(step(dec('0.1234567891234')).toFixed(9)).toBe('0.123456789');
    expect(step(dec('1').dividedBy(dec('3'))).toString()).toBe('0.333333333');
    expect(step(dec('2').dividedBy(dec('3'))).toString()).toBe('0.666666667');
    expect(step(dec('12.3')).toString()).toBe('12.3');
  });

  it('rounds half to even (BANKERS) at the 9th decimal, on both signs', () => {
    expect(step(dec('1.0000000005')).toFixed(9)).toBe('1.000000000');
    expect(step(dec('1.0000000015')).toFixed(9)).toBe('1.000000002');
    expect(step(dec('1.0000000025')).toFixed(9)).toBe('1.000000002');
    expect(step(dec('-1.0000000005')).toFixed(9)).toBe('-1.000000000');
    expect(step(dec('-1.0000000015')).toFixed(9)).toBe('-1.000000002');
    expect(step(dec('1.00000000050001')).toFixed(9)).toBe('1.000000001');
  });

  it('is idempotent', () => {
    const once = step(dec('7').dividedBy(dec('13')));
    expect(step(once).eq(once)).toBe(true);
    expect(once.decimalPlaces()).toBeLessThanOrEqual(9);
  });
});
