/**
 * fast-check arbitraries for VALID pricing inputs: every catalog they produce can price every basket they
 * produce (no unknown SKU, no missing rate, no refusing availability rule). Base currency EUR; display
 * currencies EUR (2 minor units), USD (2), JPY (0), KWD (3) and BTC (8, crypto). Rates are decimal strings with
 * up to 6 decimals, published either from EUR (direct or inverse pairs) or from USD (so EUR → X is a cross rate).
 */
import fc from 'fast-check';
import type { RoundingMode } from '../../../../functions/domain/money/rounding';
import type {
  BasketLine,
  BasketRequest,
  CharmEnding,
  DisplayRule,
  FeeSchedule,
  FxMarkupRule,
  FxRate,
  MoneyInput,
  Override,
  PaymentFee,
  PriceItem,
  PriceList,
  PricingCatalog,
  PricingStrategy,
  Product,
  Promotion,
  PromotionCondition,
  TaxComponent,
  TaxRule,
  ThresholdPromotion,
} from '../../../../functions/domain/pricing/types';

export const BASE_CURRENCY = 'EUR';
export const DISPLAY_CURRENCIES = ['EUR', 'USD', 'JPY', 'KWD', 'BTC'] as const;
export type DisplayCurrency = (typeof DISPLAY_CURRENCIES)[number];
export const MINOR_UNITS: Readonly<Record<DisplayCurrency, number>> = {
  EUR: 2,
  USD: 2,
  JPY: 0,
  KWD: 3,
  BTC: 8,
};
export const REGIONS = ['DE', 'US', 'JP', 'KW'] as const;
export const CATEGORIES = ['cat_a', 'cat_b', 'cat_c'] as const;
export const TAX_CLASSES = ['standard', 'reduced', 'exempt'] as const;
export const CHANNELS = ['web', 'app'] as const;
const ROUNDING_MODES: readonly RoundingMode[] = ['HALF_UP', 'BANKERS', 'FLOOR', 'CEIL'];

/** `units` smallest units with `decimals` decimals as a decimal string: (1234, 2) → "12.34". */
export const decimalString = (units: number | bigint, decimals: number): string => {
  const value = BigInt(units);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0');
  const body = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return negative ? `-${body}` : body;
};

/** A decimal string between `min` and `max` smallest units. */
export const amountArb = (min: number, max: number, decimals: number): fc.Arbitrary<string> =>
  fc.integer({ min, max }).map((units) => decimalString(units, decimals));

/** A price in a display currency, roughly worth 0.50–500 EUR. */
export const priceIn = (currency: DisplayCurrency): fc.Arbitrary<string> => {
  switch (currency) {
    case 'JPY':
      return amountArb(80, 80_000, 0);
    case 'KWD':
      return amountArb(150, 150_000, 3);
    case 'BTC':
      return amountArb(1_000, 1_000_000, 8);
    default:
      return amountArb(50, 50_000, 2);
  }
};

/** Rate ranges in millionths, per direction (from EUR or to EUR, from USD or to USD). */
const RATE_RANGE: Readonly<Record<string, readonly [number, number]>> = {
  'EUR>USD': [900_000, 1_300_000],
  'USD>EUR': [770_000, 1_110_000],
  'EUR>JPY': [120_000_000, 180_000_000],
  'JPY>EUR': [5_500, 8_300],
  'EUR>KWD': [280_000, 380_000],
  'KWD>EUR': [2_600_000, 3_600_000],
  'EUR>BTC': [8, 40],
  'BTC>EUR': [25_000_000_000, 125_000_000_000],
  'USD>JPY': [110_000_000, 160_000_000],
  'JPY>USD': [6_200, 9_100],
  'USD>KWD': [290_000, 320_000],
  'KWD>USD': [3_100_000, 3_400_000],
  'USD>BTC': [8, 40],
  'BTC>USD': [25_000_000_000, 125_000_000_000],
};

const fxRate = (from: string, to: string, arrow: '→' | '->'): fc.Arbitrary<FxRate> => {
  const [min, max] = RATE_RANGE[`${from}>${to}`] ?? [1_000_000, 1_000_000];
  return fc.integer({ min, max }).map((micro) => ({
    pair: `${from}${arrow}${to}`,
    rate: decimalString(micro, 6),
    source: 'ecb',
    method: 'mid',
    precision: 6,
    effective_from: '2026-01-01T00:00:00.000Z',
    version: 'r1',
  }));
};

/** One leg `hub ↔ other`, published in either direction (the engine must invert the other one). */
const leg = (hub: string, other: string): fc.Arbitrary<FxRate> =>
  fc
    .tuple(fc.boolean(), fc.constantFrom<'→' | '->'>('→', '->'))
    .chain(([inverse, arrow]) => (inverse ? fxRate(other, hub, arrow) : fxRate(hub, other, arrow)));

/** A snapshot based on EUR (direct or inverse pairs) or on USD (EUR → JPY/KWD/BTC are cross rates). */
export const fxSetArb = fc.boolean().chain((viaUsd) => {
  const hub = viaUsd ? 'USD' : 'EUR';
  const others = DISPLAY_CURRENCIES.filter((currency) => currency !== hub);
  return fc.tuple(...others.map((other) => leg(hub, other))).map((rates) => ({
    fx_version: viaUsd ? 'fx_usd_1' : 'fx_eur_1',
    base_currency: hub,
    rates,
  }));
});

const subsetOf = <T>(values: readonly T[]): fc.Arbitrary<T[]> => fc.subarray([...values], { minLength: 1 });

const skuId = (index: number) => `sku_${index.toString().padStart(2, '0')}`;

interface ItemsAndProducts {
  readonly items: PriceItem[];
  readonly products: Product[];
}

const flatOrTieredItem = (index: number): fc.Arbitrary<PriceItem> =>
  fc
    .record({
      price: amountArb(1, 50_000, 2),
      extraDecimals: fc.integer({ min: 0, max: 2 }),
      taxClass: fc.constantFrom(...TAX_CLASSES),
      tiered: fc.boolean(),
      tierSteps: fc.uniqueArray(fc.integer({ min: 2, max: 40 }), { minLength: 1, maxLength: 3 }),
      tierPercent: fc.integer({ min: 50, max: 99 }),
      minPercent: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
      promoRefs: fc.option(fc.subarray(['promo_0', 'promo_1', 'promo_2']), { nil: undefined }),
    })
    .map((spec) => {
      // Up to 4 decimals in the base currency: the engine keeps 9 internally.
      const base = spec.extraDecimals === 0 ? spec.price : `${spec.price}${'5'.repeat(spec.extraDecimals)}`;
      const baseUnits = BigInt(base.replace('.', ''));
      const decimals = base.split('.')[1]?.length ?? 0;
      const tiers = spec.tiered
        ? [...spec.tierSteps]
            .sort((a, b) => a - b)
            .map((minQuantity, position) => ({
              min_quantity: minQuantity,
              unit_price: decimalString(
                (baseUnits * BigInt(spec.tierPercent) ** BigInt(position + 1)) / 100n ** BigInt(position + 1),
                decimals,
              ),
            }))
        : undefined;
      return {
        sku_id: skuId(index),
        base_price: base,
        base_currency: BASE_CURRENCY,
        tax_class: spec.taxClass,
        pricing_model: spec.tiered ? 'tiered' : 'flat',
        ...(tiers ? { tiers } : {}),
        ...(spec.minPercent !== undefined
          ? { min_price: decimalString((baseUnits * BigInt(spec.minPercent)) / 100n, decimals) }
          : {}),
        ...(spec.promoRefs?.length ? { promo_refs: spec.promoRefs } : {}),
      } satisfies PriceItem;
    });

const bundleItem = (index: number, flatSkus: readonly string[]): fc.Arbitrary<PriceItem> =>
  fc
    .record({
      price: amountArb(1, 90_000, 2),
      taxClass: fc.constantFrom(...TAX_CLASSES),
      positions: fc.uniqueArray(fc.constantFrom(...flatSkus), { minLength: 2, maxLength: 4 }),
      quantities: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 4, maxLength: 4 }),
      minPercent: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
    })
    .map((spec) => ({
      sku_id: skuId(index),
      base_price: spec.price,
      base_currency: BASE_CURRENCY,
      tax_class: spec.taxClass,
      pricing_model: 'bundle' as const,
      bundle: {
        positions: spec.positions.map((sku, position) => ({
          sku_id: sku,
          quantity: spec.quantities[position] ?? 1,
        })),
      },
      ...(spec.minPercent !== undefined
        ? {
            min_price: decimalString(
              (BigInt(spec.price.replace('.', '')) * BigInt(spec.minPercent)) / 100n,
              2,
            ),
          }
        : {}),
    }));

/** 2–6 flat or tiered items, then 0–2 bundles of 2–4 of the flat ones; products with categories. */
export const itemsArb: fc.Arbitrary<ItemsAndProducts> = fc.integer({ min: 2, max: 6 }).chain((count) =>
  fc.tuple(...Array.from({ length: count }, (_, index) => flatOrTieredItem(index))).chain((plain) => {
    const flat = plain.filter((item) => item.pricing_model === 'flat').map((item) => item.sku_id);
    const bundles =
      flat.length >= 2
        ? fc
            .integer({ min: 0, max: 2 })
            .chain((bundleCount) =>
              fc.tuple(...Array.from({ length: bundleCount }, (_, index) => bundleItem(count + index, flat))),
            )
        : fc.constant([] as PriceItem[]);
    return bundles.chain((bundled) => {
      const items = [...plain, ...bundled];
      return fc
        .tuple(...items.map(() => fc.option(fc.constantFrom(...CATEGORIES), { nil: undefined })))
        .map((categories) => ({
          items,
          products: items.map((item, index) => ({
            sku_id: item.sku_id,
            title: item.sku_id,
            ...(categories[index] ? { category: categories[index] } : {}),
          })),
        }));
    });
  }),
);

/** A precomputed price list for `currency`: every SKU of the base list, priced natively in that currency. */
const currencyListArb = (items: readonly PriceItem[], currency: DisplayCurrency): fc.Arbitrary<PriceList> =>
  fc
    .tuple(
      ...items.map((item) =>
        fc
          .tuple(priceIn(currency), fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }))
          .map(([price, minPercent]): PriceItem => {
            const decimals = MINOR_UNITS[currency];
            const units = BigInt(price.replace('.', ''));
            return {
              sku_id: item.sku_id,
              base_price: price,
              base_currency: currency,
              tax_class: item.tax_class,
              // Tiers stay in the base list: the precomputed list prices every unit alike.
              pricing_model: item.pricing_model === 'bundle' ? 'bundle' : 'flat',
              ...(item.bundle ? { bundle: item.bundle } : {}),
              ...(minPercent !== undefined
                ? { min_price: decimalString((units * BigInt(minPercent)) / 100n, decimals) }
                : {}),
            };
          }),
      ),
    )
    .map((listed) => ({
      pricelist_id: `pl_${currency.toLowerCase()}`,
      base_currency: currency,
      effective_from: '2026-01-01T00:00:00.000Z',
      version: 3,
      items: listed,
    }));

const conditionArb = (skus: readonly string[]): fc.Arbitrary<PromotionCondition> =>
  fc.record(
    {
      regions: subsetOf(REGIONS),
      currencies: subsetOf(DISPLAY_CURRENCIES),
      skus: subsetOf(skus),
      categories: subsetOf(CATEGORIES),
      channels: subsetOf(CHANNELS),
    },
    { requiredKeys: [] },
  );

const capArb = (currency: DisplayCurrency): fc.Arbitrary<MoneyInput> =>
  fc.oneof(
    amountArb(1, 20_000, 2).map((amount) => ({ amount, currency: BASE_CURRENCY })),
    priceIn(currency).map((amount) => ({ amount, currency })),
  );

const promotionsArb = (skus: readonly string[], currency: DisplayCurrency): fc.Arbitrary<Promotion[]> =>
  fc
    .array(
      fc.record({
        percent: fc.oneof(
          fc.integer({ min: 1, max: 90 }).map(String),
          fc.integer({ min: 100, max: 9_000 }).map((value) => decimalString(value, 2)),
        ),
        cap: fc.option(capArb(currency), { nil: undefined }),
        stackable: fc.boolean(),
        priority: fc.integer({ min: 0, max: 3 }),
        condition: conditionArb(skus),
      }),
      { maxLength: 4 },
    )
    .map((specs) =>
      specs.map((spec, index) => ({
        promo_id: `promo_${index}`,
        condition: spec.condition,
        percent: spec.percent,
        ...(spec.cap ? { cap: spec.cap } : {}),
        stackable: spec.stackable,
        priority: spec.priority,
      })),
    );

const thresholdPromotionsArb = (currency: DisplayCurrency): fc.Arbitrary<ThresholdPromotion[]> =>
  fc
    .array(
      fc.record({
        kind: fc.constantFrom<ThresholdPromotion['kind']>('free_shipping', 'bonus'),
        threshold: capArb(currency),
        regions: fc.option(subsetOf(REGIONS), { nil: undefined }),
      }),
      { maxLength: 2 },
    )
    .map((specs) =>
      specs.map((spec, index) => ({
        promo_id: `threshold_${index}`,
        kind: spec.kind,
        threshold: spec.threshold,
        condition: spec.regions ? { regions: spec.regions } : {},
        ...(spec.kind === 'bonus' ? { bonus: 'gift' } : {}),
      })),
    );

const componentsArb: fc.Arbitrary<TaxComponent[]> = fc
  .tuple(
    fc.integer({ min: 0, max: 2_700 }),
    fc.option(fc.tuple(fc.integer({ min: 1, max: 1_500 }), fc.boolean()), { nil: undefined }),
  )
  .map(([first, second]) => [
    { name: 'vat', rate: decimalString(first, 4) },
    ...(second ? [{ name: 'local', rate: decimalString(second[0], 4), compound: second[1] }] : []),
  ]);

const taxRuleArb = (region: string, currency: DisplayCurrency): fc.Arbitrary<TaxRule> =>
  fc
    .record({
      inclusion: fc.constantFrom<'included' | 'excluded'>('included', 'excluded'),
      type: fc.constantFrom<'VAT' | 'GST'>('VAT', 'GST'),
      standard: componentsArb,
      reduced: componentsArb,
      threshold: fc.option(capArb(currency), { nil: undefined }),
      mode: fc.constantFrom(...ROUNDING_MODES),
      level: fc.constantFrom<TaxRule['rounding']['level']>('per_unit', 'per_line', 'per_basket'),
      business: fc.option(fc.constantFrom<'reverse_charge' | 'same'>('reverse_charge', 'same'), {
        nil: undefined,
      }),
    })
    .map((spec) => ({
      region,
      tax_mode: { type: spec.type, inclusion: spec.inclusion },
      // `exempt` is not listed: not taxed.
      rates: { standard: spec.standard, reduced: spec.reduced },
      ...(spec.threshold ? { threshold: spec.threshold } : {}),
      rounding: { mode: spec.mode, level: spec.level },
      ...(spec.business ? { business_buyers: spec.business } : {}),
    }));

const displayRuleArb = (region: string): fc.Arbitrary<DisplayRule> =>
  fc
    .record({
      mode: fc.option(fc.constantFrom(...ROUNDING_MODES), { nil: undefined }),
      charm: fc.option(fc.constantFrom<CharmEnding>('.99', '.95', '.90'), { nil: undefined }),
    })
    .map((spec) => ({
      region,
      currency_whitelist: [...DISPLAY_CURRENCIES],
      ...(spec.mode ? { rounding_mode: spec.mode } : {}),
      ...(spec.charm ? { charm_pricing: spec.charm } : {}),
    }));

const feesArb = (currency: DisplayCurrency): fc.Arbitrary<FeeSchedule> =>
  fc.record(
    {
      payment: fc.array(
        fc.record(
          {
            method: fc.constantFrom('card', 'sepa'),
            provider: fc.constantFrom('stripe', 'adyen'),
            percent: amountArb(0, 400, 2),
            fixed: capArb(currency),
          },
          { requiredKeys: ['percent'] },
        ),
        { maxLength: 3 },
      ) as fc.Arbitrary<PaymentFee[]>,
      cross_border: fc.record({
        percent: amountArb(0, 300, 2),
        domestic_regions: subsetOf(REGIONS),
      }),
      network: fc.constant({ BTC: '0.00001' }),
      shipping: fc.record(
        {
          DE: amountArb(0, 1_500, 2).map((amount) => ({ amount, currency: BASE_CURRENCY })),
          '*': priceIn(currency).map((amount) => ({ amount, currency })),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  );

const markupRulesArb: fc.Arbitrary<FxMarkupRule[]> = fc.array(
  fc.record(
    {
      channel: fc.constantFrom(...CHANNELS),
      region: fc.constantFrom(...REGIONS),
      fx_markup_bps: fc.integer({ min: 0, max: 300 }),
    },
    { requiredKeys: ['fx_markup_bps'] },
  ),
  { maxLength: 3 },
);

const overridesArb = (skus: readonly string[], currency: DisplayCurrency): fc.Arbitrary<Override[]> =>
  fc
    .array(
      fc.record({
        target: fc.oneof(
          fc.constantFrom(...skus).map((sku_id) => ({ sku_id })),
          fc.constantFrom(...CATEGORIES).map((category) => ({ category })),
          fc.constant({ tenant: 'tenant_1' }),
          fc.constant({ campaign: 'spring' }),
        ),
        priceOrMarkup: fc.oneof(
          priceIn(currency).map((price) => ({ price })),
          fc.integer({ min: -30, max: 50 }).map((markup) => ({ markup_percent: String(markup) })),
        ),
        priority: fc.integer({ min: 0, max: 2 }),
      }),
      { maxLength: 3 },
    )
    .map((specs) =>
      specs.map((spec, index) => ({
        override_id: `ovr_${index}`,
        target: spec.target,
        currency,
        price_or_markup: spec.priceOrMarkup,
        priority: spec.priority,
      })),
    );

const linesArb = (skus: readonly string[], maxLines: number): fc.Arbitrary<BasketLine[]> =>
  fc.array(
    fc.record({ sku_id: fc.constantFrom(...skus), quantity: fc.integer({ min: 1, max: 50 }) }),
    // `size: 'max'`: basket sizes spread over the whole 1..maxLines range, not just small ones.
    { minLength: 1, maxLength: maxLines, size: 'max' },
  );

const requestArb = (
  skus: readonly string[],
  currency: DisplayCurrency,
  maxLines: number,
): fc.Arbitrary<BasketRequest> =>
  fc
    .record({
      items: linesArb(skus, maxLines),
      region: fc.constantFrom(...REGIONS),
      buyer_type: fc.constantFrom<'consumer' | 'business'>('consumer', 'business'),
      channel: fc.option(fc.constantFrom(...CHANNELS), { nil: undefined }),
      tenant: fc.option(fc.constant('tenant_1'), { nil: undefined }),
      campaign: fc.option(fc.constant('spring'), { nil: undefined }),
      payment: fc.option(
        fc.record(
          { method: fc.constantFrom('card', 'sepa'), provider: fc.constantFrom('stripe', 'adyen') },
          { requiredKeys: [] },
        ),
        { nil: undefined },
      ),
      checkoutFees: fc.option(
        fc.array(
          priceIn(currency).map((amount) => ({ kind: 'gift_wrap', amount })),
          { maxLength: 2 },
        ),
        { nil: undefined },
      ),
    })
    .map((spec) => ({
      items: spec.items,
      region: spec.region,
      currency,
      buyer_type: spec.buyer_type,
      ...(spec.channel ? { channel: spec.channel } : {}),
      ...(spec.tenant ? { tenant: spec.tenant } : {}),
      ...(spec.campaign ? { campaign: spec.campaign } : {}),
      ...(spec.payment ? { payment: spec.payment } : {}),
      ...(spec.checkoutFees ? { checkout_fees: spec.checkoutFees } : {}),
    }));

export interface PricingCase {
  readonly catalog: PricingCatalog;
  readonly request: BasketRequest;
}

export interface CaseOptions {
  /** Most lines in a basket (1–30). */
  readonly maxLines?: number;
  /** Display currencies to draw from. */
  readonly currencies?: readonly DisplayCurrency[];
}

/** A valid catalog and a basket it can price. */
export const pricingCaseArb = (options: CaseOptions = {}): fc.Arbitrary<PricingCase> => {
  const maxLines = options.maxLines ?? 30;
  const currencies = options.currencies ?? DISPLAY_CURRENCIES;
  return fc.tuple(fc.constantFrom(...currencies), itemsArb).chain(([currency, { items, products }]) => {
    const skus = items.map((item) => item.sku_id);
    return fc
      .record({
        fx: fxSetArb,
        strategy: fc.constantFrom<PricingStrategy['kind']>('convert_at_display', 'price_lists', 'mixed'),
        topIncludes: fc.option(fc.boolean(), { nil: undefined }),
        currencyList: currencyListArb(items, currency),
        scope: fc.constantFrom<'line' | 'basket'>('line', 'basket'),
        stack: fc.constantFrom<'best_single' | 'stack_all'>('best_single', 'stack_all'),
        freeShipping: fc.option(fc.array(capArb(currency), { minLength: 1, maxLength: 2 }), {
          nil: undefined,
        }),
        promotions: promotionsArb(skus, currency),
        thresholds: thresholdPromotionsArb(currency),
        taxRules: fc.tuple(...REGIONS.map((region) => fc.option(taxRuleArb(region, currency)))),
        displayRules: fc.tuple(...REGIONS.map((region) => displayRuleArb(region))),
        fees: fc.option(feesArb(currency), { nil: undefined }),
        markups: fc.option(markupRulesArb, { nil: undefined }),
        overrides: fc.option(overridesArb(skus, currency), { nil: undefined }),
        request: requestArb(skus, currency, maxLines),
      })
      .map((spec): PricingCase => {
        const strategy: PricingStrategy =
          spec.strategy === 'mixed' && spec.topIncludes !== undefined
            ? { kind: 'mixed', top_currencies: spec.topIncludes ? [currency] : ['XAU'] }
            : { kind: spec.strategy };
        const catalog: PricingCatalog = {
          base_currency: BASE_CURRENCY,
          pricelist: {
            pricelist_id: 'pl_main',
            base_currency: BASE_CURRENCY,
            effective_from: '2026-01-01T00:00:00.000Z',
            version: 7,
            items,
          },
          ...(spec.strategy === 'convert_at_display' ? {} : { currency_pricelists: [spec.currencyList] }),
          strategy,
          products,
          fx: spec.fx,
          ...(spec.markups ? { fx_markup_rules: spec.markups } : {}),
          tax_rules: {
            tax_rule_version: 3,
            rules: spec.taxRules.filter((rule): rule is TaxRule => rule !== null),
          },
          display_rules: spec.displayRules,
          ...(spec.overrides ? { overrides: spec.overrides } : {}),
          basket_policy: {
            rounding_scope: spec.scope,
            promo_stack_mode: spec.stack,
            ...(spec.freeShipping ? { free_shipping_thresholds: spec.freeShipping } : {}),
          },
          promotions: spec.promotions,
          threshold_promotions: spec.thresholds,
          ...(spec.fees ? { fees: spec.fees } : {}),
        };
        return { catalog, request: spec.request };
      });
  });
};
