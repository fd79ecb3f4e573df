/**
 * C28 over random baskets on the demo catalog (and on the demo catalog with customer-group price lists,
 * overrides and promotions added): the explained calculation is the plain one, figure for figure, and the
 * explanation's steps chain to it — each line's base steps hand their unit price on, `line_amount` gives the
 * amount `discount` takes, `tax` takes what `discount` left, `rounding` gives exactly the line's rounded figures
 * and `basket_rounding` the basket's. fast-check prints the seed and the counterexample on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, type Json } from '../../../../functions/domain/money/canonical';
import { DECIMAL_STRING, dec, sum } from '../../../../functions/domain/money/decimal';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import { PriceNotAvailableError } from '../../../../functions/domain/pricing/errors';
import {
  EXPLAIN_STEP_ORDER,
  type ExplainStep,
  type Explanation,
} from '../../../../functions/domain/pricing/explain';
import type { BasketPricing, BasketRequest } from '../../../../functions/domain/pricing/types';
import type { CatalogDocument } from '../../../../functions/schemas/catalog-document';
import { validateCatalogDocument } from '../../../../functions/usecases/catalog/validate';
import { DEMO_AT, demoDocument, pricingCatalogOf, releaseOf } from '../../../support/demo-pricing';
import { volume } from '../../../support/volume';

/** At least 1 000 runs (C28's property); 5 000 with `CI=true`. */
const RUNS = { numRuns: volume('EXPLAIN_PROPERTY_RUNS', { local: 1_000, ci: 5_000 }) } as const;
const TIMEOUT = 120_000;

const demo = demoDocument();

/** The demo catalog with a price list per customer group, a group override and group promotions (C29). */
const withGroups = (document: CatalogDocument): CatalogDocument =>
  validateCatalogDocument({
    ...document,
    pricelists: [
      ...document.pricelists,
      {
        pricelist_id: 'PL-B2B-GOLD-USD',
        base_currency: 'USD',
        customer_group: 'b2b-gold',
        items: [
          {
            sku_id: 'GAME-STARFALL-PS5',
            base_price: '59.00',
            base_currency: 'USD',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
          {
            sku_id: 'DIG-STARGEMS-1200',
            base_price: '9.00',
            base_currency: 'USD',
            tax_class: 'digital',
            pricing_model: 'tiered',
            tiers: [
              { min_quantity: 1, unit_price: '9.00' },
              { min_quantity: 5, unit_price: '8.00' },
            ],
          },
          {
            sku_id: 'MERCH-MUG-PIXELKART',
            base_price: '19.99',
            base_currency: 'USD',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ],
      },
      {
        pricelist_id: 'PL-VIP-EUR',
        base_currency: 'EUR',
        customer_group: 'vip',
        items: [
          {
            sku_id: 'GAME-IRONVALE-PS5',
            base_price: '44.99',
            base_currency: 'EUR',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
          {
            sku_id: 'BOOK-ART-STARFALL',
            base_price: '29.99',
            base_currency: 'EUR',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ],
      },
    ],
    overrides: [
      ...(document.overrides ?? []),
      {
        override_id: 'OVR-VIP-GBP',
        target: { customer_group: 'vip' },
        currency: 'GBP',
        price_or_markup: { markup_percent: '-5' },
        priority: 5,
      },
    ],
    promotions: [
      ...(document.promotions ?? []),
      {
        kind: 'percentage',
        promo_id: 'PROMO-VIP-5',
        condition: {},
        percent: '5',
        stackable: true,
        priority: 15,
        target: { customer_group: 'vip' },
      },
      {
        kind: 'free_shipping',
        promo_id: 'PROMO-GOLD-FREESHIP',
        condition: {},
        threshold: { amount: '1.00', currency: 'EUR' },
        target: { customer_group: 'b2b-gold' },
      },
    ],
  });

const releases = [releaseOf(demo), releaseOf(withGroups(demo))] as const;
const skus = demo.products.map((product) => product.sku_id);
const pairs = demo.display_rules.flatMap((rule) =>
  rule.currency_whitelist.map((currency) => ({ region: rule.region, currency })),
);

const requestArb: fc.Arbitrary<{ variant: 0 | 1; request: BasketRequest }> = fc.record({
  variant: fc.constantFrom(0 as const, 1 as const),
  request: fc
    .record({
      items: fc.array(
        fc.record({ sku_id: fc.constantFrom(...skus), quantity: fc.integer({ min: 1, max: 12 }) }),
        {
          minLength: 1,
          maxLength: 8,
        },
      ),
      pair: fc.oneof(
        { weight: 19, arbitrary: fc.constantFrom(...pairs) },
        // Now and then a currency the region does not offer: refused on both paths alike.
        { weight: 1, arbitrary: fc.constant({ region: 'JP', currency: 'EUR' }) },
      ),
      buyer_type: fc.constantFrom('consumer' as const, 'business' as const),
      tenant: fc.option(fc.constant('retail-partner-nordic'), { nil: undefined }),
      channel: fc.option(fc.constantFrom('mobile_app', 'web'), { nil: undefined }),
      campaign: fc.option(fc.constant('black-friday-2026'), { nil: undefined }),
      payment: fc.option(
        fc.constantFrom(
          { method: 'card', provider: 'amex' },
          { method: 'paypal', provider: 'paypal' },
          { method: 'crypto', provider: 'bitpay' },
          { method: 'sepa_debit' },
        ),
        { nil: undefined },
      ),
      customer_groups: fc.option(fc.subarray(['b2b-gold', 'vip', 'unknown-group'], { minLength: 1 }), {
        nil: undefined,
      }),
      checkout_fees: fc.option(fc.constant([{ kind: 'gift_wrap', amount: '1.50' }]), { nil: undefined }),
    })
    .map(({ pair, tenant, channel, campaign, payment, customer_groups, checkout_fees, ...rest }) => ({
      ...rest,
      ...pair,
      ...(tenant ? { tenant } : {}),
      ...(channel ? { channel } : {}),
      ...(campaign ? { campaign } : {}),
      ...(payment ? { payment } : {}),
      ...(customer_groups ? { customer_groups } : {}),
      ...(checkout_fees ? { checkout_fees } : {}),
    })),
});

type Figures = Readonly<Record<string, unknown>>;
const str = (figures: Figures, key: string): string => {
  const value = figures[key];
  if (typeof value !== 'string')
    throw new Error(`expected a decimal string at ${key}, got ${JSON.stringify(value)}`);
  return value;
};

/** Keys whose values are figures: always decimal strings (C1), never JSON numbers. */
const FIGURE_KEYS = new Set([
  'unit_price',
  'amount',
  'floor',
  'min_price',
  'discount',
  'uncapped',
  'cap',
  'percent_of',
  'tax',
  'exact',
  'rate',
  'effective_rate',
  'fees',
  'total',
  'base',
  'subtotal',
  'discounts',
  'display_price',
  'display_exact',
  'fee_weight',
  'basket_total',
  'threshold',
  'published_rate',
  'client_rate',
  'weight',
  'share',
  'taxable',
  'fixed',
  'percent',
]);

/** Every leaf: numbers only as safe integers, figures only as decimal strings. */
const checkFigures = (value: unknown, where: string, key = ''): void => {
  if (typeof value === 'number') {
    expect(Number.isSafeInteger(value), `${where}: ${value} is not an integer`).toBe(true);
    expect(FIGURE_KEYS.has(key), `${where}: the figure ${key} is a JSON number`).toBe(false);
  } else if (typeof value === 'string') {
    if (FIGURE_KEYS.has(key)) expect(DECIMAL_STRING.test(value), `${where}: ${value}`).toBe(true);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      checkFigures(item, `${where}[${index}]`, key);
    });
  } else if (value && typeof value === 'object') {
    for (const [name, item] of Object.entries(value)) checkFigures(item, `${where}.${name}`, name);
  }
};

const only = (steps: readonly ExplainStep[], predicate: (step: ExplainStep) => boolean): ExplainStep => {
  const found = steps.filter(predicate);
  expect(found, 'exactly one step').toHaveLength(1);
  return found[0] as ExplainStep;
};

const FEE_RULES = new Set(['payment', 'cross_border', 'network', 'shipping', 'checkout_fee']);

/** The explanation chains to the calculation (module comment). */
const checkExplanation = (explain: Explanation, pricing: BasketPricing): void => {
  const { steps } = explain;
  const order = steps.map((step) => EXPLAIN_STEP_ORDER.indexOf(step.step));
  expect(
    order.every((position, index) => position >= 0 && (index === 0 || position >= (order[index - 1] ?? 0))),
  ).toBe(true);
  for (const kind of EXPLAIN_STEP_ORDER)
    expect(
      steps.some((step) => step.step === kind),
      kind,
    ).toBe(true);
  steps.forEach((step, index) => {
    expect(step.detail.length).toBeGreaterThan(0);
    checkFigures(step.input, `steps[${index}].input`);
    checkFigures(step.output, `steps[${index}].output`);
  });

  for (const line of pricing.items_priced) {
    const ofLine = steps.filter((step) => step.line === line.line);
    const base = ofLine.filter((step) => step.step === 'base');
    expect(base[0]?.rule).toBe('price_list');
    let unitPrice = str(base[0]?.output ?? {}, 'unit_price');
    for (const step of base.slice(1)) {
      if ('unit_price' in step.input) expect(step.input.unit_price, step.rule).toBe(unitPrice);
      if ('unit_price' in step.output) unitPrice = str(step.output, 'unit_price');
    }
    const amount = only(base, (step) => step.rule === 'line_amount');
    expect(base.at(-1)).toBe(amount);
    const discount = only(ofLine, (step) => step.rule === 'discount');
    expect(discount.input.amount).toBe(amount.output.amount);
    expect(
      dec(str(discount.output, 'amount'))
        .plus(str(discount.output, 'discount'))
        .eq(str(amount.output, 'amount')),
    ).toBe(true);
    const tax = only(ofLine, (step) => step.rule === 'tax');
    expect(tax.input.amount).toBe(discount.output.amount);
    expect(dec(str(tax.output, 'tax')).eq(line.tax)).toBe(true);
    const excluded = line.taxes.filter((entry) => !entry.included).map((entry) => dec(entry.amount));
    expect(dec(str(tax.output, 'amount')).eq(dec(str(tax.input, 'amount')).plus(sum(excluded)))).toBe(true);
    const rounding = only(ofLine, (step) => step.rule === 'rounding');
    expect(rounding.input.unit_price).toBe(unitPrice);
    expect(rounding.input.base).toBe(amount.output.amount);
    expect(rounding.input.discount).toBe(discount.output.discount);
    expect(rounding.output).toMatchObject({
      unit_price: line.unit_price,
      display_price: line.display_price,
      base: line.base,
      discount: line.discount,
      tax: line.tax,
      fees: line.fees,
      total: line.total,
      applied_promotions: line.applied_promotions,
    });
    const group = ofLine.find((step) => step.rule === 'customer_group');
    expect(line.customer_group ?? null).toBe(group ? group.output.customer_group : null);
    if (line.bundle_allocation) {
      const allocation = only(ofLine, (step) => step.rule === 'bundle_allocation');
      expect(allocation.output.positions).toEqual(
        line.bundle_allocation.map(({ sku_id, quantity, amount: share, tax: shareTax }) => ({
          sku_id,
          quantity,
          amount: share,
          tax: shareTax,
        })),
      );
    }
  }

  const stacking = only(steps, (step) => step.rule === 'stacking');
  const lineDiscounts = steps
    .filter((step) => step.rule === 'discount')
    .map((step) => dec(str(step.output, 'discount')));
  expect(dec(str(stacking.output, 'discount')).eq(sum(lineDiscounts))).toBe(true);

  const basket = only(steps, (step) => step.rule === 'basket_rounding');
  expect(basket.output).toMatchObject({
    subtotal: pricing.subtotal,
    discounts: pricing.discounts,
    taxes: pricing.taxes,
    fees: pricing.fees,
    total: pricing.total,
  });
  const charged = steps
    .filter((step) => step.step === 'fees' && FEE_RULES.has(step.rule) && step.output.waived !== true)
    .map((step) => ({
      kind: step.rule === 'checkout_fee' ? str(step.input, 'kind') : step.rule,
      amount: str(step.output, 'amount'),
    }));
  expect(charged).toEqual(basket.input.fees);
  const reached = steps
    .filter((step) => step.step === 'fees' && step.output.reached === true)
    .map((step) => step.input.promo_id);
  expect(reached).toEqual(pricing.threshold_promotions.map((outcome) => outcome.promo_id));
};

describe('explainBasket over random baskets on the demo catalog (C28)', () => {
  it(
    'gives exactly the plain calculation, and its steps chain to every figure of it',
    () => {
      let explained = 0;
      fc.assert(
        fc.property(requestArb, ({ variant, request }) => {
          const release = releases[variant];
          const catalog = pricingCatalogOf(release, request.tenant);
          const options = { at: DEMO_AT.toISOString() };
          let plain: BasketPricing | undefined;
          let refused: unknown;
          try {
            plain = priceBasket(catalog, request, options);
          } catch (error) {
            refused = error;
          }
          if (!plain) {
            expect(refused).toBeInstanceOf(PriceNotAvailableError);
            expect(() => explainBasket(catalog, request, options)).toThrow(refused as Error);
            try {
              explainBasket(catalog, request, options);
            } catch (error) {
              expect((error as PriceNotAvailableError).reasons).toEqual(
                (refused as PriceNotAvailableError).reasons,
              );
            }
            return;
          }
          const result = explainBasket(catalog, request, options);
          expect(canonicalJson(result.pricing as unknown as Json)).toBe(
            canonicalJson(plain as unknown as Json),
          );
          checkExplanation(result.explain, plain);
          explained += 1;
        }),
        RUNS,
      );
      // Most random baskets are priceable: the property is about explanations, not refusals.
      expect(explained).toBeGreaterThan(RUNS.numRuns / 2);
    },
    TIMEOUT,
  );
});
