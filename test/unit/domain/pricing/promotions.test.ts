import { describe, expect, it } from 'vitest';
import { type Decimal, dec, ZERO } from '../../../../functions/domain/money/decimal';
import {
  applyPromotions,
  conditionHolds,
  type LineDiscounts,
  type PromotionLine,
  type PromotionScope,
} from '../../../../functions/domain/pricing/promotions';
import type { BasketPolicy, Promotion } from '../../../../functions/domain/pricing/types';

const bestSingle: BasketPolicy = { rounding_scope: 'line', promo_stack_mode: 'best_single' };
const stackAll: BasketPolicy = { rounding_scope: 'line', promo_stack_mode: 'stack_all' };
const scope: PromotionScope = { region: 'DE', currency: 'EUR', channel: 'web' };

const line = (sku: string, amount: string, overrides: Partial<PromotionLine> = {}): PromotionLine => ({
  sku_id: sku,
  amount: dec(amount),
  floor: ZERO,
  ...overrides,
});

const promo = (id: string, percent: string, overrides: Partial<Promotion> = {}): Promotion => ({
  promo_id: id,
  condition: {},
  percent,
  stackable: true,
  priority: 0,
  ...overrides,
});

/** Caps given as plain decimal strings in the basket currency. */
const capsFrom =
  (caps: Readonly<Record<string, string>> = {}) =>
  (promotion: Promotion): Decimal | undefined => {
    const cap = caps[promotion.promo_id];
    return cap === undefined ? undefined : dec(cap);
  };

const perLine = (result: LineDiscounts) => result.perLine.map((value) => value.toString());
const ids = (result: LineDiscounts) =>
  result.applied.map((entries) => entries.map((entry) => entry.promo_id));

describe('applyPromotions: best_single', () => {
  it('gives no discount without promotions', () => {
    const result = applyPromotions([], [line('a', '10')], bestSingle, scope, capsFrom());
    expect(perLine(result)).toEqual(['0']);
    expect(ids(result)).toEqual([[]]);
  });

  it('picks the promotion with the largest total discount', () => {
    const result = applyPromotions(
      [promo('p10', '10', { priority: 9 }), promo('p30', '30'), promo('p20', '20')],
      [line('a', '10'), line('b', '20')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['3', '6']);
    expect(ids(result)).toEqual([['p30'], ['p30']]);
  });

  it('breaks ties by higher priority', () => {
    const result = applyPromotions(
      [promo('p_a', '10', { priority: 1 }), promo('p_b', '10', { priority: 2 })],
      [line('a', '10')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(ids(result)).toEqual([['p_b']]);
  });

  it('then by the smaller promo_id', () => {
    const result = applyPromotions(
      [promo('p_b', '10'), promo('p_a', '10'), promo('p_c', '10')],
      [line('a', '10')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(ids(result)).toEqual([['p_a']]);
  });

  it('compares promotions after their caps', () => {
    const result = applyPromotions(
      [promo('big', '50'), promo('small', '20')],
      [line('a', '10')],
      bestSingle,
      scope,
      capsFrom({ big: '1' }),
    );
    expect(ids(result)).toEqual([['small']]);
    expect(perLine(result)).toEqual(['2']);
  });
});

describe('priority order', () => {
  it.each([[['p_a', 'p_b', 'p_c']], [['p_c', 'p_b', 'p_a']], [['p_b', 'p_c', 'p_a']]])(
    'stacks promotions of equal priority by id, whatever their order in the catalog (%j)',
    (order) => {
      const result = applyPromotions(
        order.map((id) => promo(id, '10')),
        [line('a', '100')],
        stackAll,
        scope,
        capsFrom(),
      );
      expect(ids(result)).toEqual([['p_a', 'p_b', 'p_c']]);
      expect(perLine(result)).toEqual(['27.1']);
    },
  );

  it('keeps catalog order for two promotions with the same priority and id', () => {
    const result = applyPromotions(
      [promo('dup', '10'), promo('dup', '20')],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom(),
    );
    expect(result.applied[0]?.map((entry) => entry.amount.toString())).toEqual(['10', '18']);
  });
});

describe('applyPromotions: stack_all', () => {
  it('applies stackable promotions in priority order, each on what the previous ones left', () => {
    const result = applyPromotions(
      [promo('p10', '10', { priority: 1 }), promo('p50', '50', { priority: 2 })],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom(),
    );
    // 50% of 100 = 50, then 10% of the remaining 50 = 5.
    expect(perLine(result)).toEqual(['55']);
    expect(result.applied[0]?.map((entry) => [entry.promo_id, entry.amount.toString()])).toEqual([
      ['p50', '50'],
      ['p10', '5'],
    ]);
  });

  it('keeps the stack when a non-stackable promotion gives less', () => {
    const result = applyPromotions(
      [promo('p30', '30'), promo('p20', '20'), promo('solo', '40', { stackable: false })],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom(),
    );
    // Same priority: by id, p20 then p30. Stack: 20 + 24 = 44 > 40.
    expect(perLine(result)).toEqual(['44']);
    expect(ids(result)).toEqual([['p20', 'p30']]);
  });

  it('lets a non-stackable promotion win alone when it gives more than the stack', () => {
    const result = applyPromotions(
      [promo('p10', '10'), promo('p5', '5'), promo('solo', '30', { stackable: false })],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['30']);
    expect(ids(result)).toEqual([['solo']]);
  });

  it('keeps the stack on a tie with a non-stackable promotion', () => {
    const result = applyPromotions(
      [promo('p10', '10'), promo('solo', '10', { stackable: false })],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom(),
    );
    expect(ids(result)).toEqual([['p10']]);
  });

  it('with only non-stackable promotions eligible, the best of them wins alone', () => {
    const result = applyPromotions(
      [promo('solo_a', '10', { stackable: false }), promo('solo_b', '20', { stackable: false })],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom(),
    );
    expect(ids(result)).toEqual([['solo_b']]);
  });
});

describe('caps', () => {
  it('splits a capped discount over the lines in proportion to their uncapped discounts', () => {
    const result = applyPromotions(
      [promo('p', '50')],
      [line('a', '30'), line('b', '10')],
      bestSingle,
      scope,
      capsFrom({ p: '4' }),
    );
    // Uncapped 15 and 5; cap 4 → 3 and 1.
    expect(perLine(result)).toEqual(['3', '1']);
  });

  it('splits by largest remainder at 9 decimals, so the parts add up to the cap exactly', () => {
    const result = applyPromotions(
      [promo('p', '50')],
      [line('a', '10'), line('b', '10'), line('c', '10')],
      bestSingle,
      scope,
      capsFrom({ p: '1' }),
    );
    expect(perLine(result)).toEqual(['0.333333334', '0.333333333', '0.333333333']);
  });

  it('does not touch a discount under its cap', () => {
    const result = applyPromotions(
      [promo('p', '10')],
      [line('a', '10')],
      bestSingle,
      scope,
      capsFrom({ p: '5' }),
    );
    expect(perLine(result)).toEqual(['1']);
  });

  it('caps each stacked promotion on its own', () => {
    const result = applyPromotions(
      [promo('p1', '50', { priority: 2 }), promo('p2', '50', { priority: 1 })],
      [line('a', '100')],
      stackAll,
      scope,
      capsFrom({ p1: '10' }),
    );
    // p1: 10 (capped); p2: 50% of 90 = 45.
    expect(perLine(result)).toEqual(['55']);
  });
});

describe('min_price floor (rule 7)', () => {
  it('never takes a line below its floor', () => {
    const result = applyPromotions(
      [promo('p', '90')],
      [line('a', '100', { floor: dec('70') })],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['30']);
  });

  it('gives nothing to a line already at or below its floor', () => {
    const result = applyPromotions(
      [promo('p', '50')],
      [line('a', '100', { floor: dec('120') }), line('b', '10')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['0', '5']);
    expect(ids(result)).toEqual([[], ['p']]);
  });

  it('holds the floor across a stack', () => {
    const result = applyPromotions(
      [promo('p1', '50', { priority: 2 }), promo('p2', '50', { priority: 1 })],
      [line('a', '100', { floor: dec('40') })],
      stackAll,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['60']);
  });
});

describe('conditions', () => {
  it('conditionHolds checks region, currency and channel', () => {
    expect(conditionHolds({}, scope)).toBe(true);
    expect(conditionHolds({ regions: ['DE'] }, scope)).toBe(true);
    expect(conditionHolds({ regions: ['FR'] }, scope)).toBe(false);
    expect(conditionHolds({ currencies: ['EUR'] }, scope)).toBe(true);
    expect(conditionHolds({ currencies: ['USD'] }, scope)).toBe(false);
    expect(conditionHolds({ channels: ['web'] }, scope)).toBe(true);
    expect(conditionHolds({ channels: ['app'] }, scope)).toBe(false);
  });

  it('a channel condition fails when the request names no channel', () => {
    expect(conditionHolds({ channels: ['web'] }, { region: 'DE', currency: 'EUR' })).toBe(false);
  });

  it('drops promotions whose region or currency condition fails', () => {
    const result = applyPromotions(
      [
        promo('fr', '50', { condition: { regions: ['FR'] } }),
        promo('usd', '50', { condition: { currencies: ['USD'] } }),
      ],
      [line('a', '10')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['0']);
  });

  it('reaches only the lines of the SKUs it names', () => {
    const result = applyPromotions(
      [promo('p', '10', { condition: { skus: ['b'] } })],
      [line('a', '10'), line('b', '10')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['0', '1']);
  });

  it('reaches only the lines of the categories it names', () => {
    const result = applyPromotions(
      [promo('p', '10', { condition: { categories: ['toys'] } })],
      [line('a', '10', { category: 'toys' }), line('b', '10', { category: 'books' }), line('c', '10')],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['1', '0', '0']);
  });

  it('reaches a line whose item names it in promo_refs, whatever its SKU condition', () => {
    const result = applyPromotions(
      [promo('p', '10', { condition: { skus: ['zzz'] } })],
      [line('a', '10', { promo_refs: ['p'] }), line('b', '10', { promo_refs: ['other'] })],
      bestSingle,
      scope,
      capsFrom(),
    );
    expect(perLine(result)).toEqual(['1', '0']);
  });
});
