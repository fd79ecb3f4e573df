import { type RateFreshness, rateFreshness } from '../../domain/rates/freshness';
import { canonicalPair, rateOfPair } from '../../domain/rates/pairs';
import type { CatalogRelease } from '../catalog/release';

export interface QuoteRateFreshness extends RateFreshness {
  /** The governed pair the quote's rate comes from (`EUR→USD`). */
  readonly pair: string;
  readonly max_age_seconds: number;
}

/**
 * How fresh the rate from the catalog's base currency to `currency` is, when the rate policy governs that pair
 * (or its inverse): its age since the rate came into force, `stale` past the pair's `stale_after_seconds`,
 * `refuse` past its `max_age_seconds`. `undefined` for the base currency itself and for rates no policy
 * governs (set by hand through change requests: never stale), and while a manual override of that pair is in force
 * (it replaces the published rate: the published rate's age does not matter then).
 */
export const quoteRateFreshness = (
  release: CatalogRelease,
  currency: string,
  now: Date,
): QuoteRateFreshness | undefined => {
  const { fx_rates: rates, rate_policy: policy } = release.fx.content;
  if (!policy || currency === rates.base_currency) return undefined;
  const candidates = [`${rates.base_currency}→${currency}`, `${currency}→${rates.base_currency}`];
  const governed = policy.pairs.find((entry) => candidates.includes(canonicalPair(entry.pair)));
  if (!governed) return undefined;
  const pair = canonicalPair(governed.pair);
  const instant = now.toISOString();
  const overridden = (rates.overrides ?? []).some(
    (override) => candidates.includes(canonicalPair(override.pair)) && override.expires_at > instant,
  );
  if (overridden) return undefined;
  const published = rateOfPair(rates.rates, pair);
  if (!published) return undefined;
  const freshness = rateFreshness(governed, published.effective_from ?? release.fx.effective_from, now);
  return { ...freshness, pair, max_age_seconds: governed.max_age_seconds };
};
