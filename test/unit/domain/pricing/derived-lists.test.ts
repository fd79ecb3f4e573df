/**
 * Price lists derived from a parent list: a SKU the derived list does not list itself costs the parent's price in
 * the basket currency, adjusted by a percentage, then given the region's charm ending and display rounding; the
 * derived list follows every change of its parent; explicit items of the derived list win; explain shows it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../../../functions/domain/money/decimal';
import { round } from '../../../../functions/domain/money/rounding';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import type { BasketRequest, PriceList, PricingCatalog } from '../../../../functions/domain/pricing/types';
import { DEMO_AT, demoDocument, pricingCatalogOf, releaseOf } from '../../../support/demo-pricing';
import { basketRequest, fxRate, item, simpleCatalog } from '../../../support/pricing-fixtures';

const derivedList = (
  id: string,
  currency: string,
  percent: string,
  overrides: Partial<PriceList> = {},
): PriceList => ({
  pricelist_id: id,
  base_currency: currency,
  effective_from: '2026-01-01T00:00:00.000Z',
  version: 7,
  derived_from: { pricelist_id: 'pl_main', adjustment_percent: percent },
  items: [],
  ...overrides,
});

/** USD primary list (sku_a 10.00, tiered sku_t, floor on sku_f); EUR at 0.5; US (charm .99) and CA (none). */
const catalog = (lists: PriceList[], overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: {
      ...simpleCatalog().pricelist,
      items: [
        item('sku_a', '10.00'),
        item('sku_t', '20.00', {
          pricing_model: 'tiered',
          tiers: [
            { min_quantity: 1, unit_price: '20.00' },
            { min_quantity: 10, unit_price: '16.00' },
          ],
        }),
        item('sku_f', '30.00', { min_price: '25.00' }),
      ],
    },
    products: [
      { sku_id: 'sku_a', title: 'A' },
      { sku_id: 'sku_t', title: 'T' },
      { sku_id: 'sku_f', title: 'F' },
    ],
    strategy: { kind: 'price_lists' },
    currency_pricelists: lists,
    fx: { fx_version: 'fx_1', base_currency: 'USD', rates: [fxRate('USD→EUR', '0.5')] },
    display_rules: [
      { region: 'US', currency_whitelist: ['USD', 'EUR'], charm_pricing: '.99' },
      { region: 'CA', currency_whitelist: ['USD', 'EUR'], rounding_mode: 'FLOOR' },
    ],
    ...overrides,
  });

const unitPrice = (pricing: PricingCatalog, request: Partial<BasketRequest>) =>
  priceBasket(pricing, basketRequest(request)).items_priced[0]?.unit_price;

describe('a price list derived from its parent', () => {
  it('prices a SKU it does not list at the parent price in its currency, adjusted, then charm and rounding', () => {
    const eur = catalog([derivedList('pl_eur', 'EUR', '10')]);
    // 10.00 USD × 0.5 = 5.00 EUR, + 10 % = 5.50, charm .99 in US → 5.99 (0.49 away; 4.99 is 0.51 away).
    expect(unitPrice(eur, { currency: 'EUR', region: 'US' })).toBe('5.99');
    // CA has no charm: 5.50, rounded FLOOR to cents.
    expect(unitPrice(eur, { currency: 'EUR', region: 'CA' })).toBe('5.50');
    const down = catalog([derivedList('pl_eur', 'EUR', '-3.3')]);
    // 5.00 × 0.967 = 4.835 → FLOOR 4.83 in CA.
    expect(unitPrice(down, { currency: 'EUR', region: 'CA' })).toBe('4.83');
  });

  it('adjusts the tier a quantity reaches, and the min_price floor with it', () => {
    const eur = catalog([derivedList('pl_eur', 'EUR', '-20')]);
    const tiered = priceBasket(
      eur,
      basketRequest({ currency: 'EUR', region: 'CA', items: [{ sku_id: 'sku_t', quantity: 10 }] }),
    );
    // 16.00 USD → 8.00 EUR, − 20 % = 6.40.
    expect(tiered.items_priced[0]?.unit_price).toBe('6.40');
    const floored = explainBasket(
      eur,
      basketRequest({ currency: 'EUR', region: 'CA', items: [{ sku_id: 'sku_f', quantity: 1 }] }),
    );
    const amount = floored.explain.steps.find((step) => step.rule === 'line_amount');
    // 25.00 USD floor → 12.50 EUR, − 20 % = 10.00.
    expect(amount?.output).toMatchObject({ min_price: '10' });
  });

  it("lets the derived list's own items win over the derivation", () => {
    const eur = catalog([
      derivedList('pl_eur', 'EUR', '10', { items: [item('sku_a', '4.20', { base_currency: 'EUR' })] }),
    ]);
    expect(unitPrice(eur, { currency: 'EUR', region: 'CA' })).toBe('4.20');
  });

  it('follows its parent: a new parent price is the new derived price, with no change to the derived list', () => {
    const lists = [derivedList('pl_eur', 'EUR', '10')];
    const before = catalog(lists);
    const after = catalog(lists, {
      pricelist: { ...before.pricelist, items: [item('sku_a', '12.00'), ...before.pricelist.items.slice(1)] },
    });
    expect(unitPrice(before, { currency: 'EUR', region: 'CA' })).toBe('5.50');
    // 12.00 × 0.5 × 1.1 = 6.60.
    expect(unitPrice(after, { currency: 'EUR', region: 'CA' })).toBe('6.60');
  });

  it('derives a customer group list too, and the group gets it only when it is lower', () => {
    const gold = derivedList('pl_gold', 'USD', '-15', { customer_group: 'gold' });
    const pricing = catalog([], { strategy: { kind: 'convert_at_display' }, group_pricelists: [gold] });
    // 10.00 − 15 % = 8.50, charm .99 in US → 8.99 (the nearest .99 ending): still below 10.00.
    const line = priceBasket(pricing, basketRequest({ customer_groups: ['gold'] })).items_priced[0];
    expect(line).toMatchObject({ unit_price: '8.99', customer_group: 'gold' });
    const up = derivedList('pl_up', 'USD', '15', { customer_group: 'gold' });
    const higher = catalog([], { strategy: { kind: 'convert_at_display' }, group_pricelists: [up] });
    expect(
      priceBasket(higher, basketRequest({ customer_groups: ['gold'] })).items_priced[0]?.unit_price,
    ).toBe('10.00');
  });

  it('keeps a stored-value product at its face value: converted, never adjusted or charm-priced', () => {
    const eur = catalog([derivedList('pl_eur', 'EUR', '10')], {
      products: [
        { sku_id: 'sku_a', title: 'Gift card', product_type: 'stored_value' },
        { sku_id: 'sku_t', title: 'T' },
        { sku_id: 'sku_f', title: 'F' },
      ],
    });
    expect(unitPrice(eur, { currency: 'EUR', region: 'US' })).toBe('5.00');
  });

  it('explains the derivation: parent, adjustment, charm and rounding', () => {
    const eur = catalog([derivedList('pl_eur', 'EUR', '10')]);
    const { explain, pricing } = explainBasket(eur, basketRequest({ currency: 'EUR', region: 'US' }));
    const step = explain.steps.find((entry) => entry.rule === 'derived_list');
    expect(step?.input).toMatchObject({
      pricelist_id: 'pl_eur',
      parent_pricelist_id: 'pl_main',
      unit_price: '5',
      adjustment_percent: '10',
    });
    expect(step?.output).toMatchObject({ adjusted: '5.5', charmed: '5.99', unit_price: '5.99' });
    expect(pricing).toEqual(priceBasket(eur, basketRequest({ currency: 'EUR', region: 'US' })));
    expect(explain.steps.some((entry) => entry.rule === 'fx_conversion')).toBe(true);
  });

  it('equals parent × (1 + p) rounded in the display mode, for any percentage (no charm)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -9_999, max: 50_000 }).map((hundredths) => new Decimal(hundredths).dividedBy(100)),
        fc.integer({ min: 1, max: 99_999 }).map((cents) => new Decimal(cents).dividedBy(100)),
        (percent, parentPrice) => {
          const pricing = catalog([derivedList('pl_eur', 'EUR', percent.toString())], {
            pricelist: { ...simpleCatalog().pricelist, items: [item('sku_a', parentPrice.toFixed(2))] },
          });
          const expected = round(
            parentPrice.times('0.5').times(new Decimal(1).plus(percent.dividedBy(100))),
            2,
            'FLOOR',
          );
          expect(unitPrice(pricing, { currency: 'EUR', region: 'CA' })).toBe(expected.toFixed(2));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the demo catalog', () => {
  const release = releaseOf(demoDocument());
  const pricing = pricingCatalogOf(release);

  it('prices CHF from the EUR list (+4 %, .90 endings) and the trade group 15 % below the EUR list', () => {
    const options = { at: DEMO_AT.toISOString() };
    const chf = explainBasket(
      pricing,
      {
        items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
        region: 'CH',
        currency: 'CHF',
        buyer_type: 'consumer',
      },
      options,
    );
    expect(chf.pricing.items_priced[0]?.unit_price).toMatch(/\.90$/);
    expect(chf.explain.steps.find((step) => step.rule === 'derived_list')?.input).toMatchObject({
      pricelist_id: 'PL-CH-CHF-2026W47',
      parent_pricelist_id: 'PL-EU-EUR-2026W47',
      adjustment_percent: '4',
    });
    const basket = {
      items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    } as const;
    const everyone = priceBasket(pricing, basket, options).items_priced[0];
    const trade = priceBasket(pricing, { ...basket, customer_groups: ['trade'] }, options).items_priced[0];
    expect(trade?.customer_group).toBe('trade');
    expect(new Decimal(trade?.unit_price ?? '0').toFixed(2)).toBe(
      round(new Decimal(everyone?.unit_price ?? '0').times('0.85'), 2, 'HALF_UP').toFixed(2),
    );
  });
});
