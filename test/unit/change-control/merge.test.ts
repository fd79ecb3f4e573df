import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Document, type MergeResult, mergeChange } from '../../../functions/domain/change-control/merge';
import { canonicalJson, type Json } from '../../../functions/domain/money/canonical';
import { minimalDocument } from '../../support/catalog-document';
import { diffableArb, edited, editedArb, fxRate, itemOf, percentagePromotion } from './documents';

/** The document without `effective_from`, which a merge never carries. */
const withoutEffectiveFrom = (document: Document): Record<string, unknown> => {
  const { effective_from: _ignored, ...rest } = document;
  return rest;
};

const merged = (result: MergeResult): Record<string, unknown> => {
  if (!('merged' in result)) throw new Error(`conflicts: ${result.conflicts.join(', ')}`);
  return result.merged;
};

const rate = (pair: string, value: string) => ({ pair, rate: value });

/** Equal content, whatever the key order (as the merge compares). */
const same = (a: unknown, b: unknown): boolean =>
  a === b || (a !== undefined && b !== undefined && canonicalJson(a as Json) === canonicalJson(b as Json));

describe('mergeChange: sections', () => {
  const base = minimalDocument();

  it('takes what is in force for a section the change left as it was', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_game').base_price = '49.99';
    });
    const current = edited((document) => {
      document.display_rules = [{ region: 'DE', currency_whitelist: ['EUR', 'USD'] }];
    });
    expect(merged(mergeChange(base, proposed, current))).toEqual({
      ...current,
      pricelists: proposed.pricelists,
    });
  });

  it("takes the change's section when only the change touched it", () => {
    const proposed = edited((document) => {
      document.products.push({ sku_id: 'sku_mug', title: 'Mug' });
    });
    expect(merged(mergeChange(base, proposed, base))).toEqual(proposed);
  });

  it('accepts a section both changed identically', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '21.00';
    });
    const current = structuredClone(proposed);
    expect(merged(mergeChange(base, proposed, current))).toEqual(proposed);
  });

  it('compares sections by content, not key order', () => {
    const proposed = edited((document) => {
      document.settings = { pricing_strategy: 'mixed', mixed_top_currencies: ['EUR'] };
    });
    const current = edited((document) => {
      document.settings = { mixed_top_currencies: ['EUR'], pricing_strategy: 'mixed' };
    });
    expect(merged(mergeChange(base, proposed, current))).toEqual(proposed);
  });

  it('is a conflict, listing the path, when both changed a section differently', () => {
    const proposed = edited((document) => {
      itemOf(document, 'sku_game').base_price = '49.99';
    });
    const current = edited((document) => {
      itemOf(document, 'sku_game').base_price = '54.99';
    });
    expect(mergeChange(base, proposed, current)).toEqual({ conflicts: ['pricelists'] });
  });

  it('lists every conflicting section', () => {
    const proposed = edited((document) => {
      document.products = [];
      document.settings = { pricing_strategy: 'mixed' };
      document.tax_rules = [];
    });
    const current = edited((document) => {
      document.products = [{ sku_id: 'sku_game', title: 'Game' }];
      document.settings = { pricing_strategy: 'price_lists' };
      document.tax_rules = [];
    });
    const result = mergeChange(base, proposed, current);
    expect('conflicts' in result && [...result.conflicts].sort()).toEqual(['products', 'settings']);
  });

  it('removes a section the change removed', () => {
    const withPromotions = minimalDocument({ promotions: [percentagePromotion('spring')] });
    const proposed = edited((document) => {
      delete document.promotions;
    }, withPromotions);
    const current = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '17.00';
    }, withPromotions);
    const result = merged(mergeChange(withPromotions, proposed, current));
    expect(result).not.toHaveProperty('promotions');
    expect(result).toEqual(withoutEffectiveFrom({ ...current, promotions: undefined }));
  });

  it('keeps a section added or removed by what was published since, when the change left it', () => {
    const current = minimalDocument({ promotions: [percentagePromotion('spring')] });
    expect(merged(mergeChange(base, base, current))).toEqual(current);
    expect(merged(mergeChange(current, current, base))).toEqual(base);
  });

  it('is a conflict when the change removed a section that was changed since, or the other way round', () => {
    const withPromotions = minimalDocument({ promotions: [percentagePromotion('spring')] });
    const removed = edited((document) => {
      delete document.promotions;
    }, withPromotions);
    const changed = minimalDocument({ promotions: [percentagePromotion('spring', '20')] });
    expect(mergeChange(withPromotions, removed, changed)).toEqual({ conflicts: ['promotions'] });
    expect(mergeChange(withPromotions, changed, removed)).toEqual({ conflicts: ['promotions'] });
  });

  it('accepts a section both added identically, and conflicts on one both added differently', () => {
    const spring = minimalDocument({ promotions: [percentagePromotion('spring')] });
    const summer = minimalDocument({ promotions: [percentagePromotion('summer')] });
    expect(merged(mergeChange(base, spring, structuredClone(spring)))).toEqual(spring);
    expect(mergeChange(base, spring, summer)).toEqual({ conflicts: ['promotions'] });
  });

  it('ignores effective_from on every side and carries none', () => {
    const proposed = edited((document) => {
      document.effective_from = '2026-06-01T00:00:00Z';
      itemOf(document, 'sku_game').base_price = '49.99';
    });
    const current = minimalDocument({ effective_from: '2026-05-01T00:00:00Z' });
    const start = minimalDocument({ effective_from: '2026-04-01T00:00:00Z' });
    const result = merged(mergeChange(start, proposed, current));
    expect(result).not.toHaveProperty('effective_from');
    expect(result).toEqual(withoutEffectiveFrom(proposed));
  });
});

describe('mergeChange: exchange rates per pair', () => {
  const base = edited((document) => {
    document.fx_rates.rates = [fxRate('EUR→USD', '1.0842'), fxRate('EUR→GBP', '0.8500')];
  });
  const withRates = (usd: string, gbp: string) =>
    edited((document) => {
      document.fx_rates.rates = [fxRate('EUR→USD', usd), fxRate('EUR→GBP', gbp)];
    }, base);

  it('does not conflict with an automatic tick of another pair', () => {
    const proposed = withRates('1.1000', '0.8500');
    const current = withRates('1.0842', '0.8612');
    expect(merged(mergeChange(base, proposed, current))).toEqual(withRates('1.1000', '0.8612'));
  });

  it('is a conflict on the pair both changed differently', () => {
    const proposed = withRates('1.1000', '0.8500');
    const current = withRates('1.0900', '0.8612');
    expect(mergeChange(base, proposed, current)).toEqual({ conflicts: ['fx_rates.rates[EUR→USD]'] });
  });

  it('accepts a pair both changed identically', () => {
    const proposed = withRates('1.1000', '0.8500');
    const current = withRates('1.1000', '0.8612');
    expect(merged(mergeChange(base, proposed, current))).toEqual(withRates('1.1000', '0.8612'));
  });

  it('keeps the pairs in force first, then the pairs the change adds; drops pairs the change removes', () => {
    const proposed = edited((document) => {
      document.fx_rates.rates = [fxRate('EUR→JPY', '157.30'), fxRate('EUR→USD', '1.0842')];
    }, base);
    const current = edited((document) => {
      document.fx_rates.rates = [
        fxRate('EUR→GBP', '0.8500'),
        fxRate('EUR→CHF', '0.9400'),
        fxRate('EUR→USD', '1.0900'),
      ];
    }, base);
    const result = merged(mergeChange(base, proposed, current));
    expect(result.fx_rates).toEqual({
      base_currency: 'EUR',
      rates: [fxRate('EUR→CHF', '0.9400'), fxRate('EUR→USD', '1.0900'), fxRate('EUR→JPY', '157.30')],
    });
  });

  it('merges the other fx_rates fields on their own', () => {
    const markup = [{ fx_markup_bps: 150 }];
    const proposed = edited((document) => {
      document.fx_rates.markup_rules = markup;
      document.fx_rates.rates = [fxRate('EUR→USD', '1.1000'), fxRate('EUR→GBP', '0.8500')];
    }, base);
    const current = edited((document) => {
      document.fx_rates.rates = [fxRate('EUR→USD', '1.0842'), fxRate('EUR→GBP', '0.8612')];
    }, base);
    expect(merged(mergeChange(base, proposed, current)).fx_rates).toEqual({
      base_currency: 'EUR',
      markup_rules: markup,
      rates: [fxRate('EUR→USD', '1.1000'), fxRate('EUR→GBP', '0.8612')],
    });

    const rebased = edited((document) => {
      document.fx_rates.base_currency = 'USD';
    }, base);
    const otherBase = edited((document) => {
      document.fx_rates.base_currency = 'GBP';
    }, base);
    expect(mergeChange(base, rebased, otherBase)).toEqual({ conflicts: ['fx_rates.base_currency'] });
  });

  it('drops an fx_rates field the change removed', () => {
    const withMarkup = edited((document) => {
      document.fx_rates.markup_rules = [{ fx_markup_bps: 150 }];
    }, base);
    const proposed = edited((document) => {
      delete document.fx_rates.markup_rules;
    }, withMarkup);
    const current = edited((document) => {
      document.fx_rates.rates = [fxRate('EUR→USD', '1.0842'), fxRate('EUR→GBP', '0.8612')];
    }, withMarkup);
    expect(merged(mergeChange(withMarkup, proposed, current)).fx_rates).toEqual({
      base_currency: 'EUR',
      rates: current.fx_rates.rates,
    });
  });

  it('merges fx_rates as a whole when it is not an object on every side', () => {
    const { fx_rates: _removed, ...withoutFx } = base;
    const ticked = withRates('1.0842', '0.8612');
    expect(mergeChange(base, withoutFx, ticked)).toEqual({ conflicts: ['fx_rates'] });
    expect(merged(mergeChange(base, withoutFx, base))).toEqual(withoutFx);
    expect(merged(mergeChange(withoutFx, base, withoutFx))).toEqual(base);
  });

  it('merges settlement rates per pair too', () => {
    const start = { settlement_rates: [rate('EUR→USD', '1.08'), rate('EUR→GBP', '0.85')] };
    expect(
      mergeChange(
        start,
        { settlement_rates: [rate('EUR→USD', '1.10'), rate('EUR→GBP', '0.85')] },
        { settlement_rates: [rate('EUR→USD', '1.08'), rate('EUR→GBP', '0.86')] },
      ),
    ).toEqual({ merged: { settlement_rates: [rate('EUR→USD', '1.10'), rate('EUR→GBP', '0.86')] } });
    expect(
      mergeChange(
        start,
        { settlement_rates: [rate('EUR→USD', '1.10'), rate('EUR→GBP', '0.85')] },
        { settlement_rates: [rate('EUR→USD', '1.09'), rate('EUR→GBP', '0.85')] },
      ),
    ).toEqual({ conflicts: ['settlement_rates[EUR→USD]'] });
  });

  it('adds settlement rates on both sides pair by pair when the base had none', () => {
    expect(
      mergeChange(
        {},
        { settlement_rates: [rate('EUR→USD', '1.10')] },
        { settlement_rates: [rate('EUR→GBP', '0.86')] },
      ),
    ).toEqual({ merged: { settlement_rates: [rate('EUR→GBP', '0.86'), rate('EUR→USD', '1.10')] } });
    expect(
      mergeChange(
        {},
        { settlement_rates: [rate('EUR→USD', '1.10')] },
        { settlement_rates: [rate('EUR→USD', '1.09')] },
      ),
    ).toEqual({ conflicts: ['settlement_rates[EUR→USD]'] });
  });

  it('removes settlement rates the change removed, leaving no empty list behind', () => {
    const start = { x: 1, settlement_rates: [rate('EUR→USD', '1.08'), rate('EUR→GBP', '0.85')] };
    // Nothing else changed them: the section is absent, as in the change.
    expect(mergeChange(start, { x: 1 }, start)).toEqual({ merged: { x: 1 } });
    // Meanwhile a pair was dropped: the change's removal still wins.
    expect(mergeChange(start, { x: 1 }, { x: 1, settlement_rates: [rate('EUR→USD', '1.08')] })).toEqual({
      merged: { x: 1 },
    });
    // Meanwhile a pair was ticked: that is a conflict on the pair.
    expect(
      mergeChange(
        start,
        { x: 1 },
        { x: 1, settlement_rates: [rate('EUR→USD', '1.08'), rate('EUR→GBP', '0.86')] },
      ),
    ).toEqual({ conflicts: ['settlement_rates[EUR→GBP]'] });
  });

  it('keeps settlement rates removed since, and an empty list when both sides emptied it pair by pair', () => {
    const start = { settlement_rates: [rate('EUR→USD', '1.08'), rate('EUR→GBP', '0.85')] };
    expect(mergeChange(start, start, {})).toEqual({ merged: {} });
    expect(mergeChange(start, { settlement_rates: [rate('EUR→GBP', '0.85')] }, {})).toEqual({ merged: {} });
    expect(
      mergeChange(
        start,
        { settlement_rates: [rate('EUR→GBP', '0.85')] },
        { settlement_rates: [rate('EUR→USD', '1.08')] },
      ),
    ).toEqual({ merged: { settlement_rates: [] } });
  });

  it('takes a reordered rate list whole when only one side reordered it', () => {
    const start = { settlement_rates: [rate('EUR→USD', '1.08'), rate('EUR→GBP', '0.85')] };
    const reordered = {
      settlement_rates: [rate('EUR→JPY', '157'), rate('EUR→GBP', '0.85'), rate('EUR→USD', '1.08')],
    };
    expect(mergeChange(start, reordered, start)).toEqual({ merged: reordered });
    expect(mergeChange(start, start, reordered)).toEqual({ merged: reordered });
  });

  it('merges a rate list as a whole when it cannot be keyed by pair', () => {
    const start = { settlement_rates: [rate('EUR→USD', '1.08')] };
    const ticked = { settlement_rates: [rate('EUR→USD', '1.09')] };
    const unkeyable: readonly unknown[] = [
      'not a list',
      [null],
      [[rate('EUR→USD', '1.10')]],
      [42],
      [{ pair: 7, rate: '1.10' }],
      [{ rate: '1.10' }],
      [rate('EUR→USD', '1.10'), rate('EUR→USD', '1.11')],
    ];
    for (const value of unkeyable) {
      const proposed = { settlement_rates: value };
      expect(mergeChange(start, proposed, ticked)).toEqual({ conflicts: ['settlement_rates'] });
      expect(mergeChange(start, proposed, start)).toEqual({ merged: proposed });
      expect(mergeChange(proposed, start, ticked)).toEqual({ conflicts: ['settlement_rates'] });
      expect(mergeChange(proposed, proposed, ticked)).toEqual({ merged: ticked });
    }
    const rates = { fx_rates: { base_currency: 'EUR', rates: 'not a list' } };
    expect(
      mergeChange({ fx_rates: { base_currency: 'EUR', rates: [] } }, rates, {
        fx_rates: { base_currency: 'EUR', rates: [rate('EUR→USD', '1.09')] },
      }),
    ).toEqual({ conflicts: ['fx_rates.rates'] });
  });
});

describe('mergeChange: properties', () => {
  const baseAndEdit = diffableArb.chain((base) => editedArb(base).map((proposed) => ({ base, proposed })));

  it('merging a change onto its own base yields the proposed document', () => {
    fc.assert(
      fc.property(baseAndEdit, ({ base, proposed }) => {
        expect(mergeChange(base, proposed, base)).toEqual({ merged: withoutEffectiveFrom(proposed) });
      }),
    );
    fc.assert(
      fc.property(diffableArb, diffableArb, (base, proposed) => {
        expect(mergeChange(base, proposed, structuredClone(base))).toEqual({
          merged: withoutEffectiveFrom(proposed),
        });
      }),
    );
  });

  it('merging an unchanged proposal yields what is in force', () => {
    fc.assert(
      fc.property(baseAndEdit, ({ base, proposed: current }) => {
        expect(mergeChange(base, base, current)).toEqual({ merged: withoutEffectiveFrom(current) });
      }),
    );
    fc.assert(
      fc.property(diffableArb, diffableArb, (base, current) => {
        expect(mergeChange(base, structuredClone(base), current)).toEqual({
          merged: withoutEffectiveFrom(current),
        });
      }),
    );
  });

  it('merging a change onto a document that already has it yields that document', () => {
    fc.assert(
      fc.property(diffableArb, diffableArb, (base, proposed) => {
        expect(mergeChange(base, proposed, structuredClone(proposed))).toEqual({
          merged: withoutEffectiveFrom(proposed),
        });
      }),
    );
  });

  it('with a conflict, every path names a section both sides changed', () => {
    fc.assert(
      fc.property(
        diffableArb.chain((base) => fc.tuple(fc.constant(base), editedArb(base), editedArb(base))),
        ([base, proposed, current]) => {
          const result = mergeChange(base, proposed, current);
          if (!('conflicts' in result)) return;
          expect(result.conflicts.length).toBeGreaterThan(0);
          for (const path of result.conflicts) {
            const section = path.split(/[.[]/)[0]!;
            expect(section).not.toBe('effective_from');
            expect(same(proposed[section], base[section])).toBe(false);
            expect(same(current[section], base[section])).toBe(false);
          }
        },
      ),
    );
  });

  it('a merge without conflicts keeps every section only one side changed', () => {
    fc.assert(
      fc.property(
        diffableArb.chain((base) => fc.tuple(fc.constant(base), editedArb(base), editedArb(base))),
        ([base, proposed, current]) => {
          const result = mergeChange(base, proposed, current);
          if (!('merged' in result)) return;
          for (const section of new Set([...Object.keys(proposed), ...Object.keys(current)])) {
            if (section === 'effective_from') continue;
            if (same(proposed[section], base[section]))
              expect(result.merged[section]).toEqual(current[section]);
            else if (same(current[section], base[section]))
              expect(result.merged[section]).toEqual(proposed[section]);
          }
        },
      ),
    );
  });
});
