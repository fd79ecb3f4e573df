import DecimalJs from 'decimal.js';

/**
 * The one decimal.js configuration of the service: 50 significant digits (far above the 9 decimal places kept
 * at step boundaries, so no intermediate product loses a digit), and no exponent notation in strings. Every
 * rounding in the domain names its mode explicitly (see `rounding.ts`); the default mode here is never relied on.
 */
export const Decimal = DecimalJs.clone({
  precision: 50,
  rounding: DecimalJs.ROUND_HALF_EVEN,
  toExpNeg: -60,
  toExpPos: 60,
});

export type Decimal = InstanceType<typeof Decimal>;

/** A decimal string on the wire (C1): optional minus, digits, optional fraction. No exponents, no spaces. */
export const DECIMAL_STRING = /^-?(0|[1-9]\d*)(\.\d+)?$/;

export class InvalidAmountError extends Error {
  constructor(value: unknown) {
    super(`not a decimal amount: ${JSON.stringify(value)}`);
    this.name = 'InvalidAmountError';
  }
}

/** Parsed strings; Decimal values are immutable, so one parse serves every later use of the same string. */
const parsed = new Map<string, Decimal>();
const PARSE_CACHE_LIMIT = 50_000;

/** Parses a decimal string (never a JS number: binary floating point has no place on an amount path). */
export const dec = (value: string | Decimal | bigint): Decimal => {
  if (value instanceof Decimal) return value;
  if (typeof value === 'bigint') return new Decimal(value.toString());
  const known = parsed.get(value);
  if (known) return known;
  if (!DECIMAL_STRING.test(value)) throw new InvalidAmountError(value);
  const result = new Decimal(value);
  if (parsed.size >= PARSE_CACHE_LIMIT) parsed.clear();
  parsed.set(value, result);
  return result;
};

const POWERS_OF_TEN = Array.from({ length: 41 }, (_, exponent) => new Decimal(10).pow(exponent));

/** 10^exponent for 0 ≤ exponent ≤ 40, from a table. */
export const pow10 = (exponent: number): Decimal => POWERS_OF_TEN[exponent] ?? new Decimal(10).pow(exponent);

/** A decimal with at most `decimals` places as an integer count of 10^−decimals units, without arithmetic. */
export const toScaledBigint = (value: Decimal, decimals: number): bigint => {
  if (value.decimalPlaces() > decimals)
    throw new RangeError(`${value.toString()} has more than ${decimals} decimals`);
  return BigInt(value.toFixed(decimals).replace('.', ''));
};

/** The inverse of `toScaledBigint`. */
export const fromScaledBigint = (units: bigint, decimals: number): Decimal => {
  if (decimals === 0) return new Decimal(units.toString());
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const text = `${negative ? '-' : ''}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return new Decimal(text);
};

export const ZERO = new Decimal(0);
export const ONE = new Decimal(1);

export const sum = (values: readonly Decimal[]): Decimal =>
  values.reduce((total, value) => total.plus(value), ZERO);
