import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec, sum } from '../../../../functions/domain/money/decimal';
import { priceBasket } from '../../../../functions/domain/pricing/basket';
import { PricingError } from '../../../../functions/domain/pricing/errors';
import { volume } from '../../../support/volume';
import { pricingCaseArb } from './arbitraries';

describe('applied promotions', () => {
  it('add up to the line discount on every line (after rounding and the min_price floor)', () => {
    fc.assert(
      fc.property(pricingCaseArb({ maxLines: 12 }), ({ catalog, request }) => {
        let result: ReturnType<typeof priceBasket>;
        try {
          result = priceBasket(catalog, request);
        } catch (error) {
          if (error instanceof PricingError) return;
          throw error;
        }
        for (const line of result.items_priced) {
          const applied = sum(line.applied_promotions.map((entry) => dec(entry.amount)));
          expect(applied.equals(dec(line.discount))).toBe(true);
        }
      }),
      { numRuns: volume('PROMOTIONS_PROPERTY_RUNS', { local: 2_500, ci: 10_000 }) },
    );
  }, 60_000);
});
