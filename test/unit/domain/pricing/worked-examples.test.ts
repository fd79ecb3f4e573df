import { describe, expect, it } from 'vitest';
import { priceBasket } from '../../../../functions/domain/pricing/basket';
import type { PricingCatalog } from '../../../../functions/domain/pricing/types';
import { basketRequest, simpleCatalog, taxRule } from '../../../support/pricing-fixtures';

const request = basketRequest;

const withItem = (price: string, catalog: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: {
      pricelist_id: 'pl',
      base_currency: 'USD',
      effective_from: '2026-01-01T00:00:00.000Z',
      version: 1,
      items: [
        {
          sku_id: 'sku_a',
          base_price: price,
          base_currency: 'USD',
          tax_class: 'standard',
          pricing_model: 'flat',
        },
      ],
    },
    ...catalog,
  });

describe('calculation order: base price, discounts, taxes, fees, rounding', () => {
  // $100 item, 20 % promotion capped at $15, 10 % sales tax on top, payment fee 2 % + $0.30.
  const catalog = withItem('100.00', {
    promotions: [
      {
        promo_id: 'promo_capped',
        condition: {},
        percent: '20',
        cap: { amount: '15.00', currency: 'USD' },
        stackable: true,
        priority: 1,
      },
    ],
    tax_rules: {
      tax_rule_version: 1,
      rules: [taxRule({ rates: { standard: [{ name: 'sales_tax', rate: '0.10' }] } })],
    },
    fees: { payment: [{ percent: '2', fixed: { amount: '0.30', currency: 'USD' } }] },
  });

  it('follows the order: discount before tax, fee after tax', () => {
    const result = priceBasket(catalog, request());
    // Discount: min(20 % of 100, cap 15) = 15 → 85.00; tax 10 % of 85 = 8.50 → 93.50;
    // fee 2 % of 93.50 + 0.30 = 2.17 → total 95.67.
    expect(result.discounts).toBe('15.00');
    expect(result.taxes.map((tax) => tax.amount)).toEqual(['8.50']);
    expect(result.fees).toEqual([{ kind: 'payment', amount: '2.17' }]);
    expect(result.total).toBe('95.67');
  });

  it('differs from applying the discount after the tax', () => {
    // Tax first: 100 + 10 = 110; then the capped discount 15 → 95.00; fee 2 % + 0.30 = 2.20 → 97.20.
    expect(priceBasket(catalog, request()).total).not.toBe('97.20');
  });

  it('differs from charging the fee before the tax', () => {
    // Fee on the discounted net: 2 % of 85 + 0.30 = 2.00; tax on 85 = 8.50 → 85 + 2.00 + 8.50 = 95.50.
    expect(priceBasket(catalog, request()).total).not.toBe('95.50');
  });
});

describe('worked examples from real systems', () => {
  // Source: commercetools documentation, "Rounding" of tax amounts (tax rounding at line level vs unit level):
  // a $1.08 item, quantity 3, 19 % tax on top gives $3.86 rounded per line and $3.87 rounded per unit.
  it.each([
    ['per_line', '3.86', '0.62'],
    ['per_unit', '3.87', '0.63'],
  ] as const)('commercetools: $1.08 × 3 at 19 %% rounded %s → %s', (level, total, tax) => {
    const catalog = withItem('1.08', {
      tax_rules: { tax_rule_version: 1, rules: [taxRule({ rounding: { mode: 'HALF_UP', level } })] },
    });
    const result = priceBasket(catalog, request({ items: [{ sku_id: 'sku_a', quantity: 3 }] }));
    expect(result.total).toBe(total);
    expect(result.taxes[0]?.amount).toBe(tax);
  });

  // Source: UK VAT guidance on tax-inclusive pricing (HMRC VAT Notice 700, section 17: rounding of VAT on
  // tax-inclusive line prices): the price on the shelf is what the customer pays; VAT is extracted from it.
  it('tax-inclusive £38.23 × 10 at 20 % VAT: the total stays £382.30', () => {
    const catalog = simpleCatalog({
      base_currency: 'GBP',
      pricelist: {
        pricelist_id: 'pl_gb',
        base_currency: 'GBP',
        effective_from: '2026-01-01T00:00:00.000Z',
        version: 1,
        items: [
          {
            sku_id: 'sku_a',
            base_price: '38.23',
            base_currency: 'GBP',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ],
      },
      fx: { fx_version: 'fx_1', base_currency: 'GBP', rates: [] },
      display_rules: [{ region: 'GB', currency_whitelist: ['GBP'] }],
      tax_rules: {
        tax_rule_version: 1,
        rules: [
          taxRule({
            region: 'GB',
            tax_mode: { type: 'VAT', inclusion: 'included' },
            rates: { standard: [{ name: 'vat', rate: '0.20' }] },
          }),
        ],
      },
    });
    const result = priceBasket(
      catalog,
      request({ region: 'GB', currency: 'GBP', items: [{ sku_id: 'sku_a', quantity: 10 }] }),
    );
    expect(result.total).toBe('382.30');
    expect(result.subtotal).toBe('382.30');
    // 382.30 × 0.2 / 1.2 = 63.716… → 63.72, extracted, not added.
    expect(result.taxes).toEqual([
      { name: 'vat', tax_class: 'standard', rate: '0.20', amount: '63.72', included: true },
    ]);
  });

  // Source: point-of-sale rounding of line tax, half up: 15 % of $0.43 = 0.0645 → $0.06; of $4.84 = 0.726 → $0.73.
  it.each([
    ['0.43', '0.06'],
    ['4.84', '0.73'],
  ])('half-up line tax: 15 %% of $%s → $%s', (price, tax) => {
    const catalog = withItem(price, {
      tax_rules: {
        tax_rule_version: 1,
        rules: [taxRule({ rates: { standard: [{ name: 'sales_tax', rate: '0.15' }] } })],
      },
    });
    expect(priceBasket(catalog, request()).taxes[0]?.amount).toBe(tax);
  });
});
