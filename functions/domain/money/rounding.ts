import { Decimal } from './decimal';

/**
 * Rounding modes by name (spec "Precision fields"). For negative amounts:
 * - `HALF_UP`: half away from zero (retail): 2.345 → 2.35, −2.345 → −2.35.
 * - `BANKERS`: half to even (finance): 2.345 → 2.34, 2.355 → 2.36, −2.345 → −2.34.
 * - `FLOOR`: toward −∞ (taxes, regulators): 2.349 → 2.34, −2.341 → −2.35.
 * - `CEIL`: toward +∞: 2.341 → 2.35, −2.349 → −2.34.
 */
export type RoundingMode = 'HALF_UP' | 'BANKERS' | 'FLOOR' | 'CEIL';

export const ROUNDING_MODES: readonly RoundingMode[] = ['HALF_UP', 'BANKERS', 'FLOOR', 'CEIL'];

/** Half away from zero. */
export const roundHalfUp = (value: Decimal, decimals: number): Decimal =>
  value.toDecimalPlaces(decimals, Decimal.ROUND_HALF_UP);

/** Half to even. */
export const roundBankers = (value: Decimal, decimals: number): Decimal =>
  value.toDecimalPlaces(decimals, Decimal.ROUND_HALF_EVEN);

/** Toward −∞. */
export const roundFloor = (value: Decimal, decimals: number): Decimal =>
  value.toDecimalPlaces(decimals, Decimal.ROUND_FLOOR);

/** Toward +∞. */
export const roundCeil = (value: Decimal, decimals: number): Decimal =>
  value.toDecimalPlaces(decimals, Decimal.ROUND_CEIL);

const BY_MODE: Readonly<Record<RoundingMode, (value: Decimal, decimals: number) => Decimal>> = {
  HALF_UP: roundHalfUp,
  BANKERS: roundBankers,
  FLOOR: roundFloor,
  CEIL: roundCeil,
};

export const round = (value: Decimal, decimals: number, mode: RoundingMode): Decimal =>
  BY_MODE[mode](value, decimals);

/** Decimal places kept at every step boundary of the calculation (C19; spec: 8 to 9). */
export const INTERMEDIATE_DECIMALS = 9;

/** An intermediate result: 9 decimal places, BANKERS, so results are byte-identical run after run. */
export const step = (value: Decimal): Decimal => roundBankers(value, INTERMEDIATE_DECIMALS);
