import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AllocationError, allocate } from '../../../../functions/domain/money/allocation';
import { type Decimal, dec } from '../../../../functions/domain/money/decimal';
import { volume } from '../../../support/volume';

describe('allocate: worked examples', () => {
  // Martin Fowler, Patterns of Enterprise Application Architecture, "Money": allocating 5 cents 30% / 70%
  // must give 2 and 3 cents, never 1.5 and 3.5 rounded to 2 and 4 (a cent created from nothing).
  it('splits 5¢ 30/70 into 2¢ and 3¢ (Fowler, PoEAA "Money")', () => {
    expect(allocate(5n, [30, 70])).toEqual([2n, 3n]);
    expect(allocate(5n, ['0.3', '0.7'])).toEqual([2n, 3n]);
  });

  // A well-known blog example: $1,027.59 split 20% / 70% / 5% / 5%. Exact shares 20551.8 / 71931.3 / 5137.95 /
  // 5137.95; the 3 units left over go to the largest remainders (.95, .95, .8). Fowler-style round-robin (one
  // unit each to the parts in turn, as dinero.js does, by descending ratio) gives 20552 / 71932 / 5138 / 5137
  // instead: the 70% part gets a unit although its remainder (.3) is the smallest.
  it('splits $1,027.59 20/70/5/5 by largest remainder into 20552/71931/5138/5138', () => {
    expect(allocate(102_759n, [20, 70, 5, 5])).toEqual([20_552n, 71_931n, 5138n, 5138n]);
    expect(allocate(102_759n, ['0.2', '0.7', '0.05', '0.05'])).toEqual([20_552n, 71_931n, 5138n, 5138n]);
  });

  it('gives ties to the earlier weight (input order, C3)', () => {
    expect(allocate(2n, [1, 1, 1])).toEqual([1n, 1n, 0n]);
    expect(allocate(100n, [1, 1, 1])).toEqual([34n, 33n, 33n]);
    expect(allocate(-100n, [1, 1, 1])).toEqual([-34n, -33n, -33n]);
  });
});

describe('allocate: regressions for allocation bugs seen elsewhere', () => {
  it('mirrors a negative amount: −1000 split 2:1 is −667/−333 as 1000 is 667/333', () => {
    expect(allocate(1000n, [2, 1])).toEqual([667n, 333n]);
    expect(allocate(-1000n, [2, 1])).toEqual([-667n, -333n]);
  });

  it('allocates an amount smaller than the number of parts: 1 unit over [1, 1] is [1, 0]', () => {
    expect(allocate(1n, [1, 1])).toEqual([1n, 0n]);
    expect(allocate(-1n, [1, 1])).toEqual([-1n, 0n]);
    expect(allocate(3n, [1, 1, 1, 1, 1])).toEqual([1n, 1n, 1n, 0n, 0n]);
  });

  it('gives a zero weight nothing, even when units are left over', () => {
    expect(allocate(10n, [0, 1, 0, 2])).toEqual([0n, 3n, 0n, 7n]);
    expect(allocate(1n, [0, 1, 1])).toEqual([0n, 1n, 0n]);
    expect(allocate(7n, ['0', '0.5', '0.00'])).toEqual([0n, 7n, 0n]);
  });

  it('allocates zero as zeros', () => {
    expect(allocate(0n, [1, 2, 3])).toEqual([0n, 0n, 0n]);
  });

  it('throws when every weight is zero', () => {
    expect(() => allocate(10n, [0, 0])).toThrow(AllocationError);
    expect(() => allocate(10n, ['0', '0.00'])).toThrow('at least one weight must be positive');
  });

  it('throws on a negative weight', () => {
    expect(() => allocate(10n, [1, -1])).toThrow(AllocationError);
    expect(() => allocate(10n, ['2', '-0.5'])).toThrow(AllocationError);
    expect(() => allocate(10n, [1n, -1n])).toThrow(AllocationError);
  });

  it('throws on non-finite weights', () => {
    expect(() => allocate(10n, [1, Number.NaN])).toThrow(AllocationError);
    expect(() => allocate(10n, [1, Number.POSITIVE_INFINITY])).toThrow(AllocationError);
  });

  it('throws on empty weights', () => {
    expect(() => allocate(10n, [])).toThrow(AllocationError);
    expect(() => allocate(10n, [])).toThrow('at least one weight is needed');
  });

  it('treats decimal weights as their integer equivalents: (0.3, 0.7) = (3, 7)', () => {
    for (const amount of [1n, 5n, 10n, 99n, 12_345n, -7n]) {
      const integers = allocate(amount, [3, 7]);
      expect(allocate(amount, ['0.3', '0.7'])).toEqual(integers);
      expect(allocate(amount, [0.3, 0.7])).toEqual(integers);
      expect(allocate(amount, [dec('0.3'), dec('0.7')])).toEqual(integers);
      expect(allocate(amount, [3n, 7n])).toEqual(integers);
      expect(allocate(amount, ['30', '70.00'])).toEqual(integers);
    }
  });

  it('mixes weights of different scales exactly', () => {
    // 0.5 : 0.25 : 0.125 : 1 = 4 : 2 : 1 : 8.
    expect(allocate(1000n, ['0.5', '0.25', '0.125', 1])).toEqual(allocate(1000n, [4, 2, 1, 8]));
  });

  it('handles amounts far beyond Number.MAX_SAFE_INTEGER exactly', () => {
    // 10^30 + 1 = 3 · 333…333 + 2: two units left over, to the first two parts.
    const third = 333_333_333_333_333_333_333_333_333_333n;
    expect(allocate(10n ** 30n + 1n, [1, 1, 1])).toEqual([third + 1n, third + 1n, third]);
    expect(allocate(2n ** 64n, ['0.5', '0.5'])).toEqual([2n ** 63n, 2n ** 63n]);
  });

  // A weight of −0 (e.g. a quantity 0 times −1) is zero, not negative.
  it('accepts a weight of −0 as zero', () => {
    expect(allocate(10n, [-0, 1])).toEqual([0n, 10n]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties. fast-check prints the seed and the counterexample path of a failure; FC_SEED=<seed> replays one.

const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const RUNS = {
  numRuns: volume('ALLOCATION_PROPERTY_RUNS', { local: 2_500, ci: 10_000 }),
  ...(seed === undefined ? {} : { seed }),
} as const;

/** Smallest-unit ranges of currencies with 0 (JPY), 2 (USD), 3 (KWD) and 8 (BTC) minor units. */
const RANGES: readonly bigint[] = [
  10n ** 12n, // ¥1 trillion
  10n ** 12n, // $10 billion in cents
  10n ** 13n, // 10 billion KWD in fils
  21n * 10n ** 14n, // 21 million BTC in satoshis
];

const amountArb: fc.Arbitrary<bigint> = fc.oneof(
  ...RANGES.map((max) => fc.bigInt({ min: -max, max })),
  fc.bigInt({ min: -100n, max: 100n }), // amounts smaller than the number of parts
);

/** A weight as an exact rational: `units / 10^places`, and the form it is handed to `allocate` in. */
interface Weight {
  readonly units: bigint;
  readonly places: number;
  readonly input: Decimal | bigint | number | string;
}

const decimalText = (units: bigint, places: number): string => {
  if (places === 0) return units.toString();
  const digits = units.toString().padStart(places + 1, '0');
  return `${digits.slice(0, -places)}.${digits.slice(-places)}`;
};

const weightArb: fc.Arbitrary<Weight> = fc
  .tuple(
    fc.oneof(
      { weight: 1, arbitrary: fc.constant(0n) },
      { weight: 2, arbitrary: fc.bigInt({ min: 1n, max: 10n }) },
      { weight: 3, arbitrary: fc.bigInt({ min: 0n, max: 1_000_000n }) },
    ),
    fc.constantFrom(0, 0, 1, 2, 3, 4),
    fc.constantFrom('string', 'decimal', 'number', 'bigint'),
  )
  .map(([units, places, form]): Weight => {
    const text = decimalText(units, places);
    if (form === 'decimal') return { units, places, input: dec(text) };
    const trimmed = places > 0 ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
    if (form === 'number' && Number(text).toString() === trimmed) {
      return { units, places, input: Number(text) };
    }
    if (form === 'bigint' && places === 0) return { units, places, input: units };
    return { units, places, input: text };
  });

const weightsArb: fc.Arbitrary<Weight[]> = fc
  .array(weightArb, { minLength: 1, maxLength: 20 })
  .filter((weights) => weights.some((weight) => weight.units > 0n));

/** Weights on one common scale, so the exact share of weight i is amount · scaled[i] / total. */
const scaled = (weights: readonly Weight[]): { scaled: bigint[]; total: bigint } => {
  const places = Math.max(...weights.map((weight) => weight.places));
  const result = weights.map((weight) => weight.units * 10n ** BigInt(places - weight.places));
  return { scaled: result, total: result.reduce((acc, weight) => acc + weight, 0n) };
};

const abs = (value: bigint): bigint => (value < 0n ? -value : value);

/** Per part: whole units of |share| (toward zero) and the exact remainder, as a numerator over `total`. */
const exactShares = (amount: bigint, weights: readonly Weight[]) => {
  const { scaled: w, total } = scaled(weights);
  return w.map((weight) => {
    const numerator = abs(amount) * weight;
    return { floor: numerator / total, remainder: numerator % total };
  });
};

const inputs = (weights: readonly Weight[]) => weights.map((weight) => weight.input);

describe('allocate: properties (10 000 runs each)', () => {
  it('parts sum to the amount', () => {
    fc.assert(
      fc.property(amountArb, weightsArb, (amount, weights) => {
        const parts = allocate(amount, inputs(weights));
        expect(parts).toHaveLength(weights.length);
        expect(parts.reduce((acc, part) => acc + part, 0n)).toBe(amount);
      }),
      RUNS,
    );
  });

  it('each part is within one unit of its exact share (floor or ceiling of it)', () => {
    fc.assert(
      fc.property(amountArb, weightsArb, (amount, weights) => {
        const parts = allocate(amount, inputs(weights));
        const { scaled: w, total } = scaled(weights);
        parts.forEach((part, index) => {
          // |part − amount·w/total| < 1  ⇔  |part·total − amount·w| < total, in exact integers.
          const difference = abs(part * total - amount * (w[index] as bigint));
          expect(difference < total).toBe(true);
          // And on the same side of zero as the amount.
          if (part !== 0n) expect(part < 0n).toBe(amount < 0n);
        });
      }),
      RUNS,
    );
  });

  it('gives a zero weight zero', () => {
    fc.assert(
      fc.property(amountArb, weightsArb, (amount, weights) => {
        const parts = allocate(amount, inputs(weights));
        weights.forEach((weight, index) => {
          if (weight.units === 0n) expect(parts[index]).toBe(0n);
        });
      }),
      RUNS,
    );
  });

  it('mirrors: allocate(−a) = −allocate(a)', () => {
    fc.assert(
      fc.property(amountArb, weightsArb, (amount, weights) => {
        const negated = allocate(-amount, inputs(weights));
        expect(negated).toEqual(allocate(amount, inputs(weights)).map((part) => -part));
      }),
      RUNS,
    );
  });

  it('scales: weights times any factor (or a decimal shift) allocate the same', () => {
    fc.assert(
      fc.property(amountArb, weightsArb, fc.bigInt({ min: 1n, max: 1000n }), (amount, weights, factor) => {
        const multiplied = weights.map((weight) => decimalText(weight.units * factor, weight.places));
        const shifted = weights.map((weight) => decimalText(weight.units, weight.places + 2));
        const expected = allocate(amount, inputs(weights));
        expect(allocate(amount, multiplied)).toEqual(expected);
        expect(allocate(amount, shifted)).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('gives the units left over to the largest remainders, ties to the earlier weight', () => {
    fc.assert(
      fc.property(amountArb, weightsArb, (amount, weights) => {
        const parts = allocate(amount, inputs(weights));
        const shares = exactShares(amount, weights);
        const bumped = parts.map((part, index) => abs(part) - (shares[index]?.floor as bigint));
        for (const bump of bumped) expect(bump === 0n || bump === 1n).toBe(true);
        shares.forEach((a, i) => {
          if (a.remainder === 0n) expect(bumped[i]).toBe(0n);
          shares.forEach((b, j) => {
            // A bumped part never has a smaller remainder than one left alone, nor an equal one behind it.
            if (bumped[i] === 1n && bumped[j] === 0n) {
              expect(a.remainder > b.remainder || (a.remainder === b.remainder && i < j)).toBe(true);
            }
          });
        });
      }),
      RUNS,
    );
  });

  // Order independence apart from the tie-break. For a permutation π, let q = allocate(a, w∘π), so q[j] is the
  // part of weight w[π(j)], and p = allocate(a, w). With f_i and r_i the whole units and exact remainder of
  // |a|·w_i / Σw (both unchanged by permuting):
  //  - |p_i| and |q_{π⁻¹(i)}| are both f_i or f_i + 1;
  //  - for every remainder value r, the number of +1s among the weights with remainder r is the same in p and q
  //    (only weights with equal exact remainders may swap a unit), so when all remainders are distinct,
  //    q = p∘π exactly, i.e. the multiset of (weight, part) pairs is the same.
  it('is independent of weight order, except that parts with equal exact remainders may swap a unit', () => {
    const permutedArb = weightsArb.chain((weights) =>
      fc.tuple(
        fc.constant(weights),
        fc.shuffledSubarray([...weights.keys()], { minLength: weights.length, maxLength: weights.length }),
      ),
    );
    fc.assert(
      fc.property(amountArb, permutedArb, (amount, [weights, permutation]) => {
        const p = allocate(amount, inputs(weights));
        const q = allocate(
          amount,
          permutation.map((index) => weights[index]?.input as Weight['input']),
        );
        const shares = exactShares(amount, weights);
        // qOf[i]: the part weight i got in the permuted allocation.
        const qOf: bigint[] = new Array(weights.length);
        permutation.forEach((original, position) => {
          qOf[original] = q[position] as bigint;
        });
        const bumpsByRemainder = new Map<bigint, { p: number; q: number; size: number }>();
        shares.forEach(({ floor, remainder }, i) => {
          const bumpP = abs(p[i] as bigint) - floor;
          const bumpQ = abs(qOf[i] as bigint) - floor;
          expect([0n, 1n]).toContain(bumpP);
          expect([0n, 1n]).toContain(bumpQ);
          const group = bumpsByRemainder.get(remainder) ?? { p: 0, q: 0, size: 0 };
          group.p += Number(bumpP);
          group.q += Number(bumpQ);
          group.size += 1;
          bumpsByRemainder.set(remainder, group);
        });
        for (const group of bumpsByRemainder.values()) expect(group.q).toBe(group.p);
        shares.forEach(({ remainder }, i) => {
          if (bumpsByRemainder.get(remainder)?.size === 1) expect(qOf[i]).toBe(p[i]);
        });
        if ([...bumpsByRemainder.values()].every((group) => group.size === 1)) expect(qOf).toEqual(p);
      }),
      RUNS,
    );
  });
});
