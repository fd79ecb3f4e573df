import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CatalogDiff,
  type DiffableDocument,
  diffCatalog,
} from '../../../functions/domain/change-control/diff';
import {
  codesToAcknowledge,
  DEFAULT_GUARDRAILS,
  GUARDRAIL_CODES,
  type GuardrailFinding,
  type GuardrailSettings,
  guardrailFindings,
} from '../../../functions/domain/change-control/guardrails';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { minimalDocument } from '../../support/catalog-document';
import { edited, fxRate, itemOf, usdGameItem } from './documents';

/** The findings of `proposed` against `current` (the minimal document unless given). */
const findingsOf = (
  proposed: DiffableDocument,
  current: DiffableDocument | undefined = minimalDocument(),
  settings: GuardrailSettings = DEFAULT_GUARDRAILS,
): GuardrailFinding[] => guardrailFindings(proposed, diffCatalog(current, proposed), settings);

const withGamePrice = (price: string, start?: CatalogDocument) =>
  edited((document) => {
    itemOf(document, 'sku_game').base_price = price;
  }, start);

const withUsdRate = (rate: string, set: 'display' | 'settlement' = 'display') =>
  edited((document) => {
    if (set === 'display') document.fx_rates.rates = [fxRate('EUR→USD', rate)];
    else document.settlement_rates = [fxRate('EUR→USD', rate)];
  });

const codes = (findings: readonly GuardrailFinding[]) => findings.map((finding) => finding.code);

describe('guardrail settings', () => {
  it('defaults to 25 % for prices and 5 % for rates, and lists every code once', () => {
    expect(DEFAULT_GUARDRAILS).toEqual({ maxPriceMovePercent: '25', maxRateMovePercent: '5' });
    expect(GUARDRAIL_CODES).toEqual(['below_min_price', 'price_move', 'rate_move', 'tax_rate_change']);
  });
});

describe('guardrailFindings', () => {
  it('finds nothing in an unchanged document, nor in a first publication without min prices', () => {
    expect(findingsOf(minimalDocument())).toEqual([]);
    expect(
      findingsOf(minimalDocument(), undefined).filter((finding) => finding.code !== 'tax_rate_change'),
    ).toEqual([]);
  });

  describe('below_min_price', () => {
    it('flags a base price below its min_price, with the path of the item', () => {
      const proposed = edited((document) => {
        const item = itemOf(document, 'sku_shirt');
        item.min_price = '20.00';
      });
      expect(findingsOf(proposed)).toEqual([
        {
          code: 'below_min_price',
          path: '$.pricelists[0].items[1]',
          message: 'sku_shirt in pl_eur: 19 EUR is below its min_price 20.00',
        },
      ]);
    });

    it('does not flag a price at its min_price, or an item without one', () => {
      const atFloor = edited((document) => {
        itemOf(document, 'sku_shirt').min_price = '19';
      });
      expect(findingsOf(atFloor)).toEqual([]);
      const noFloor = edited((document) => {
        itemOf(document, 'sku_shirt').tiers = [{ min_quantity: 5, unit_price: '0.01' }];
      });
      expect(findingsOf(noFloor)).toEqual([]);
    });

    it('flags a tier price below min_price although the base price is above it, naming the lowest price', () => {
      const proposed = edited((document) => {
        const item = itemOf(document, 'sku_game');
        item.pricing_model = 'tiered';
        item.min_price = '45.00';
        item.tiers = [
          { min_quantity: 5, unit_price: '49.99' },
          { min_quantity: 10, unit_price: '39.99' },
          { min_quantity: 20, unit_price: '44.99' },
        ];
      });
      expect(findingsOf(proposed)).toEqual([
        {
          code: 'below_min_price',
          path: '$.pricelists[0].items[0]',
          message: 'sku_game in pl_eur: 39.99 EUR is below its min_price 45.00',
        },
      ]);
    });

    it('does not flag tiers at or above min_price', () => {
      const proposed = edited((document) => {
        const item = itemOf(document, 'sku_game');
        item.min_price = '45.00';
        item.tiers = [{ min_quantity: 5, unit_price: '45' }];
      });
      expect(findingsOf(proposed)).toEqual([]);
    });

    it('flags from the proposed document alone, in every price list, even when the price did not change', () => {
      const current = edited((document) => {
        document.pricelists.push({
          pricelist_id: 'pl_usd',
          base_currency: 'USD',
          items: [
            usdGameItem(),
            {
              sku_id: 'sku_shirt',
              base_price: '9.99',
              base_currency: 'USD',
              tax_class: 'standard',
              pricing_model: 'flat',
              min_price: '10.00',
            },
          ],
        });
      });
      expect(findingsOf(current, current)).toEqual([
        {
          code: 'below_min_price',
          path: '$.pricelists[1].items[1]',
          message: 'sku_shirt in pl_usd: 9.99 USD is below its min_price 10.00',
        },
      ]);
    });
  });

  describe('price_move', () => {
    it('flags a rise beyond the limit', () => {
      const current = withGamePrice('100.00');
      expect(findingsOf(withGamePrice('126.00'), current)).toEqual([
        {
          code: 'price_move',
          path: 'prices.changed[pl_eur/sku_game]',
          message: 'sku_game in pl_eur moves 26.00 % (100.00 → 126.00 EUR), beyond 25 %',
        },
      ]);
    });

    it('flags a fall beyond the limit (the limit is absolute)', () => {
      const current = withGamePrice('100.00');
      expect(codes(findingsOf(withGamePrice('74.99'), current))).toEqual(['price_move']);
    });

    it('does not flag a move at the limit, either way', () => {
      const current = withGamePrice('100.00');
      expect(findingsOf(withGamePrice('125.00'), current)).toEqual([]);
      expect(findingsOf(withGamePrice('75.00'), current)).toEqual([]);
      expect(findingsOf(withGamePrice('124.99'), current)).toEqual([]);
    });

    it('judges the exact move, not the rounded one: 199.99 → 249.99 is 25.00125 % (shown "25.00")', () => {
      const current = withGamePrice('199.99');
      const proposed = withGamePrice('249.99');
      expect(diffCatalog(current, proposed).prices.changed[0]?.move_percent).toBe('25.00');
      expect(findingsOf(proposed, current)).toEqual([
        {
          code: 'price_move',
          path: 'prices.changed[pl_eur/sku_game]',
          message: 'sku_game in pl_eur moves 25.00 % (199.99 → 249.99 EUR), beyond 25 %',
        },
      ]);
      // 200.00 → 250.00 is exactly 25 %: not beyond.
      expect(findingsOf(withGamePrice('250.00'), withGamePrice('200.00'))).toEqual([]);
    });

    it('uses the configured limit', () => {
      const current = withGamePrice('100.00');
      const settings = { ...DEFAULT_GUARDRAILS, maxPriceMovePercent: '10' };
      expect(codes(findingsOf(withGamePrice('110.01'), current, settings))).toEqual(['price_move']);
      expect(findingsOf(withGamePrice('110.00'), current, settings)).toEqual([]);
      expect(findingsOf(withGamePrice('90.00'), current, settings)).toEqual([]);
    });

    it('does not flag a move without a percentage (from zero, or a currency change)', () => {
      expect(findingsOf(withGamePrice('59.99'), withGamePrice('0.00'))).toEqual([]);
      const otherCurrency = edited((document) => {
        itemOf(document, 'sku_game').base_currency = 'JPY';
        itemOf(document, 'sku_game').base_price = '9800';
      });
      expect(findingsOf(otherCurrency)).toEqual([]);
    });

    it('does not flag added or removed prices', () => {
      const proposed = edited((document) => {
        document.pricelists[0]!.items = [
          {
            sku_id: 'sku_mug',
            base_price: '999.00',
            base_currency: 'EUR',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ];
      });
      expect(findingsOf(proposed)).toEqual([]);
    });
  });

  describe('rate_move', () => {
    it('flags a display rate move beyond the limit', () => {
      expect(findingsOf(withUsdRate('1.1500'))).toEqual([
        {
          code: 'rate_move',
          path: 'fx_rates[EUR→USD]',
          message: 'display rate EUR→USD moves 6.07 % (1.0842 → 1.1500), beyond 5 %',
        },
      ]);
    });

    it('flags a settlement rate move beyond the limit', () => {
      const current = withUsdRate('1.0000', 'settlement');
      expect(findingsOf(withUsdRate('0.9400', 'settlement'), current)).toEqual([
        {
          code: 'rate_move',
          path: 'fx_rates[EUR→USD]',
          message: 'settlement rate EUR→USD moves -6.00 % (1.0000 → 0.9400), beyond 5 %',
        },
      ]);
    });

    it('does not flag a rate move at the limit, and judges the exact move', () => {
      const current = withUsdRate('1.0000');
      expect(findingsOf(withUsdRate('1.0500'), current)).toEqual([]);
      expect(findingsOf(withUsdRate('0.9500'), current)).toEqual([]);
      // 5.004 % shows as "5.00" but is beyond 5 %.
      expect(codes(findingsOf(withUsdRate('1.05004'), current))).toEqual(['rate_move']);
    });

    it('uses the configured limit, and does not flag added or removed rates', () => {
      const settings = { ...DEFAULT_GUARDRAILS, maxRateMovePercent: '0.5' };
      expect(codes(findingsOf(withUsdRate('1.0900'), minimalDocument(), settings))).toEqual(['rate_move']);
      const added = edited((document) => {
        document.fx_rates.rates.push(fxRate('EUR→GBP', '0.85'));
        document.settlement_rates = [fxRate('EUR→USD', '2')];
      });
      expect(findingsOf(added)).toEqual([]);
      expect(findingsOf(minimalDocument(), added)).toEqual([]);
    });
  });

  describe('tax_rate_change', () => {
    it('flags any change of a tax rate, however small', () => {
      const proposed = edited((document) => {
        document.tax_rules[0]!.rates.standard = [{ name: 'vat', rate: '0.1901' }];
      });
      expect(findingsOf(proposed)).toEqual([
        {
          code: 'tax_rate_change',
          path: 'tax_rates[DE/standard/vat]',
          message: 'tax vat of standard in DE: 0.19 → 0.1901',
        },
      ]);
    });

    it('flags added and removed components', () => {
      const proposed = edited((document) => {
        document.tax_rules[0]!.rates.reduced = [{ name: 'vat', rate: '0.07' }];
        document.tax_rules[1]!.rates.standard = [];
      });
      expect(findingsOf(proposed)).toEqual([
        {
          code: 'tax_rate_change',
          path: 'tax_rates[DE/reduced/vat]',
          message: 'tax vat of reduced in DE: none → 0.07',
        },
        {
          code: 'tax_rate_change',
          path: 'tax_rates[US/standard/sales_tax]',
          message: 'tax sales_tax of standard in US: 0.0725 → removed',
        },
      ]);
    });
  });

  it('lists findings in order: min prices, price moves, rate moves, tax changes', () => {
    const current = withGamePrice('100.00');
    const proposed = edited((document) => {
      itemOf(document, 'sku_game').base_price = '50.00';
      itemOf(document, 'sku_shirt').min_price = '25.00';
      document.fx_rates.rates = [fxRate('EUR→USD', '2.0000')];
      document.tax_rules[0]!.rates.standard = [{ name: 'vat', rate: '0.20' }];
    }, current);
    expect(codes(findingsOf(proposed, current))).toEqual([
      'below_min_price',
      'price_move',
      'rate_move',
      'tax_rate_change',
    ]);
  });

  it('reads only the diff for moves: an entry without from or to is never beyond the limit', () => {
    const diff: CatalogDiff = {
      sections_changed: [],
      prices: {
        added: [],
        removed: [],
        changed: [
          { pricelist_id: 'pl', sku_id: 'a', currency: 'EUR', to: '10', move_percent: '90.00' },
          { pricelist_id: 'pl', sku_id: 'b', currency: 'EUR', from: '10', move_percent: '90.00' },
          { pricelist_id: 'pl', sku_id: 'c', currency: 'EUR', from: '10', to: '19' },
        ],
      },
      products: { added: [], removed: [], changed: [] },
      promotions: { added: [], removed: [], changed: [] },
      tax_rates: [],
      fx_rates: [
        { pair: 'EUR→USD', to: '2', move_percent: '90.00', set: 'display' },
        { pair: 'EUR→GBP', from: '1', to: '2', set: 'settlement' },
      ],
    };
    expect(guardrailFindings({}, diff, DEFAULT_GUARDRAILS)).toEqual([]);
  });

  it('flags a price move exactly when |to − from| / from exceeds the limit (property)', () => {
    const cents = fc.integer({ min: 1, max: 1_000_000 });
    fc.assert(
      fc.property(
        cents,
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 150 }),
        (from, to, limit) => {
          const price = (units: number) => (units / 100).toFixed(2);
          const current = withGamePrice(price(from));
          const proposed = withGamePrice(price(to));
          const findings = findingsOf(proposed, current, {
            ...DEFAULT_GUARDRAILS,
            maxPriceMovePercent: String(limit),
          });
          const beyond = BigInt(Math.abs(to - from)) * 100n > BigInt(limit) * BigInt(from);
          expect(codes(findings)).toEqual(beyond ? ['price_move'] : []);
        },
      ),
    );
  });
});

describe('codesToAcknowledge', () => {
  const finding = (code: GuardrailFinding['code'], path = '$'): GuardrailFinding => ({
    code,
    path,
    message: code,
  });

  it('is empty without findings', () => {
    expect(codesToAcknowledge([])).toEqual([]);
  });

  it('lists each code once, in the order of GUARDRAIL_CODES', () => {
    expect(
      codesToAcknowledge([
        finding('tax_rate_change', 'a'),
        finding('price_move', 'b'),
        finding('tax_rate_change', 'c'),
        finding('price_move', 'd'),
      ]),
    ).toEqual(['price_move', 'tax_rate_change']);
    expect(codesToAcknowledge(GUARDRAIL_CODES.map((code) => finding(code)).reverse())).toEqual([
      ...GUARDRAIL_CODES,
    ]);
  });

  it('is the set of codes of the findings (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...GUARDRAIL_CODES)), (found) => {
        const result = codesToAcknowledge(found.map((code) => finding(code)));
        expect(new Set(result)).toEqual(new Set(found));
        expect(result).toHaveLength(new Set(found).size);
        expect(result).toEqual(GUARDRAIL_CODES.filter((code) => result.includes(code)));
      }),
    );
  });
});
