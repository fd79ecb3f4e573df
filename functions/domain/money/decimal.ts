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

/** Parses a decimal string (never a JS number: binary floating point has no place on an amount path). */
export const dec = (value: string | Decimal | bigint): Decimal => {
  if (value instanceof Decimal) return value;
  if (typeof value === 'bigint') return new Decimal(value.toString());
  if (!DECIMAL_STRING.test(value)) throw new InvalidAmountError(value);
  return new Decimal(value);
};

export const ZERO = new Decimal(0);
export const ONE = new Decimal(1);

export const sum = (values: readonly Decimal[]): Decimal =>
  values.reduce((total, value) => total.plus(value), ZERO);
