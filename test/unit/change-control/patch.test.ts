/**
 * Patch operations (C30): paths name entries by id (never by array index), `set` then reading the path gives the
 * value, `set` of the current value changes nothing (empty diff), and every refused operation names its index
 * and path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DiffableDocument, diffCatalog } from '../../../functions/domain/change-control/diff';
import {
  applyPatch,
  type PatchOperation,
  type PatchResult,
  type PatchTarget,
  parsePatchPath,
  patchConflicts,
  patchPathOf,
  readTarget,
} from '../../../functions/domain/change-control/patch';
import { canonicalJson, type Json } from '../../../functions/domain/money/canonical';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { validateCatalogDocument } from '../../../functions/usecases/catalog/validate';
import {
  checkPatchValue,
  patchedDocument,
  rebasePatch,
} from '../../../functions/usecases/change-requests/patch';
import { minimalDocument } from '../../support/catalog-document';
import { edited, fxRate, itemOf, percentagePromotion } from './documents';

const same = (a: unknown, b: unknown): boolean => canonicalJson(a as Json) === canonicalJson(b as Json);

const applied = (result: PatchResult): Record<string, unknown> => {
  if ('problems' in result) throw new Error(JSON.stringify(result.problems));
  return result.document;
};

const problemsOf = (result: PatchResult) => {
  if (!('problems' in result)) throw new Error('the patch was accepted');
  return result.problems;
};

/** The minimal document with one entry of every kind a patch names (a promotion, an override, a settlement rate). */
const richDocument = (): CatalogDocument =>
  minimalDocument({
    promotions: [percentagePromotion('promo_a')],
    overrides: [
      {
        override_id: 'ov_a',
        target: { sku_id: 'sku_game' },
        currency: 'EUR',
        price_or_markup: { price: '49.99' },
        priority: 1,
      },
    ],
    settlement_rates: [fxRate('EUR→USD', '1.0800')],
  });

const item = (sku_id: string, base_price: string) => ({
  sku_id,
  base_price,
  base_currency: 'EUR',
  tax_class: 'standard',
  pricing_model: 'flat' as const,
});

describe('patch paths', () => {
  it.each([
    ['/pricelists/pl_eur/items/sku_game', { type: 'price_item', pricelist_id: 'pl_eur', sku_id: 'sku_game' }],
    ['/products/sku_mug', { type: 'product', sku_id: 'sku_mug' }],
    ['/promotions/promo_a', { type: 'promotion', promo_id: 'promo_a' }],
    ['/overrides/ov_a', { type: 'override', override_id: 'ov_a' }],
    ['/fx_rates/rates/EUR-USD', { type: 'fx_rate', pair: 'EUR→USD' }],
    ['/fx_rates/rates/EUR%E2%86%92USD', { type: 'fx_rate', pair: 'EUR→USD' }],
    ['/fx_rates/rates/EUR→USD', { type: 'fx_rate', pair: 'EUR→USD' }],
    ['/fx_rates/rates/EUR->USD', { type: 'fx_rate', pair: 'EUR→USD' }],
    ['/fx_rates/overrides/EUR-USD', { type: 'fx_override', pair: 'EUR→USD' }],
    ['/fx_rates/overrides/USD%E2%86%92EUR', { type: 'fx_override', pair: 'USD→EUR' }],
    ['/settlement_rates/USD-USDT', { type: 'settlement_rate', pair: 'USD→USDT' }],
    [
      '/tax_rules/DE/rates/standard/vat',
      { type: 'tax_component', region: 'DE', tax_class: 'standard', name: 'vat' },
    ],
    [
      '/tax_rules/*/rates/reduced/vat',
      { type: 'tax_component', region: '*', tax_class: 'reduced', name: 'vat' },
    ],
  ])('%s names %j', (path, target) => {
    expect(parsePatchPath(path)).toEqual(target);
  });

  it.each([
    '',
    '/',
    'pricelists/pl_eur/items/sku_game',
    '/pricelists/pl_eur/items',
    '/pricelists/pl_eur/items/sku_game/base_price',
    '/pricelists/pl_eur/sku_game',
    '/pricelists//items/sku_game',
    '/products',
    '/fx_rates/EUR-USD',
    '/fx_rates/rates/EUR-EUR',
    '/fx_rates/rates/eur-usd',
    '/tax_rules/DE/rates/standard',
    '/tax_rules/de/rates/standard/vat',
    '/settings/pricing_strategy',
    '/pricelists/pl%ZZ/items/sku_game',
    '/pricelists/pl eur/items/sku_game',
  ])('refuses %j', (path) => {
    expect(parsePatchPath(path)).toHaveProperty('error');
  });

  it('renders every target back to a path that names it', () => {
    const targets: PatchTarget[] = [
      { type: 'price_item', pricelist_id: 'pl_eur', sku_id: 'sku_game' },
      { type: 'product', sku_id: 'p' },
      { type: 'promotion', promo_id: 'x' },
      { type: 'override', override_id: 'o' },
      { type: 'fx_rate', pair: 'EUR→USD' },
      { type: 'fx_override', pair: 'USD→EUR' },
      { type: 'settlement_rate', pair: 'USD→USDT' },
      { type: 'tax_component', region: 'DE', tax_class: 'standard', name: 'vat' },
    ];
    for (const target of targets) expect(parsePatchPath(patchPathOf(target))).toEqual(target);
  });
});

// ------------------------------------------------------------------------------------------ generated patches

const IDS = ['sku_game', 'sku_shirt', 'sku_new', '0', '1'] as const;
const AMOUNTS = ['0.00', '4.99', '19.00', '59.99', '100'] as const;

/** A target of every kind (existing ids and new ones) with a value valid for its schema. */
const setArb: fc.Arbitrary<{
  path: string;
  value: Record<string, unknown>;
  expected: Record<string, unknown>;
}> = fc.oneof(
  fc
    .record({ sku: fc.constantFrom('sku_game', 'sku_shirt'), price: fc.constantFrom(...AMOUNTS) })
    .map(({ sku, price }) => ({
      path: `/pricelists/pl_eur/items/${sku}`,
      value: item(sku, price),
      expected: item(sku, price),
    })),
  fc
    .record({ sku: fc.constantFrom(...IDS), title: fc.constantFrom('A', 'Mug', 'Game') })
    .map(({ sku, title }) => ({
      path: `/products/${sku}`,
      value: { title },
      expected: { sku_id: sku, title },
    })),
  fc
    .record({ id: fc.constantFrom('promo_a', 'promo_b'), percent: fc.constantFrom('5', '10', '12.5') })
    .map(({ id, percent }) => ({
      path: `/promotions/${id}`,
      value: percentagePromotion(id, percent),
      expected: percentagePromotion(id, percent),
    })),
  fc
    .record({ id: fc.constantFrom('ov_a', 'ov_b'), price: fc.constantFrom(...AMOUNTS) })
    .map(({ id, price }) => {
      const value = {
        target: { sku_id: 'sku_game' },
        currency: 'EUR',
        price_or_markup: { price },
        priority: 2,
      };
      return { path: `/overrides/${id}`, value, expected: { override_id: id, ...value } };
    }),
  fc
    .record({
      pair: fc.constantFrom('EUR-USD', 'EUR-GBP', 'USD-EUR'),
      rate: fc.constantFrom('0.85', '1.0842', '1.1'),
    })
    .map(({ pair, rate }) => {
      const { pair: _pair, ...value } = fxRate(pair.replace('-', '→'), rate);
      return {
        path: `/fx_rates/rates/${pair}`,
        value,
        expected: fxRate(pair.replace('-', '→'), rate),
      };
    }),
  fc
    .record({
      pair: fc.constantFrom('EUR-USD', 'USD-EUR', 'EUR-GBP'),
      rate: fc.constantFrom('0.85', '1.1'),
    })
    .map(({ pair, rate }) => {
      const value = { rate, expires_at: '2026-12-01T00:00:00.000Z', reason: 'manual' };
      return {
        path: `/fx_rates/overrides/${pair}`,
        value,
        expected: { pair: pair.replace('-', '→'), ...value },
      };
    }),
  fc
    .record({
      klass: fc.constantFrom('standard', 'reduced'),
      name: fc.constantFrom('vat', 'levy'),
      rate: fc.constantFrom('0.07', '0.19', '0'),
    })
    .map(({ klass, name, rate }) => ({
      path: `/tax_rules/DE/rates/${klass}/${name}`,
      value: { rate },
      expected: { name, rate },
    })),
);

/** The document with every list in another order (the same entries, by id). */
const shuffledArb = fc.record({ seed: fc.integer({ min: 0, max: 1000 }) }).map(({ seed }) => {
  const rotate = <T>(list: readonly T[]): T[] => {
    const by = list.length === 0 ? 0 : seed % list.length;
    return [...list.slice(by), ...list.slice(0, by)];
  };
  const document = richDocument();
  return {
    ...document,
    products: rotate(document.products),
    pricelists: document.pricelists.map((list) => ({ ...list, items: rotate(list.items) })),
    tax_rules: rotate(document.tax_rules),
    fx_rates: {
      ...document.fx_rates,
      rates: rotate([...document.fx_rates.rates, fxRate('EUR→GBP', '0.85')]),
    },
  };
});

describe('applyPatch (property)', () => {
  it('set, then reading the path, gives the value (its id being the path’s)', () => {
    fc.assert(
      fc.property(shuffledArb, fc.array(setArb, { minLength: 1, maxLength: 6 }), (document, sets) => {
        const result = applied(
          applyPatch(
            document,
            sets.map(({ path, value }) => ({ op: 'set', path, value })),
            checkPatchValue,
          ),
        );
        // The last set of each path wins.
        const last = new Map(sets.map((set) => [set.path, set.expected]));
        for (const [path, expected] of last) {
          const target = parsePatchPath(path) as PatchTarget;
          expect(readTarget(result, target)).toEqual(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('set of the current value changes nothing: same document, empty diff', () => {
    const document = richDocument();
    const paths = [
      '/pricelists/pl_eur/items/sku_game',
      '/pricelists/pl_eur/items/sku_shirt',
      '/products/sku_game',
      '/promotions/promo_a',
      '/overrides/ov_a',
      '/fx_rates/rates/EUR-USD',
      '/fx_rates/rates/EUR%E2%86%92USD',
      '/settlement_rates/EUR-USD',
      '/tax_rules/DE/rates/standard/vat',
      '/tax_rules/US/rates/standard/sales_tax',
    ];
    fc.assert(
      fc.property(fc.subarray(paths, { minLength: 1 }), fc.boolean(), (chosen, withoutId) => {
        const operations: PatchOperation[] = chosen.map((path) => {
          const current = readTarget(document, parsePatchPath(path) as PatchTarget) as Record<
            string,
            unknown
          >;
          const { sku_id: _s, promo_id: _p, override_id: _o, pair: _r, name: _n, ...rest } = current;
          return { op: 'set', path, value: withoutId ? rest : current };
        });
        const result = applied(applyPatch(document, operations, checkPatchValue));
        expect(same(result, document)).toBe(true);
        const diff = diffCatalog(document as DiffableDocument, result as DiffableDocument);
        expect(diff.sections_changed).toEqual([]);
        expect(diff.prices).toEqual({ added: [], removed: [], changed: [] });
        expect(diff.fx_rates).toEqual([]);
        expect(diff.tax_rates).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('never indexes arrays: the entry is found by id whatever the order, and a numeric segment is an id', () => {
    fc.assert(
      fc.property(shuffledArb, fc.constantFrom(...AMOUNTS), (document, price) => {
        const result = applied(
          applyPatch(
            document,
            [{ op: 'set', path: '/pricelists/pl_eur/items/sku_shirt', value: item('sku_shirt', price) }],
            checkPatchValue,
          ),
        );
        const items = (result.pricelists as CatalogDocument['pricelists'])[0]?.items ?? [];
        // Same order as before, only sku_shirt's entry replaced.
        expect(items.map((entry) => entry.sku_id)).toEqual(
          document.pricelists[0]?.items.map((e) => e.sku_id),
        );
        for (const entry of items) {
          const before = document.pricelists[0]?.items.find((e) => e.sku_id === entry.sku_id);
          expect(entry).toEqual(entry.sku_id === 'sku_shirt' ? item('sku_shirt', price) : before);
        }
      }),
    );
    // `/pricelists/0/items/0` names the price list "0" (there is none), not the first list.
    const refused = problemsOf(
      applyPatch(
        richDocument(),
        [{ op: 'set', path: '/pricelists/0/items/0', value: item('0', '1.00') }],
        checkPatchValue,
      ),
    );
    expect(refused).toEqual([
      { path: '$.operations[0].path', message: 'set /pricelists/0/items/0: no price list 0' },
    ]);
  });

  it('adds a new entry at the end, creating an absent optional section or tax class', () => {
    const result = applied(
      applyPatch(
        minimalDocument(),
        [
          { op: 'set', path: '/promotions/promo_new', value: percentagePromotion('promo_new') },
          { op: 'set', path: '/tax_rules/DE/rates/reduced/vat', value: { rate: '0.07' } },
          { op: 'set', path: '/fx_rates/rates/EUR-GBP', value: fxRate('EUR→GBP', '0.85') },
        ],
        checkPatchValue,
      ),
    );
    expect(result.promotions).toEqual([percentagePromotion('promo_new')]);
    expect((result.tax_rules as CatalogDocument['tax_rules'])[0]?.rates.reduced).toEqual([
      { name: 'vat', rate: '0.07' },
    ]);
    expect((result.fx_rates as CatalogDocument['fx_rates']).rates.map((rate) => rate.pair)).toEqual([
      'EUR→USD',
      'EUR→GBP',
    ]);
    expect(() => validateCatalogDocument(result)).not.toThrow();
  });

  it('removes an entry and keeps its list (possibly empty)', () => {
    const result = applied(
      applyPatch(
        richDocument(),
        [
          { op: 'remove', path: '/promotions/promo_a' },
          { op: 'remove', path: '/tax_rules/US/rates/standard/sales_tax' },
        ],
        checkPatchValue,
      ),
    );
    expect(result.promotions).toEqual([]);
    expect((result.tax_rules as CatalogDocument['tax_rules'])[1]?.rates).toEqual({ standard: [] });
  });

  it('applies operations in order: a set then a remove of the same entry, a remove then a set', () => {
    const result = applied(
      applyPatch(
        richDocument(),
        [
          { op: 'set', path: '/promotions/promo_b', value: percentagePromotion('promo_b') },
          { op: 'remove', path: '/promotions/promo_b' },
          { op: 'remove', path: '/overrides/ov_a' },
          {
            op: 'set',
            path: '/overrides/ov_a',
            value: {
              target: { category: 'games' },
              currency: 'EUR',
              price_or_markup: { markup_percent: '-5' },
              priority: 0,
            },
          },
        ],
        checkPatchValue,
      ),
    );
    expect(result.promotions).toEqual([percentagePromotion('promo_a')]);
    expect(result.overrides).toEqual([
      {
        override_id: 'ov_a',
        target: { category: 'games' },
        currency: 'EUR',
        price_or_markup: { markup_percent: '-5' },
        priority: 0,
      },
    ]);
  });
});

describe('applyPatch: refusals name the operation index and path', () => {
  it('reports every refused operation, and returns no document', () => {
    const problems = problemsOf(
      applyPatch(
        richDocument(),
        [
          { op: 'set', path: '/pricelists/pl_eur/items/sku_game', value: item('sku_game', '49.99') },
          { op: 'set', path: '/settings/pricing_strategy', value: { x: 1 } },
          { op: 'set', path: '/pricelists/pl_eur/items/sku_shirt' },
          { op: 'remove', path: '/promotions/promo_none' },
          { op: 'set', path: '/pricelists/pl_eur/items/sku_shirt', value: { ...item('sku_shirt', '1e5') } },
          { op: 'set', path: '/pricelists/pl_eur/items/sku_shirt', value: item('sku_game', '1.00') },
          { op: 'remove', path: '/overrides/ov_a', value: {} },
          { op: 'set', path: '/fx_rates/rates/EUR-USD', value: { ...fxRate('USD→EUR', '1.1') } },
          { op: 'set', path: '/tax_rules/FR/rates/standard/vat', value: { rate: '0.2' } },
          { op: 'set', path: '/promotions/promo_a', value: 'ten percent' },
          { op: 'set', path: '/products/sku_x', value: null },
        ],
        checkPatchValue,
      ),
    );
    expect(problems.map((problem) => problem.path)).toEqual([
      '$.operations[1].path',
      '$.operations[2].value',
      '$.operations[3]',
      '$.operations[4].value.base_price',
      '$.operations[5].value.sku_id',
      '$.operations[6].value',
      '$.operations[7].value.pair',
      '$.operations[8].path',
      '$.operations[9].value',
      '$.operations[10].value',
    ]);
    expect(problems[0]?.message).toMatch(/^set \/settings\/pricing_strategy: unknown path; paths are /);
    expect(problems[1]?.message).toBe('set /pricelists/pl_eur/items/sku_shirt: a set needs a value');
    expect(problems[2]?.message).toBe(
      'remove /promotions/promo_none: nothing to remove: there is no such entry',
    );
    expect(problems[3]?.message).toMatch(/^set \/pricelists\/pl_eur\/items\/sku_shirt: /);
    expect(problems[5]?.message).toBe('remove /overrides/ov_a: a remove takes no value');
    expect(problems[7]?.message).toBe('set /tax_rules/FR/rates/standard/vat: no tax rule for region FR');
  });

  it('refuses through the use case with every problem (a 400), before anything is stored', () => {
    let caught: unknown;
    try {
      patchedDocument(richDocument(), [{ op: 'remove', path: '/pricelists/pl_eur/items/sku_none' }]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      name: 'CatalogValidationError',
      problems: [
        {
          path: '$.operations[0]',
          message: 'remove /pricelists/pl_eur/items/sku_none: nothing to remove: there is no such entry',
        },
      ],
    });
    expect(() => patchedDocument(undefined, [{ op: 'remove', path: '/promotions/promo_a' }])).toThrow(
      expect.objectContaining({ problems: [expect.objectContaining({ path: '$.kind' })] }),
    );
  });
});

describe('rebasing a patch onto what is in force at publication', () => {
  const operations: PatchOperation[] = [
    { op: 'set', path: '/pricelists/pl_eur/items/sku_game', value: item('sku_game', '49.99') },
  ];
  const base = minimalDocument();

  it('keeps what others published meanwhile on other entries (even in the same price list)', () => {
    const current = edited((document) => {
      itemOf(document, 'sku_shirt').base_price = '21.00';
      document.fx_rates.rates = [fxRate('EUR→USD', '1.0900')];
    });
    const rebased = rebasePatch(operations, base, current);
    expect(rebased).toEqual({
      document: edited((document) => {
        itemOf(document, 'sku_game').base_price = '49.99';
      }, current),
    });
  });

  it('is stale when another publication changed an entry the patch names', () => {
    const current = edited((document) => {
      itemOf(document, 'sku_game').base_price = '54.99';
    });
    expect(patchConflicts(operations, base, current)).toEqual(['/pricelists/pl_eur/items/sku_game']);
    expect(rebasePatch(operations, base, current)).toEqual({
      stale: 'entries changed since this request by another publication: /pricelists/pl_eur/items/sku_game',
    });
  });

  it('is stale when an operation no longer applies (its price list was removed)', () => {
    const withUsd = edited((document) => {
      document.pricelists.push({ pricelist_id: 'pl_usd', base_currency: 'USD', items: [] });
    });
    const current = minimalDocument();
    const onUsd: PatchOperation[] = [
      {
        op: 'set',
        path: '/pricelists/pl_usd/items/sku_new',
        value: { ...item('sku_new', '1'), base_currency: 'USD' },
      },
    ];
    const rebased = rebasePatch(onUsd, withUsd, current);
    expect(rebased).toEqual({
      stale: expect.stringContaining(
        '$.operations[0].path: set /pricelists/pl_usd/items/sku_new: no price list pl_usd',
      ),
    });
  });
});
