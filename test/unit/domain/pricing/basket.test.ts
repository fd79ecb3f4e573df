import { describe, expect, it } from 'vitest';
import { priceBasket } from '../../../../functions/domain/pricing/basket';
import { PriceNotAvailableError, PricingError } from '../../../../functions/domain/pricing/errors';
import type { PriceItem, PricingCatalog } from '../../../../functions/domain/pricing/types';
import {
  basketRequest,
  fxRate,
  item,
  refusal,
  simpleCatalog,
  taxRule,
} from '../../../support/pricing-fixtures';

const request = basketRequest;

const rate = fxRate;

/** A USD catalog with the given items; EUR, JPY, KWD and BTC at fixed rates from USD; region US sells all. */
const catalog = (items: PriceItem[], overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: {
      pricelist_id: 'pl_main',
      base_currency: 'USD',
      effective_from: '2026-01-01T00:00:00.000Z',
      version: 7,
      items,
    },
    products: items.map((entry) => ({ sku_id: entry.sku_id, title: entry.sku_id })),
    fx: {
      fx_version: 'fx_42',
      base_currency: 'USD',
      rates: [
        rate('USD→EUR', '0.5'),
        rate('USD→JPY', '150'),
        rate('USD→KWD', '0.3'),
        rate('BTC→USD', '50000'),
      ],
    },
    display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR', 'JPY', 'KWD', 'BTC'] }],
    ...overrides,
  });

/** A USD catalog with a precomputed EUR list (strategy price_lists). */
const eurPriceLists = (): PricingCatalog =>
  catalog([item('sku_a', '10.00')], {
    strategy: { kind: 'price_lists' },
    currency_pricelists: [
      {
        pricelist_id: 'pl_eur',
        base_currency: 'EUR',
        effective_from: '2026-01-01T00:00:00.000Z',
        version: 2,
        items: [item('sku_a', '4.49', { base_currency: 'EUR' })],
      },
    ],
  });

describe('priceBasket: refused requests', () => {
  it('refuses an empty basket', () => {
    const error = refusal(() => priceBasket(simpleCatalog(), request({ items: [] })));
    expect([error.code, error.rule]).toEqual(['invalid_request', 'items']);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])('refuses quantity %s', (quantity) => {
    const error = refusal(() =>
      priceBasket(simpleCatalog(), request({ items: [{ sku_id: 'sku_a', quantity }] })),
    );
    expect([error.code, error.rule]).toEqual(['invalid_request', 'quantity']);
  });

  it('names the offending line', () => {
    const items = [
      { sku_id: 'sku_a', quantity: 1 },
      { sku_id: 'sku_a', quantity: 0 },
    ];
    expect(refusal(() => priceBasket(simpleCatalog(), request({ items }))).message).toContain('items[1]');
  });

  // C28: every refusal is `price_not_available`, naming its reasons (`reasons.test.ts` has them all).
  const reasonsOf = (error: PricingError) => (error instanceof PriceNotAvailableError ? error.reasons : []);

  it('refuses an unknown SKU', () => {
    const items = [{ sku_id: 'nope', quantity: 1 }];
    const error = refusal(() => priceBasket(simpleCatalog(), request({ items })));
    expect(error.code).toBe('price_not_available');
    expect(reasonsOf(error)).toEqual([{ code: 'unknown_sku', detail: 'unknown SKU nope', sku_id: 'nope' }]);
  });

  it('refuses a region that is not served', () => {
    const error = refusal(() => priceBasket(simpleCatalog(), request({ region: 'FR' })));
    expect(error.code).toBe('price_not_available');
    expect(reasonsOf(error)).toEqual([{ code: 'region_not_served', detail: 'region FR is not served' }]);
  });

  it('refuses by an availability rule', () => {
    const blocked = simpleCatalog({ availability: { blocked_currencies: [{ currency: 'USD' }] } });
    const error = refusal(() => priceBasket(blocked, request()));
    expect([error.code, error.rule]).toEqual(['price_not_available', 'currency_blocked']);
    expect(reasonsOf(error)).toEqual([{ code: 'currency_blocked', detail: 'USD is blocked' }]);
  });

  it('refuses an unknown currency even when a display rule offers it', () => {
    const odd = simpleCatalog({ display_rules: [{ region: 'US', currency_whitelist: ['USD', 'ABCD'] }] });
    const error = refusal(() => priceBasket(odd, request({ currency: 'ABCD' })));
    expect(reasonsOf(error)).toEqual([{ code: 'unknown_currency', detail: 'unknown currency ABCD' }]);
  });

  it('refuses a currency without a rate from the base currency', () => {
    const noRates = catalog([item('sku_a', '1.00')], {
      fx: { fx_version: 'fx_0', base_currency: 'USD', rates: [] },
    });
    const error = refusal(() => priceBasket(noRates, request({ currency: 'EUR' })));
    expect([error.code, error.rule]).toEqual(['price_not_available', 'no_rate']);
    expect(reasonsOf(error)).toEqual([
      { code: 'no_rate', detail: 'no rate from USD to EUR in fx_0 (needed for sku_a)' },
    ]);
  });
});

describe('priceBasket: a simple basket', () => {
  it('prices, taxes and totals a line, with the versions that made it', () => {
    const result = priceBasket(
      simpleCatalog({ tax_rules: { tax_rule_version: 1, rules: [taxRule()] } }),
      request({ items: [{ sku_id: 'sku_a', quantity: 3 }] }),
    );
    expect(result).toMatchObject({
      currency: 'USD',
      region: 'US',
      buyer_type: 'consumer',
      rounding_scope: 'line',
      minor_units: 2,
      subtotal: '3.24',
      discounts: '0.00',
      taxes: [{ name: 'sales_tax', tax_class: 'standard', rate: '0.19', amount: '0.62', included: false }],
      fees: [],
      total: '3.86',
      threshold_promotions: [],
      versions: { pricelist_version: 7, fx_version: 'fx_1', tax_rule_version: 1 },
    });
    expect(result.items_priced).toEqual([
      {
        line: 1,
        sku_id: 'sku_a',
        quantity: 3,
        pricing_model: 'flat',
        unit_price: '1.08',
        display_price: '1.08',
        base: '3.24',
        discount: '0.00',
        taxes: [{ name: 'sales_tax', tax_class: 'standard', rate: '0.19', amount: '0.62', included: false }],
        tax: '0.62',
        fees: '0.00',
        total: '3.86',
        applied_promotions: [],
      },
    ]);
    expect(result.fx_rate).toBeUndefined();
  });

  it('keeps included tax inside the price', () => {
    const included = simpleCatalog({
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ tax_mode: { type: 'VAT', inclusion: 'included' } })],
      },
    });
    const result = priceBasket(included, request({ items: [{ sku_id: 'sku_a', quantity: 10 }] }));
    // 10.80 gross: tax 10.80 × 0.19 / 1.19 = 1.7243… → 1.72.
    expect([result.subtotal, result.items_priced[0]?.tax, result.total]).toEqual(['10.80', '1.72', '10.80']);
    expect(result.taxes[0]?.included).toBe(true);
  });

  it('shows business buyers under reverse charge tax-inclusive prices net, without tax', () => {
    const reverse = simpleCatalog({
      tax_rules: {
        tax_rule_version: 1,
        rules: [
          taxRule({ tax_mode: { type: 'VAT', inclusion: 'included' }, business_buyers: 'reverse_charge' }),
        ],
      },
    });
    const result = priceBasket(reverse, request({ buyer_type: 'business' }));
    // 1.08 / 1.19 = 0.907…
    expect([result.items_priced[0]?.unit_price, result.total, result.taxes]).toEqual(['0.91', '0.91', []]);
    expect(priceBasket(reverse, request()).total).toBe('1.08');
  });

  it('charges business buyers under reverse charge no excluded tax, on the same price', () => {
    const reverse = simpleCatalog({
      tax_rules: { tax_rule_version: 1, rules: [taxRule({ business_buyers: 'reverse_charge' })] },
    });
    expect(priceBasket(reverse, request({ buyer_type: 'business' })).total).toBe('1.08');
    expect(priceBasket(reverse, request()).total).toBe('1.29');
  });

  it('converts a tax threshold into the basket currency', () => {
    const withThreshold = catalog([item('sku_a', '10.00')], {
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ threshold: { amount: '30.00', currency: 'USD' } })],
      },
    });
    // 2 × 10 USD = 10 EUR < 15 EUR (30 USD): no tax; 3 units = 15 EUR: taxed.
    expect(
      priceBasket(withThreshold, request({ currency: 'EUR', items: [{ sku_id: 'sku_a', quantity: 2 }] }))
        .taxes,
    ).toEqual([]);
    expect(
      priceBasket(withThreshold, request({ currency: 'EUR', items: [{ sku_id: 'sku_a', quantity: 3 }] }))
        .total,
    ).toBe('17.85');
  });

  it('rounds the displayed unit price with the display rule mode (HALF_UP by default)', () => {
    const items = [item('sku_a', '0.125')];
    expect(priceBasket(catalog(items), request()).items_priced[0]?.unit_price).toBe('0.13');
    const floored = catalog(items, {
      display_rules: [{ region: 'US', currency_whitelist: ['USD'], rounding_mode: 'FLOOR' }],
    });
    expect(priceBasket(floored, request()).items_priced[0]?.unit_price).toBe('0.12');
  });
});

describe('priceBasket: currencies and FX', () => {
  it('converts at the client rate and reports it', () => {
    const result = priceBasket(catalog([item('sku_a', '10.00')]), request({ currency: 'EUR' }));
    expect([result.items_priced[0]?.unit_price, result.total, result.fx_rate]).toEqual([
      '5.00',
      '5.00',
      '0.5',
    ]);
  });

  it('applies the most specific markup to the client rate', () => {
    const marked = catalog([item('sku_a', '10.00')], {
      fx_markup_rules: [{ fx_markup_bps: 100 }, { channel: 'web', fx_markup_bps: 200 }],
    });
    expect(priceBasket(marked, request({ currency: 'EUR' })).fx_rate).toBe('0.505');
    const web = priceBasket(marked, request({ currency: 'EUR', channel: 'web' }));
    expect([web.fx_rate, web.total]).toEqual(['0.51', '5.10']);
  });

  it('prices JPY with 0 minor units', () => {
    const result = priceBasket(catalog([item('sku_a', '1.234')]), request({ currency: 'JPY' }));
    expect([result.minor_units, result.items_priced[0]?.unit_price, result.total]).toEqual([0, '185', '185']);
  });

  it('prices KWD with 3 minor units', () => {
    const result = priceBasket(catalog([item('sku_a', '1.2345')]), request({ currency: 'KWD' }));
    expect([result.minor_units, result.total]).toEqual([3, '0.370']);
  });

  it('prices BTC with 8 minor units through the inverse rate, without charm, with the network fee', () => {
    const crypto = catalog([item('sku_a', '100.00')], {
      display_rules: [{ region: 'US', currency_whitelist: ['BTC'], charm_pricing: '.99' }],
      fees: { network: { BTC: '0.00001' } },
    });
    const result = priceBasket(crypto, request({ currency: 'BTC' }));
    expect([result.minor_units, result.items_priced[0]?.unit_price, result.fees, result.total]).toEqual([
      8,
      '0.00200000',
      [{ kind: 'network', amount: '0.00001000' }],
      '0.00201000',
    ]);
  });

  it('uses the display rule minor units over ISO 4217', () => {
    const jpyCents = catalog([item('sku_a', '1.234')], {
      display_rules: [{ region: 'US', currency_whitelist: ['JPY'], minor_units: { JPY: 2 } }],
    });
    expect(priceBasket(jpyCents, request({ currency: 'JPY' })).total).toBe('185.10');
  });

  it('charm-prices a converted price in the display currency before discounts', () => {
    const charmed = catalog([item('sku_a', '24.70')], {
      display_rules: [{ region: 'US', currency_whitelist: ['EUR'], charm_pricing: '.99' }],
      promotions: [{ promo_id: 'p', condition: {}, percent: '10', stackable: true, priority: 0 }],
    });
    // 24.70 USD → 12.35 EUR → 11.99, then 10 % off: 1.199 → 1.20.
    const result = priceBasket(charmed, request({ currency: 'EUR' }));
    expect([result.items_priced[0]?.unit_price, result.discounts, result.total]).toEqual([
      '11.99',
      '1.20',
      '10.79',
    ]);
  });

  it('prices a precomputed list without converting (price_lists)', () => {
    const lists = eurPriceLists();
    const result = priceBasket(lists, request({ currency: 'EUR' }));
    expect([result.total, result.versions.pricelist_version]).toEqual(['4.49', 7]);
  });

  it('omits fx_rate when nothing was converted (price_lists)', () => {
    const lists = eurPriceLists();
    expect(priceBasket(lists, request({ currency: 'EUR' })).fx_rate).toBeUndefined();
  });

  it('prices a price_lists basket in a currency the FX snapshot does not cover', () => {
    const lists = catalog([item('sku_a', '10.00')], {
      strategy: { kind: 'price_lists' },
      fx: { fx_version: 'fx_0', base_currency: 'USD', rates: [] },
      display_rules: [{ region: 'US', currency_whitelist: ['GBP'] }],
      currency_pricelists: [
        {
          pricelist_id: 'pl_gbp',
          base_currency: 'GBP',
          effective_from: '2026-01-01T00:00:00.000Z',
          version: 2,
          items: [item('sku_a', '3.99', { base_currency: 'GBP' })],
        },
      ],
    });
    expect(priceBasket(lists, request({ currency: 'GBP' })).total).toBe('3.99');
  });
});

describe('priceBasket: promotions and the min_price floor', () => {
  const promo = { promo_id: 'p50', condition: {}, percent: '50', stackable: true, priority: 0 };

  it('discounts lines and lists the applied promotions', () => {
    const result = priceBasket(catalog([item('sku_a', '10.00')], { promotions: [promo] }), request());
    expect([result.discounts, result.total]).toEqual(['5.00', '5.00']);
    expect(result.items_priced[0]?.applied_promotions).toEqual([{ promo_id: 'p50', amount: '5.00' }]);
  });

  it('keeps a line at its min_price × quantity', () => {
    const floored = catalog([item('sku_a', '10.00', { min_price: '9.00' })], { promotions: [promo] });
    const result = priceBasket(floored, request({ items: [{ sku_id: 'sku_a', quantity: 2 }] }));
    expect([result.discounts, result.total]).toEqual(['2.00', '18.00']);
  });

  it('converts the floor with the price', () => {
    const floored = catalog([item('sku_a', '10.00', { min_price: '9.00' })], { promotions: [promo] });
    expect(priceBasket(floored, request({ currency: 'EUR' })).total).toBe('4.50');
  });

  it('converts a promotion cap into the basket currency', () => {
    const capped = catalog([item('sku_a', '10.00')], {
      promotions: [{ ...promo, cap: { amount: '2.00', currency: 'USD' } }],
    });
    expect(priceBasket(capped, request({ currency: 'EUR' })).discounts).toBe('1.00');
  });

  it('never lets rounding undo the floor: the discount gives way', () => {
    // Basket scope: the exact discounts (0.004 each) round to 1 cent given to the first line, whose base
    // (0.01) cannot go below its floor (0.005 → 0.01): the cent is dropped.
    const items = [item('sku_a', '0.008', { min_price: '0.005' }), item('sku_b', '0.008')];
    const tiny = catalog(items, {
      promotions: [{ ...promo, percent: '50' }],
      basket_policy: { rounding_scope: 'basket', promo_stack_mode: 'best_single' },
    });
    const result = priceBasket(
      tiny,
      request({
        items: [
          { sku_id: 'sku_a', quantity: 1 },
          { sku_id: 'sku_b', quantity: 1 },
        ],
      }),
    );
    for (const line of result.items_priced) {
      expect(Number(line.base) - Number(line.discount)).toBeGreaterThanOrEqual(
        line.sku_id === 'sku_a' ? 0.01 : 0,
      );
    }
  });
});

describe('priceBasket: the floor survives step-5 rounding', () => {
  const promo = (percent: string) => ({
    promo_id: 'p',
    condition: {},
    percent,
    stackable: true,
    priority: 0,
  });

  it('drops a rounded discount entirely when the rounded base already sits at the floor', () => {
    // Base 0.025 → 0.02 (BANKERS); floor 0.011 → 0.02; exact discount 0.0125 → 0.01 would leave 0.01.
    const tight = catalog([item('sku_a', '0.025', { min_price: '0.011' })], { promotions: [promo('50')] });
    const result = priceBasket(tight, request());
    expect([result.items_priced[0]?.base, result.discounts, result.total]).toEqual(['0.02', '0.00', '0.02']);
  });

  it('trims a rounded discount to what the floor leaves room for', () => {
    // Base 0.045 → 0.04; floor 0.021 → 0.03; exact discount 0.024 → 0.02 would leave 0.02 < 0.03.
    const tight = catalog([item('sku_a', '0.045', { min_price: '0.021' })], { promotions: [promo('90')] });
    const result = priceBasket(tight, request());
    expect([result.items_priced[0]?.base, result.discounts, result.total]).toEqual(['0.04', '0.01', '0.03']);
  });
});

describe('priceBasket: request context', () => {
  it('passes tenant and campaign to overrides', () => {
    const overridden = catalog([item('sku_a', '10.00')], {
      overrides: [
        {
          override_id: 'o_tenant',
          target: { tenant: 't1' },
          currency: 'USD',
          price_or_markup: { price: '8.00' },
          priority: 1,
        },
        {
          override_id: 'o_campaign',
          target: { campaign: 'c1' },
          currency: 'USD',
          price_or_markup: { markup_percent: '-50' },
          priority: 2,
        },
      ],
    });
    expect(priceBasket(overridden, request()).total).toBe('10.00');
    expect(priceBasket(overridden, request({ tenant: 't1' })).total).toBe('8.00');
    expect(priceBasket(overridden, request({ tenant: 't1', campaign: 'c1' })).total).toBe('5.00');
  });

  it('lets an item name the promotions that reach it (promo_refs) and passes categories and channel', () => {
    const items = [
      item('sku_a', '10.00', { promo_refs: ['p'] }),
      item('sku_b', '10.00'),
      item('sku_c', '10.00'),
    ];
    const promoted = catalog(items, {
      products: [
        { sku_id: 'sku_a', title: 'A' },
        { sku_id: 'sku_b', title: 'B', category: 'toys' },
        { sku_id: 'sku_c', title: 'C', category: 'books' },
      ],
      promotions: [
        {
          promo_id: 'p',
          condition: { categories: ['toys'], channels: ['web'] },
          percent: '10',
          stackable: true,
          priority: 0,
        },
      ],
    });
    const lines = request({
      channel: 'web',
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
        { sku_id: 'sku_c', quantity: 1 },
      ],
    });
    expect(priceBasket(promoted, lines).items_priced.map((line) => line.discount)).toEqual([
      '1.00',
      '1.00',
      '0.00',
    ]);
    expect(priceBasket(promoted, { ...lines, channel: 'app' }).discounts).toBe('0.00');
  });
});

describe('priceBasket: rounding scope (C3)', () => {
  const items = [item('sku_a', '0.335'), item('sku_b', '0.335'), item('sku_c', '0.335')];
  const lines = request({
    items: [
      { sku_id: 'sku_a', quantity: 1 },
      { sku_id: 'sku_b', quantity: 1 },
      { sku_id: 'sku_c', quantity: 1 },
    ],
  });

  it('line scope rounds each line (BANKERS) and adds them up', () => {
    const result = priceBasket(catalog(items), lines);
    expect(result.items_priced.map((line) => line.total)).toEqual(['0.34', '0.34', '0.34']);
    expect(result.total).toBe('1.02');
  });

  it('basket scope rounds the exact total and spreads the remainder over the first lines', () => {
    const basket = catalog(items, {
      basket_policy: { rounding_scope: 'basket', promo_stack_mode: 'best_single' },
    });
    const result = priceBasket(basket, lines);
    expect(result.items_priced.map((line) => line.total)).toEqual(['0.34', '0.33', '0.33']);
    expect([result.rounding_scope, result.subtotal, result.total]).toEqual(['basket', '1.00', '1.00']);
  });
});

describe('priceBasket: bundles (rule 5)', () => {
  it('splits the line total and tax over positions by their prices before discount', () => {
    const items = [
      item('p1', '30.00'),
      item('p2', '10.00'),
      item('box', '20.00', {
        pricing_model: 'bundle',
        bundle: {
          positions: [
            { sku_id: 'p1', quantity: 1 },
            { sku_id: 'p2', quantity: 1 },
          ],
        },
      }),
    ];
    const taxed = catalog(items, { tax_rules: { tax_rule_version: 1, rules: [taxRule()] } });
    const result = priceBasket(taxed, request({ items: [{ sku_id: 'box', quantity: 1 }] }));
    const line = result.items_priced[0];
    expect([line?.pricing_model, line?.total, line?.tax]).toEqual(['bundle', '23.80', '3.80']);
    expect(line?.bundle_allocation).toEqual([
      { sku_id: 'p1', quantity: 1, weight: '30', amount: '17.85', tax: '2.85' },
      { sku_id: 'p2', quantity: 1, weight: '10', amount: '5.95', tax: '0.95' },
    ]);
  });

  it('splits equally when every position is free', () => {
    const items = [
      item('p1', '0'),
      item('p2', '0'),
      item('box', '1.01', {
        pricing_model: 'bundle',
        bundle: {
          positions: [
            { sku_id: 'p1', quantity: 1 },
            { sku_id: 'p2', quantity: 1 },
          ],
        },
      }),
    ];
    const result = priceBasket(catalog(items), request({ items: [{ sku_id: 'box', quantity: 1 }] }));
    expect(result.items_priced[0]?.bundle_allocation?.map((share) => share.amount)).toEqual(['0.51', '0.50']);
  });
});

describe('priceBasket: fees', () => {
  it('spreads fees over the lines by their goods amounts', () => {
    const withFees = catalog([item('sku_a', '30.00'), item('sku_b', '10.00')], {
      fees: { payment: [{ percent: '1', fixed: { amount: '0.30', currency: 'USD' } }] },
    });
    const result = priceBasket(
      withFees,
      request({
        items: [
          { sku_id: 'sku_a', quantity: 1 },
          { sku_id: 'sku_b', quantity: 1 },
        ],
      }),
    );
    expect(result.fees).toEqual([{ kind: 'payment', amount: '0.70' }]);
    expect(result.items_priced.map((line) => line.fees)).toEqual(['0.53', '0.17']);
    expect(result.total).toBe('40.70');
  });

  it('spreads fees equally over free lines', () => {
    const free = catalog([item('sku_a', '0'), item('sku_b', '0')]);
    const result = priceBasket(
      free,
      request({
        items: [
          { sku_id: 'sku_a', quantity: 1 },
          { sku_id: 'sku_b', quantity: 1 },
        ],
        checkout_fees: [{ kind: 'handling', amount: '0.03' }],
      }),
    );
    expect(result.items_priced.map((line) => line.fees)).toEqual(['0.02', '0.01']);
    expect(result.total).toBe('0.03');
  });

  it('never quotes a negative total, whatever the checkout fees', () => {
    let total: string | undefined;
    try {
      total = priceBasket(
        catalog([item('sku_a', '1.00')]),
        request({ checkout_fees: [{ kind: 'goodwill', amount: '-5.00' }] }),
      ).total;
    } catch (error) {
      expect(error).toBeInstanceOf(PricingError);
      return;
    }
    expect(total?.startsWith('-')).toBe(false);
  });

  it('adds fees supplied at checkout in the basket currency', () => {
    const result = priceBasket(
      catalog([item('sku_a', '1.00')]),
      request({ currency: 'JPY', checkout_fees: [{ kind: 'gift_wrap', amount: '100' }] }),
    );
    expect([result.fees, result.total]).toEqual([[{ kind: 'gift_wrap', amount: '100' }], '250']);
  });
});

describe('priceBasket: threshold promotions (rule 6)', () => {
  const base = (overrides: Partial<PricingCatalog> = {}) =>
    catalog([item('sku_a', '10.00')], {
      fees: { shipping: { '*': { amount: '4.00', currency: 'USD' } } },
      ...overrides,
    });
  const eur = (quantity: number) => request({ currency: 'EUR', items: [{ sku_id: 'sku_a', quantity }] });

  it('applies when the basket total reaches the threshold, with the base-currency equivalent and fx_version', () => {
    const promoted = base({
      threshold_promotions: [
        {
          promo_id: 'ship_free',
          kind: 'free_shipping',
          threshold: { amount: '30.00', currency: 'USD' },
          condition: {},
        },
        {
          promo_id: 'gift',
          kind: 'bonus',
          bonus: 'tote_bag',
          threshold: { amount: '15.00', currency: 'EUR' },
          condition: { regions: ['US'] },
        },
      ],
    });
    const result = priceBasket(promoted, eur(3));
    expect(result.threshold_promotions).toEqual([
      {
        promo_id: 'ship_free',
        kind: 'free_shipping',
        threshold: '15.00',
        basket_total: '15.00',
        base_currency_equivalent: { amount: '30.00', currency: 'USD' },
        fx_version: 'fx_42',
      },
      {
        promo_id: 'gift',
        kind: 'bonus',
        bonus: 'tote_bag',
        threshold: '15.00',
        basket_total: '15.00',
        base_currency_equivalent: { amount: '30.00', currency: 'USD' },
        fx_version: 'fx_42',
      },
    ]);
    // Free shipping waives the shipping fee.
    expect([result.fees, result.total]).toEqual([[], '15.00']);
  });

  it('does not apply below the threshold or when its condition fails', () => {
    const promoted = base({
      threshold_promotions: [
        {
          promo_id: 'a',
          kind: 'free_shipping',
          threshold: { amount: '30.00', currency: 'USD' },
          condition: {},
        },
        {
          promo_id: 'b',
          kind: 'bonus',
          threshold: { amount: '1.00', currency: 'USD' },
          condition: { regions: ['DE'] },
        },
      ],
    });
    const result = priceBasket(promoted, eur(2));
    expect(result.threshold_promotions).toEqual([]);
    expect([result.fees, result.total]).toEqual([[{ kind: 'shipping', amount: '2.00' }], '12.00']);
  });

  it('applies the basket policy free-shipping thresholds', () => {
    const policy = base({
      basket_policy: {
        rounding_scope: 'line',
        promo_stack_mode: 'best_single',
        free_shipping_thresholds: [
          { amount: '100.00', currency: 'USD' },
          { amount: '20.00', currency: 'USD' },
        ],
      },
    });
    const reached = priceBasket(policy, eur(2));
    expect(reached.threshold_promotions).toEqual([
      {
        promo_id: 'basket_policy.free_shipping_thresholds[1]',
        kind: 'free_shipping',
        threshold: '10.00',
        basket_total: '10.00',
        base_currency_equivalent: { amount: '20.00', currency: 'USD' },
        fx_version: 'fx_42',
      },
    ]);
    expect(reached.fees).toEqual([]);
    expect(priceBasket(policy, eur(1)).fees).toEqual([{ kind: 'shipping', amount: '2.00' }]);
  });

  it('compares the total after discounts and with excluded taxes', () => {
    const taxed = base({
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ rates: { standard: [{ name: 'vat', rate: '0.5' }] } })],
      },
      basket_policy: {
        rounding_scope: 'line',
        promo_stack_mode: 'best_single',
        free_shipping_thresholds: [{ amount: '30.00', currency: 'USD' }],
      },
    });
    // 2 × 5 EUR + 50 % tax = 15 EUR = the threshold.
    expect(priceBasket(taxed, eur(2)).threshold_promotions).toHaveLength(1);
  });
});
