import { DECIMAL_STRING, Decimal, dec, sum, ZERO } from '../money/decimal';
import { instantOf } from './time';

/**
 * Aggregation methods of an FX pair (spec rule 9): `provider` (the first source of the fallback order that
 * answered), `median` of at least three sources, and `twap`, a time-weighted average over a window of ticks.
 * Results are decimal strings rounded half-even to the pair's precision (C1: never a float).
 */

/** A rate observed at a time (ISO 8601), by a source. */
export interface Tick {
  readonly rate: string;
  readonly observed_at: string;
  readonly source?: string;
}

export type AggregationFailure = 'no_quote' | 'insufficient_sources' | 'empty_window' | 'rounds_to_zero';

export class AggregationError extends Error {
  constructor(
    readonly reason: AggregationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'AggregationError';
  }
}

/** The smallest number of sources a median is taken over. */
export const MIN_MEDIAN_SOURCES = 3;

/** Precision of a published rate: 0 to 12 decimals (the catalog's FxRate `precision`). */
export const MAX_RATE_PRECISION = 12;

const checkPrecision = (precision: number): void => {
  if (!Number.isInteger(precision) || precision < 0 || precision > MAX_RATE_PRECISION)
    throw new RangeError(`precision must be an integer from 0 to ${MAX_RATE_PRECISION}: ${precision}`);
};

/** A strictly positive decimal string. */
export const isPositiveRate = (value: unknown): value is string =>
  typeof value === 'string' && DECIMAL_STRING.test(value) && !value.startsWith('-') && dec(value).gt(ZERO);

export const parseRate = (value: string): Decimal => {
  if (!isPositiveRate(value)) throw new RangeError(`not a positive decimal rate: ${JSON.stringify(value)}`);
  return dec(value);
};

/**
 * A rate rounded half-even to `precision` decimals, written with exactly that many decimals. A rate that
 * rounds to zero cannot be published: that is an `AggregationError` (`rounds_to_zero`), not a zero rate.
 */
export const roundRate = (value: Decimal, precision: number): string => {
  checkPrecision(precision);
  const rounded = value.toDecimalPlaces(precision, Decimal.ROUND_HALF_EVEN);
  if (rounded.lte(ZERO))
    throw new AggregationError(
      'rounds_to_zero',
      `${value.toString()} is not a positive rate at ${precision} decimals`,
    );
  return rounded.toFixed(precision);
};

/** `provider`: the first available candidate in fallback order. */
export const providerRate = <T>(candidates: readonly (T | undefined)[]): T | undefined =>
  candidates.find((candidate) => candidate !== undefined);

/**
 * `median` of at least three rates: the middle one of the sorted rates, or for an even count the exact mean
 * of the two middle ones; then rounded half-even to `precision`. The order of the rates does not matter.
 */
export const medianRate = (rates: readonly string[], precision: number): string => {
  checkPrecision(precision);
  if (rates.length < MIN_MEDIAN_SOURCES)
    throw new AggregationError(
      'insufficient_sources',
      `a median needs at least ${MIN_MEDIAN_SOURCES} rates, got ${rates.length}`,
    );
  const sorted = rates.map(parseRate).sort((a, b) => a.comparedTo(b));
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as Decimal;
  const value = sorted.length % 2 === 1 ? upper : (sorted[middle - 1] as Decimal).plus(upper).dividedBy(2);
  return roundRate(value, precision);
};

export interface TwapWindow {
  /** End of the window (the time of the computation). */
  readonly end: Date;
  readonly seconds: number;
}

const timeOf = (tick: Tick): number => instantOf(tick.observed_at);

/** Ticks observed at or before `end`, in time order; of ticks at one instant, the one listed last wins. */
const inForceOrder = (ticks: readonly Tick[], end: number): { tick: Tick; at: number }[] => {
  const timed = ticks.map((tick, index) => ({ tick, at: timeOf(tick), index })).filter(({ at }) => at <= end);
  timed.sort((a, b) => a.at - b.at || a.index - b.index);
  return timed.filter((entry, position) => timed[position + 1]?.at !== entry.at);
};

export interface WeightedTick {
  readonly tick: Tick;
  /** Milliseconds the tick was in force inside the window. */
  readonly weight_ms: number;
}

/**
 * How long each tick was in force inside the window [end − seconds, end]. Tick i is in force from its
 * `observed_at` t_i until the next tick's t_{i+1} (the last one until `end`); its weight is the length of
 * that interval clipped to the window. A tick observed before the window's start still counts from the start
 * for as long as it stays in force; ticks after `end` are ignored; of two ticks at the same instant the later
 * listed replaces the earlier. Ticks with no time in the window are left out.
 */
export const twapWeights = (ticks: readonly Tick[], window: TwapWindow): WeightedTick[] => {
  const end = window.end.getTime();
  const start = end - window.seconds * 1000;
  const ordered = inForceOrder(ticks, end);
  return ordered
    .map(({ tick, at }, index) => {
      const until = ordered[index + 1]?.at ?? end;
      return { tick, weight_ms: Math.max(0, Math.min(until, end) - Math.max(at, start)) };
    })
    .filter(({ weight_ms }) => weight_ms > 0);
};

/**
 * `twap`: the time-weighted average rate over the window,
 *
 *   TWAP = Σ rate_i × w_i / Σ w_i,   w_i = |[t_i, t_{i+1}) ∩ [end − seconds, end]|  (t_{n+1} = end),
 *
 * computed exactly in decimal (weights are whole milliseconds) and rounded half-even to `precision`. When no
 * tick has time in the window yet (the only tick was observed at `end`), the rate in force at `end` is the
 * result. A tick observed at `end` has no weight yet: the average reflects the time each rate was in force.
 */
export const twapRate = (ticks: readonly Tick[], window: TwapWindow, precision: number): string => {
  checkPrecision(precision);
  if (!Number.isInteger(window.seconds) || window.seconds <= 0)
    throw new RangeError(`a TWAP window is a positive number of seconds: ${window.seconds}`);
  const weighted = twapWeights(ticks, window);
  if (weighted.length === 0) {
    const inForce = inForceOrder(ticks, window.end.getTime()).at(-1);
    if (!inForce) throw new AggregationError('empty_window', 'no tick observed at or before the window end');
    return roundRate(parseRate(inForce.tick.rate), precision);
  }
  const total = sum(weighted.map(({ weight_ms }) => new Decimal(weight_ms)));
  const numerator = sum(weighted.map(({ tick, weight_ms }) => parseRate(tick.rate).times(weight_ms)));
  return roundRate(numerator.dividedBy(total), precision);
};

/** The most ticks kept for a pair, whatever its window (a bound on stored state). */
export const MAX_TICKS = 2000;

/**
 * The ticks a TWAP over the window ending at `end` (or any later window of that length) still needs: those
 * observed inside it, plus the last one before its start (in force at the start). At most `MAX_TICKS`, newest
 * kept, in time order.
 */
export const trimTicks = (ticks: readonly Tick[], window: TwapWindow): Tick[] => {
  const start = window.end.getTime() - window.seconds * 1000;
  const timed = ticks.map((tick, index) => ({ tick, at: timeOf(tick), index }));
  timed.sort((a, b) => a.at - b.at || a.index - b.index);
  let first = timed.findIndex(({ at }) => at >= start);
  if (first === -1) first = timed.length;
  const kept = timed.slice(Math.max(0, first - 1)).map(({ tick }) => tick);
  return kept.slice(-MAX_TICKS);
};
