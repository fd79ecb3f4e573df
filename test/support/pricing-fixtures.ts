import { PricingError } from '../../functions/domain/pricing/errors';
import type {
  BasketRequest,
  FxRate,
  PriceItem,
  PricingCatalog,
  TaxRule,
} from '../../functions/domain/pricing/types';

/** A small catalog in one currency, no FX, no promotions, no fees: tests override what they exercise. */
export const simpleCatalog = (overrides: Partial<PricingCatalog> = {}): PricingCatalog => ({
  base_currency: 'USD',
  pricelist: {
    pricelist_id: 'pl_main',
    base_currency: 'USD',
    effective_from: '2026-01-01T00:00:00.000Z',
    version: 7,
    items: [
      {
        sku_id: 'sku_a',
        base_price: '1.08',
        base_currency: 'USD',
        tax_class: 'standard',
        pricing_model: 'flat',
      },
    ],
  },
  strategy: { kind: 'convert_at_display' },
  products: [{ sku_id: 'sku_a', title: 'A', category: 'cat_1' }],
  fx: { fx_version: 'fx_1', base_currency: 'USD', rates: [] },
  tax_rules: { tax_rule_version: 1, rules: [] },
  display_rules: [{ region: 'US', currency_whitelist: ['USD'] }],
  basket_policy: { rounding_scope: 'line', promo_stack_mode: 'best_single' },
  ...overrides,
});

export const taxRule = (overrides: Partial<TaxRule> = {}): TaxRule => ({
  region: 'US',
  tax_mode: { type: 'GST', inclusion: 'excluded' },
  rates: { standard: [{ name: 'sales_tax', rate: '0.19' }] },
  rounding: { mode: 'HALF_UP', level: 'per_line' },
  ...overrides,
});

/** A one-line US basket in USD; tests override what they exercise. */
export const basketRequest = (overrides: Partial<BasketRequest> = {}): BasketRequest => ({
  items: [{ sku_id: 'sku_a', quantity: 1 }],
  region: 'US',
  currency: 'USD',
  buyer_type: 'consumer',
  ...overrides,
});

/** The PricingError `fn` throws; any other outcome fails the test. */
export const refusal = (fn: () => unknown): PricingError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof PricingError) return error;
    throw error;
  }
  throw new Error('expected a PricingError');
};

/** A published rate with filler metadata. */
export const fxRate = (pair: string, value: string): FxRate => ({
  pair,
  rate: value,
  source: 'ecb',
  method: 'mid',
  precision: 6,
  effective_from: '2026-01-01T00:00:00.000Z',
  version: 'r1',
});

/** A flat USD price item of the standard tax class; tests override what they exercise. */
export const item = (sku: string, price: string, overrides: Partial<PriceItem> = {}): PriceItem => ({
  sku_id: sku,
  base_price: price,
  base_currency: 'USD',
  tax_class: 'standard',
  pricing_model: 'flat',
  ...overrides,
});
