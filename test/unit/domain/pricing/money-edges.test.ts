/**
 * Money helpers the pricing engine relies on that the money suites did not reach when this was written:
 * `formatMinor` (every amount the basket shows), `roundPreservingSum` (basket rounding scope), `pow10` and the
 * scaled-bigint conversions.
 */
import { describe, expect, it } from 'vitest';
import { roundPreservingSum } from '../../../../functions/domain/money/allocation';
import { formatMinor } from '../../../../functions/domain/money/currency';
import { dec, fromScaledBigint, pow10, toScaledBigint } from '../../../../functions/domain/money/decimal';

const values = (...amounts: string[]) => amounts.map((amount) => dec(amount));

describe('formatMinor', () => {
  it('writes exactly the minor units', () => {
    expect(formatMinor(1230n, 2)).toBe('12.30');
    expect(formatMinor(5n, 2)).toBe('0.05');
    expect(formatMinor(0n, 3)).toBe('0.000');
    expect(formatMinor(1n, 8)).toBe('0.00000001');
  });

  it('writes whole units without a point for 0 minor units', () => {
    expect(formatMinor(1200n, 0)).toBe('1200');
    expect(formatMinor(-7n, 0)).toBe('-7');
  });

  it('writes negative amounts with a leading minus', () => {
    expect(formatMinor(-5n, 2)).toBe('-0.05');
    expect(formatMinor(-1234n, 3)).toBe('-1.234');
  });
});

describe('roundPreservingSum (C3, basket scope)', () => {
  it('rounds the total BANKERS and gives the missing units to the largest remainders, ties by order', () => {
    expect(roundPreservingSum(values('0.335', '0.335', '0.335'), 2)).toEqual([34n, 33n, 33n]);
    expect(roundPreservingSum(values('0.331', '0.339', '0.330'), 2)).toEqual([33n, 34n, 33n]);
  });

  it('sends an exact half of the total to the even neighbour', () => {
    expect(roundPreservingSum(values('0.005'), 2)).toEqual([0n]);
    expect(roundPreservingSum(values('0.015'), 2)).toEqual([2n]);
    expect(roundPreservingSum(values('0.0025', '0.0025'), 2)).toEqual([0n, 0n]);
  });

  it('handles negative values: parts start toward −∞', () => {
    expect(roundPreservingSum(values('-0.335', '-0.335'), 2)).toEqual([-33n, -34n]);
  });

  it('keeps whole values and works at 0 and 8 minor units', () => {
    expect(roundPreservingSum(values('12.34', '0.66'), 2)).toEqual([1234n, 66n]);
    expect(roundPreservingSum(values('100.5', '100.5'), 0)).toEqual([101n, 100n]);
    expect(roundPreservingSum(values('0.000000015', '0.000000015'), 8)).toEqual([2n, 1n]);
  });

  it('accepts values with fewer exact decimals than the minor units', () => {
    expect(roundPreservingSum(values('1.5', '2.25'), 4, 2)).toEqual([15_000n, 22_500n]);
  });
});

describe('pow10 and scaled bigints', () => {
  it('gives powers of ten from the table and beyond it', () => {
    expect(pow10(0).toString()).toBe('1');
    expect(pow10(9).toString()).toBe('1000000000');
    expect(pow10(41).toString()).toBe(`1${'0'.repeat(41)}`);
  });

  it('converts to and from scaled bigints', () => {
    expect(toScaledBigint(dec('12.3'), 3)).toBe(12_300n);
    expect(toScaledBigint(dec('-0.05'), 2)).toBe(-5n);
    expect(fromScaledBigint(-5n, 2).toString()).toBe('-0.05');
    expect(fromScaledBigint(42n, 0).toString()).toBe('42');
    expect(() => toScaledBigint(dec('0.001'), 2)).toThrow(RangeError);
  });
});
