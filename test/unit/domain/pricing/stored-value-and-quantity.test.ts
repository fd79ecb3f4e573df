/**
 * Stored-value products (gift cards) are sold at face value: no charm ending, no promotion, not counted towards a
 * threshold promotion. Quantity rules (min, max, increment) refuse every line that breaks them, each named.
 */
import { describe, expect, it } from 'vitest';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import {
  checkQuantityRules,
  QuantityNotAllowedError,
  quantityViolations,
} from '../../../../functions/domain/pricing/quantity';
import type { PricingCatalog, Product } from '../../../../functions/domain/pricing/types';
import { validateCatalogDocument } from '../../../../functions/usecases/catalog/validate';
import { minimalDocument } from '../../../support/catalog-document';
import { basketRequest, fxRate, item, simpleCatalog } from '../../../support/pricing-fixtures';

/** A gift card (25.00 USD) and a game (40.00 USD); EUR at 0.9; US charm .99; a 10 % sitewide promotion. */
const catalog = (overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: {
      ...simpleCatalog().pricelist,
      items: [item('gift', '25.00', { tax_class: 'voucher' }), item('game', '40.00')],
    },
    products: [
      { sku_id: 'gift', title: 'Gift card', product_type: 'stored_value' },
      { sku_id: 'game', title: 'Game' },
    ],
    fx: { fx_version: 'fx_1', base_currency: 'USD', rates: [fxRate('USD→EUR', '0.9')] },
    display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR'], charm_pricing: '.99' }],
    promotions: [{ promo_id: 'all10', condition: {}, percent: '10', stackable: true, priority: 1 }],
    ...overrides,
  });

describe('a stored-value product', () => {
  it('is converted at face value without a charm ending, while a standard product gets one', () => {
    const eur = priceBasket(
      catalog(),
      basketRequest({
        currency: 'EUR',
        items: [
          { sku_id: 'gift', quantity: 1 },
          { sku_id: 'game', quantity: 1 },
        ],
      }),
    );
    expect(eur.items_priced[0]?.unit_price).toBe('22.50');
    expect(eur.items_priced[1]?.unit_price).toBe('35.99');
  });

  it('is reached by no promotion, and the explanation says why', () => {
    const request = basketRequest({
      items: [
        { sku_id: 'gift', quantity: 2 },
        { sku_id: 'game', quantity: 1 },
      ],
    });
    const { pricing, explain } = explainBasket(catalog(), request);
    expect(pricing.items_priced[0]).toMatchObject({ discount: '0.00', applied_promotions: [] });
    expect(pricing.items_priced[1]?.discount).toBe('4.00');
    const giftLine = explain.steps.find((step) => step.rule === 'discount' && step.line === 1);
    expect(giftLine?.detail).toMatch(/stored-value/);
  });

  it('does not count towards a threshold promotion', () => {
    const withThreshold = catalog({
      promotions: [],
      threshold_promotions: [
        {
          promo_id: 'ship50',
          kind: 'free_shipping',
          threshold: { amount: '50.00', currency: 'USD' },
          condition: {},
        },
      ],
    });
    const giftsOnly = priceBasket(withThreshold, basketRequest({ items: [{ sku_id: 'gift', quantity: 4 }] }));
    expect(giftsOnly.threshold_promotions).toEqual([]);
    const games = priceBasket(
      withThreshold,
      basketRequest({
        items: [
          { sku_id: 'gift', quantity: 4 },
          { sku_id: 'game', quantity: 2 },
        ],
      }),
    );
    expect(games.threshold_promotions[0]).toMatchObject({ promo_id: 'ship50', basket_total: '80.00' });
  });
});

describe('quantity rules', () => {
  const products: Product[] = [
    { sku_id: 'statue', title: 'Statue', quantity_rules: { max: 2 } },
    { sku_id: 'stickers', title: 'Stickers', quantity_rules: { min: 3, increment: 3 } },
    { sku_id: 'free', title: 'Anything' },
  ];

  it('accepts quantities within the rules', () => {
    expect(
      quantityViolations(products, [
        { sku_id: 'statue', quantity: 2 },
        { sku_id: 'stickers', quantity: 9 },
        { sku_id: 'free', quantity: 10_000 },
      ]),
    ).toEqual([]);
  });

  it('names every line that breaks a rule, with the rule, its limit and the nearest allowed quantities', () => {
    const violations = quantityViolations(products, [
      { sku_id: 'free', quantity: 1 },
      { sku_id: 'statue', quantity: 3 },
      { sku_id: 'stickers', quantity: 1 },
      { sku_id: 'stickers', quantity: 7 },
    ]);
    expect(violations.map(({ line, sku_id, rule, limit }) => ({ line, sku_id, rule, limit }))).toEqual([
      { line: 2, sku_id: 'statue', rule: 'max', limit: 2 },
      { line: 3, sku_id: 'stickers', rule: 'min', limit: 3 },
      { line: 4, sku_id: 'stickers', rule: 'increment', limit: 3 },
    ]);
    expect(violations[0]?.detail).toBe(
      'line 2 (statue): quantity 3 is above the maximum of 2; nearest allowed: 2',
    );
    expect(violations[1]?.detail).toMatch(/below the minimum of 3; nearest allowed: 3$/);
    expect(violations[2]?.detail).toMatch(/not a multiple of 3; nearest allowed: 6 or 9$/);
    expect(() => checkQuantityRules(products, [{ sku_id: 'statue', quantity: 5 }])).toThrow(
      QuantityNotAllowedError,
    );
  });

  it('are validated on import: min ≤ max, both multiples of the increment', () => {
    const document = minimalDocument();
    const withRules = (rules: NonNullable<Product['quantity_rules']>) => ({
      ...document,
      products: [
        { ...(document.products[0] as Product), quantity_rules: rules },
        ...document.products.slice(1),
      ],
    });
    expect(() => validateCatalogDocument(withRules({ min: 2, max: 10, increment: 2 }))).not.toThrow();
    expect(() => validateCatalogDocument(withRules({ min: 5, max: 4 }))).toThrow(/problem/);
    try {
      validateCatalogDocument(withRules({ min: 3, max: 10, increment: 2 }));
      expect.unreachable();
    } catch (error) {
      // 10 is on the increment's grid; 3 is not.
      expect((error as { problems: unknown }).problems).toEqual([
        { path: '$.products[0].quantity_rules.min', message: 'must be a multiple of increment (2)' },
      ]);
    }
  });
});

describe('derived price lists on import', () => {
  const document = minimalDocument();
  const derived = (derived_from: { pricelist_id: string; adjustment_percent: string }, at = 1) => ({
    ...document,
    pricelists: [
      ...document.pricelists,
      { pricelist_id: 'pl_usd', base_currency: 'USD', derived_from, items: [] },
    ].slice(0, at + 1),
  });

  it('accepts a list derived from another, refuses an unknown, self, chained or primary parent', () => {
    expect(() =>
      validateCatalogDocument(derived({ pricelist_id: 'pl_eur', adjustment_percent: '-10' })),
    ).not.toThrow();
    const problemsOf = (input: unknown) => {
      try {
        validateCatalogDocument(input);
      } catch (error) {
        return (error as { problems: { path: string; message: string }[] }).problems;
      }
      return [];
    };
    expect(problemsOf(derived({ pricelist_id: 'pl_nope', adjustment_percent: '5' }))).toEqual([
      { path: '$.pricelists[1].derived_from.pricelist_id', message: 'no price list pl_nope' },
    ]);
    expect(problemsOf(derived({ pricelist_id: 'pl_usd', adjustment_percent: '5' }))[0]?.message).toBe(
      'a price list cannot be derived from itself',
    );
    expect(problemsOf(derived({ pricelist_id: 'pl_eur', adjustment_percent: '-100' }))[0]?.path).toBe(
      '$.pricelists[1].derived_from.adjustment_percent',
    );
    const chained = derived({ pricelist_id: 'pl_eur', adjustment_percent: '5' });
    chained.pricelists.push({
      pricelist_id: 'pl_gbp',
      base_currency: 'GBP',
      derived_from: { pricelist_id: 'pl_usd', adjustment_percent: '5' },
      items: [],
    });
    expect(problemsOf(chained)[0]?.message).toMatch(/pl_usd is itself derived/);
    const primary = {
      ...document,
      pricelists: [
        { ...document.pricelists[0], derived_from: { pricelist_id: 'pl_eur', adjustment_percent: '1' } },
      ],
    };
    expect(problemsOf(primary)[0]).toEqual({
      path: '$.pricelists[0].derived_from',
      message: 'the primary price list cannot be derived',
    });
  });
});
