import { Decimal } from './decimal';

export class AllocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AllocationError';
  }
}

/** Weights as integers sharing one scale, so the whole allocation runs in exact bigint arithmetic. */
const scaledWeights = (weights: readonly (Decimal | bigint | number | string)[]): bigint[] => {
  const decimals = weights.map((weight) =>
    typeof weight === 'bigint' ? new Decimal(weight.toString()) : new Decimal(weight),
  );
  for (const weight of decimals) {
    if (!weight.isFinite() || weight.isNegative())
      throw new AllocationError('weights must be finite and ≥ 0');
  }
  const places = Math.max(0, ...decimals.map((weight) => weight.decimalPlaces()));
  const scale = new Decimal(10).pow(places);
  return decimals.map((weight) => BigInt(weight.times(scale).toFixed(0)));
};

/**
 * Splits `amount` smallest units into parts proportional to `weights`, by **largest remainder**:
 * every part first gets the whole units of its exact share (rounded toward zero), then the units left over go
 * one each to the parts with the largest remainders. **Tie-break: input order** (the earlier part wins), so a
 * basket's remainder goes to its first lines (C3) and the result is reproducible.
 *
 * - Σ parts = amount, always; each part is within one unit of its exact share.
 * - A zero weight gets zero. All weights zero → `AllocationError`.
 * - A negative amount mirrors the positive one: allocate(−1000, [2, 1]) = [−667, −333].
 * - An amount smaller than the number of parts works: allocate(1, [1, 1]) = [1, 0].
 */
export const allocate = (
  amount: bigint,
  weights: readonly (Decimal | bigint | number | string)[],
): bigint[] => {
  if (weights.length === 0) throw new AllocationError('at least one weight is needed');
  const scaled = scaledWeights(weights);
  const total = scaled.reduce((acc, weight) => acc + weight, 0n);
  if (total === 0n) throw new AllocationError('at least one weight must be positive');
  const negative = amount < 0n;
  const magnitude = negative ? -amount : amount;
  const parts: bigint[] = new Array(scaled.length);
  const remainders: bigint[] = new Array(scaled.length);
  let given = 0n;
  for (let index = 0; index < scaled.length; index += 1) {
    const numerator = magnitude * (scaled[index] as bigint);
    const whole = numerator / total;
    parts[index] = whole;
    remainders[index] = numerator - whole * total;
    given += whole;
  }
  let left = magnitude - given;
  if (left > 0n) {
    const order = remainders
      .map((remainder, index) => ({ remainder, index }))
      .filter((entry) => entry.remainder > 0n)
      .sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
    for (const { index } of order) {
      if (left === 0n) break;
      parts[index] = (parts[index] as bigint) + 1n;
      left -= 1n;
    }
  }
  return negative ? parts.map((part) => -part) : parts;
};

/**
 * Rounds values to `minorUnits` so that the parts add up to the rounded sum (C3, basket scope): the total is
 * the sum of the exact values rounded BANKERS; each part starts at its value rounded toward −∞, and the units
 * still missing go one each to the parts with the largest fractional remainders (ties by input order).
 * Returns smallest units.
 */
export const roundPreservingSum = (values: readonly Decimal[], minorUnits: number): bigint[] => {
  const scale = new Decimal(10).pow(minorUnits);
  const scaled = values.map((value) => value.times(scale));
  const floors = scaled.map((value) => value.floor());
  const total = scaled
    .reduce((acc, value) => acc.plus(value), new Decimal(0))
    .toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN);
  let missing = BigInt(
    total.minus(floors.reduce((acc, value) => acc.plus(value), new Decimal(0))).toFixed(0),
  );
  const parts = floors.map((value) => BigInt(value.toFixed(0)));
  const order = scaled
    .map((value, index) => ({ fraction: value.minus(floors[index] as Decimal), index }))
    .sort((a, b) =>
      a.fraction.equals(b.fraction) ? a.index - b.index : a.fraction.greaterThan(b.fraction) ? -1 : 1,
    );
  for (const { index } of order) {
    if (missing <= 0n) break;
    parts[index] = (parts[index] as bigint) + 1n;
    missing -= 1n;
  }
  return parts;
};
