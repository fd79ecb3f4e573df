/**
 * Prices baskets of 1, 10 and 100 lines through the whole engine — FX conversion with markup and charm pricing,
 * tiered items and bundles, stacked capped promotions, a threshold promotion, tax (excluded, with a compound
 * component) and fees — and reports per-basket latency. Targets on this machine: median ≤ 0.25 ms for 10
 * lines and ≤ 2 ms for 100 lines. Synchronous timing around each call (no promise per operation).
 *
 * Each size is timed twice, side by side: `pricing.basket_<n>` is `priceBasket` (the plain path, which builds no
 * trace), `pricing.basket_<n>.explain` is `explainBasket` on the same basket (C28: every step recorded). The
 * two are interleaved per size so that both see the same machine state.
 */
import { explainBasket, priceBasket } from '../functions/domain/pricing/basket';
import type { BasketRequest, PriceItem, PricingCatalog } from '../functions/domain/pricing/types';
import { type BenchModule, type BenchResult, summarize, timeSync } from './harness';

const SKUS = 200;

const items: PriceItem[] = Array.from({ length: SKUS }, (_, index): PriceItem => {
  const sku_id = `sku_${String(index).padStart(3, '0')}`;
  const base_price = `${5 + (index % 90)}.${String((index * 37) % 100).padStart(2, '0')}`;
  if (index % 10 === 9) {
    return {
      sku_id,
      base_price: `${40 + (index % 30)}.00`,
      base_currency: 'EUR',
      tax_class: 'standard',
      pricing_model: 'bundle',
      bundle: {
        positions: [
          { sku_id: `sku_${String(index - 1).padStart(3, '0')}`, quantity: 1 },
          { sku_id: `sku_${String(index - 2).padStart(3, '0')}`, quantity: 2 },
        ],
      },
    };
  }
  if (index % 10 === 5) {
    return {
      sku_id,
      base_price,
      base_currency: 'EUR',
      tax_class: 'reduced',
      pricing_model: 'tiered',
      tiers: [
        { min_quantity: 1, unit_price: base_price },
        { min_quantity: 5, unit_price: `${4 + (index % 90)}.50` },
      ],
      min_price: '3.00',
    };
  }
  return {
    sku_id,
    base_price,
    base_currency: 'EUR',
    tax_class: 'standard',
    pricing_model: 'flat',
    min_price: '1.00',
  };
});

const catalog: PricingCatalog = {
  base_currency: 'EUR',
  pricelist: {
    pricelist_id: 'pl_bench',
    base_currency: 'EUR',
    effective_from: '2026-11-01T00:00:00.000Z',
    version: 3,
    items,
  },
  strategy: { kind: 'convert_at_display' },
  products: items.map((item, index) => ({
    sku_id: item.sku_id,
    title: item.sku_id,
    category: `cat_${index % 7}`,
  })),
  fx: {
    fx_version: 'fx_bench',
    base_currency: 'EUR',
    rates: [
      {
        pair: 'EUR→USD',
        rate: '1.0842',
        source: 'ecb',
        method: 'provider',
        precision: 4,
        effective_from: '2026-11-01T00:00:00.000Z',
        version: 'fx_bench',
      },
      {
        pair: 'EUR→GBP',
        rate: '0.8571',
        source: 'ecb',
        method: 'provider',
        precision: 4,
        effective_from: '2026-11-01T00:00:00.000Z',
        version: 'fx_bench',
      },
    ],
  },
  fx_markup_rules: [{ fx_markup_bps: 150 }, { region: 'US', fx_markup_bps: 120 }],
  tax_rules: {
    tax_rule_version: 9,
    rules: [
      {
        region: 'US',
        tax_mode: { type: 'GST', inclusion: 'excluded' },
        rates: {
          standard: [
            { name: 'state', rate: '0.0625' },
            { name: 'county', rate: '0.01', compound: true },
          ],
          reduced: [{ name: 'state', rate: '0.03' }],
        },
        rounding: { mode: 'HALF_UP', level: 'per_line' },
      },
    ],
  },
  display_rules: [{ region: 'US', currency_whitelist: ['USD'], charm_pricing: '.99' }],
  basket_policy: {
    rounding_scope: 'basket',
    promo_stack_mode: 'stack_all',
    free_shipping_thresholds: [{ amount: '150.00', currency: 'EUR' }],
  },
  promotions: [
    {
      promo_id: 'promo_cat',
      condition: { categories: ['cat_1', 'cat_3'] },
      percent: '10',
      stackable: true,
      priority: 2,
    },
    {
      promo_id: 'promo_us',
      condition: { regions: ['US'], currencies: ['USD'] },
      percent: '5',
      cap: { amount: '20.00', currency: 'EUR' },
      stackable: true,
      priority: 1,
    },
  ],
  threshold_promotions: [
    {
      promo_id: 'bonus_200',
      kind: 'bonus',
      bonus: 'gift_card_10',
      threshold: { amount: '200.00', currency: 'EUR' },
      condition: {},
    },
  ],
  fees: {
    payment: [{ method: 'card', percent: '1.9', fixed: { amount: '0.25', currency: 'EUR' } }],
    cross_border: { percent: '1', domestic_regions: ['DE', 'FR'] },
    shipping: { '*': { amount: '4.90', currency: 'EUR' } },
  },
};

const basket = (lines: number): BasketRequest => ({
  items: Array.from({ length: lines }, (_, index) => ({
    sku_id: items[(index * 13) % SKUS]?.sku_id ?? 'sku_000',
    quantity: 1 + (index % 6),
  })),
  region: 'US',
  currency: 'USD',
  buyer_type: 'consumer',
  payment: { method: 'card' },
});

const rows = (bench: string, summary: ReturnType<typeof summarize>): BenchResult[] => [
  { bench, metric: 'median', value: summary.median, unit: 'ms' },
  { bench, metric: 'p95', value: summary.p95, unit: 'ms' },
  { bench, metric: 'p99', value: summary.p99, unit: 'ms' },
  { bench, metric: 'ops/s', value: 1000 / summary.mean, unit: 'ops/s' },
];

const pricing: BenchModule = {
  name: 'pricing',
  description:
    'priceBasket and explainBasket side by side for baskets of 1, 10 and 100 lines (FX, charm, tiers, bundles, ' +
    'promotions, tax, fees)',
  run: async (ctx) => {
    const results: BenchResult[] = [];
    for (const [lines, iterations] of [
      [1, 20_000],
      [10, 5_000],
      [100, 500],
    ] as const) {
      const request = basket(lines);
      const sample = priceBasket(catalog, request);
      const explained = explainBasket(catalog, request);
      ctx.log(
        `${lines} lines: total ${sample.total} ${sample.currency}, ${sample.items_priced.length} priced lines, ` +
          `${explained.explain.steps.length} explain steps (${JSON.stringify(explained.explain).length} bytes)`,
      );
      const plain = summarize(
        timeSync(() => priceBasket(catalog, request), iterations, Math.ceil(iterations / 5)),
      );
      const explain = summarize(
        timeSync(() => explainBasket(catalog, request), iterations, Math.ceil(iterations / 5)),
      );
      ctx.log(
        `${lines} lines: median plain ${plain.median.toFixed(4)} ms, explain ${explain.median.toFixed(4)} ms ` +
          `(×${(explain.median / plain.median).toFixed(2)})`,
      );
      results.push(
        ...rows(`pricing.basket_${lines}`, plain),
        ...rows(`pricing.basket_${lines}.explain`, explain),
      );
    }
    return results;
  },
};

export default pricing;
