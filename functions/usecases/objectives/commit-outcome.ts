import type { Json } from '../../domain/money/canonical';
import { DECIMAL_STRING, dec } from '../../domain/money/decimal';
import type { JsonObject } from '../../domain/receipts/receipt';
import type { CommitOutcome } from '../../ports/metrics';

const objectOf = (value: Json | undefined): JsonObject | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;

const nonEmpty = (value: Json | undefined): boolean =>
  (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value));

const sameAmount = (a: Json | undefined, b: Json | undefined): boolean =>
  typeof a === 'string' && typeof b === 'string' && DECIMAL_STRING.test(a) && DECIMAL_STRING.test(b)
    ? dec(a).equals(dec(b))
    : false;

/**
 * What an issued receipt shows against the stored quote it came from (rule 18): the committed
 * `computed_totals` (currency and total) against the quote's `currency` and `total`, the commit time against
 * the quote's `expires_at`, and the receipt's versions, hash and signature.
 */
export const commitOutcomeOf = (quote: JsonObject, receipt: JsonObject, committedAt: Date): CommitOutcome => {
  const totals = objectOf(receipt.computed_totals);
  const expiresAt = Date.parse(String(quote.expires_at));
  return {
    totalsEqual: totals?.currency === quote.currency && sameAmount(totals?.total, quote.total),
    insideLockWindow: Number.isFinite(expiresAt) && committedAt.getTime() < expiresAt,
    signedWithVersions:
      nonEmpty(receipt.pricelist_version) &&
      nonEmpty(receipt.fx_version) &&
      nonEmpty(receipt.tax_rule_version) &&
      typeof receipt.hash === 'string' &&
      receipt.hash.startsWith('sha256:') &&
      nonEmpty(receipt.signature),
  };
};
