/**
 * C29: customer groups. A buyer's price is the lowest that everyone's price, any group price list or any group
 * override gives (ties: higher priority, then smaller id); a group the catalog does not target changes nothing;
 * promotions may target a group; the explanation says which group won.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, type Json } from '../../../../functions/domain/money/canonical';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import { type ResolutionContext, resolveItem } from '../../../../functions/domain/pricing/resolve';
import type {
  BasketRequest,
  Override,
  PriceItem,
  PriceList,
  PricingCatalog,
} from '../../../../functions/domain/pricing/types';
import { DEMO_AT, demoDocument, pricingCatalogOf, releaseOf } from '../../../support/demo-pricing';
import { basketRequest, fxRate, item, simpleCatalog } from '../../../support/pricing-fixtures';

const groupList = (
  id: string,
  group: string,
  items: PriceItem[],
  overrides: Partial<PriceList> = {},
): PriceList => ({
  pricelist_id: id,
  base_currency: items[0]?.base_currency ?? 'USD',
  effective_from: '2026-01-01T00:00:00.000Z',
  version: 1,
  customer_group: group,
  items,
  ...overrides,
});

const groupOverride = (
  id: string,
  group: string,
  price: string,
  priority = 0,
  currency = 'USD',
): Override => ({
  override_id: id,
  target: { customer_group: group },
  currency,
  price_or_markup: { price },
  priority,
});

/** sku_a at 10.00 USD for everyone; EUR at 0.5; US sells USD and EUR. */
const catalog = (overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: { ...simpleCatalog().pricelist, items: [item('sku_a', '10.00'), item('sku_b', '20.00')] },
    products: [
      { sku_id: 'sku_a', title: 'A', category: 'cat_1' },
      { sku_id: 'sku_b', title: 'B', category: 'cat_1' },
    ],
    fx: { fx_version: 'fx_1', base_currency: 'USD', rates: [fxRate('USD→EUR', '0.5')] },
    display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR', 'GBP'] }],
    ...overrides,
  });

const price = (pricingCatalog: PricingCatalog, overrides: Partial<BasketRequest> = {}) =>
  priceBasket(pricingCatalog, basketRequest(overrides));

const groupStep = (pricingCatalog: PricingCatalog, overrides: Partial<BasketRequest> = {}) =>
  explainBasket(pricingCatalog, basketRequest(overrides)).explain.steps.find(
    (step) => step.rule === 'customer_group',
  );

describe('the lowest applicable price (C29)', () => {
  const twoGroups = catalog({
    overrides: [groupOverride('o_silver', 'silver', '9.00')],
    group_pricelists: [groupList('pl_gold', 'gold', [item('sku_a', '8.50')])],
  });

  it('gives a buyer in two groups the lower of their prices, and says which group won', () => {
    const both = price(twoGroups, { customer_groups: ['silver', 'gold'] });
    expect(both.items_priced[0]).toMatchObject({ unit_price: '8.50', total: '8.50', customer_group: 'gold' });
    expect(price(twoGroups, { customer_groups: ['silver'] }).items_priced[0]).toMatchObject({
      unit_price: '9.00',
      customer_group: 'silver',
    });
    expect(groupStep(twoGroups, { customer_groups: ['silver', 'gold'] })).toMatchObject({
      input: { unit_price: '10', customer_groups: ['gold', 'silver'] },
      output: {
        unit_price: '8.5',
        customer_group: 'gold',
        candidates: [
          { customer_group: 'gold', source: 'pricelist', id: 'pl_gold', priority: 0, unit_price: '8.5' },
          { customer_group: 'silver', source: 'override', id: 'o_silver', priority: 0, unit_price: '9' },
        ],
      },
    });
  });

  it('leaves lines no group prices at everyone’s price', () => {
    const result = price(twoGroups, {
      customer_groups: ['gold'],
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
      ],
    });
    expect(result.items_priced.map((line) => [line.unit_price, line.customer_group])).toEqual([
      ['8.50', 'gold'],
      ['20.00', undefined],
    ]);
  });

  it('breaks ties deterministically: higher priority, then the smaller id, whatever the order of the groups', () => {
    const tied = catalog({
      overrides: [
        groupOverride('o_b', 'beta', '7.00', 5),
        groupOverride('o_a', 'alpha', '7.00', 5),
        groupOverride('o_low', 'gamma', '7.00', 1),
      ],
    });
    for (const groups of [
      ['alpha', 'beta', 'gamma'],
      ['gamma', 'beta', 'alpha'],
      ['beta', 'gamma', 'alpha'],
    ]) {
      expect(price(tied, { customer_groups: groups }).items_priced[0]?.customer_group).toBe('alpha');
      expect(groupStep(tied, { customer_groups: groups })?.output.customer_group).toBe('alpha');
    }
    expect(price(tied, { customer_groups: ['beta', 'gamma'] }).items_priced[0]?.customer_group).toBe('beta');
    const byId = catalog({
      overrides: [groupOverride('o_2', 'one', '7.00', 3)],
      group_pricelists: [groupList('o_1', 'two', [item('sku_a', '7.00')])],
    });
    // Same price: the override's priority 3 beats the list's 0.
    expect(price(byId, { customer_groups: ['two', 'one'] }).items_priced[0]?.customer_group).toBe('one');
  });

  it('breaks a tie of price, priority and id by the group', () => {
    const same = catalog({
      overrides: [groupOverride('shared_id', 'silver', '7.00')],
      group_pricelists: [groupList('shared_id', 'gold', [item('sku_a', '7.00')])],
    });
    expect(price(same, { customer_groups: ['silver', 'gold'] }).items_priced[0]?.customer_group).toBe('gold');
    expect(price(same, { customer_groups: ['gold', 'silver'] }).items_priced[0]?.customer_group).toBe('gold');
  });

  it('ignores a list without a customer group among the group lists', () => {
    const stray = catalog({
      group_pricelists: [
        { ...groupList('pl_stray', 'gold', [item('sku_a', '1.00')]), customer_group: undefined },
      ],
    });
    expect(price(stray, { customer_groups: ['gold'] }).items_priced[0]?.unit_price).toBe('10.00');
  });

  it('passes on an error of a conversion that is no pricing refusal', () => {
    const foreign = catalog({
      group_pricelists: [
        groupList('pl_gbp', 'gold', [item('sku_a', '1.00', { base_currency: 'GBP' })], {
          base_currency: 'GBP',
        }),
      ],
    });
    const context: ResolutionContext = {
      catalog: foreign,
      currency: 'USD',
      region: 'US',
      minorUnits: 2,
      isCrypto: false,
      charm: null,
      customerGroups: new Set(['gold']),
      convert: () => {
        throw new TypeError('broken');
      },
    };
    expect(() => resolveItem(context, 'sku_a', 1)).toThrow(TypeError);
  });

  it('never raises a price: a group price above everyone’s is not taken', () => {
    const dearer = catalog({ overrides: [groupOverride('o_dear', 'gold', '12.00', 100)] });
    const result = price(dearer, { customer_groups: ['gold'] });
    expect(result.items_priced[0]).toMatchObject({ unit_price: '10.00' });
    expect(result.items_priced[0]).not.toHaveProperty('customer_group');
    expect(groupStep(dearer, { customer_groups: ['gold'] })?.detail).toBe(
      'no customer group gives less than 10',
    );
  });

  it('changes nothing for a group the catalog does not target', () => {
    const plain = price(twoGroups);
    for (const groups of [['unknown'], ['unknown', 'another'], []]) {
      const priced = price(twoGroups, { customer_groups: groups });
      expect(canonicalJson(priced as unknown as Json)).toBe(canonicalJson(plain as unknown as Json));
    }
    expect(groupStep(twoGroups, { customer_groups: ['unknown'] })?.detail).toBe(
      'no price list or override of the catalog targets these customer groups',
    );
  });

  it('takes a group override on the price before overrides; everyone’s override stays for everyone else', () => {
    const layered = catalog({
      overrides: [
        {
          override_id: 'o_all',
          target: { sku_id: 'sku_a' },
          currency: 'USD',
          price_or_markup: { markup_percent: '-5' },
          priority: 1,
        },
        {
          override_id: 'o_gold',
          target: { customer_group: 'gold' },
          currency: 'USD',
          price_or_markup: { markup_percent: '-10' },
          priority: 1,
        },
        groupOverride('o_other_currency', 'gold', '1.00', 9, 'EUR'),
      ],
    });
    expect(price(layered).items_priced[0]?.unit_price).toBe('9.50');
    expect(price(layered, { customer_groups: ['gold'] }).items_priced[0]).toMatchObject({
      unit_price: '9.00',
      customer_group: 'gold',
    });
  });

  it('converts a group list in another currency, charm-priced like any converted price', () => {
    const converted = catalog({
      display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR'], charm_pricing: '.99' }],
      group_pricelists: [groupList('pl_gold_usd', 'gold', [item('sku_a', '8.20')])],
    });
    // Everyone: 10.00 × 0.5 = 5.00 → 4.99; gold: 8.20 × 0.5 = 4.10 → 3.99.
    expect(price(converted, { currency: 'EUR', customer_groups: ['gold'] }).items_priced[0]).toMatchObject({
      unit_price: '3.99',
      customer_group: 'gold',
    });
  });

  it('skips a group list no rate reaches (and says so when explaining)', () => {
    const unreachable = catalog({
      group_pricelists: [
        groupList('pl_gold_gbp', 'gold', [item('sku_a', '1.00', { base_currency: 'GBP' })], {
          base_currency: 'GBP',
        }),
      ],
    });
    expect(price(unreachable, { customer_groups: ['gold'] }).items_priced[0]?.unit_price).toBe('10.00');
    expect(groupStep(unreachable, { customer_groups: ['gold'] })?.output.candidates).toEqual([
      {
        customer_group: 'gold',
        source: 'pricelist',
        id: 'pl_gold_gbp',
        priority: 0,
        refused: 'no rate from GBP to USD in fx_1',
      },
    ]);
  });

  it('uses a group list only while it is in force', () => {
    const dated = catalog({
      group_pricelists: [
        groupList('pl_gold', 'gold', [item('sku_a', '5.00')], {
          effective_from: '2026-12-01T00:00:00.000Z',
          effective_to: '2027-01-01T00:00:00.000Z',
        }),
      ],
    });
    const at = (instant: string) =>
      priceBasket(dated, basketRequest({ customer_groups: ['gold'] }), { at: instant }).items_priced[0]
        ?.unit_price;
    expect(at('2026-11-30T00:00:00.000Z')).toBe('10.00');
    expect(at('2026-12-15T00:00:00.000Z')).toBe('5.00');
    expect(at('2027-01-01T00:00:00.000Z')).toBe('10.00');
  });

  it('takes the group list’s tier for the quantity', () => {
    const tiered = catalog({
      group_pricelists: [
        groupList('pl_gold', 'gold', [
          item('sku_a', '9.00', {
            pricing_model: 'tiered',
            tiers: [
              { min_quantity: 1, unit_price: '9.00' },
              { min_quantity: 10, unit_price: '6.00' },
            ],
          }),
        ]),
      ],
    });
    expect(
      price(tiered, { customer_groups: ['gold'], items: [{ sku_id: 'sku_a', quantity: 10 }] }).items_priced[0]
        ?.unit_price,
    ).toBe('6.00');
  });
});

describe('promotions targeting a customer group (C29)', () => {
  const promoted = catalog({
    promotions: [
      {
        promo_id: 'gold_20',
        condition: {},
        percent: '20',
        stackable: true,
        priority: 1,
        target: { customer_group: 'gold' },
      },
    ],
    threshold_promotions: [
      {
        promo_id: 'gold_bonus',
        kind: 'bonus',
        bonus: 'gift',
        threshold: { amount: '1.00', currency: 'USD' },
        condition: {},
        target: { customer_group: 'gold' },
      },
    ],
  });

  it('gives the promotion and the threshold bonus to the group only', () => {
    const gold = price(promoted, { customer_groups: ['gold'] });
    expect(gold.items_priced[0]?.applied_promotions).toEqual([{ promo_id: 'gold_20', amount: '2.00' }]);
    expect(gold.threshold_promotions.map((outcome) => outcome.promo_id)).toEqual(['gold_bonus']);
    const everyone = price(promoted, { customer_groups: ['silver'] });
    expect(everyone.items_priced[0]?.applied_promotions).toEqual([]);
    expect(everyone.threshold_promotions).toEqual([]);
    const steps = explainBasket(promoted, basketRequest({ customer_groups: ['gold'] })).explain.steps;
    expect(steps.find((step) => step.rule === 'promotion')?.input).toMatchObject({ customer_group: 'gold' });
    expect(steps.find((step) => step.rule === 'threshold_promotion')?.input).toMatchObject({
      customer_group: 'gold',
    });
  });
});

describe('the demo catalog’s b2b-gold group', () => {
  const release = releaseOf(demoDocument());
  const demo = pricingCatalogOf(release);
  const request = (groups?: string[]): BasketRequest => ({
    items: [
      { sku_id: 'GAME-STARFALL-PS5', quantity: 2 },
      { sku_id: 'MERCH-HOODIE-IRONVALE-L', quantity: 1 },
    ],
    region: 'DE',
    currency: 'EUR',
    buyer_type: 'consumer',
    ...(groups ? { customer_groups: groups } : {}),
  });
  const at = { at: DEMO_AT.toISOString() };

  it('gets 12 % off EUR prices; everyone else and other currencies are unchanged', () => {
    const everyone = priceBasket(demo, request(), at);
    const gold = priceBasket(demo, request(['b2b-gold']), at);
    expect(everyone.items_priced.map((line) => line.unit_price)).toEqual(['69.99', '54.99']);
    expect(gold.items_priced.map((line) => [line.unit_price, line.customer_group])).toEqual([
      ['61.59', 'b2b-gold'],
      ['48.39', 'b2b-gold'],
    ]);
    const unknown = priceBasket(demo, request(['no-such-group']), at);
    expect(canonicalJson(unknown as unknown as Json)).toBe(canonicalJson(everyone as unknown as Json));
    const usd = { ...request(['b2b-gold']), region: 'US', currency: 'USD' };
    expect(priceBasket(demo, usd, at).items_priced.every((line) => line.customer_group === undefined)).toBe(
      true,
    );
  });
});
