import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CatalogDiff,
  type DiffableDocument,
  diffCatalog,
  movePercent,
} from '../../../functions/domain/change-control/diff';
import { dec } from '../../../functions/domain/money/decimal';
import { minimalDocument } from '../../support/catalog-document';
import { diffableArb, edited, fxRate, itemOf, percentagePromotion, usdGameItem } from './documents';

const EMPTY_DIFF: CatalogDiff = {
  sections_changed: [],
  prices: { added: [], removed: [], changed: [] },
  products: { added: [], removed: [], changed: [] },
  promotions: { added: [], removed: [], changed: [] },
  tax_rates: [],
  fx_rates: [],
};

describe('movePercent', () => {
  it('gives the signed move in percent with two decimals', () => {
    expect(movePercent('80.00', '70.00')).toBe('-12.50');
    expect(movePercent('100', '125')).toBe('25.00');
    expect(movePercent('59.99', '52.49')).toBe('-12.50');
    expect(movePercent('3', '4')).toBe('33.33');
    expect(movePercent('3', '2')).toBe('-33.33');
    expect(movePercent('19.99', '39.98')).toBe('100.00');
    expect(movePercent('10', '0')).toBe('-100.00');
  });

  it('gives 0.00 for no move, whatever the notation', () => {
    expect(movePercent('19.00', '19')).toBe('0.00');
    expect(movePercent('1.0842', '1.0842')).toBe('0.00');
  });

  it('gives 0.00, never "-0.00", for a fall that rounds to zero', () => {
    expect(movePercent('100', '99.999')).toBe('0.00');
    expect(movePercent('1.08420', '1.08419')).toBe('0.00');
    expect(movePercent('100', '100.001')).toBe('0.00');
  });

  it('has no percentage for a move from zero', () => {
    expect(movePercent('0', '5')).toBeUndefined();
    expect(movePercent('0.00', '4.99')).toBeUndefined();
    expect(movePercent('0', '0')).toBeUndefined();
  });

  it('rejects a string that is not a decimal', () => {
    expect(() => movePercent('1e2', '5')).toThrow('not a decimal amount');
  });

  it('is the exact move within half a hundredth, signed as the move (property)', () => {
    const cents = fc
      .integer({ min: 0, max: 10_000_000 })
      .map((units) => dec(units.toString()).div(100).toFixed(2));
    fc.assert(
      fc.property(cents, cents, (from, to) => {
        const move = movePercent(from, to);
        if (dec(from).isZero()) {
          expect(move).toBeUndefined();
          return;
        }
        expect(move).toMatch(/^-?\d+\.\d{2}$/);
        const exact = dec(to).minus(from).div(from).times(100);
        expect(dec(move!).minus(exact).abs().lte('0.005')).toBe(true);
        if (dec(move!).isZero()) expect(move).toBe('0.00');
        else expect(move!.startsWith('-')).toBe(dec(to).lt(from));
      }),
    );
  });
});

describe('diffCatalog: prices', () => {
  it('lists a changed price with its signed move', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_game').base_price = '52.49';
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.prices).toEqual({
      added: [],
      removed: [],
      changed: [
        {
          pricelist_id: 'pl_eur',
          sku_id: 'sku_game',
          currency: 'EUR',
          from: '59.99',
          to: '52.49',
          move_percent: '-12.50',
        },
      ],
    });
    expect(diff.sections_changed).toEqual(['pricelists']);
  });

  it('lists a rise with a positive move', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '23.75';
    });
    expect(diffCatalog(minimalDocument(), proposed).prices.changed).toEqual([
      {
        pricelist_id: 'pl_eur',
        sku_id: 'sku_shirt',
        currency: 'EUR',
        from: '19.00',
        to: '23.75',
        move_percent: '25.00',
      },
    ]);
  });

  it('gives a move from zero no percentage', () => {
    const current = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '0.00';
    });
    const proposed = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '4.99';
    });
    const [change, ...others] = diffCatalog(current, proposed).prices.changed;
    expect(others).toEqual([]);
    expect(change).toEqual({
      pricelist_id: 'pl_eur',
      sku_id: 'sku_shirt',
      currency: 'EUR',
      from: '0.00',
      to: '4.99',
    });
    expect(change).not.toHaveProperty('move_percent');
  });

  it('lists a currency change with the new currency and no percentage', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_game').base_currency = 'USD';
    });
    const [change] = diffCatalog(minimalDocument(), proposed).prices.changed;
    expect(change).toEqual({
      pricelist_id: 'pl_eur',
      sku_id: 'sku_game',
      currency: 'USD',
      from: '59.99',
      to: '59.99',
    });
    expect(change).not.toHaveProperty('move_percent');

    const repriced = edited((document) => {
      itemOf(document, 'sku_game').base_currency = 'USD';
      itemOf(document, 'sku_game').base_price = '64.99';
    });
    expect(diffCatalog(minimalDocument(), repriced).prices.changed).toEqual([
      { pricelist_id: 'pl_eur', sku_id: 'sku_game', currency: 'USD', from: '59.99', to: '64.99' },
    ]);
  });

  it('compares prices by value: "19.00" → "19" is no price change, though the section differs', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '19';
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.prices).toEqual(EMPTY_DIFF.prices);
    expect(diff.sections_changed).toEqual(['pricelists']);
  });

  it('lists added and removed prices, per price list', () => {
    const proposed = edited((document) => {
      document.pricelists[0]!.items = document.pricelists[0]!.items.filter(
        (item) => item.sku_id !== 'sku_shirt',
      );
      document.pricelists[0]!.items.push({
        sku_id: 'sku_mug',
        base_price: '9.50',
        base_currency: 'EUR',
        tax_class: 'standard',
        pricing_model: 'flat',
      });
      document.pricelists.push({
        pricelist_id: 'pl_usd',
        base_currency: 'USD',
        items: [
          {
            sku_id: 'sku_shirt',
            base_price: '21.00',
            base_currency: 'USD',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ],
      });
    });
    expect(diffCatalog(minimalDocument(), proposed).prices).toEqual({
      added: [
        { pricelist_id: 'pl_eur', sku_id: 'sku_mug', currency: 'EUR', to: '9.50' },
        { pricelist_id: 'pl_usd', sku_id: 'sku_shirt', currency: 'USD', to: '21.00' },
      ],
      removed: [{ pricelist_id: 'pl_eur', sku_id: 'sku_shirt', currency: 'EUR', from: '19.00' }],
      changed: [],
    });
  });

  it('lists every price of a removed price list as removed', () => {
    const current = edited((document) => {
      document.pricelists.push({
        pricelist_id: 'pl_usd',
        base_currency: 'USD',
        items: [usdGameItem()],
      });
    });
    expect(diffCatalog(current, minimalDocument()).prices).toEqual({
      added: [],
      removed: [{ pricelist_id: 'pl_usd', sku_id: 'sku_game', currency: 'USD', from: '64.99' }],
      changed: [],
    });
  });

  it('reports tier and min_price edits only as a changed pricelists section', () => {
    const proposed = edited((document) => {
      const item = itemOf(document, 'sku_game');
      item.pricing_model = 'tiered';
      item.tiers = [{ min_quantity: 10, unit_price: '49.99' }];
      item.min_price = '40.00';
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.prices).toEqual(EMPTY_DIFF.prices);
    expect(diff.sections_changed).toEqual(['pricelists']);
  });
});

describe('diffCatalog: products and promotions', () => {
  it('lists products added, removed and changed by sku_id', () => {
    const proposed = edited((document) => {
      document.products = [
        { sku_id: 'sku_game', title: 'Game (Deluxe)', category: 'games' },
        { sku_id: 'sku_mug', title: 'Mug' },
      ];
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.products).toEqual({ added: ['sku_mug'], removed: ['sku_shirt'], changed: ['sku_game'] });
    expect(diff.sections_changed).toEqual(['products']);
  });

  it('does not list a product whose content is equal up to key order', () => {
    const proposed = edited((document) => {
      document.products = document.products.map(({ category, title, sku_id }) =>
        category === undefined ? { title, sku_id } : { category, title, sku_id },
      );
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.products).toEqual(EMPTY_DIFF.products);
    expect(diff.sections_changed).toEqual([]);
  });

  it('lists promotions added, removed and changed by promo_id, the section absent on either side', () => {
    const withPromotions = edited((document) => {
      document.promotions = [percentagePromotion('spring'), percentagePromotion('summer')];
    });
    expect(diffCatalog(minimalDocument(), withPromotions).promotions).toEqual({
      added: ['spring', 'summer'],
      removed: [],
      changed: [],
    });
    expect(diffCatalog(withPromotions, minimalDocument()).promotions).toEqual({
      added: [],
      removed: ['spring', 'summer'],
      changed: [],
    });
    const edit = edited((document) => {
      document.promotions = [percentagePromotion('spring', '15'), percentagePromotion('autumn')];
    });
    const diff = diffCatalog(withPromotions, edit);
    expect(diff.promotions).toEqual({ added: ['autumn'], removed: ['summer'], changed: ['spring'] });
    expect(diff.sections_changed).toEqual(['promotions']);
  });
});

describe('diffCatalog: tax rates', () => {
  it('lists a changed component with its old and new rate', () => {
    const proposed = edited((document) => {
      document.tax_rules[0]!.rates.standard = [{ name: 'vat', rate: '0.16' }];
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.tax_rates).toEqual([
      { region: 'DE', tax_class: 'standard', component: 'vat', from: '0.19', to: '0.16' },
    ]);
    expect(diff.sections_changed).toEqual(['tax_rules']);
  });

  it('lists added components and classes without `from`, removed ones without `to`', () => {
    const proposed = edited((document) => {
      document.tax_rules[0]!.rates.standard = [
        { name: 'vat', rate: '0.19' },
        { name: 'levy', rate: '0.01' },
      ];
      document.tax_rules[0]!.rates.reduced = [{ name: 'vat', rate: '0.07' }];
      document.tax_rules = document.tax_rules.filter((rule) => rule.region !== 'US');
    });
    const changes = diffCatalog(minimalDocument(), proposed).tax_rates;
    expect(changes).toEqual([
      { region: 'DE', tax_class: 'standard', component: 'levy', to: '0.01' },
      { region: 'DE', tax_class: 'reduced', component: 'vat', to: '0.07' },
      { region: 'US', tax_class: 'standard', component: 'sales_tax', from: '0.0725' },
    ]);
    expect(changes[0]).not.toHaveProperty('from');
    expect(changes[2]).not.toHaveProperty('to');
  });

  it('compares rates by value: "0.19" → "0.190" is no tax change', () => {
    const proposed = edited((document) => {
      document.tax_rules[0]!.rates.standard = [{ name: 'vat', rate: '0.190' }];
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.tax_rates).toEqual([]);
    expect(diff.sections_changed).toEqual(['tax_rules']);
  });

  it('counts a component without a rate (input the schema would refuse) as rate 0 instead of throwing', () => {
    const withoutRate = (region: string) =>
      ({ tax_rules: [{ region, rates: { standard: [{ name: 'vat' }] } }] }) as unknown as DiffableDocument;
    const zero: DiffableDocument = {
      tax_rules: [{ region: 'DE', rates: { standard: [{ name: 'vat', rate: '0' }] } }],
    };
    const vat: DiffableDocument = {
      tax_rules: [{ region: 'DE', rates: { standard: [{ name: 'vat', rate: '0.19' }] } }],
    };
    expect(diffCatalog(withoutRate('DE'), zero).tax_rates).toEqual([]);
    expect(diffCatalog(zero, withoutRate('DE')).tax_rates).toEqual([]);
    expect(diffCatalog(vat, withoutRate('DE')).tax_rates).toEqual([
      { region: 'DE', tax_class: 'standard', component: 'vat', from: '0.19', to: undefined },
    ]);
  });
});

describe('diffCatalog: exchange rates', () => {
  it('lists a display rate change with its move', () => {
    const proposed = edited((document) => {
      document.fx_rates.rates = [fxRate('EUR→USD', '1.1384')];
    });
    const diff = diffCatalog(minimalDocument(), proposed);
    expect(diff.fx_rates).toEqual([
      { pair: 'EUR→USD', from: '1.0842', to: '1.1384', move_percent: '5.00', set: 'display' }, // 4.9991 %
    ]);
    expect(diff.sections_changed).toEqual(['fx_rates']);
  });

  it('lists settlement rates added, changed and removed, after the display rates', () => {
    const current = edited((document) => {
      document.settlement_rates = [fxRate('EUR→USD', '1.0800'), fxRate('EUR→GBP', '0.8500')];
    });
    const proposed = edited((document) => {
      document.fx_rates.rates = [fxRate('EUR→USD', '1.0842'), fxRate('EUR→JPY', '157.30')];
      document.settlement_rates = [fxRate('EUR→USD', '1.0000'), fxRate('EUR→CHF', '0.9500')];
    });
    expect(diffCatalog(current, proposed).fx_rates).toEqual([
      { pair: 'EUR→JPY', to: '157.30', set: 'display' },
      { pair: 'EUR→USD', from: '1.0800', to: '1.0000', move_percent: '-7.41', set: 'settlement' },
      { pair: 'EUR→CHF', to: '0.9500', set: 'settlement' },
      { pair: 'EUR→GBP', from: '0.8500', set: 'settlement' },
    ]);
  });

  it('lists a removed display rate, and the whole rate set when fx_rates is absent on one side', () => {
    const proposed = edited((document) => {
      document.fx_rates.rates = [];
    });
    expect(diffCatalog(minimalDocument(), proposed).fx_rates).toEqual([
      { pair: 'EUR→USD', from: '1.0842', set: 'display' },
    ]);
    const { fx_rates: _dropped, ...withoutRates } = minimalDocument();
    expect(diffCatalog(withoutRates, minimalDocument()).fx_rates).toEqual([
      { pair: 'EUR→USD', to: '1.0842', set: 'display' },
    ]);
  });

  it('compares rates by value and gives a rate from zero no percentage', () => {
    const trailingZero = edited((document) => {
      document.settlement_rates = [fxRate('EUR→USD', '1.08420')];
    });
    const same = edited((document) => {
      document.settlement_rates = [fxRate('EUR→USD', '1.0842')];
    });
    expect(diffCatalog(trailingZero, same).fx_rates).toEqual([]);

    const fromZero = diffCatalog(
      { settlement_rates: [{ pair: 'EUR→USD', rate: '0' }] },
      { settlement_rates: [{ pair: 'EUR→USD', rate: '1.08' }] },
    ).fx_rates;
    expect(fromZero).toEqual([{ pair: 'EUR→USD', from: '0', to: '1.08', set: 'settlement' }]);
    expect(fromZero[0]).not.toHaveProperty('move_percent');
  });
});

describe('diffCatalog: sections', () => {
  it('ignores effective_from', () => {
    const current = minimalDocument({ effective_from: '2026-01-01T00:00:00Z' });
    const proposed = minimalDocument({ effective_from: '2026-06-01T00:00:00Z' });
    expect(diffCatalog(current, proposed)).toEqual(EMPTY_DIFF);
    expect(diffCatalog(minimalDocument(), proposed)).toEqual(EMPTY_DIFF);
    expect(diffCatalog(current, minimalDocument())).toEqual(EMPTY_DIFF);
  });

  it('lists every changed top-level section, sorted, including added and removed ones', () => {
    const current = minimalDocument({ promotions: [percentagePromotion('spring')] });
    const proposed = edited((document) => {
      document.settings = { pricing_strategy: 'price_lists' };
      document.display_rules = [{ region: 'DE', currency_whitelist: ['EUR', 'USD'] }];
      document.limits = [{ max_winnings: { amount: '1000', currency: 'EUR' } }];
    });
    expect(diffCatalog(current, proposed).sections_changed).toEqual([
      'display_rules',
      'limits',
      'promotions',
      'settings',
    ]);
  });

  it('diffs against nothing published: every section and entry is new', () => {
    const document = minimalDocument({ effective_from: '2026-01-01T00:00:00Z' });
    const diff = diffCatalog(undefined, document);
    expect(diff.sections_changed).toEqual(
      Object.keys(document)
        .filter((key) => key !== 'effective_from')
        .sort(),
    );
    expect(diff.prices).toEqual({
      added: [
        { pricelist_id: 'pl_eur', sku_id: 'sku_game', currency: 'EUR', to: '59.99' },
        { pricelist_id: 'pl_eur', sku_id: 'sku_shirt', currency: 'EUR', to: '19.00' },
      ],
      removed: [],
      changed: [],
    });
    expect(diff.products).toEqual({ added: ['sku_game', 'sku_shirt'], removed: [], changed: [] });
    expect(diff.promotions).toEqual(EMPTY_DIFF.promotions);
    expect(diff.tax_rates).toEqual([
      { region: 'DE', tax_class: 'standard', component: 'vat', to: '0.19' },
      { region: 'US', tax_class: 'standard', component: 'sales_tax', to: '0.0725' },
    ]);
    expect(diff.fx_rates).toEqual([{ pair: 'EUR→USD', to: '1.0842', set: 'display' }]);
  });

  it('diffs an empty document against an empty one as nothing', () => {
    expect(diffCatalog({}, {})).toEqual(EMPTY_DIFF);
    expect(diffCatalog(undefined, {})).toEqual(EMPTY_DIFF);
  });
});

describe('diffCatalog: properties', () => {
  it('finds nothing between a document and itself (or a deep copy of it)', () => {
    fc.assert(
      fc.property(diffableArb, (document) => {
        expect(diffCatalog(document, document)).toEqual(EMPTY_DIFF);
        expect(diffCatalog(document, structuredClone(document))).toEqual(EMPTY_DIFF);
      }),
    );
  });

  it('finds nothing in the minimal document against a copy with another effective_from', () => {
    expect(
      diffCatalog(minimalDocument(), minimalDocument({ effective_from: '2027-01-01T00:00:00Z' })),
    ).toEqual(EMPTY_DIFF);
  });

  it('lists as changed exactly the sections that differ, never effective_from', () => {
    fc.assert(
      fc.property(diffableArb, diffableArb, (current, proposed) => {
        const diff = diffCatalog(current, proposed);
        expect(diff.sections_changed).not.toContain('effective_from');
        expect([...diff.sections_changed].sort()).toEqual(diff.sections_changed);
        for (const section of new Set([...Object.keys(current), ...Object.keys(proposed)])) {
          if (section === 'effective_from') continue;
          const differs = JSON.stringify(current[section]) !== JSON.stringify(proposed[section]);
          if (!differs) expect(diff.sections_changed).not.toContain(section);
        }
        // Whatever the entries say changed lies in a changed section.
        if (diff.prices.added.length + diff.prices.removed.length + diff.prices.changed.length > 0) {
          expect(diff.sections_changed).toContain('pricelists');
        }
        if (diff.tax_rates.length > 0) expect(diff.sections_changed).toContain('tax_rules');
      }),
    );
  });

  it('swapping the two documents swaps added and removed', () => {
    fc.assert(
      fc.property(diffableArb, diffableArb, (a, b) => {
        const forward = diffCatalog(a, b);
        const backward = diffCatalog(b, a);
        expect([...backward.products.added].sort()).toEqual([...forward.products.removed].sort());
        expect([...backward.promotions.removed].sort()).toEqual([...forward.promotions.added].sort());
        expect(backward.prices.added.length).toBe(forward.prices.removed.length);
        expect(backward.prices.changed.length).toBe(forward.prices.changed.length);
        expect(backward.tax_rates.length).toBe(forward.tax_rates.length);
        expect(backward.fx_rates.length).toBe(forward.fx_rates.length);
        expect(backward.sections_changed).toEqual(forward.sections_changed);
      }),
    );
  });
});
