import { allocate, roundPreservingSum } from '../money/allocation';
import {
  CRYPTO_MINOR_UNITS,
  formatAmount,
  formatMinor,
  isCrypto,
  minorUnitsOf,
  toMinor,
} from '../money/currency';
import { Decimal, dec, sum, toScaledBigint, ZERO } from '../money/decimal';
import { INTERMEDIATE_DECIMALS, round, roundBankers, roundCeil, step } from '../money/rounding';
import { checkAvailability } from './availability';
import { PricingError } from './errors';
import { computeFees } from './fees';
import { clientRate, fxTableOf, markupBpsFor } from './fx';
import { applyPromotions, conditionHolds } from './promotions';
import { type ResolutionContext, resolveItem } from './resolve';
import { chargesTax, computeTaxes, type LineTax, netOf } from './tax';
import type {
  BasketPricing,
  BasketRequest,
  FeeLine,
  MoneyInput,
  PricedLine,
  PricingCatalog,
  TaxLine,
  ThresholdOutcome,
} from './types';

const validate = (request: BasketRequest): void => {
  for (const [index, fee] of (request.checkout_fees ?? []).entries()) {
    if (dec(fee.amount).isNegative()) {
      throw new PricingError(
        'invalid_request',
        'checkout_fees',
        `checkout_fees[${index}].amount must not be negative`,
      );
    }
  }
  if (request.items.length === 0)
    throw new PricingError('invalid_request', 'items', 'the basket has no items');
  request.items.forEach((line, index) => {
    if (!Number.isSafeInteger(line.quantity) || line.quantity < 1) {
      throw new PricingError(
        'invalid_request',
        'quantity',
        `items[${index}].quantity must be a positive integer`,
      );
    }
  });
};

/** Weights for spreading an amount over lines; equal weights when every line is zero. */
const weightsOr1 = (values: readonly Decimal[]): Decimal[] =>
  values.every((value) => value.isZero())
    ? values.map(() => new Decimal(1))
    : values.map((value) => value.abs());

/**
 * Prices a basket in the fixed order of the specification: (1) base price, (2) discounts, (3) taxes, (4) fees,
 * (5) rounding. Pure: the same catalog snapshot and request give the same result, byte for byte. Intermediate
 * values keep 9 decimals (BANKERS) at every step boundary; amounts are rounded to the currency's minor units
 * only in step 5, except taxes, which the tax rule rounds at its own level in step 3. In both rounding scopes
 * the rounded lines add up to the rounded total, and subtotal − discounts + excluded taxes + fees = total.
 */
export const priceBasket = (catalog: PricingCatalog, request: BasketRequest): BasketPricing => {
  validate(request);
  const { currency, region } = request;
  const displayRule = catalog.display_rules.find((rule) => rule.region === region);
  const availability = checkAvailability(
    request,
    displayRule,
    catalog.availability ?? {},
    catalog.base_currency,
  );
  if (!availability.available)
    throw new PricingError('currency_not_available', availability.rule, availability.reason);
  const cryptoUnits = catalog.crypto_minor_units ?? CRYPTO_MINOR_UNITS;
  let minorUnits: number;
  try {
    minorUnits = minorUnitsOf(currency, displayRule?.minor_units, cryptoUnits);
  } catch {
    throw new PricingError('currency_not_available', 'currency', `unknown currency ${currency}`);
  }
  const crypto = isCrypto(currency, cryptoUnits);

  const fx = fxTableOf(catalog.fx);
  const markupBps = markupBpsFor(catalog.fx_markup_rules ?? [], request.channel, region);
  const clientRates = new Map<string, Decimal>();
  const rateFrom = (from: string): Decimal => {
    let rate = clientRates.get(from);
    if (!rate) {
      rate = clientRate(fx.rate(from, currency), markupBps);
      clientRates.set(from, rate);
    }
    return rate;
  };
  let conversions = 0;
  const convert = (amount: Decimal, from: string): Decimal => {
    if (from === currency) return amount;
    conversions += 1;
    return step(amount.times(rateFrom(from)));
  };
  const convertMoney = (money: MoneyInput): Decimal => convert(dec(money.amount), money.currency);

  const taxRule = catalog.tax_rules.rules.find((rule) => rule.region === region);
  const netPricing =
    taxRule !== undefined &&
    !chargesTax(taxRule, request.buyer_type) &&
    taxRule.tax_mode.inclusion === 'included';

  // (1) base price
  const context: ResolutionContext = {
    catalog,
    currency,
    region,
    minorUnits,
    isCrypto: crypto,
    charm: displayRule?.charm_pricing ?? null,
    ...(request.tenant ? { tenant: request.tenant } : {}),
    ...(request.campaign ? { campaign: request.campaign } : {}),
    convert,
  };
  const lines = request.items.map((line) => {
    const resolved = resolveItem(context, line.sku_id, line.quantity);
    const components = taxRule?.rates[resolved.item.tax_class] ?? [];
    // Business buyers under reverse charge see tax-inclusive catalogs without the tax.
    const unitPrice = netPricing ? netOf(resolved.unitPrice, components) : resolved.unitPrice;
    const minUnit = netPricing ? netOf(resolved.minUnitPrice, components) : resolved.minUnitPrice;
    return {
      line,
      resolved,
      unitPrice,
      base: step(unitPrice.times(line.quantity)),
      floor: step(Decimal.max(ZERO, minUnit).times(line.quantity)),
    };
  });

  // (2) discounts
  const scope = { region, currency, ...(request.channel ? { channel: request.channel } : {}) };
  const discounts = applyPromotions(
    catalog.promotions ?? [],
    lines.map(({ line, resolved, base, floor }) => ({
      sku_id: line.sku_id,
      ...(resolved.product?.category ? { category: resolved.product.category } : {}),
      ...(resolved.item.promo_refs ? { promo_refs: resolved.item.promo_refs } : {}),
      amount: base,
      floor,
    })),
    catalog.basket_policy,
    scope,
    (promotion) => (promotion.cap ? convertMoney(promotion.cap) : undefined),
  );
  const afterDiscount = lines.map(({ base }, index) => step(base.minus(discounts.perLine[index] as Decimal)));

  // (3) taxes
  const taxes: LineTax[][] = computeTaxes(
    lines.map(({ line, resolved }, index) => ({
      tax_class: resolved.item.tax_class,
      quantity: line.quantity,
      amount: afterDiscount[index] as Decimal,
    })),
    taxRule,
    request.buyer_type,
    minorUnits,
    taxRule?.threshold ? convertMoney(taxRule.threshold) : undefined,
  );
  const excludedTax = taxes.map((lineTaxes) =>
    sum(lineTaxes.filter((tax) => !tax.included).map((tax) => tax.amount)),
  );
  const goods = afterDiscount.map((amount, index) => amount.plus(excludedTax[index] as Decimal));
  const goodsTotal = sum(goods);

  // Threshold promotions (rule 6) look at the basket total in the basket currency.
  const baseUnits = minorUnitsOf(catalog.base_currency, {}, cryptoUnits);
  // Computed only when a threshold is reached: a basket priced from its own list may have no rate at all.
  const baseEquivalent = () =>
    roundBankers(goodsTotal.times(fx.rate(currency, catalog.base_currency)), baseUnits);
  const outcome = (promoId: string, kind: ThresholdOutcome['kind'], threshold: Decimal, bonus?: string) => ({
    promo_id: promoId,
    kind,
    ...(bonus ? { bonus } : {}),
    threshold: formatAmount(roundCeil(threshold, minorUnits), minorUnits),
    basket_total: formatAmount(roundBankers(goodsTotal, minorUnits), minorUnits),
    base_currency_equivalent: {
      amount: formatAmount(baseEquivalent(), baseUnits),
      currency: catalog.base_currency,
    },
    fx_version: catalog.fx.fx_version,
  });
  const thresholdOutcomes: ThresholdOutcome[] = [];
  for (const promotion of catalog.threshold_promotions ?? []) {
    const threshold = convertMoney(promotion.threshold);
    if (conditionHolds(promotion.condition, scope) && goodsTotal.greaterThanOrEqualTo(threshold)) {
      thresholdOutcomes.push(outcome(promotion.promo_id, promotion.kind, threshold, promotion.bonus));
    }
  }
  for (const [index, threshold] of (catalog.basket_policy.free_shipping_thresholds ?? []).entries()) {
    const converted = convertMoney(threshold);
    if (goodsTotal.greaterThanOrEqualTo(converted)) {
      thresholdOutcomes.push(
        outcome(`basket_policy.free_shipping_thresholds[${index}]`, 'free_shipping', converted),
      );
    }
  }

  // (4) fees
  const fees = computeFees(catalog.fees, {
    request,
    goodsTotal,
    isCrypto: crypto,
    freeShipping: thresholdOutcomes.some((entry) => entry.kind === 'free_shipping'),
    convert: convertMoney,
  });

  // (5) rounding
  const units = (value: Decimal) => toMinor(value, minorUnits);
  const byLine = catalog.basket_policy.rounding_scope === 'line';
  const baseParts = byLine
    ? lines.map(({ base }) => units(roundBankers(base, minorUnits)))
    : roundPreservingSum(
        lines.map(({ base }) => base),
        minorUnits,
      );
  const discountParts = (
    byLine
      ? discounts.perLine.map((discount) => units(roundBankers(discount, minorUnits)))
      : roundPreservingSum(discounts.perLine, minorUnits)
  ).map((discount, index) => {
    // Rounding must not undo the min_price safeguard: the line keeps at least its floor.
    const room = (baseParts[index] as bigint) - units(roundCeil(lines[index]?.floor ?? ZERO, minorUnits));
    return discount > room ? (room > 0n ? room : 0n) : discount;
  });
  const feeWeights = weightsOr1(goods).map((weight) => toScaledBigint(step(weight), INTERMEDIATE_DECIMALS));
  const feeRounded = fees
    .map((fee) => ({ kind: fee.kind, units: units(roundBankers(fee.amount, minorUnits)) }))
    .filter((fee) => fee.units !== 0n);
  const feeShares = feeRounded.map((fee) => allocate(fee.units, feeWeights));
  const taxUnits = taxes.map((lineTaxes) => lineTaxes.map((tax) => units(tax.amount)));

  const displayMode = displayRule?.rounding_mode ?? 'HALF_UP';
  const show = (value: bigint) => formatMinor(value, minorUnits);
  const items_priced: PricedLine[] = lines.map(({ line, resolved, unitPrice, base }, index) => {
    const lineTaxes = taxes[index] as LineTax[];
    const lineTaxUnits = taxUnits[index] as bigint[];
    const excluded = lineTaxes.reduce(
      (acc, tax, position) => (tax.included ? acc : acc + (lineTaxUnits[position] as bigint)),
      0n,
    );
    const feeUnits = feeShares.reduce((acc, shares) => acc + (shares[index] as bigint), 0n);
    const total = (baseParts[index] as bigint) - (discountParts[index] as bigint) + excluded + feeUnits;
    const taxTotal = lineTaxUnits.reduce((acc, value) => acc + value, 0n);
    // The line's rounded (and floor-clamped) discount, split over the promotions that made it.
    const entries = discounts.applied[index] ?? [];
    const shares =
      entries.length > 0
        ? allocate(
            discountParts[index] as bigint,
            entries.map((entry) => entry.amount),
          )
        : [];
    const applied = entries.map((entry, position) => ({
      promo_id: entry.promo_id,
      amount: show(shares[position] as bigint),
    }));
    const priced: PricedLine = {
      line: index + 1,
      sku_id: line.sku_id,
      quantity: line.quantity,
      pricing_model: resolved.item.pricing_model,
      unit_price: formatAmount(round(unitPrice, minorUnits, displayMode), minorUnits),
      display_price: formatAmount(
        round(
          step(base.minus(discounts.perLine[index] ?? ZERO).dividedBy(line.quantity)),
          minorUnits,
          displayMode,
        ),
        minorUnits,
      ),
      base: show(baseParts[index] as bigint),
      discount: show(discountParts[index] as bigint),
      taxes: lineTaxes.map((tax, position) => ({
        name: tax.name,
        tax_class: tax.tax_class,
        rate: tax.rate,
        amount: show(lineTaxUnits[position] as bigint),
        included: tax.included,
      })),
      tax: show(taxTotal),
      fees: show(feeUnits),
      total: show(total),
      applied_promotions: applied,
    };
    if (!resolved.bundleWeights) return priced;
    // Rule 5: the bundle's price is split over its positions by their prices before discount; kept for returns.
    const weights = resolved.bundleWeights.map((position) => position.weight);
    const amounts = allocate(total, weightsOr1(weights));
    const bundleTaxes = allocate(taxTotal, weightsOr1(weights));
    return {
      ...priced,
      bundle_allocation: resolved.bundleWeights.map((position, position_index) => ({
        sku_id: position.sku_id,
        quantity: position.quantity,
        weight: position.weight.toString(),
        amount: show(amounts[position_index] as bigint),
        tax: show(bundleTaxes[position_index] as bigint),
      })),
    };
  });

  const basketTaxes = new Map<string, { line: TaxLine; units: bigint }>();
  taxes.forEach((lineTaxes, index) => {
    lineTaxes.forEach((tax, position) => {
      const key = `${tax.name}\u0000${tax.tax_class}\u0000${tax.rate}\u0000${tax.included}`;
      const current = basketTaxes.get(key);
      const value = (taxUnits[index] as bigint[])[position] as bigint;
      basketTaxes.set(key, {
        line: {
          name: tax.name,
          tax_class: tax.tax_class,
          rate: tax.rate,
          amount: '',
          included: tax.included,
        },
        units: (current?.units ?? 0n) + value,
      });
    });
  });
  const feeLines: FeeLine[] = feeRounded.map((fee) => ({ kind: fee.kind, amount: show(fee.units) }));
  const totalUnits = items_priced.reduce((acc, line) => acc + units(dec(line.total)), 0n);

  return {
    currency,
    region,
    buyer_type: request.buyer_type,
    rounding_scope: catalog.basket_policy.rounding_scope,
    minor_units: minorUnits,
    items_priced,
    subtotal: show(baseParts.reduce((acc, value) => acc + value, 0n)),
    discounts: show(discountParts.reduce((acc, value) => acc + value, 0n)),
    taxes: [...basketTaxes.values()].map((entry) => ({ ...entry.line, amount: show(entry.units) })),
    fees: feeLines,
    total: show(totalUnits),
    threshold_promotions: thresholdOutcomes,
    ...(conversions > 0 ? { fx_rate: rateFrom(catalog.base_currency).toString() } : {}),
    versions: {
      pricelist_version: catalog.pricelist.version,
      fx_version: catalog.fx.fx_version,
      tax_rule_version: catalog.tax_rules.tax_rule_version,
    },
  };
};
