/**
 * C28: every reason a request has no price, not only the first one the engine meets. The engine prices without
 * looking for reasons (the plain path costs nothing more); when it cannot price, this module checks everything
 * that could refuse — the region and its currency white-list, every availability rule, the currency itself, the
 * price list in force, each SKU (known, sellable, priced in the currency) and each rate the prices need — and the
 * engine refuses with all of them (`PriceNotAvailableError`).
 */
import { CRYPTO_MINOR_UNITS, minorUnitsOf } from '../money/currency';
import { availabilityRefusals } from './availability';
import { CODE_OF_RULE, PricingError, reasonOf, type UnpriceableCode, type UnpriceableReason } from './errors';
import { fxTableOf } from './fx';
import { findItem, findProduct, inForce, sourceList } from './resolve';
import type { BasketRequest, PriceList, PricingCatalog } from './types';

const windowOf = (list: PriceList): string =>
  `from ${list.effective_from}${list.effective_to ? ` to ${list.effective_to}` : ''}`;

/**
 * Every reason `request` cannot be priced on `catalog` at `at`. `cause`, the error the engine met, is added when
 * no reason of its kind was found otherwise (a rate only a promotion cap or a fee needs, say).
 */
export const unpriceableReasons = (
  catalog: PricingCatalog,
  request: BasketRequest,
  at: string | undefined,
  cause?: PricingError,
): UnpriceableReason[] => {
  const reasons: UnpriceableReason[] = [];
  const add = (reason: UnpriceableReason): void => {
    if (!reasons.some((known) => known.code === reason.code && known.detail === reason.detail))
      reasons.push(reason);
  };
  const { currency, region } = request;
  const displayRule = catalog.display_rules.find((rule) => rule.region === region);
  for (const refusal of availabilityRefusals(
    request,
    displayRule,
    catalog.availability ?? {},
    catalog.base_currency,
  )) {
    // Every rule availability names has its code.
    add({ code: CODE_OF_RULE[refusal.rule] as UnpriceableCode, detail: refusal.reason });
  }
  let knownCurrency = true;
  try {
    minorUnitsOf(currency, displayRule?.minor_units, catalog.crypto_minor_units ?? CRYPTO_MINOR_UNITS);
  } catch {
    knownCurrency = false;
    add({ code: 'unknown_currency', detail: `unknown currency ${currency}` });
  }
  if (!inForce(catalog.pricelist, at)) {
    add({
      code: 'no_price_list_in_force',
      detail: `price list ${catalog.pricelist.pricelist_id} is in force ${windowOf(catalog.pricelist)}, not at ${at}`,
    });
  }

  const fx = fxTableOf(catalog.fx);
  const ratesChecked = new Set<string>();
  const needRate = (from: string, skuId: string): void => {
    if (!knownCurrency || from === currency || ratesChecked.has(from)) return;
    ratesChecked.add(from);
    try {
      fx.rate(from, currency);
    } catch (error) {
      if (!(error instanceof PricingError)) throw error;
      add({ code: 'no_rate', detail: `${error.message} (needed for ${skuId})` });
    }
  };
  const list = sourceList(catalog, currency, at);
  const strict = catalog.strategy.kind === 'price_lists';
  if (strict && !list) {
    const dormant = (catalog.currency_pricelists ?? []).find(
      (candidate) => candidate.base_currency === currency,
    );
    add(
      dormant
        ? {
            code: 'no_price_list_in_force',
            detail: `price list ${dormant.pricelist_id} is in force ${windowOf(dormant)}, not at ${at}`,
          }
        : { code: 'no_price', detail: `no price list in ${currency}` },
    );
  }
  for (const skuId of new Set(request.items.map((line) => line.sku_id))) {
    const baseItem = findItem(catalog.pricelist, skuId);
    if (!baseItem) {
      add({ code: 'unknown_sku', detail: `unknown SKU ${skuId}`, sku_id: skuId });
      continue;
    }
    const policy = findProduct(catalog.products, skuId)?.region_policies?.find(
      (candidate) => candidate.region === region,
    );
    if (policy && !policy.sellable)
      add({ code: 'not_sellable', detail: `${skuId} is not sold in ${region}`, sku_id: skuId });
    const listed = list ? findItem(list, skuId) : undefined;
    if (list && !listed && strict)
      add({ code: 'no_price', detail: `no ${currency} price for ${skuId}`, sku_id: skuId });
    const item = listed ?? baseItem;
    if (!strict || listed) needRate(item.base_currency, skuId);
    if (item.pricing_model === 'bundle') {
      const positions = item.bundle?.positions ?? [];
      if (positions.length === 0)
        add({ code: 'no_price', detail: `bundle ${skuId} has no positions`, sku_id: skuId });
      for (const position of positions) {
        const positionItem = findItem(catalog.pricelist, position.sku_id);
        if (!positionItem || positionItem.pricing_model === 'bundle')
          add({
            code: 'no_price',
            detail: `bundle ${skuId} names an unpriced position ${position.sku_id}`,
            sku_id: skuId,
          });
      }
    }
  }
  if (cause) {
    const reason = reasonOf(cause);
    if (!reasons.some((known) => known.code === reason.code)) add(reason);
  }
  return reasons;
};
