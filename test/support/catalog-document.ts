import type { CatalogDocument } from '../../functions/schemas/catalog-document';

/** A small valid import document: EUR base, USD by conversion, DE with VAT included, US with tax excluded. */
export const minimalDocument = (overrides: Partial<CatalogDocument> = {}): CatalogDocument => ({
  settings: { pricing_strategy: 'convert_at_display' },
  products: [
    { sku_id: 'sku_game', title: 'Game', category: 'games' },
    { sku_id: 'sku_shirt', title: 'Shirt', category: 'merch' },
  ],
  pricelists: [
    {
      pricelist_id: 'pl_eur',
      base_currency: 'EUR',
      items: [
        {
          sku_id: 'sku_game',
          base_price: '59.99',
          base_currency: 'EUR',
          tax_class: 'standard',
          pricing_model: 'flat',
        },
        {
          sku_id: 'sku_shirt',
          base_price: '19.00',
          base_currency: 'EUR',
          tax_class: 'standard',
          pricing_model: 'flat',
        },
      ],
    },
  ],
  fx_rates: {
    base_currency: 'EUR',
    rates: [{ pair: 'EUR→USD', rate: '1.0842', source: 'ecb', method: 'provider', precision: 4 }],
  },
  tax_rules: [
    {
      region: 'DE',
      tax_mode: { type: 'VAT', inclusion: 'included' },
      rates: { standard: [{ name: 'vat', rate: '0.19' }] },
      rounding: { mode: 'HALF_UP', level: 'per_line' },
    },
    {
      region: 'US',
      tax_mode: { type: 'GST', inclusion: 'excluded' },
      rates: { standard: [{ name: 'sales_tax', rate: '0.0725' }] },
      rounding: { mode: 'HALF_UP', level: 'per_line' },
    },
  ],
  display_rules: [
    { region: 'DE', currency_whitelist: ['EUR'] },
    { region: 'US', currency_whitelist: ['USD'], charm_pricing: '.99' },
  ],
  basket_policies: [{ policy_id: 'default', rounding_scope: 'line', promo_stack_mode: 'best_single' }],
  ...overrides,
});
