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
import { INTERMEDIATE_DECIMALS, round, roundBankers, roundCeil, roundFloor, step } from '../money/rounding';
import { checkAvailability } from './availability';
import { PriceNotAvailableError, PricingError } from './errors';
import { type ExplainFigures, ExplainTrace, type Explanation, figure } from './explain';
import { computeFees } from './fees';
import { clientRate, fxTableOf, markupBpsFor } from './fx';
import { applyPromotions, conditionHolds, reachesBuyer } from './promotions';
import { unpriceableReasons } from './reasons';
import { inForce, isStoredValue, type ResolutionContext, type ResolvedItem, resolveItem } from './resolve';
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

/** What a calculation needs besides the catalog and the basket. */
export interface PricingOptions {
  /**
   * The instant of pricing (ISO 8601 UTC with ms, as the catalog writes `effective_from`): price lists not in
   * force then are not used. Absent: every list counts as in force.
   */
  readonly at?: string;
}

/** No options: the one object every call without options shares (the plain path allocates nothing for it). */
const NO_OPTIONS: PricingOptions = Object.freeze({});

/** A calculation with its explanation (C28). */
export interface ExplainedPricing {
  readonly pricing: BasketPricing;
  readonly explain: Explanation;
}

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
 *
 * A basket that cannot be priced is refused with `PriceNotAvailableError`, naming every reason that applies
 * (C28); a malformed one with a `PricingError` of code `invalid_request`.
 */
export const priceBasket = (
  catalog: PricingCatalog,
  request: BasketRequest,
  options: PricingOptions = NO_OPTIONS,
): BasketPricing => {
  validate(request);
  try {
    return compute(catalog, request, options, undefined);
  } catch (error) {
    throw unpriceable(catalog, request, options, error);
  }
};

/**
 * The same calculation as `priceBasket` (one code path), with its explanation: every step in the fixed order,
 * what it took and what it gave (C28). Only this entry point builds a trace.
 */
export const explainBasket = (
  catalog: PricingCatalog,
  request: BasketRequest,
  options: PricingOptions = NO_OPTIONS,
): ExplainedPricing => {
  validate(request);
  const trace = new ExplainTrace();
  try {
    return { pricing: compute(catalog, request, options, trace), explain: trace.explanation() };
  } catch (error) {
    throw unpriceable(catalog, request, options, error);
  }
};

/** An engine refusal becomes a refusal with every reason (C28); anything else passes unchanged. */
const unpriceable = (
  catalog: PricingCatalog,
  request: BasketRequest,
  options: PricingOptions,
  error: unknown,
): unknown =>
  error instanceof PricingError &&
  error.code !== 'invalid_request' &&
  !(error instanceof PriceNotAvailableError)
    ? new PriceNotAvailableError(unpriceableReasons(catalog, request, options.at, error))
    : error;

const compute = (
  catalog: PricingCatalog,
  request: BasketRequest,
  options: PricingOptions,
  trace: ExplainTrace | undefined,
): BasketPricing => {
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
  if (!inForce(catalog.pricelist, options.at)) {
    throw new PricingError(
      'no_price',
      'pricelist_in_force',
      `price list ${catalog.pricelist.pricelist_id} is not in force at ${options.at}`,
    );
  }

  // The rates as of the pricing instant: an override in force replaces its pair's published rate.
  const fx = fxTableOf(catalog.fx, options.at);
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
  const rateFigures = trace
    ? (from: string): ExplainFigures => {
        const { override } = fx.conversion(from, currency, markupBps);
        return {
          pair: `${from}→${currency}`,
          published_rate: figure(fx.rate(from, currency)),
          fx_markup_bps: markupBps,
          client_rate: figure(rateFrom(from)),
          fx_version: catalog.fx.fx_version,
          ...(override ? { override: { ...override } } : {}),
        };
      }
    : undefined;
  const groups = request.customer_groups?.length ? new Set(request.customer_groups) : undefined;

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
    ...(displayRule?.rounding_mode ? { displayMode: displayRule.rounding_mode } : {}),
    ...(request.tenant ? { tenant: request.tenant } : {}),
    ...(request.campaign ? { campaign: request.campaign } : {}),
    ...(groups ? { customerGroups: groups } : {}),
    ...(options.at ? { at: options.at } : {}),
    convert,
    ...(trace ? { trace, rateFigures } : {}),
  };
  const lines = request.items.map((line, index) => {
    const resolved = resolveItem(context, line.sku_id, line.quantity, index + 1);
    const components = taxRule?.rates[resolved.item.tax_class] ?? [];
    // Business buyers under reverse charge see tax-inclusive catalogs without the tax.
    const unitPrice = netPricing ? netOf(resolved.unitPrice, components) : resolved.unitPrice;
    const minUnit = netPricing ? netOf(resolved.minUnitPrice, components) : resolved.minUnitPrice;
    const priced = {
      line,
      resolved,
      unitPrice,
      base: step(unitPrice.times(line.quantity)),
      floor: step(Decimal.max(ZERO, minUnit).times(line.quantity)),
    };
    if (trace) explainLineAmount(trace, index + 1, priced, netPricing, minUnit);
    return priced;
  });

  // (2) discounts
  const scope = {
    region,
    currency,
    ...(request.channel ? { channel: request.channel } : {}),
    ...(groups ? { customerGroups: groups } : {}),
  };
  const discounts = applyPromotions(
    catalog.promotions ?? [],
    lines.map(({ line, resolved, base, floor }) => ({
      sku_id: line.sku_id,
      ...(resolved.product?.category ? { category: resolved.product.category } : {}),
      ...(resolved.item.promo_refs ? { promo_refs: resolved.item.promo_refs } : {}),
      amount: base,
      floor,
      ...(isStoredValue(resolved.product) ? { exempt: true } : {}),
    })),
    catalog.basket_policy,
    scope,
    (promotion) => (promotion.cap ? convertMoney(promotion.cap) : undefined),
    trace,
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
    trace,
  );
  const excludedTax = taxes.map((lineTaxes) =>
    sum(lineTaxes.filter((tax) => !tax.included).map((tax) => tax.amount)),
  );
  const goods = afterDiscount.map((amount, index) => amount.plus(excludedTax[index] as Decimal));
  const goodsTotal = sum(goods);
  // Threshold promotions count the merchandise: stored-value lines (gift cards) are not promoted (rule 6).
  const promotedTotal = lines.some(({ resolved }) => isStoredValue(resolved.product))
    ? sum(goods.filter((_, index) => !isStoredValue(lines[index]?.resolved.product)))
    : goodsTotal;

  // Threshold promotions (rule 6) look at the basket total in the basket currency.
  const baseUnits = minorUnitsOf(catalog.base_currency, {}, cryptoUnits);
  // Computed only when a threshold is reached: a basket priced from its own list may have no rate at all.
  const baseEquivalent = () =>
    roundBankers(promotedTotal.times(fx.rate(currency, catalog.base_currency)), baseUnits);
  const outcome = (promoId: string, kind: ThresholdOutcome['kind'], threshold: Decimal, bonus?: string) => ({
    promo_id: promoId,
    kind,
    ...(bonus ? { bonus } : {}),
    threshold: formatAmount(roundCeil(threshold, minorUnits), minorUnits),
    basket_total: formatAmount(roundBankers(promotedTotal, minorUnits), minorUnits),
    base_currency_equivalent: {
      amount: formatAmount(baseEquivalent(), baseUnits),
      currency: catalog.base_currency,
    },
    fx_version: catalog.fx.fx_version,
  });
  const thresholdOutcomes: ThresholdOutcome[] = [];
  for (const promotion of catalog.threshold_promotions ?? []) {
    const threshold = convertMoney(promotion.threshold);
    const applies = conditionHolds(promotion.condition, scope) && reachesBuyer(promotion.target, scope);
    const reached = applies && promotedTotal.greaterThanOrEqualTo(threshold);
    const reachedOutcome = reached
      ? outcome(promotion.promo_id, promotion.kind, threshold, promotion.bonus)
      : undefined;
    if (reachedOutcome) thresholdOutcomes.push(reachedOutcome);
    if (trace) {
      explainThreshold(trace, {
        rule: 'threshold_promotion',
        id: promotion.promo_id,
        kind: promotion.kind,
        threshold,
        asSet: promotion.threshold,
        goodsTotal: promotedTotal,
        applies,
        outcome: reachedOutcome,
        ...(promotion.target ? { customerGroup: promotion.target.customer_group } : {}),
      });
    }
  }
  for (const [index, threshold] of (catalog.basket_policy.free_shipping_thresholds ?? []).entries()) {
    const converted = convertMoney(threshold);
    const reachedOutcome = promotedTotal.greaterThanOrEqualTo(converted)
      ? outcome(`basket_policy.free_shipping_thresholds[${index}]`, 'free_shipping', converted)
      : undefined;
    if (reachedOutcome) thresholdOutcomes.push(reachedOutcome);
    if (trace) {
      explainThreshold(trace, {
        rule: 'free_shipping_threshold',
        id: `basket_policy.free_shipping_thresholds[${index}]`,
        kind: 'free_shipping',
        threshold: converted,
        asSet: threshold,
        goodsTotal: promotedTotal,
        applies: true,
        outcome: reachedOutcome,
      });
    }
  }

  // (4) fees
  const fees = computeFees(catalog.fees, {
    request,
    goodsTotal,
    isCrypto: crypto,
    freeShipping: thresholdOutcomes.some((entry) => entry.kind === 'free_shipping'),
    convert: convertMoney,
    ...(trace ? { trace } : {}),
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
  const roundedDiscounts = byLine
    ? discounts.perLine.map((discount) => units(roundBankers(discount, minorUnits)))
    : roundPreservingSum(discounts.perLine, minorUnits);
  const discountParts = roundedDiscounts.map((discount, index) => {
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
      ...(resolved.customerGroup ? { customer_group: resolved.customerGroup } : {}),
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

  // One entry per currency converted from, from the client rates already computed (none when nothing was).
  const fxConversions = [...clientRates]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([from]) => fx.conversion(from, currency, markupBps));
  const result: BasketPricing = {
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
    ...(fxConversions.length > 0 ? { fx_conversions: fxConversions } : {}),
    versions: {
      pricelist_version: catalog.pricelist.version,
      fx_version: catalog.fx.fx_version,
      tax_rule_version: catalog.tax_rules.tax_rule_version,
    },
  };
  if (trace) {
    explainRounding(trace, {
      result,
      lines,
      perLineDiscount: discounts.perLine,
      roundedDiscounts,
      baseParts,
      discountParts,
      fees,
      feeRounded,
      feeShares,
      goods,
      displayMode,
      byLine,
    });
  }
  return result;
};

type PricedInput = {
  readonly line: BasketRequest['items'][number];
  readonly resolved: ResolvedItem;
  readonly unitPrice: Decimal;
  readonly base: Decimal;
  readonly floor: Decimal;
};

/** The end of step 1 for a line: (net of tax under reverse charge) unit price × quantity, and its floor. */
const explainLineAmount = (
  trace: ExplainTrace,
  line: number,
  priced: PricedInput,
  netPricing: boolean,
  minUnit: Decimal,
): void => {
  if (netPricing) {
    trace.add({
      step: 'base',
      rule: 'reverse_charge_net',
      line,
      input: { unit_price: figure(priced.resolved.unitPrice) },
      output: { unit_price: figure(priced.unitPrice) },
      detail:
        'a business buyer under reverse charge sees the tax-inclusive price net of its tax (gross / (1 + r))',
    });
  }
  const minPrice = priced.resolved.item.min_price;
  trace.add({
    step: 'base',
    rule: 'line_amount',
    line,
    input: { unit_price: figure(priced.unitPrice), quantity: priced.line.quantity },
    output: {
      amount: figure(priced.base),
      floor: figure(priced.floor),
      ...(minPrice ? { min_price: figure(minUnit) } : {}),
    },
    detail:
      'unit price × quantity, at 9 decimals' +
      (minPrice
        ? `; floor for discounts: min_price ${minPrice} ${priced.resolved.item.base_currency} × quantity`
        : '; no min_price: discounts may take the line down to zero'),
  });
};

/** A threshold promotion or a free-shipping threshold of the basket policy (rule 6), reached or not. */
const explainThreshold = (
  trace: ExplainTrace,
  entry: {
    readonly rule: 'threshold_promotion' | 'free_shipping_threshold';
    readonly id: string;
    readonly kind: ThresholdOutcome['kind'];
    readonly threshold: Decimal;
    readonly asSet: MoneyInput;
    readonly goodsTotal: Decimal;
    readonly applies: boolean;
    readonly outcome: ThresholdOutcome | undefined;
    readonly customerGroup?: string;
  },
): void => {
  const { outcome } = entry;
  trace.add({
    step: 'fees',
    rule: entry.rule,
    input: {
      promo_id: entry.id,
      kind: entry.kind,
      basket_total: figure(entry.goodsTotal),
      threshold: figure(entry.threshold),
      threshold_as_set: { amount: entry.asSet.amount, currency: entry.asSet.currency },
      ...(entry.customerGroup ? { customer_group: entry.customerGroup } : {}),
    },
    output: {
      applies: entry.applies,
      reached: outcome !== undefined,
      ...(outcome
        ? {
            base_currency_equivalent: { ...outcome.base_currency_equivalent },
            fx_version: outcome.fx_version,
            ...(outcome.bonus ? { bonus: outcome.bonus } : {}),
          }
        : {}),
    },
    detail: !entry.applies
      ? `${entry.id} does not apply to this basket (its condition${entry.customerGroup ? ' or customer group' : ''})`
      : outcome
        ? `the basket after discounts and taxes (stored-value lines not counted), ${figure(entry.goodsTotal)}, reaches ${figure(entry.threshold)}` +
          (entry.kind === 'free_shipping' ? ': shipping is waived' : `: bonus ${outcome.bonus ?? ''}`)
        : `the basket after discounts and taxes (stored-value lines not counted), ${figure(entry.goodsTotal)}, is below ${figure(entry.threshold)}`,
  });
};

/** Step 5 explained: each line's rounding, remainders and shares, then the basket's. */
const explainRounding = (
  trace: ExplainTrace,
  context: {
    readonly result: BasketPricing;
    readonly lines: readonly PricedInput[];
    readonly perLineDiscount: readonly Decimal[];
    readonly roundedDiscounts: readonly bigint[];
    readonly baseParts: readonly bigint[];
    readonly discountParts: readonly bigint[];
    readonly fees: readonly { readonly kind: string; readonly amount: Decimal }[];
    readonly feeRounded: readonly { readonly kind: string; readonly units: bigint }[];
    readonly feeShares: readonly (readonly bigint[])[];
    readonly goods: readonly Decimal[];
    readonly displayMode: string;
    readonly byLine: boolean;
  },
): void => {
  const { result, lines, byLine, displayMode } = context;
  const minorUnits = result.minor_units;
  const show = (value: bigint) => formatMinor(value, minorUnits);
  /** Units a part got beyond its value rounded toward −∞ (basket scope: its share of the remainder). */
  const extra = (value: Decimal, part: bigint): bigint =>
    part - toMinor(roundFloor(value, minorUnits), minorUnits);
  const baseRemainder: { line: number; units: number }[] = [];
  const discountRemainder: { line: number; units: number }[] = [];
  result.items_priced.forEach((priced, index) => {
    const line = lines[index] as PricedInput;
    const base = context.baseParts[index] as bigint;
    const rounded = context.roundedDiscounts[index] as bigint;
    const discount = context.discountParts[index] as bigint;
    const baseExtra = byLine ? 0n : extra(line.base, base);
    const discountExtra = byLine ? 0n : extra(context.perLineDiscount[index] as Decimal, rounded);
    if (baseExtra !== 0n) baseRemainder.push({ line: index + 1, units: Number(baseExtra) });
    if (discountExtra !== 0n) discountRemainder.push({ line: index + 1, units: Number(discountExtra) });
    const exactDisplay = step(
      line.base.minus(context.perLineDiscount[index] as Decimal).dividedBy(line.line.quantity),
    );
    trace.add({
      step: 'rounding',
      rule: 'rounding',
      line: index + 1,
      input: {
        unit_price: figure(line.unitPrice),
        display_exact: figure(exactDisplay),
        base: figure(line.base),
        discount: figure(context.perLineDiscount[index] as Decimal),
        tax: priced.tax,
        fee_weight: figure(step(context.goods[index] as Decimal)),
      },
      output: {
        unit_price: priced.unit_price,
        display_price: priced.display_price,
        base: priced.base,
        discount: priced.discount,
        tax: priced.tax,
        fees: priced.fees,
        total: priced.total,
        fee_shares: context.feeRounded.map((fee, position) => ({
          kind: fee.kind,
          amount: show((context.feeShares[position] as readonly bigint[])[index] as bigint),
        })),
        applied_promotions: priced.applied_promotions.map((entry) => ({ ...entry })),
        ...(byLine
          ? {}
          : { remainder: { base_units: Number(baseExtra), discount_units: Number(discountExtra) } }),
        ...(discount !== rounded ? { discount_clamped_to_floor: show(rounded - discount) } : {}),
      },
      detail:
        `unit_price and display_price rounded ${displayMode} (the display rule's mode); amounts rounded BANKERS ` +
        (byLine
          ? 'line by line (rounding_scope line)'
          : `from the basket's exact sums (rounding_scope basket): this line got ${baseExtra} remainder unit(s) of the ` +
            `subtotal and ${discountExtra} of the discounts`) +
        (discount !== rounded
          ? '; the rounded discount is held back so the line keeps its min_price floor'
          : '') +
        '; total = base − discount + excluded tax + fees',
    });
    if (priced.bundle_allocation) {
      trace.add({
        step: 'rounding',
        rule: 'bundle_allocation',
        line: index + 1,
        input: {
          total: priced.total,
          tax: priced.tax,
          weights: priced.bundle_allocation.map((position) => ({
            sku_id: position.sku_id,
            weight: position.weight,
          })),
        },
        output: {
          positions: priced.bundle_allocation.map((position) => ({
            sku_id: position.sku_id,
            quantity: position.quantity,
            amount: position.amount,
            tax: position.tax,
          })),
        },
        detail:
          "rule 5: the line's total and tax are allocated over the bundle's positions by their weights (largest " +
          'remainder, ties by position order); a return of a position refunds its share',
      });
    }
  });
  trace.add({
    step: 'rounding',
    rule: 'basket_rounding',
    input: {
      rounding_scope: result.rounding_scope,
      subtotal: figure(sum(lines.map((line) => line.base))),
      discounts: figure(sum([...context.perLineDiscount])),
      fees: context.fees.map((fee) => ({ kind: fee.kind, amount: figure(fee.amount) })),
    },
    output: {
      subtotal: result.subtotal,
      discounts: result.discounts,
      taxes: result.taxes.map((tax) => ({ ...tax })),
      fees: result.fees.map((fee) => ({ ...fee })),
      total: result.total,
      remainder: { base: baseRemainder, discounts: discountRemainder },
    },
    detail:
      (byLine
        ? 'rounding_scope line: each line rounded BANKERS on its own; the basket figures are the sums'
        : 'rounding_scope basket: subtotal and discounts rounded BANKERS once from the exact sums, the remainder ' +
          'units going one each to the lines with the largest fractional remainders (ties by line order)') +
      `; each fee rounded BANKERS once and spread over the lines in proportion to their goods (a fee that rounds ` +
      `to zero is not listed); minor units ${minorUnits}; Σ line totals = total`,
  });
};
