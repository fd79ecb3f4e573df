/**
 * C28: one test per kind of explanation step, on small catalogs where each figure can be checked by hand, and
 * the plain path recording nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import { type ExplainStep, ExplainTrace } from '../../../../functions/domain/pricing/explain';
import type {
  BasketRequest,
  PriceItem,
  PricingCatalog,
  Promotion,
} from '../../../../functions/domain/pricing/types';
import { basketRequest, fxRate, item, simpleCatalog, taxRule } from '../../../support/pricing-fixtures';

/** A USD catalog with these items; EUR at 0.5 and BTC at 50 000 from USD; region US sells USD, EUR and BTC. */
const catalog = (items: PriceItem[], overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: { ...simpleCatalog().pricelist, items },
    products: items.map((entry) => ({ sku_id: entry.sku_id, title: entry.sku_id, category: 'cat_1' })),
    fx: {
      fx_version: 'fx_42',
      base_currency: 'USD',
      rates: [fxRate('USD→EUR', '0.5'), fxRate('BTC→USD', '50000')],
    },
    display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR', 'BTC'] }],
    ...overrides,
  });

const explain = (pricingCatalog: PricingCatalog, overrides: Partial<BasketRequest> = {}) =>
  explainBasket(pricingCatalog, basketRequest(overrides));

const stepsOf = (result: ReturnType<typeof explain>, rule: string, line?: number): ExplainStep[] =>
  result.explain.steps.filter((step) => step.rule === rule && (line === undefined || step.line === line));

const stepOf = (result: ReturnType<typeof explain>, rule: string, line?: number): ExplainStep => {
  const [found, ...more] = stepsOf(result, rule, line);
  if (!found || more.length > 0) throw new Error(`expected one ${rule} step, found ${1 + more.length}`);
  return found;
};

const promotion = (overrides: Partial<Promotion> = {}): Promotion => ({
  promo_id: 'p10',
  condition: {},
  percent: '10',
  stackable: true,
  priority: 1,
  ...overrides,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('explainBasket: the same calculation, explained', () => {
  it('gives exactly what priceBasket gives, with steps in the fixed order', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00'), item('sku_b', '3.33')], {
      promotions: [promotion()],
      tax_rules: { tax_rule_version: 3, rules: [taxRule()] },
    });
    const request = basketRequest({
      items: [
        { sku_id: 'sku_a', quantity: 2 },
        { sku_id: 'sku_b', quantity: 1 },
      ],
    });
    const result = explainBasket(pricingCatalog, request);
    expect(result.pricing).toEqual(priceBasket(pricingCatalog, request));
    expect([...new Set(result.explain.steps.map((step) => step.step))]).toEqual([
      'base',
      'discounts',
      'taxes',
      'fees',
      'rounding',
    ]);
  });

  it('records nothing on the plain path: priceBasket never builds a trace', () => {
    const add = vi.spyOn(ExplainTrace.prototype, 'add');
    const explanation = vi.spyOn(ExplainTrace.prototype, 'explanation');
    const pricingCatalog = catalog(
      [item('sku_a', '10.00', { pricing_model: 'tiered', tiers: [{ min_quantity: 1, unit_price: '9' }] })],
      {
        promotions: [promotion({ cap: { amount: '0.50', currency: 'USD' } })],
        tax_rules: {
          tax_rule_version: 3,
          rules: [taxRule({ rounding: { mode: 'HALF_UP', level: 'per_basket' } })],
        },
        threshold_promotions: [
          {
            promo_id: 't',
            kind: 'bonus',
            bonus: 'gift',
            threshold: { amount: '1', currency: 'USD' },
            condition: {},
          },
        ],
        fees: { payment: [{ percent: '1' }], shipping: { '*': { amount: '2', currency: 'USD' } } },
        overrides: [
          {
            override_id: 'o',
            target: { customer_group: 'g' },
            currency: 'EUR',
            price_or_markup: { price: '1' },
            priority: 1,
          },
        ],
      },
    );
    priceBasket(pricingCatalog, basketRequest({ currency: 'EUR', customer_groups: ['g'] }));
    expect(add).not.toHaveBeenCalled();
    expect(explanation).not.toHaveBeenCalled();
    explainBasket(pricingCatalog, basketRequest({ currency: 'EUR', customer_groups: ['g'] }));
    expect(add).toHaveBeenCalled();
  });
});

describe('explain: base (step 1)', () => {
  it('price_list names the list, its version and the strategy', () => {
    const step = stepOf(explain(catalog([item('sku_a', '10.00')])), 'price_list', 1);
    expect(step).toMatchObject({
      step: 'base',
      line: 1,
      input: { sku_id: 'sku_a', quantity: 1, strategy: 'convert_at_display', currency: 'USD' },
      output: { unit_price: '10', currency: 'USD' },
    });
    expect(step.detail).toContain('pl_main (version 7, USD, in force from 2026-01-01T00:00:00.000Z)');
  });

  it('price_list names the precomputed list of the currency (strategy price_lists)', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00')], {
      strategy: { kind: 'price_lists' },
      currency_pricelists: [
        {
          pricelist_id: 'pl_eur',
          base_currency: 'EUR',
          effective_from: '2026-01-01T00:00:00.000Z',
          effective_to: '2027-01-01T00:00:00.000Z',
          version: 2,
          items: [item('sku_a', '4.49', { base_currency: 'EUR' })],
        },
      ],
    });
    const result = explain(pricingCatalog, { currency: 'EUR' });
    const step = stepOf(result, 'price_list', 1);
    expect(step.output).toEqual({ unit_price: '4.49', currency: 'EUR' });
    expect(step.detail).toContain(
      'pl_eur (version 2, EUR, in force from 2026-01-01T00:00:00.000Z to 2027-01-01',
    );
    expect(stepsOf(result, 'fx_conversion')).toEqual([]);
  });

  it('tier names the tier the quantity reaches, or none', () => {
    const tiered = item('sku_a', '10.00', {
      pricing_model: 'tiered',
      tiers: [
        { min_quantity: 3, unit_price: '9.00' },
        { min_quantity: 5, unit_price: '8.00' },
      ],
    });
    const five = stepOf(explain(catalog([tiered]), { items: [{ sku_id: 'sku_a', quantity: 6 }] }), 'tier', 1);
    expect(five).toMatchObject({
      input: { unit_price: '10', quantity: 6 },
      output: { unit_price: '8', min_quantity: 5 },
    });
    const one = stepOf(explain(catalog([tiered])), 'tier', 1);
    expect(one.output).toEqual({ unit_price: '10', min_quantity: 0 });
    expect(one.detail).toContain('reaches no tier');
  });

  it('fx_conversion gives the pair, the published rate, the markup, the client rate and fx_version', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00')], { fx_markup_rules: [{ fx_markup_bps: 200 }] });
    const step = stepOf(explain(pricingCatalog, { currency: 'EUR' }), 'fx_conversion', 1);
    expect(step).toMatchObject({
      input: { unit_price: '10', currency: 'USD' },
      output: {
        unit_price: '5.1',
        currency: 'EUR',
        pair: 'USD→EUR',
        published_rate: '0.5',
        fx_markup_bps: 200,
        client_rate: '0.51',
        fx_version: 'fx_42',
      },
    });
    expect(step.detail).toContain('USD→EUR at the client rate 0.51');
  });

  it('charm gives the charm-priced amount, or says the price already ends so', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00'), item('sku_b', '1.98')], {
      display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR'], charm_pricing: '.99' }],
    });
    const result = explain(pricingCatalog, {
      currency: 'EUR',
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
      ],
    });
    expect(stepOf(result, 'charm', 1)).toMatchObject({
      input: { unit_price: '5' },
      output: { unit_price: '4.99' },
    });
    expect(stepOf(result, 'charm', 2).detail).toContain('already ends in .99');
  });

  it('override names the override, its target and priority', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00')], {
      overrides: [
        {
          override_id: 'o_markdown',
          target: { sku_id: 'sku_a' },
          currency: 'USD',
          price_or_markup: { markup_percent: '-20' },
          priority: 7,
        },
      ],
    });
    const step = stepOf(explain(pricingCatalog), 'override', 1);
    expect(step).toMatchObject({
      input: { unit_price: '10' },
      output: {
        unit_price: '8',
        override_id: 'o_markdown',
        target: { sku_id: 'sku_a' },
        priority: 7,
        markup_percent: '-20',
      },
    });
    expect(step.detail).toContain('priority 7');
  });

  it('bundle_split gives each position its weight and share', () => {
    const pricingCatalog = catalog([
      item('sku_a', '30.00'),
      item('sku_b', '10.00'),
      item('bundle', '35.00', {
        pricing_model: 'bundle',
        bundle: {
          positions: [
            { sku_id: 'sku_a', quantity: 1 },
            { sku_id: 'sku_b', quantity: 1 },
          ],
        },
      }),
    ]);
    const step = stepOf(
      explain(pricingCatalog, { items: [{ sku_id: 'bundle', quantity: 1 }] }),
      'bundle_split',
      1,
    );
    expect(step.output).toEqual({
      shares: [
        { sku_id: 'sku_a', share: '0.75' },
        { sku_id: 'sku_b', share: '0.25' },
      ],
    });
  });

  it('bundle_split of positions all priced zero: no share', () => {
    const pricingCatalog = catalog([
      item('free', '0.00'),
      item('bundle', '5.00', {
        pricing_model: 'bundle',
        bundle: { positions: [{ sku_id: 'free', quantity: 1 }] },
      }),
    ]);
    const step = stepOf(
      explain(pricingCatalog, { items: [{ sku_id: 'bundle', quantity: 1 }] }),
      'bundle_split',
      1,
    );
    expect(step.output).toEqual({ shares: [{ sku_id: 'free', share: '0' }] });
  });

  it('reverse_charge_net shows a business buyer the price net of included tax', () => {
    const pricingCatalog = catalog([item('sku_a', '11.90')], {
      tax_rules: {
        tax_rule_version: 1,
        rules: [
          taxRule({
            tax_mode: { type: 'VAT', inclusion: 'included' },
            business_buyers: 'reverse_charge',
          }),
        ],
      },
    });
    const result = explain(pricingCatalog, { buyer_type: 'business' });
    expect(stepOf(result, 'reverse_charge_net', 1)).toMatchObject({
      input: { unit_price: '11.9' },
      output: { unit_price: '10' },
    });
    expect(stepOf(result, 'line_amount', 1).input).toEqual({ unit_price: '10', quantity: 1 });
  });

  it('line_amount gives unit price × quantity and the min_price floor', () => {
    const step = stepOf(
      explain(catalog([item('sku_a', '2.50', { min_price: '2.00' })]), {
        items: [{ sku_id: 'sku_a', quantity: 3 }],
      }),
      'line_amount',
      1,
    );
    expect(step).toMatchObject({
      input: { unit_price: '2.5', quantity: 3 },
      output: { amount: '7.5', floor: '6', min_price: '2' },
    });
  });
});

describe('explain: discounts (step 2)', () => {
  const lines = [item('sku_a', '100.00'), item('sku_b', '50.00')];
  const both = {
    items: [
      { sku_id: 'sku_a', quantity: 1 },
      { sku_id: 'sku_b', quantity: 1 },
    ],
  };

  it('stacking under best_single names the winner and every candidate', () => {
    const pricingCatalog = catalog(lines, {
      basket_policy: { rounding_scope: 'line', promo_stack_mode: 'best_single' },
      promotions: [
        promotion({ promo_id: 'small', percent: '5' }),
        promotion({ promo_id: 'big', percent: '20' }),
        promotion({ promo_id: 'elsewhere', percent: '50', condition: { regions: ['FR'] } }),
      ],
    });
    const step = stepOf(explain(pricingCatalog, both), 'stacking');
    expect(step.input).toMatchObject({
      promo_stack_mode: 'best_single',
      eligible: ['big', 'small'],
      not_eligible: [{ promo_id: 'elsewhere', reason: 'only in FR' }],
    });
    expect(step.input.candidates).toEqual(
      expect.arrayContaining([
        { promo_ids: ['big'], discount: '30' },
        { promo_ids: ['small'], discount: '7.5' },
      ]),
    );
    expect(step.output).toEqual({ applied: ['big'], discount: '30' });
    expect(step.detail).toContain('big gives the largest discount');
  });

  it('stacking under stack_all says when a non-stackable promotion wins alone', () => {
    const pricingCatalog = catalog(lines, {
      basket_policy: { rounding_scope: 'line', promo_stack_mode: 'stack_all' },
      promotions: [
        promotion({ promo_id: 's1', percent: '5' }),
        promotion({ promo_id: 's2', percent: '5', priority: 2 }),
        promotion({ promo_id: 'alone', percent: '30', stackable: false }),
      ],
    });
    const result = explain(pricingCatalog, both);
    const step = stepOf(result, 'stacking');
    expect(step.output).toEqual({ applied: ['alone'], discount: '45' });
    expect(step.detail).toContain('non-stackable alone alone gives 45');
    expect(stepsOf(result, 'promotion').map((entry) => entry.input.promo_id)).toEqual(['alone']);
  });

  it('stacking under stack_all lists each stacked promotion in priority order, each on what is left', () => {
    const pricingCatalog = catalog(lines, {
      basket_policy: { rounding_scope: 'line', promo_stack_mode: 'stack_all' },
      promotions: [
        promotion({ promo_id: 'first', priority: 5 }),
        promotion({ promo_id: 'second', priority: 1 }),
      ],
    });
    const result = explain(pricingCatalog, { items: [{ sku_id: 'sku_a', quantity: 1 }] });
    expect(stepOf(result, 'stacking').output).toEqual({ applied: ['first', 'second'], discount: '19' });
    expect(stepOf(result, 'discount', 1).output).toEqual({
      amount: '81',
      discount: '19',
      promotions: [
        { promo_id: 'first', percent_of: '10', amount: '10', clamped_by_min_price: false },
        { promo_id: 'second', percent_of: '9', amount: '9', clamped_by_min_price: false },
      ],
    });
  });

  it('promotion gives its cap, in the basket currency and as set, and what the cap held back', () => {
    const pricingCatalog = catalog(lines, {
      promotions: [promotion({ percent: '10', cap: { amount: '5.00', currency: 'USD' } })],
    });
    const step = stepOf(explain(pricingCatalog, both), 'promotion');
    expect(step).toMatchObject({
      input: { promo_id: 'p10', percent: '10', cap: '5', cap_as_set: { amount: '5.00', currency: 'USD' } },
      output: { discount: '5', uncapped: '15', capped: true, lines_reached: [1, 2] },
    });
    expect(step.detail).toContain('capped at 5');
  });

  it('discount says when the min_price floor held a line back', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00', { min_price: '9.50' })], {
      promotions: [promotion({ percent: '10' })],
    });
    const result = explain(pricingCatalog);
    const step = stepOf(result, 'discount', 1);
    expect(step).toMatchObject({
      input: { amount: '10', floor: '9.5' },
      output: {
        amount: '9.5',
        discount: '0.5',
        promotions: [{ promo_id: 'p10', percent_of: '1', amount: '0.5', clamped_by_min_price: true }],
      },
    });
    expect(step.detail).toContain('stops at its floor 9.5');
    expect(stepOf(result, 'promotion').detail).toContain('min_price floor');
  });

  it('says when no promotion applies, and why each one does not', () => {
    const pricingCatalog = catalog(lines, {
      promotions: [
        promotion({ promo_id: 'eur', condition: { currencies: ['EUR'] } }),
        promotion({ promo_id: 'app', condition: { channels: ['app'] } }),
        promotion({ promo_id: 'gold', target: { customer_group: 'gold' } }),
      ],
    });
    const result = explain(pricingCatalog, both);
    expect(stepOf(result, 'stacking').input.not_eligible).toEqual([
      { promo_id: 'eur', reason: 'only in EUR' },
      { promo_id: 'app', reason: 'only on the channels app' },
      { promo_id: 'gold', reason: 'only for customer group gold' },
    ]);
    const web = explain(pricingCatalog, { ...both, channel: 'web' });
    expect(stepOf(web, 'stacking').input.not_eligible).toContainEqual({
      promo_id: 'app',
      reason: 'only on the channels app',
    });
    expect(stepOf(result, 'stacking').detail).toBe('best_single: no promotion applies');
    expect(stepOf(result, 'discount', 1).detail).toBe('no promotion reaches this line');
    const stackAll = { rounding_scope: 'line', promo_stack_mode: 'stack_all' } as const;
    expect(stepOf(explain(catalog(lines, { basket_policy: stackAll }), both), 'stacking').detail).toBe(
      'stack_all: no promotion applies',
    );
    const nowhere = catalog(lines, {
      basket_policy: stackAll,
      promotions: [promotion({ promo_id: 'other_sku', stackable: false, condition: { skus: ['sku_z'] } })],
    });
    expect(stepOf(explain(nowhere, both), 'stacking').detail).toBe(
      'stack_all: the non-stackable other_sku gives nothing',
    );
  });
});

describe('explain: taxes (step 3)', () => {
  it('tax_rule and tax: excluded tax with a compound component, per component and rounded per line', () => {
    const pricingCatalog = catalog([item('sku_a', '100.00')], {
      tax_rules: {
        tax_rule_version: 1,
        rules: [
          taxRule({
            rates: {
              standard: [
                { name: 'state', rate: '0.05' },
                { name: 'local', rate: '0.02', compound: true },
              ],
            },
          }),
        ],
      },
    });
    const result = explain(pricingCatalog);
    expect(stepOf(result, 'tax_rule')).toMatchObject({
      input: { region: 'US', taxable: '100' },
      output: {
        charged: true,
        tax_mode: { type: 'GST', inclusion: 'excluded' },
        rounding: { mode: 'HALF_UP', level: 'per_line' },
      },
    });
    expect(stepOf(result, 'tax', 1)).toMatchObject({
      input: { amount: '100', tax_class: 'standard' },
      output: {
        amount: '107.1',
        tax: '7.10',
        taxes: [
          {
            name: 'state',
            rate: '0.05',
            effective_rate: '0.05',
            included: false,
            exact: '5',
            amount: '5.00',
          },
          {
            name: 'local',
            rate: '0.02',
            effective_rate: '0.021',
            compound: true,
            included: false,
            exact: '2.1',
            amount: '2.10',
          },
        ],
      },
    });
  });

  it('tax: a class the rule does not tax', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00', { tax_class: 'exempt' })], {
      tax_rules: { tax_rule_version: 1, rules: [taxRule()] },
    });
    const step = stepOf(explain(pricingCatalog), 'tax', 1);
    expect(step.output).toEqual({ amount: '10', tax: '0.00', taxes: [] });
    expect(step.detail).toBe('class exempt is not taxed in US');
  });

  it('tax: included tax is extracted from the price, which stays what it was', () => {
    const pricingCatalog = catalog([item('sku_a', '11.90')], {
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ tax_mode: { type: 'VAT', inclusion: 'included' } })],
      },
    });
    const result = explain(pricingCatalog);
    expect(stepOf(result, 'tax_rule').detail).toContain('gross × r / (1 + r)');
    expect(stepOf(result, 'tax', 1).output).toMatchObject({ amount: '11.9', tax: '1.90' });
  });

  it('tax at per_unit: the tax of one unit, rounded, times the quantity', () => {
    const pricingCatalog = catalog([item('sku_a', '0.05')], {
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ rounding: { mode: 'HALF_UP', level: 'per_unit' } })],
      },
    });
    const step = stepOf(explain(pricingCatalog, { items: [{ sku_id: 'sku_a', quantity: 10 }] }), 'tax', 1);
    // 0.05 × 0.19 = 0.0095 → 0.01 per unit → 0.10 for ten.
    expect(step.output).toMatchObject({ tax: '0.10' });
    expect(step.detail).toContain('per_unit');
  });

  it('tax_basket_rounding: per_basket rounds once and spreads the tax over the lines', () => {
    const pricingCatalog = catalog([item('sku_a', '0.05'), item('sku_b', '0.05')], {
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ rounding: { mode: 'HALF_UP', level: 'per_basket' } })],
      },
    });
    const result = explain(pricingCatalog, {
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
      ],
    });
    // 2 × 0.0095 = 0.019 → 0.02, one unit each.
    expect(stepOf(result, 'tax_basket_rounding')).toMatchObject({
      input: { name: 'sales_tax', tax_class: 'standard', exact: '0.019' },
      output: {
        amount: '0.02',
        lines: [
          { line: 1, exact: '0.0095', amount: '0.01' },
          { line: 2, exact: '0.0095', amount: '0.01' },
        ],
      },
    });
  });

  it('tax_rule says why no tax is charged: no rule, reverse charge, or below the threshold', () => {
    const noRule = explain(catalog([item('sku_a', '10.00')]));
    expect(stepOf(noRule, 'tax_rule')).toMatchObject({ output: { charged: false } });
    expect(stepOf(noRule, 'tax_rule').detail).toContain('no tax rule');
    expect(stepOf(noRule, 'tax', 1).output).toEqual({ amount: '10', tax: '0.00', taxes: [] });

    const reverse = explain(
      catalog([item('sku_a', '10.00')], {
        tax_rules: { tax_rule_version: 1, rules: [taxRule({ business_buyers: 'reverse_charge' })] },
      }),
      { buyer_type: 'business' },
    );
    expect(stepOf(reverse, 'tax_rule').detail).toContain('reverse_charge');

    const below = explain(
      catalog([item('sku_a', '10.00')], {
        tax_rules: {
          tax_rule_version: 1,
          rules: [taxRule({ threshold: { amount: '50.00', currency: 'USD' } })],
        },
      }),
    );
    expect(stepOf(below, 'tax_rule')).toMatchObject({
      input: { taxable: '10', threshold: '50' },
      output: { charged: false },
    });
  });
});

describe('explain: fees and thresholds (step 4)', () => {
  const fees: PricingCatalog['fees'] = {
    payment: [
      { percent: '1', fixed: { amount: '0.30', currency: 'USD' } },
      { method: 'card', provider: 'amex', percent: '2' },
    ],
    cross_border: { percent: '1', domestic_regions: ['DE'] },
    network: { BTC: '0.00001' },
    shipping: { US: { amount: '5.00', currency: 'USD' }, '*': { amount: '9.00', currency: 'USD' } },
  };

  it('payment, cross_border and shipping: what each is charged on and its exact amount', () => {
    const result = explain(catalog([item('sku_a', '100.00')], { fees }), {
      payment: { method: 'card', provider: 'amex' },
      checkout_fees: [{ kind: 'gift_wrap', amount: '1.25' }],
    });
    expect(stepOf(result, 'payment')).toMatchObject({
      input: { basket_total: '100', percent: '2', method: 'card', provider: 'amex' },
      output: { amount: '2' },
    });
    expect(stepOf(result, 'cross_border')).toMatchObject({
      input: { percent: '1', region: 'US', domestic_regions: ['DE'] },
      output: { amount: '1' },
    });
    expect(stepOf(result, 'shipping')).toMatchObject({
      input: { region: 'US', as_set: { amount: '5.00', currency: 'USD' } },
      output: { amount: '5' },
    });
    expect(stepOf(result, 'checkout_fee')).toMatchObject({
      input: { kind: 'gift_wrap' },
      output: { amount: '1.25' },
    });
    const payment = stepOf(explain(catalog([item('sku_a', '100.00')], { fees })), 'payment');
    expect(payment.input).toMatchObject({ fixed: '0.3', fixed_as_set: { amount: '0.30', currency: 'USD' } });
    expect(payment.output).toEqual({ amount: '1.3' });
  });

  it('network: the crypto network fee', () => {
    const result = explain(catalog([item('sku_a', '100.00')], { fees }), { currency: 'BTC' });
    expect(stepOf(result, 'network')).toMatchObject({
      input: { currency: 'BTC' },
      output: { amount: '0.00001' },
    });
  });

  it('no_fee when nothing applies (a waived shipping is not “nothing”)', () => {
    expect(stepOf(explain(catalog([item('sku_a', '1.00')])), 'no_fee').output).toEqual({ amount: '0' });
    const waived = explain(
      catalog([item('sku_a', '100.00')], {
        fees: { shipping: { '*': { amount: '5.00', currency: 'USD' } } },
        basket_policy: {
          rounding_scope: 'line',
          promo_stack_mode: 'stack_all',
          free_shipping_thresholds: [{ amount: '10.00', currency: 'USD' }],
        },
      }),
    );
    expect(stepsOf(waived, 'no_fee')).toEqual([]);
    expect(stepOf(waived, 'shipping').detail).toContain('waived');
  });

  it('threshold_promotion: a bonus without a text', () => {
    const result = explain(
      catalog([item('sku_a', '10.00')], {
        threshold_promotions: [
          { promo_id: 'b', kind: 'bonus', threshold: { amount: '1', currency: 'USD' }, condition: {} },
        ],
      }),
    );
    expect(stepOf(result, 'threshold_promotion').output).not.toHaveProperty('bonus');
    expect(stepOf(result, 'threshold_promotion').detail).toMatch(/: bonus $/);
  });

  it('threshold_promotion and free_shipping_threshold: reached or not, and shipping waived', () => {
    const pricingCatalog = catalog([item('sku_a', '100.00')], {
      fees,
      basket_policy: {
        rounding_scope: 'line',
        promo_stack_mode: 'stack_all',
        free_shipping_thresholds: [{ amount: '80.00', currency: 'USD' }],
      },
      threshold_promotions: [
        {
          promo_id: 'bonus_50',
          kind: 'bonus',
          bonus: 'sticker',
          threshold: { amount: '50', currency: 'USD' },
          condition: {},
        },
        {
          promo_id: 'bonus_500',
          kind: 'bonus',
          bonus: 'poster',
          threshold: { amount: '500', currency: 'USD' },
          condition: {},
        },
        {
          promo_id: 'fr_only',
          kind: 'free_shipping',
          threshold: { amount: '1', currency: 'USD' },
          condition: { regions: ['FR'] },
        },
      ],
    });
    const result = explain(pricingCatalog);
    const thresholds = stepsOf(result, 'threshold_promotion');
    expect(thresholds.map((step) => [step.input.promo_id, step.output.applies, step.output.reached])).toEqual(
      [
        ['bonus_50', true, true],
        ['bonus_500', true, false],
        ['fr_only', false, false],
      ],
    );
    expect(thresholds[0]?.output).toMatchObject({
      base_currency_equivalent: { amount: '100.00', currency: 'USD' },
      fx_version: 'fx_42',
      bonus: 'sticker',
    });
    expect(stepOf(result, 'free_shipping_threshold')).toMatchObject({
      input: { basket_total: '100', threshold: '80', threshold_as_set: { amount: '80.00', currency: 'USD' } },
      output: { reached: true },
    });
    expect(stepOf(result, 'shipping')).toMatchObject({ output: { amount: '0', waived: true } });
    expect(result.pricing.fees.map((fee) => fee.kind)).not.toContain('shipping');
  });
});

describe('explain: rounding (step 5)', () => {
  it('rounding gives exactly the line; basket_rounding exactly the basket (rounding_scope line)', () => {
    const result = explain(catalog([item('sku_a', '1.005')]), { items: [{ sku_id: 'sku_a', quantity: 3 }] });
    const line = result.pricing.items_priced[0];
    expect(stepOf(result, 'rounding', 1)).toMatchObject({
      input: { unit_price: '1.005', base: '3.015', discount: '0' },
      output: {
        unit_price: line?.unit_price,
        base: line?.base,
        total: line?.total,
        display_price: line?.display_price,
      },
    });
    expect(stepOf(result, 'rounding', 1).output).not.toHaveProperty('remainder');
    expect(stepOf(result, 'basket_rounding')).toMatchObject({
      input: { rounding_scope: 'line', subtotal: '3.015' },
      output: { subtotal: '3.02', total: '3.02', remainder: { base: [], discounts: [] } },
    });
  });

  it('basket scope: says which lines got the remainder units', () => {
    const pricingCatalog = catalog([item('sku_a', '0.336'), item('sku_b', '0.336'), item('sku_c', '0.338')], {
      basket_policy: { rounding_scope: 'basket', promo_stack_mode: 'stack_all' },
    });
    const result = explain(pricingCatalog, {
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
        { sku_id: 'sku_c', quantity: 1 },
      ],
    });
    // 1.010 exactly → 1.01: floors 0.33 × 3 = 0.99; two units go to the largest remainders (0.008, then 0.006
    // of the first line by line order).
    expect(result.pricing.items_priced.map((line) => line.base)).toEqual(['0.34', '0.33', '0.34']);
    expect(stepOf(result, 'basket_rounding').output.remainder).toEqual({
      base: [
        { line: 1, units: 1 },
        { line: 3, units: 1 },
      ],
      discounts: [],
    });
    expect(stepOf(result, 'rounding', 1).output.remainder).toEqual({ base_units: 1, discount_units: 0 });
    expect(stepOf(result, 'rounding', 2).output.remainder).toEqual({ base_units: 0, discount_units: 0 });
  });

  it('says when a rounded discount is held back so the line keeps its min_price floor', () => {
    const pricingCatalog = catalog([item('sku_a', '10.0061', { min_price: '10.001' })], {
      promotions: [promotion({ percent: '50' })],
    });
    const step = stepOf(explain(pricingCatalog), 'rounding', 1);
    expect(step.output).toMatchObject({ base: '10.01', discount: '0.00', discount_clamped_to_floor: '0.01' });
    expect(step.detail).toContain('min_price floor');
  });

  it('bundle_allocation splits the line total over the positions', () => {
    const pricingCatalog = catalog([
      item('sku_a', '30.00'),
      item('sku_b', '10.00'),
      item('bundle', '35.00', {
        pricing_model: 'bundle',
        bundle: {
          positions: [
            { sku_id: 'sku_a', quantity: 1 },
            { sku_id: 'sku_b', quantity: 1 },
          ],
        },
      }),
    ]);
    const result = explain(pricingCatalog, { items: [{ sku_id: 'bundle', quantity: 1 }] });
    expect(stepOf(result, 'bundle_allocation', 1)).toMatchObject({
      input: { total: '35.00', tax: '0.00' },
      output: {
        positions: [
          { sku_id: 'sku_a', quantity: 1, amount: '26.25', tax: '0.00' },
          { sku_id: 'sku_b', quantity: 1, amount: '8.75', tax: '0.00' },
        ],
      },
    });
  });

  it('basket_rounding lists each fee exact and rounded, and the fee shares of each line', () => {
    const pricingCatalog = catalog([item('sku_a', '10.00'), item('sku_b', '20.00')], {
      fees: { payment: [{ percent: '1.5' }] },
    });
    const result = explain(pricingCatalog, {
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
      ],
    });
    expect(stepOf(result, 'basket_rounding')).toMatchObject({
      input: { fees: [{ kind: 'payment', amount: '0.45' }] },
      output: { fees: [{ kind: 'payment', amount: '0.45' }], total: '30.45' },
    });
    expect(stepOf(result, 'rounding', 1).output.fee_shares).toEqual([{ kind: 'payment', amount: '0.15' }]);
    expect(stepOf(result, 'rounding', 2).output.fee_shares).toEqual([{ kind: 'payment', amount: '0.30' }]);
  });
});
