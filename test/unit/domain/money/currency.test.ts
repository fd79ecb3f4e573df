import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CRYPTO_MINOR_UNITS,
  formatAmount,
  fromMinor,
  isCrypto,
  isKnownCurrency,
  minorUnitsOf,
  toMinor,
  UnknownCurrencyError,
} from '../../../../functions/domain/money/currency';
import { dec } from '../../../../functions/domain/money/decimal';

describe('minorUnitsOf', () => {
  it.each([
    ['JPY', 0],
    ['ISK', 0],
    ['USD', 2],
    ['EUR', 2],
    ['KWD', 3],
    ['BHD', 3],
  ])('ISO 4217: %s has %i minor units', (currency, units) => {
    expect(minorUnitsOf(currency)).toBe(units);
    expect(isKnownCurrency(currency)).toBe(true);
    expect(isCrypto(currency)).toBe(false);
  });

  it.each([
    ['BTC', 8],
    ['ETH', 8],
    ['USDT', 6],
  ])('catalog crypto: %s has %i minor units', (currency, units) => {
    expect(minorUnitsOf(currency)).toBe(units);
    expect(CRYPTO_MINOR_UNITS[currency]).toBe(units);
    expect(isKnownCurrency(currency)).toBe(true);
    expect(isCrypto(currency)).toBe(true);
  });

  it('lets a DisplayRule override win over ISO 4217 and over the crypto list', () => {
    expect(minorUnitsOf('JPY', { JPY: 2 })).toBe(2);
    expect(minorUnitsOf('USD', { USD: 0 })).toBe(0);
    expect(minorUnitsOf('BTC', { BTC: 2 })).toBe(2);
    expect(minorUnitsOf('USDT', { USDT: 2 })).toBe(2);
    // An override for another currency changes nothing.
    expect(minorUnitsOf('USD', { EUR: 0 })).toBe(2);
  });

  it('takes the catalog crypto list as a parameter', () => {
    expect(minorUnitsOf('SOL', {}, { SOL: 9 })).toBe(9);
    expect(isCrypto('SOL', { SOL: 9 })).toBe(true);
    expect(() => minorUnitsOf('BTC', {}, {})).toThrow(UnknownCurrencyError);
  });

  it.each(['ABC', 'ZZZ', 'usd', 'Usd', 'btc', '', 'XXXXXX', 'US', ' USD', 'USD ', 'US$'])(
    'refuses the unknown currency %j with UnknownCurrencyError',
    (currency) => {
      expect(() => minorUnitsOf(currency)).toThrow(UnknownCurrencyError);
      expect(isKnownCurrency(currency)).toBe(false);
      try {
        minorUnitsOf(currency);
      } catch (error) {
        expect(error).toBeInstanceOf(UnknownCurrencyError);
        expect((error as UnknownCurrencyError).currency).toBe(currency);
        expect((error as UnknownCurrencyError).name).toBe('UnknownCurrencyError');
        expect((error as UnknownCurrencyError).message).toBe(`unknown currency: ${currency}`);
      }
    },
  );

  // Names inherited from Object.prototype are not currencies.
  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'])(
    'refuses %j, a name inherited from Object.prototype',
    (currency) => {
      expect(() => minorUnitsOf(currency)).toThrow(UnknownCurrencyError);
    },
  );
});

describe('formatAmount', () => {
  it.each([
    ['12.3', 2, '12.30'],
    ['12.30', 2, '12.30'],
    ['1200', 0, '1200'],
    ['1200', 2, '1200.00'],
    ['0.125', 3, '0.125'],
    ['0.00000001', 8, '0.00000001'],
    ['0', 2, '0.00'],
    ['0', 0, '0'],
    ['-5.1', 2, '-5.10'],
    ['21000000', 8, '21000000.00000000'],
    ['123456789012345678901234567890.12', 2, '123456789012345678901234567890.12'],
  ])('writes %s with %i decimals as %s', (value, units, expected) => {
    expect(formatAmount(dec(value), units)).toBe(expected);
  });

  it.each([
    ['12.345', 2],
    ['0.5', 0],
    ['0.0001', 3],
    ['0.000000001', 8],
    ['-1.001', 2],
  ])('refuses %s with more decimals than %i minor units', (value, units) => {
    expect(() => formatAmount(dec(value), units)).toThrow(RangeError);
  });

  it('never writes exponent notation', () => {
    expect(formatAmount(dec('1000000000000000000000000'), 0)).toBe('1000000000000000000000000');
    expect(formatAmount(dec('0.00000001'), 8)).not.toMatch(/e/i);
  });
});

describe('toMinor and fromMinor', () => {
  it.each([
    ['12.30', 2, 1230n],
    ['12.3', 2, 1230n],
    ['1200', 0, 1200n],
    ['0.125', 3, 125n],
    ['0.00000001', 8, 1n],
    ['21000000', 8, 2_100_000_000_000_000n],
    ['-12.3', 2, -1230n],
    ['0', 2, 0n],
    ['1.5', 6, 1_500_000n],
  ])('%s with %i minor units is %s smallest units', (value, units, minor) => {
    expect(toMinor(dec(value), units)).toBe(minor);
    expect(fromMinor(minor, units).eq(dec(value))).toBe(true);
    expect(formatAmount(fromMinor(minor, units), units)).toBe(dec(value).toFixed(units));
  });

  it.each([
    ['12.345', 2],
    ['0.5', 0],
    ['0.0005', 3],
    ['-0.000000001', 8],
  ])('toMinor refuses %s, which has more decimals than %i minor units', (value, units) => {
    expect(() => toMinor(dec(value), units)).toThrow(RangeError);
  });

  it('round-trips any number of smallest units at 0, 2, 3, 6 and 8 minor units', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.constantFrom(0, 2, 3, 6, 8),
        (units, minorUnits) => {
          const value = fromMinor(units, minorUnits);
          expect(value.decimalPlaces()).toBeLessThanOrEqual(minorUnits);
          expect(toMinor(value, minorUnits)).toBe(units);
          expect(toMinor(dec(formatAmount(value, minorUnits)), minorUnits)).toBe(units);
        },
      ),
      { numRuns: 10_000 },
    );
  });
});
