import { describe, expect, it } from 'vitest';
import {
  CatalogValidationError,
  validateCatalogDocument,
} from '../../../functions/usecases/catalog/validate';
import { minimalDocument } from '../../support/catalog-document';

const problemsOf = (input: unknown) => {
  try {
    validateCatalogDocument(input);
  } catch (error) {
    if (error instanceof CatalogValidationError) return error.problems;
    throw error;
  }
  return [];
};

describe('validateCatalogDocument', () => {
  it.each(['', '-', 'abc', '1e3', ' 5'])(
    'reports a promotion percent %j as a problem (never an exception from its range check)',
    (percent) => {
      const document = {
        ...minimalDocument(),
        promotions: [
          { kind: 'percentage', promo_id: 'P1', condition: {}, percent, stackable: true, priority: 1 },
        ],
      };
      expect(problemsOf(document)).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: '$.promotions[0].percent' })]),
      );
    },
  );

  it('refuses a promotion above 100 percent', () => {
    const document = {
      ...minimalDocument(),
      promotions: [
        {
          kind: 'percentage',
          promo_id: 'P1',
          condition: {},
          percent: '100.01',
          stackable: true,
          priority: 1,
        },
      ],
    };
    expect(problemsOf(document)).toEqual([{ path: '$.promotions[0].percent', message: 'at most 100' }]);
  });
});
