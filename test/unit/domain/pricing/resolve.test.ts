import { describe, expect, it } from 'vitest';
import { type Decimal, dec } from '../../../../functions/domain/money/decimal';
import { step } from '../../../../functions/domain/money/rounding';
import {
  applyCharm,
  chooseOverride,
  DEFAULT_MIXED_TOP_CURRENCIES,
  modelUnitPrice,
  type ResolutionContext,
  resolveItem,
} from '../../../../functions/domain/pricing/resolve';
import type {
  CharmEnding,
  Override,
  PriceItem,
  PriceList,
  PricingCatalog,
} from '../../../../functions/domain/pricing/types';
import { refusal, simpleCatalog } from '../../../support/pricing-fixtures';

/** Every conversion doubles the amount, so converted prices are easy to read. */
const context = (catalog: PricingCatalog, overrides: Partial<ResolutionContext> = {}): ResolutionContext => ({
  catalog,
  currency: 'EUR',
  region: 'US',
  minorUnits: 2,
  isCrypto: false,
  charm: null,
  convert: (amount: Decimal, from: string) => (from === 'EUR' ? amount : step(amount.times(2))),
  ...overrides,
});

const item = (overrides: Partial<PriceItem> = {}): PriceItem => ({
  sku_id: 'sku_a',
  base_price: '1.08',
  base_currency: 'USD',
  tax_class: 'standard',
  pricing_model: 'flat',
  ...overrides,
});

const list = (currency: string, items: PriceItem[]): PriceList => ({
  pricelist_id: `pl_${currency}`,
  base_currency: currency,
  effective_from: '2026-01-01T00:00:00.000Z',
  version: 1,
  items,
});

const catalogWith = (items: PriceItem[], overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({ pricelist: { ...simpleCatalog().pricelist, items }, ...overrides });

describe('resolveItem: strategies (rule 8)', () => {
  it('convert_at_display converts the base price into the basket currency', () => {
    const resolved = resolveItem(context(simpleCatalog()), 'sku_a', 1);
    expect(resolved.unitPrice.toString()).toBe('2.16');
    expect(resolved.converted).toBe(true);
    expect(resolved.product?.category).toBe('cat_1');
  });

  it('does not convert when the basket is in the base currency', () => {
    const resolved = resolveItem(context(simpleCatalog(), { currency: 'USD' }), 'sku_a', 1);
    expect(resolved.unitPrice.toString()).toBe('1.08');
    expect(resolved.converted).toBe(false);
  });

  it('refuses an unknown SKU', () => {
    const error = refusal(() => resolveItem(context(simpleCatalog()), 'nope', 1));
    expect([error.kind, error.rule]).toEqual(['unknown_sku', 'pricelist']);
  });

  it('price_lists takes the precomputed price in the basket currency', () => {
    const catalog = simpleCatalog({
      strategy: { kind: 'price_lists' },
      currency_pricelists: [list('EUR', [item({ base_price: '0.95', base_currency: 'EUR' })])],
    });
    const resolved = resolveItem(context(catalog), 'sku_a', 1);
    expect(resolved.unitPrice.toString()).toBe('0.95');
    expect(resolved.converted).toBe(false);
  });

  it('price_lists refuses a currency without a list', () => {
    const catalog = simpleCatalog({ strategy: { kind: 'price_lists' }, currency_pricelists: [] });
    const error = refusal(() => resolveItem(context(catalog), 'sku_a', 1));
    expect([error.kind, error.rule]).toEqual(['currency_not_available', 'price_lists']);
  });

  it('price_lists refuses a SKU missing from the list', () => {
    const catalog = simpleCatalog({
      strategy: { kind: 'price_lists' },
      currency_pricelists: [list('EUR', [item({ sku_id: 'other', base_currency: 'EUR' })])],
    });
    const error = refusal(() => resolveItem(context(catalog), 'sku_a', 1));
    expect([error.kind, error.rule]).toEqual(['no_price', 'price_lists']);
  });

  it('mixed uses the list of a currency in top_currencies', () => {
    const catalog = simpleCatalog({
      strategy: { kind: 'mixed', top_currencies: ['EUR'] },
      currency_pricelists: [list('EUR', [item({ base_price: '0.95', base_currency: 'EUR' })])],
    });
    expect(resolveItem(context(catalog), 'sku_a', 1).unitPrice.toString()).toBe('0.95');
  });

  it('mixed converts a currency outside top_currencies, even when a list exists', () => {
    const catalog = simpleCatalog({
      strategy: { kind: 'mixed', top_currencies: ['GBP'] },
      currency_pricelists: [list('EUR', [item({ base_price: '0.95', base_currency: 'EUR' })])],
    });
    expect(resolveItem(context(catalog), 'sku_a', 1).unitPrice.toString()).toBe('2.16');
  });

  it('mixed converts a SKU missing from a top currency list instead of refusing it', () => {
    const catalog = simpleCatalog({
      strategy: { kind: 'mixed', top_currencies: ['EUR'] },
      currency_pricelists: [list('EUR', [item({ sku_id: 'other', base_currency: 'EUR' })])],
    });
    expect(resolveItem(context(catalog), 'sku_a', 1).unitPrice.toString()).toBe('2.16');
  });

  it('mixed converts a top currency without a list', () => {
    const catalog = simpleCatalog({ strategy: { kind: 'mixed', top_currencies: ['EUR'] } });
    expect(resolveItem(context(catalog), 'sku_a', 1).unitPrice.toString()).toBe('2.16');
  });

  it('mixed without top_currencies nor lists converts', () => {
    const catalog = simpleCatalog({ strategy: { kind: 'mixed' } });
    expect(resolveItem(context(catalog), 'sku_a', 1).unitPrice.toString()).toBe('2.16');
  });

  it('mixed without top_currencies precomputes the first 10 lists only', () => {
    expect(DEFAULT_MIXED_TOP_CURRENCIES).toBe(10);
    const codes = ['AUD', 'CAD', 'CHF', 'CNY', 'DKK', 'GBP', 'HKD', 'NOK', 'PLN', 'SEK', 'EUR'];
    const lists = codes.map((code) => list(code, [item({ base_price: '0.50', base_currency: code })]));
    const catalog = simpleCatalog({ strategy: { kind: 'mixed' }, currency_pricelists: lists });
    // EUR is the 11th list: converted.
    expect(resolveItem(context(catalog), 'sku_a', 1).unitPrice.toString()).toBe('2.16');
    // GBP is among the first 10: precomputed.
    const gbp = resolveItem(context(catalog, { currency: 'GBP' }), 'sku_a', 1);
    expect(gbp.unitPrice.toString()).toBe('0.5');
    expect(gbp.converted).toBe(false);
  });
});

describe('modelUnitPrice: tiers (C21)', () => {
  const tiered = item({
    pricing_model: 'tiered',
    base_price: '10.00',
    tiers: [
      { min_quantity: 10, unit_price: '8.00' },
      { min_quantity: 5, unit_price: '9.00' },
    ],
  });

  it('uses base_price below the first tier', () => {
    expect(modelUnitPrice(tiered, 4).toString()).toBe('10');
  });

  it('uses the tier with the highest min_quantity not above the quantity, whatever the tier order', () => {
    expect(modelUnitPrice(tiered, 5).toString()).toBe('9');
    expect(modelUnitPrice(tiered, 9).toString()).toBe('9');
    expect(modelUnitPrice(tiered, 10).toString()).toBe('8');
    expect(modelUnitPrice(tiered, 50).toString()).toBe('8');
  });

  it('uses base_price for a tiered item without tiers and for a flat item with tiers', () => {
    expect(modelUnitPrice(item({ pricing_model: 'tiered' }), 3).toString()).toBe('1.08');
    expect(modelUnitPrice({ ...tiered, pricing_model: 'flat' }, 50).toString()).toBe('10');
  });

  it('applies the tier in resolveItem before conversion', () => {
    const resolved = resolveItem(context(catalogWith([{ ...tiered, sku_id: 'sku_a' }])), 'sku_a', 10);
    expect(resolved.unitPrice.toString()).toBe('16');
  });
});

describe('resolveItem: bundles (rule 5)', () => {
  const positions = [item({ sku_id: 'p1', base_price: '3.00' }), item({ sku_id: 'p2', base_price: '1.50' })];
  const bundle = (bundlePositions: { sku_id: string; quantity: number }[]): PriceItem =>
    item({
      sku_id: 'bundle',
      base_price: '5.00',
      pricing_model: 'bundle',
      bundle: { positions: bundlePositions },
    });

  it('prices the bundle at its own price and weighs positions by standalone price × quantity', () => {
    const catalog = catalogWith([
      ...positions,
      bundle([
        { sku_id: 'p1', quantity: 1 },
        { sku_id: 'p2', quantity: 2 },
      ]),
    ]);
    const resolved = resolveItem(context(catalog, { currency: 'USD' }), 'bundle', 1);
    expect(resolved.unitPrice.toString()).toBe('5');
    expect(
      resolved.bundleWeights?.map((weight) => [weight.sku_id, weight.quantity, weight.weight.toString()]),
    ).toEqual([
      ['p1', 1, '3'],
      ['p2', 2, '3'],
    ]);
  });

  it('weighs a tiered position at its tier for the position quantity', () => {
    const tieredPosition = item({
      sku_id: 'p1',
      base_price: '3.00',
      pricing_model: 'tiered',
      tiers: [{ min_quantity: 3, unit_price: '2.00' }],
    });
    const catalog = catalogWith([tieredPosition, bundle([{ sku_id: 'p1', quantity: 3 }])]);
    expect(resolveItem(context(catalog), 'bundle', 1).bundleWeights?.[0]?.weight.toString()).toBe('6');
  });

  it('refuses a bundle without positions', () => {
    const error = refusal(() => resolveItem(context(catalogWith([bundle([])])), 'bundle', 1));
    expect([error.kind, error.rule]).toEqual(['no_price', 'bundle']);
    const noBundleField = item({ sku_id: 'bundle', pricing_model: 'bundle' });
    expect(refusal(() => resolveItem(context(catalogWith([noBundleField])), 'bundle', 1)).kind).toBe(
      'no_price',
    );
  });

  it('refuses a bundle naming an unpriced position', () => {
    const catalog = catalogWith([...positions, bundle([{ sku_id: 'ghost', quantity: 1 }])]);
    const error = refusal(() => resolveItem(context(catalog), 'bundle', 1));
    expect([error.kind, error.rule]).toEqual(['no_price', 'bundle']);
    expect(error.message).toContain('ghost');
  });

  it('refuses a bundle nested in a bundle', () => {
    const inner = { ...bundle([{ sku_id: 'p1', quantity: 1 }]), sku_id: 'inner' };
    const catalog = catalogWith([...positions, inner, bundle([{ sku_id: 'inner', quantity: 1 }])]);
    expect(refusal(() => resolveItem(context(catalog), 'bundle', 1)).kind).toBe('no_price');
  });
});

describe('applyCharm (rule 8, step 1)', () => {
  it.each<[string, CharmEnding, number, string]>([
    ['12.34', '.99', 2, '11.99'],
    ['12.60', '.99', 2, '12.99'],
    ['12.99', '.99', 2, '12.99'],
    ['12.34', '.95', 2, '11.95'],
    ['12.50', '.95', 2, '12.95'],
    ['12.30', '.90', 2, '11.9'],
    ['12.345', '.99', 3, '11.99'],
    ['1234', '.99', 0, '1199'],
    ['1250', '.99', 0, '1299'],
    ['1234', '.95', 0, '1195'],
    ['1234', '.90', 0, '1190'],
    ['123.4', '.99', 1, '99'],
  ])('%s with ending %s at %i minor units → %s', (price, ending, units, expected) => {
    expect(applyCharm(dec(price), ending, units).toString()).toBe(expected);
  });

  it('breaks ties toward the higher price', () => {
    expect(applyCharm(dec('12.49'), '.99', 2).toString()).toBe('12.99');
    expect(applyCharm(dec('12.40'), '.90', 2).toString()).toBe('12.9');
    expect(applyCharm(dec('1249'), '.99', 0).toString()).toBe('1299');
  });

  it('never goes to zero or below: the lower candidate ≤ 0 gives the upper one', () => {
    expect(applyCharm(dec('0.50'), '.99', 2).toString()).toBe('0.99');
    expect(applyCharm(dec('0.01'), '.90', 2).toString()).toBe('0.9');
    expect(applyCharm(dec('50'), '.99', 0).toString()).toBe('99');
  });

  it('is applied in resolveItem to converted prices only, and never to crypto', () => {
    const catalog = simpleCatalog();
    expect(resolveItem(context(catalog, { charm: '.99' }), 'sku_a', 1).unitPrice.toString()).toBe('1.99');
    const native = resolveItem(context(catalog, { charm: '.99', currency: 'USD' }), 'sku_a', 1);
    expect(native.unitPrice.toString()).toBe('1.08');
    const crypto = resolveItem(
      context(catalog, { charm: '.99', currency: 'BTC', isCrypto: true }),
      'sku_a',
      1,
    );
    expect(crypto.unitPrice.toString()).toBe('2.16');
  });
});

describe('overrides', () => {
  const override = (
    id: string,
    target: Override['target'],
    priority: number,
    currency = 'EUR',
  ): Override => ({
    override_id: id,
    target,
    currency,
    price_or_markup: { price: '1.00' },
    priority,
  });
  const scope = { sku_id: 'sku_a', category: 'cat_1', tenant: 't1', campaign: 'c1', currency: 'EUR' };

  it('replaces the price with an absolute price in the override currency', () => {
    const catalog = simpleCatalog({
      overrides: [{ ...override('o1', { sku_id: 'sku_a' }, 1), price_or_markup: { price: '0.77' } }],
    });
    const resolved = resolveItem(context(catalog, { charm: '.99' }), 'sku_a', 1);
    expect(resolved.unitPrice.toString()).toBe('0.77');
    expect(resolved.overrideId).toBe('o1');
  });

  it('applies a markup in percent on the resolved price, and a negative one as a markdown', () => {
    const up = simpleCatalog({
      overrides: [{ ...override('o1', { sku_id: 'sku_a' }, 1), price_or_markup: { markup_percent: '10' } }],
    });
    expect(resolveItem(context(up), 'sku_a', 1).unitPrice.toString()).toBe('2.376');
    const down = simpleCatalog({
      overrides: [
        { ...override('o1', { category: 'cat_1' }, 1), price_or_markup: { markup_percent: '-25' } },
      ],
    });
    expect(resolveItem(context(down), 'sku_a', 1).unitPrice.toString()).toBe('1.62');
  });

  it('matches tenant and campaign targets from the request context', () => {
    const catalog = simpleCatalog({ overrides: [override('o1', { tenant: 't1' }, 1)] });
    expect(resolveItem(context(catalog), 'sku_a', 1).overrideId).toBeUndefined();
    expect(resolveItem(context(catalog, { tenant: 't1' }), 'sku_a', 1).overrideId).toBe('o1');
    const campaign = simpleCatalog({ overrides: [override('o2', { campaign: 'c1' }, 1)] });
    expect(resolveItem(context(campaign, { campaign: 'c1' }), 'sku_a', 1).overrideId).toBe('o2');
  });

  it('picks the highest priority', () => {
    const chosen = chooseOverride(
      [override('o1', { sku_id: 'sku_a' }, 1), override('o2', { tenant: 't1' }, 5)],
      scope,
    );
    expect(chosen?.override_id).toBe('o2');
  });

  it('breaks priority ties by specificity: sku_id > campaign > category > tenant', () => {
    const all = [
      override('o1', { tenant: 't1' }, 1),
      override('o2', { category: 'cat_1' }, 1),
      override('o3', { campaign: 'c1' }, 1),
      override('o4', { sku_id: 'sku_a' }, 1),
    ];
    expect(chooseOverride(all, scope)?.override_id).toBe('o4');
    expect(chooseOverride(all.slice(0, 3), scope)?.override_id).toBe('o3');
    expect(chooseOverride(all.slice(0, 2), scope)?.override_id).toBe('o2');
    expect(chooseOverride(all.slice(0, 1), scope)?.override_id).toBe('o1');
  });

  it.each([[['o_a', 'o_b', 'o_c']], [['o_c', 'o_b', 'o_a']], [['o_b', 'o_c', 'o_a']]])(
    'then by the smallest override_id, whatever the catalog order (%j)',
    (order) => {
      expect(
        chooseOverride(
          order.map((id) => override(id, { category: 'cat_1' }, 1)),
          scope,
        )?.override_id,
      ).toBe('o_a');
    },
  );

  it('keeps catalog order for two overrides with the same priority, target kind and id', () => {
    const first = { ...override('dup', { sku_id: 'sku_a' }, 1), price_or_markup: { price: '1.11' } };
    const second = { ...override('dup', { sku_id: 'sku_a' }, 1), price_or_markup: { price: '2.22' } };
    expect(chooseOverride([first, second], scope)).toBe(first);
  });

  it('then by the smallest override_id', () => {
    const chosen = chooseOverride(
      [
        override('o_b', { sku_id: 'sku_a' }, 1),
        override('o_a', { sku_id: 'sku_a' }, 1),
        override('o_c', { sku_id: 'sku_a' }, 1),
      ],
      scope,
    );
    expect(chosen?.override_id).toBe('o_a');
  });

  it('ignores overrides in another currency and targets that do not match', () => {
    expect(chooseOverride([override('o1', { sku_id: 'sku_a' }, 9, 'USD')], scope)).toBeUndefined();
    expect(
      chooseOverride(
        [
          override('o2', { sku_id: 'other' }, 1),
          override('o3', { category: 'other' }, 1),
          override('o4', { tenant: 'other' }, 1),
          override('o5', { campaign: 'other' }, 1),
        ],
        scope,
      ),
    ).toBeUndefined();
  });

  it('ignores an override whose target names no known kind', () => {
    const odd = { ...override('o1', { sku_id: 'sku_a' }, 1), target: {} as Override['target'] };
    expect(chooseOverride([odd], scope)).toBeUndefined();
  });
});

describe('min_price', () => {
  it('is converted with the price', () => {
    const catalog = catalogWith([item({ min_price: '0.50' })]);
    expect(resolveItem(context(catalog), 'sku_a', 1).minUnitPrice.toString()).toBe('1');
  });

  it('is taken as is when the price is not converted', () => {
    const catalog = catalogWith([item({ min_price: '0.50' })]);
    expect(resolveItem(context(catalog, { currency: 'USD' }), 'sku_a', 1).minUnitPrice.toString()).toBe(
      '0.5',
    );
  });

  it('is zero when the item has none', () => {
    expect(resolveItem(context(simpleCatalog()), 'sku_a', 1).minUnitPrice.toString()).toBe('0');
  });
});

describe('resolveItem: region policies', () => {
  it('refuses a SKU its product does not sell in the region', () => {
    const catalog = simpleCatalog({
      products: [{ sku_id: 'sku_a', title: 'A', region_policies: [{ region: 'US', sellable: false }] }],
    });
    expect(refusal(() => resolveItem(context(catalog), 'sku_a', 1))).toMatchObject({
      kind: 'not_sellable',
      rule: 'region_policy',
    });
  });

  it('sells it where the policy allows or says nothing', () => {
    const catalog = simpleCatalog({
      products: [{ sku_id: 'sku_a', title: 'A', region_policies: [{ region: 'JP', sellable: false }] }],
    });
    expect(resolveItem(context(catalog), 'sku_a', 1).item.sku_id).toBe('sku_a');
  });
});
