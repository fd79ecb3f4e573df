/**
 * Guardrails of a change request (C23): findings that do not make the change invalid but need an explicit
 * acknowledgement from each approver. A price below its `min_price`, a price or rate move beyond the configured
 * maximum (an FX override's move against the published rate included), and any change of a tax rate.
 */
import { dec } from '../money/decimal';
import type { CatalogDiff, DiffableDocument } from './diff';

export type GuardrailCode = 'below_min_price' | 'price_move' | 'rate_move' | 'tax_rate_change';

export const GUARDRAIL_CODES: readonly GuardrailCode[] = [
  'below_min_price',
  'price_move',
  'rate_move',
  'tax_rate_change',
];

export interface GuardrailFinding {
  readonly code: GuardrailCode;
  /** JSON path in the proposed document, or the diff entry it is about. */
  readonly path: string;
  readonly message: string;
}

export interface GuardrailSettings {
  /** Largest move of a price, in percent (absolute), that needs no acknowledgement. */
  readonly maxPriceMovePercent: string;
  /** Largest move of an exchange rate, in percent (absolute), that needs no acknowledgement. */
  readonly maxRateMovePercent: string;
}

export const DEFAULT_GUARDRAILS: GuardrailSettings = { maxPriceMovePercent: '25', maxRateMovePercent: '5' };

/**
 * Whether a move is beyond the limit, judged on the exact move: `move_percent` is rounded to two decimals, and
 * 199.99 → 249.99 (25.00125 %) shows as "25.00" although it is beyond 25 %. No `move_percent` (a move from zero,
 * a currency change) is never beyond.
 */
const beyond = (
  change: { readonly from?: string; readonly to?: string; readonly move_percent?: string },
  limit: string,
): boolean => {
  if (change.move_percent === undefined || change.from === undefined || change.to === undefined) return false;
  const from = dec(change.from);
  return dec(change.to).minus(from).abs().times(100).gt(dec(limit).times(from.abs()));
};

/** Every guardrail finding of a proposed document and its diff against what is in force. */
export const guardrailFindings = (
  proposed: DiffableDocument,
  diff: CatalogDiff,
  settings: GuardrailSettings,
): GuardrailFinding[] => {
  const findings: GuardrailFinding[] = [];
  (proposed.pricelists ?? []).forEach((list, listIndex) => {
    list.items.forEach((item, itemIndex) => {
      if (item.min_price === undefined) return;
      const floor = dec(item.min_price);
      const prices = [item.base_price, ...(item.tiers ?? []).map((tier) => tier.unit_price)];
      const lowest = prices.map((price) => dec(price)).reduce((low, price) => (price.lt(low) ? price : low));
      if (lowest.lt(floor)) {
        findings.push({
          code: 'below_min_price',
          path: `$.pricelists[${listIndex}].items[${itemIndex}]`,
          message: `${item.sku_id} in ${list.pricelist_id}: ${lowest.toString()} ${item.base_currency} is below its min_price ${item.min_price}`,
        });
      }
    });
  });
  for (const change of diff.prices.changed) {
    if (beyond(change, settings.maxPriceMovePercent)) {
      findings.push({
        code: 'price_move',
        path: `prices.changed[${change.pricelist_id}/${change.sku_id}]`,
        message: `${change.sku_id} in ${change.pricelist_id} moves ${change.move_percent} % (${change.from} → ${change.to} ${change.currency}), beyond ${settings.maxPriceMovePercent} %`,
      });
    }
  }
  for (const change of diff.fx_rates) {
    if (beyond(change, settings.maxRateMovePercent)) {
      findings.push({
        code: 'rate_move',
        path: change.set === 'override' ? `fx_rates.overrides[${change.pair}]` : `fx_rates[${change.pair}]`,
        message: `${change.set} rate ${change.pair} moves ${change.move_percent} % (${change.from} → ${change.to}), beyond ${settings.maxRateMovePercent} %`,
      });
    }
  }
  for (const change of diff.tax_rates) {
    findings.push({
      code: 'tax_rate_change',
      path: `tax_rates[${change.region}/${change.tax_class}/${change.component}]`,
      message: `tax ${change.component} of ${change.tax_class} in ${change.region}: ${change.from ?? 'none'} → ${change.to ?? 'removed'}`,
    });
  }
  return findings;
};

/** The distinct codes an approver must acknowledge. */
export const codesToAcknowledge = (findings: readonly GuardrailFinding[]): GuardrailCode[] =>
  GUARDRAIL_CODES.filter((code) => findings.some((finding) => finding.code === code));
