/**
 * The fetch and aggregate steps of FX ingestion: each due pair's quotes through its sources (in fallback order,
 * one `fetch` per source per round), then its rate by its method. Everything a source answered that cannot be
 * used is a failure of that source, never a rate.
 */
import {
  AggregationError,
  isPositiveRate,
  medianRate,
  parseRate,
  roundRate,
  type Tick,
  type TwapWindow,
  twapRate,
  twapWeights,
} from '../../domain/rates/aggregate';
import type { Observation } from '../../domain/rates/decision';
import { canonicalPair } from '../../domain/rates/pairs';
import { olderThan } from '../../domain/rates/time';
import type { RateQuote, RateSource } from '../../ports/rates';
import type { RatePairPolicy } from '../../schemas/rate-policy';
import type { SourceFailure } from './ingest-run';

/** A quote observed further in the future than this (clock skew) is malformed. */
export const FUTURE_QUOTE_TOLERANCE_SECONDS = 60;
const MAX_SOURCE_CHARS = 100;

export interface Fetched {
  readonly quotes: readonly RateQuote[];
  readonly failures: readonly SourceFailure[];
}

const reasonOf = (error: unknown): string => {
  const reason = (error as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : 'error';
};

/** One source's answer for some pairs: a validated quote or a failure reason per pair. */
const askSource = async (
  source: RateSource | undefined,
  sourceId: string,
  pairs: readonly RatePairPolicy[],
  now: Date,
): Promise<Map<string, RateQuote | string>> => {
  const answers = new Map<string, RateQuote | string>();
  if (!source) {
    for (const pair of pairs) answers.set(pair.pair, 'unknown_source');
    return answers;
  }
  let quotes: RateQuote[];
  try {
    quotes = await source.fetch(
      pairs.map((pair) => pair.pair),
      now,
    );
  } catch (error) {
    for (const pair of pairs) answers.set(pair.pair, reasonOf(error));
    return answers;
  }
  for (const pair of pairs) {
    const quote = quotes.find((candidate) => canonicalPair(String(candidate?.pair)) === pair.pair);
    const observed = Date.parse(String(quote?.observed_at));
    if (!quote) answers.set(pair.pair, 'no_quote');
    else if (quote.source !== sourceId || !isPositiveRate(quote.rate) || Number.isNaN(observed))
      answers.set(pair.pair, 'malformed');
    else if (observed > now.getTime() + FUTURE_QUOTE_TOLERANCE_SECONDS * 1000)
      answers.set(pair.pair, 'future_quote');
    else if (olderThan(String(quote.observed_at), pair.stale_after_seconds, now))
      answers.set(pair.pair, 'stale_quote');
    else
      answers.set(pair.pair, {
        pair: pair.pair,
        rate: quote.rate,
        source: sourceId,
        observed_at: new Date(observed).toISOString(),
      });
  }
  return answers;
};

/**
 * Quotes for every pair (by canonical pair), one `fetch` per source per round. `median` pairs ask all their
 * sources at once; `provider` and `twap` pairs ask their first source, then the next one after each failure
 * (fallback order).
 */
export const fetchQuotes = async (
  sources: ReadonlyMap<string, RateSource>,
  pairs: readonly RatePairPolicy[],
  now: Date,
): Promise<ReadonlyMap<string, Fetched>> => {
  const results = new Map<string, { quotes: RateQuote[]; failures: SourceFailure[] }>(
    pairs.map((pair) => [pair.pair, { quotes: [], failures: [] }]),
  );
  let round = pairs.map((pair) => ({
    pair,
    ids: pair.method === 'median' ? pair.sources : pair.sources.slice(0, 1),
  }));
  while (round.length > 0) {
    const bySource = new Map<string, RatePairPolicy[]>();
    for (const { pair, ids } of round)
      for (const id of ids) bySource.set(id, [...(bySource.get(id) ?? []), pair]);
    const answers = new Map(
      await Promise.all(
        [...bySource].map(
          async ([id, asked]) => [id, await askSource(sources.get(id), id, asked, now)] as const,
        ),
      ),
    );
    const next: typeof round = [];
    for (const { pair, ids } of round) {
      const fetched = results.get(pair.pair) as { quotes: RateQuote[]; failures: SourceFailure[] };
      for (const id of ids) {
        const answer = answers.get(id)?.get(pair.pair) as RateQuote | string;
        if (typeof answer !== 'string') {
          fetched.quotes.push(answer);
          continue;
        }
        const fallback = pair.method === 'median' ? undefined : pair.sources[pair.sources.indexOf(id) + 1];
        fetched.failures.push({
          source_id: id,
          reason: answer,
          ...(fallback ? { fallback_to: fallback } : {}),
        });
        if (fallback) next.push({ pair, ids: [fallback] });
      }
    }
    round = next;
  }
  return results;
};

/** The TWAP window of a `twap` pair at `now` (also what its stored ticks must cover); none for others. */
export const twapWindowOf = (pair: RatePairPolicy, now: Date): TwapWindow | undefined =>
  pair.method === 'twap' ? { end: now, seconds: pair.twap_window_seconds as number } : undefined;

const truncateSource = (ids: readonly string[]): string => {
  const joined = [...new Set(ids)].join('+');
  return joined.length <= MAX_SOURCE_CHARS ? joined : `${joined.slice(0, MAX_SOURCE_CHARS - 1)}…`;
};

const rateOf = (
  pair: RatePairPolicy,
  quotes: readonly RateQuote[],
  ticks: readonly Tick[],
  spot: RateQuote,
  window: TwapWindow | undefined,
): Observation => {
  if (pair.method === 'median')
    return {
      rate: medianRate(
        quotes.map((quote) => quote.rate),
        pair.precision,
      ),
      source: truncateSource(quotes.map((quote) => quote.source)),
      observed_at: quotes
        .map((quote) => quote.observed_at)
        .sort()
        .at(-1) as string,
    };
  if (window) {
    const weighted = twapWeights(ticks, window).map(({ tick }) => tick.source ?? spot.source);
    return {
      rate: twapRate(ticks, window, pair.precision),
      source: truncateSource(weighted.length > 0 ? weighted : [spot.source]),
      observed_at: spot.observed_at,
    };
  }
  return {
    rate: roundRate(parseRate(spot.rate), pair.precision),
    source: spot.source,
    observed_at: spot.observed_at,
  };
};

/**
 * The pair's observation by its method from this run's quotes (`twap`: with the stored ticks before them),
 * and the ticks to keep: for `twap` the stored ones plus this run's spot quote, for other methods none.
 */
export const aggregateQuotes = (
  pair: RatePairPolicy,
  storedTicks: readonly Tick[],
  quotes: readonly RateQuote[],
  now: Date,
): { readonly observation: Observation; readonly ticks: readonly Tick[] } => {
  const window = twapWindowOf(pair, now);
  const kept = window ? [...storedTicks] : [];
  const spot = quotes[0];
  if (!spot) return { observation: { failure: 'no_source_answered' }, ticks: kept };
  const ticks = window
    ? [...kept, { rate: spot.rate, observed_at: spot.observed_at, source: spot.source }]
    : kept;
  try {
    return { observation: rateOf(pair, quotes, ticks, spot, window), ticks };
  } catch (error) {
    if (error instanceof AggregationError) return { observation: { failure: error.reason }, ticks: kept };
    throw error;
  }
};
