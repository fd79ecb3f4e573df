import { formatAmount, minorUnitsOf } from '../../domain/money/currency';
import { dec } from '../../domain/money/decimal';
import { roundFloor } from '../../domain/money/rounding';
import { PricingError } from '../../domain/pricing/errors';
import { fxTableOf } from '../../domain/pricing/fx';
import { CatalogNotFoundError } from './reader';
import { type CatalogRelease, toPricingCatalog, versionsOf } from './release';

/**
 * Rule 15: the maximum winnings of a region (else the default limit without a region), in the catalog currency,
 * and their equivalent in `currency` at the published rate of the `fx_version` in force: no markup, rounded
 * FLOOR to the currency's minor units so the equivalent never exceeds the limit.
 */
export const limitsOf = (release: CatalogRelease, currency: string, region: string, at: Date) => {
  const commercial = release.commercial.content;
  const limits = commercial.limits ?? [];
  const limit =
    limits.find((candidate) => candidate.region === region) ??
    limits.find((candidate) => candidate.region === undefined);
  if (!limit) throw new CatalogNotFoundError(`no maximum-winnings limit for region ${region}`);
  const catalog = toPricingCatalog(release, { at });
  const displayRule = commercial.display_rules.find((rule) => rule.region === region);
  const cryptoUnits = commercial.settings.crypto_minor_units;
  let units: number;
  let limitUnits: number;
  try {
    units = minorUnitsOf(currency, displayRule?.minor_units, cryptoUnits);
    limitUnits = minorUnitsOf(limit.max_winnings.currency, {}, cryptoUnits);
  } catch {
    throw new PricingError('currency_not_available', 'currency', `unknown currency ${currency}`);
  }
  // Throws `currency_not_available` (422) when no published rate reaches the currency. An FX override in force
  // at `at` is the pair's rate then.
  const rate = fxTableOf(catalog.fx, at.toISOString()).rate(limit.max_winnings.currency, currency);
  const amount = dec(limit.max_winnings.amount);
  const versions = versionsOf(release);
  return {
    currency,
    region,
    max_winnings: {
      amount: formatAmount(roundFloor(amount, limitUnits), limitUnits),
      currency: limit.max_winnings.currency,
    },
    equivalent: { amount: formatAmount(roundFloor(amount.times(rate), units), units), currency },
    fx_rate: rate.toString(),
    fx_version: versions.fx_version,
    pricelist_version: versions.pricelist_version,
  };
};
