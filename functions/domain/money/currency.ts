import currencyCodes from 'currency-codes';
import { type Decimal, fromScaledBigint, toScaledBigint } from './decimal';

/** Crypto currencies the catalog knows by default, with their minor units (overridable by a DisplayRule). */
export const CRYPTO_MINOR_UNITS: Readonly<Record<string, number>> = { BTC: 8, ETH: 8, USDT: 6 };

export const CURRENCY_CODE = /^[A-Z]{3,5}$/;

/** ISO 4217 codes that are not money one can price in: metals, bond units, SDR, testing and "no currency". */
const NOT_CURRENCIES = new Set([
  'XAG',
  'XAU',
  'XPD',
  'XPT',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XSU',
  'XUA',
  'XTS',
  'XXX',
]);

export class UnknownCurrencyError extends Error {
  constructor(readonly currency: string) {
    super(`unknown currency: ${currency}`);
    this.name = 'UnknownCurrencyError';
  }
}

export const isCrypto = (
  currency: string,
  cryptoUnits: Readonly<Record<string, number>> = CRYPTO_MINOR_UNITS,
) => Object.hasOwn(cryptoUnits, currency);

/**
 * Minor units of a currency: a DisplayRule override first, then the catalog's crypto list, then ISO 4217 (from
 * the maintained `currency-codes` data: 0 for JPY and ISK, 2 for USD and EUR, 3 for KWD and BHD).
 */
export const minorUnitsOf = (
  currency: string,
  overrides: Readonly<Record<string, number>> = {},
  cryptoUnits: Readonly<Record<string, number>> = CRYPTO_MINOR_UNITS,
): number => {
  if (Object.hasOwn(overrides, currency)) return overrides[currency] as number;
  if (Object.hasOwn(cryptoUnits, currency)) return cryptoUnits[currency] as number;
  const iso =
    CURRENCY_CODE.test(currency) && !NOT_CURRENCIES.has(currency) ? currencyCodes.code(currency) : undefined;
  if (!iso) throw new UnknownCurrencyError(currency);
  return iso.digits;
};

export const isKnownCurrency = (currency: string): boolean => {
  try {
    minorUnitsOf(currency);
    return true;
  } catch {
    return false;
  }
};

/** An amount already rounded to `minorUnits`, written with exactly that many decimals (C1): "12.30", "1200". */
export const formatAmount = (value: Decimal, minorUnits: number): string => {
  if (!value.decimalPlaces() || value.decimalPlaces() <= minorUnits) return value.toFixed(minorUnits);
  throw new RangeError(`amount ${value.toString()} has more than ${minorUnits} decimals`);
};

/** Smallest units as an integer: 12.30 EUR → 1230n. The value must already have at most `minorUnits` decimals. */
export const toMinor = (value: Decimal, minorUnits: number): bigint => toScaledBigint(value, minorUnits);

export const fromMinor = (units: bigint, minorUnits: number): Decimal => fromScaledBigint(units, minorUnits);

/** Smallest units written as an amount with exactly `minorUnits` decimals: 1230n, 2 → "12.30"; −5n, 2 → "-0.05". */
export const formatMinor = (units: bigint, minorUnits: number): string => {
  if (minorUnits === 0) return units.toString();
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(minorUnits + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -minorUnits)}.${digits.slice(-minorUnits)}`;
};
