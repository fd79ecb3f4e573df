import { Decimal, toScaledBigint } from './decimal';

export class AllocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AllocationError';
  }
}

/** Weights as integers sharing one scale, so the whole allocation runs in exact bigint arithmetic. */
const scaledWeights = (weights: readonly (Decimal | bigint | number | string)[]): bigint[] => {
  if (weights.every((weight): weight is bigint => typeof weight === 'bigint')) {
    if (weights.some((weight) => weight < 0n)) throw new AllocationError('weights must be finite and ≥ 0');
    return [...weights];
  }
  if (
    weights.every((weight): weight is number => typeof weight === 'number' && Number.isSafeInteger(weight))
  ) {
    if (weights.some((weight) => weight < 0)) throw new AllocationError('weights must be finite and ≥ 0');
    return weights.map((weight) => BigInt(weight));
  }
  const decimals = weights.map((weight) =>
    typeof weight === 'bigint' ? new Decimal(weight.toString()) : new Decimal(weight),
  );
  for (const weight of decimals) {
    if (!weight.isFinite() || weight.isNegative())
      throw new AllocationError('weights must be finite and ≥ 0');
  }
  const places = Math.max(0, ...decimals.map((weight) => weight.decimalPlaces()));
  return decimals.map((weight) => toScaledBigint(weight, places));
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

/** Floor division for bigints (toward −∞), with the non-negative remainder. */
const floorDivide = (numerator: bigint, divisor: bigint): [bigint, bigint] => {
  const quotient = numerator / divisor;
  const remainder = numerator - quotient * divisor;
  return remainder < 0n ? [quotient - 1n, remainder + divisor] : [quotient, remainder];
};

/**
 * Rounds values to `minorUnits` so that the parts add up to the rounded sum (C3, basket scope): the total is
 * the sum of the exact values rounded BANKERS; each part starts at its value rounded toward −∞, and the units
 * still missing go one each to the parts with the largest fractional remainders (ties by input order).
 * Values carry at most `exactDecimals` places (the 9 kept at step boundaries). Returns smallest units.
 */
export const roundPreservingSum = (
  values: readonly Decimal[],
  minorUnits: number,
  exactDecimals = 9,
): bigint[] => {
  const divisor = 10n ** BigInt(Math.max(0, exactDecimals - minorUnits));
  const exact = values.map((value) => toScaledBigint(value, Math.max(exactDecimals, minorUnits)));
  const split = exact.map((value) => floorDivide(value, divisor));
  const [wholeTotal, remainderTotal] = floorDivide(
    exact.reduce((acc, value) => acc + value, 0n),
    divisor,
  );
  // BANKERS on the total: above half up, below half down, exactly half to the even neighbour.
  const twice = remainderTotal * 2n;
  const total =
    twice > divisor || (twice === divisor && wholeTotal % 2n !== 0n) ? wholeTotal + 1n : wholeTotal;
  const parts = split.map(([whole]) => whole);
  let missing = total - parts.reduce((acc, value) => acc + value, 0n);
  const order = split
    .map(([, remainder], index) => ({ remainder, index }))
    .sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of order) {
    if (missing <= 0n) break;
    parts[index] = (parts[index] as bigint) + 1n;
    missing -= 1n;
  }
  return parts;
};
