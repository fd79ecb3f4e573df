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

/** How much of a refused value an error message quotes. */
const QUOTED_CHARS = 40;

export class InvalidAmountError extends Error {
  constructor(value: unknown) {
    const text = JSON.stringify(value) ?? String(value);
    // A refused value may be megabytes long: the message quotes its start and says how long it is.
    const quoted =
      text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}… (${text.length} characters)` : text;
    super(`not a decimal amount: ${quoted}`);
    this.name = 'InvalidAmountError';
  }
}

/**
 * Bounds of the parse cache: at most `entries` strings, together at most `chars` characters, none longer than
 * `keyLength` (a longer string is parsed every time: no request field carries one, see `schemas/decimal.ts`).
 * Whichever bound a new entry would cross, the cache starts again empty, so its memory stays bounded (about
 * 13 MB at worst: 50 000 entries of ~250 bytes with their Decimal values) whatever strings it is given.
 */
export const PARSE_CACHE_LIMITS = { entries: 50_000, chars: 1024 * 1024, keyLength: 64 } as const;

/** Parsed strings; Decimal values are immutable, so one parse serves every later use of the same string. */
const parsed = new Map<string, Decimal>();
let parsedChars = 0;

const remember = (value: string, result: Decimal): void => {
  if (parsed.size >= PARSE_CACHE_LIMITS.entries || parsedChars + value.length > PARSE_CACHE_LIMITS.chars) {
    parsed.clear();
    parsedChars = 0;
  }
  parsed.set(value, result);
  parsedChars += value.length;
};

/** What the parse cache holds now: entries and the characters of their strings (for tests and benchmarks). */
export const parseCacheUsage = (): { readonly entries: number; readonly chars: number } => ({
  entries: parsed.size,
  chars: parsedChars,
});

/** Parses a decimal string (never a JS number: binary floating point has no place on an amount path). */
export const dec = (value: string | Decimal | bigint): Decimal => {
  if (value instanceof Decimal) return value;
  if (typeof value === 'bigint') return new Decimal(value.toString());
  const cacheable = value.length <= PARSE_CACHE_LIMITS.keyLength;
  if (cacheable) {
    const known = parsed.get(value);
    if (known) return known;
  }
  if (!DECIMAL_STRING.test(value)) throw new InvalidAmountError(value);
  const result = new Decimal(value);
  if (cacheable) remember(value, result);
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
