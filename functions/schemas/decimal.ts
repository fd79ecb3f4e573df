/**
 * Decimal strings on the wire (C1), bounded per field: every field of a request that carries a decimal takes
 * `decimalString(limits)` with the limits of what it means (an amount, an exchange rate, a tax rate, a
 * percentage), so no request can hand the engine, or the parse cache behind `dec`, a number of unbounded size.
 * A value over its limits is refused before any other check runs, with one message naming the limits; the
 * request's error names the field's path (C6 `invalid_request`).
 */
import * as z from 'zod';

/** What one decimal field may carry. */
export interface DecimalLimits {
  /** Digits before the point, at least 1 (`0` is one digit). */
  readonly integerDigits: number;
  /** Digits after the point; 0 for whole numbers only. */
  readonly fractionDigits: number;
  /** `non-negative` (default): ≥ 0; `positive`: > 0; `signed`: a leading minus is allowed. */
  readonly sign?: 'non-negative' | 'positive' | 'signed';
}

/**
 * Money amounts (prices, tier and minimum prices, fixed fees, shipping, thresholds, caps, winnings limits,
 * network fees, checkout fees): up to 10^18 in any currency, and 9 decimals — what the engine keeps at every
 * step boundary, above the 8 minor units of BTC.
 */
export const AMOUNT_LIMITS = { integerDigits: 18, fractionDigits: 9 } as const satisfies DecimalLimits;

/**
 * Exchange rates (published and settlement): up to 10^12 (BTC in the weakest currencies) and 18 decimals, so a
 * rate of 10^-12 (a weak currency in BTC) still has 6 significant digits; automatic ticks round to 12 at most.
 */
export const RATE_LIMITS = {
  integerDigits: 12,
  fractionDigits: 18,
  sign: 'positive',
} as const satisfies DecimalLimits;

/** Tax rates, as a fraction of the net amount ("0.19"): below 1000 and 9 decimals. */
export const TAX_RATE_LIMITS = { integerDigits: 3, fractionDigits: 9 } as const satisfies DecimalLimits;

/** Percentages (promotions, payment, cross-border and refund fees, override markups): below 10 000 %. */
export const PERCENT_LIMITS = { integerDigits: 4, fractionDigits: 9 } as const satisfies DecimalLimits;

/** The longest string within `limits`: minus sign (signed fields only), integer digits, point, fraction digits. */
export const maxDecimalLength = ({ integerDigits, fractionDigits, sign }: DecimalLimits): number =>
  (sign === 'signed' ? 1 : 0) + integerDigits + (fractionDigits > 0 ? 1 + fractionDigits : 0);

const checkLimits = ({ integerDigits, fractionDigits }: DecimalLimits): void => {
  if (!Number.isInteger(integerDigits) || integerDigits < 1 || integerDigits > 40)
    throw new RangeError(`integerDigits must be an integer from 1 to 40: ${integerDigits}`);
  if (!Number.isInteger(fractionDigits) || fractionDigits < 0 || fractionDigits > 40)
    throw new RangeError(`fractionDigits must be an integer from 0 to 40: ${fractionDigits}`);
};

/**
 * The pattern of a decimal within `limits`: `DECIMAL_STRING` (of `domain/money/decimal.ts`) with bounded digit
 * runs, and a minus sign only on a signed field. Anchored and bounded, so even a string of megabytes is refused
 * after at most `integerDigits + fractionDigits + 3` characters.
 */
export const boundedDecimalPattern = (limits: DecimalLimits): RegExp => {
  checkLimits(limits);
  const { integerDigits, fractionDigits } = limits;
  const integer = integerDigits === 1 ? '0|[1-9]' : `0|[1-9]\\d{0,${integerDigits - 1}}`;
  const fraction = fractionDigits > 0 ? `(\\.\\d{1,${fractionDigits}})?` : '';
  return new RegExp(`^${limits.sign === 'signed' ? '-?' : ''}(${integer})${fraction}$`);
};

/** What a field within `limits` takes, for error messages: `a decimal string such as "12.30" with …`. */
export const describeLimits = ({ integerDigits, fractionDigits }: DecimalLimits): string =>
  fractionDigits > 0
    ? `a decimal string such as "12.30" with at most ${integerDigits} digits before the point and ` +
      `${fractionDigits} after`
    : `a whole number as a string such as "12", at most ${integerDigits} digits`;

const isZero = (value: string): boolean => /^-?0(\.0*)?$/.test(value);

/**
 * A decimal string field within `limits`. Checks run in order and the first failure ends them, with one message
 * (so a refinement added after this one only ever sees a bounded decimal): the sign, the length, the format
 * and digit counts, then (`positive`) not zero. Each check is O(1) or stops within the limits' length.
 */
export const decimalString = (limits: DecimalLimits) => {
  const pattern = boundedDecimalPattern(limits);
  const maxLength = maxDecimalLength(limits);
  const described = describeLimits(limits);
  const sign = limits.sign ?? 'non-negative';
  const base = z.string();
  const signed =
    sign === 'signed'
      ? base
      : base.refine((value) => !value.startsWith('-'), {
          message: sign === 'positive' ? 'must be positive' : 'must not be negative',
          abort: true,
        });
  const bounded = signed
    .max(maxLength, { message: `at most ${maxLength} characters: ${described}`, abort: true })
    .regex(pattern, { message: described, abort: true });
  return sign === 'positive'
    ? bounded.refine((value) => !isZero(value), { message: 'must be positive', abort: true })
    : bounded;
};
