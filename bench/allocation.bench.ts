/**
 * Allocation side by side with dinero.js 2 on the same integer inputs: ours is largest remainder in bigint (ties
 * by input order), dinero's is round-robin over the parts by descending ratio, on JS numbers. Both must give
 * parts that sum to the amount; they may distribute the leftover units differently (counted, not an error).
 *
 * Amounts stay below 10^9 smallest units and weights below 100, so dinero's number calculator (amount × ratio)
 * stays far inside Number.MAX_SAFE_INTEGER.
 */
import { dinero, allocate as dineroAllocate, toSnapshot } from 'dinero.js';
import { USD } from 'dinero.js/currencies';
import { allocate } from '../functions/domain/money/allocation';
import { type BenchModule, type BenchResult, nowMs, summarize } from './harness';

const CASES = 10_000;
const ROUNDS = 9;
const WARMUP_ROUNDS = 2;
const SEED = 0x5eed_a110;

interface Case {
  readonly amount: number;
  readonly weights: readonly number[];
}

/** mulberry32: a small deterministic PRNG, uniform in [0, 1). */
const prng = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

/**
 * 10 000 (amount, weights) cases: amounts log-uniform over 1 … 10^9 smallest units, one in ten negative, some
 * zero; 2–10 integer weights in 0 … 99, about one in ten zero, at least one positive.
 */
const generateCases = (): Case[] => {
  const random = prng(SEED);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  return Array.from({ length: CASES }, () => {
    const magnitude = random() < 0.01 ? 0 : Math.floor(10 ** (random() * 9));
    const amount = random() < 0.1 ? -magnitude : magnitude;
    const weights = Array.from({ length: int(2, 10) }, () => (random() < 0.1 ? 0 : int(1, 99)));
    if (!weights.some((weight) => weight > 0)) weights[0] = int(1, 99);
    return { amount, weights };
  });
};

const ours = (item: Case): bigint[] => allocate(BigInt(item.amount), item.weights);

const theirs = (item: Case): number[] =>
  dineroAllocate(dinero({ amount: item.amount, currency: USD }), [...item.weights]).map(
    (part) => toSnapshot(part).amount,
  );

/** Time one pass over every case, in µs per call; `sink` keeps the results observable. */
const pass = <T>(cases: readonly Case[], fn: (item: Case) => T[], sink: { count: number }): number => {
  const start = nowMs();
  for (const item of cases) sink.count += fn(item).length;
  return ((nowMs() - start) * 1000) / cases.length;
};

const bench: BenchModule = {
  name: 'allocation',
  description: `allocate() vs dinero.js 2 allocate on ${CASES} seeded integer cases, ${ROUNDS} rounds`,
  run: async (ctx) => {
    const cases = generateCases();
    const sink = { count: 0 };

    // Correctness first, untimed: both must sum to the amount; count where they distribute differently.
    let oursMismatches = 0;
    let dineroMismatches = 0;
    let differing = 0;
    for (const item of cases) {
      const a = ours(item);
      const b = theirs(item);
      if (a.reduce((acc, part) => acc + part, 0n) !== BigInt(item.amount)) oursMismatches += 1;
      if (b.reduce((acc, part) => acc + part, 0) !== item.amount) dineroMismatches += 1;
      if (a.length !== b.length || a.some((part, index) => part !== BigInt(b[index] ?? Number.NaN)))
        differing += 1;
    }
    ctx.log(
      `sum mismatches: ours ${oursMismatches}, dinero ${dineroMismatches}; ${differing}/${CASES} cases differ`,
    );

    for (let round = 0; round < WARMUP_ROUNDS; round += 1) {
      pass(cases, ours, sink);
      pass(cases, theirs, sink);
    }
    const oursSamples: number[] = [];
    const dineroSamples: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternate which goes first, so neither always runs on a warmer (or more GC-laden) heap.
      if (round % 2 === 0) {
        oursSamples.push(pass(cases, ours, sink));
        dineroSamples.push(pass(cases, theirs, sink));
      } else {
        dineroSamples.push(pass(cases, theirs, sink));
        oursSamples.push(pass(cases, ours, sink));
      }
    }
    ctx.log(`${ROUNDS} rounds × ${CASES} calls each (${sink.count} parts produced)`);

    const oursSummary = summarize(oursSamples);
    const dineroSummary = summarize(dineroSamples);
    const rows = (bench: string, summary: ReturnType<typeof summarize>): BenchResult[] => [
      { bench, metric: 'median', value: summary.median, unit: 'µs/call' },
      { bench, metric: 'min', value: summary.min, unit: 'µs/call' },
      { bench, metric: 'max', value: summary.max, unit: 'µs/call' },
    ];
    return [
      ...rows('allocation.ours', oursSummary),
      ...rows('allocation.dinero', dineroSummary),
      {
        bench: 'allocation.compare',
        metric: 'ratio ours/dinero',
        value: oursSummary.median / dineroSummary.median,
        unit: 'x (target ≤ 1)',
      },
      { bench: 'allocation.compare', metric: 'cases', value: CASES, unit: 'count' },
      { bench: 'allocation.compare', metric: 'sum mismatches ours', value: oursMismatches, unit: 'count' },
      {
        bench: 'allocation.compare',
        metric: 'sum mismatches dinero',
        value: dineroMismatches,
        unit: 'count',
      },
      { bench: 'allocation.compare', metric: 'differing cases', value: differing, unit: 'count' },
    ];
  },
};

export default bench;
