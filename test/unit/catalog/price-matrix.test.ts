import { describe, expect, it } from 'vitest';
import { priceMatrix } from '../../../functions/usecases/catalog/price-matrix';
import { CatalogNotFoundError } from '../../../functions/usecases/catalog/reader';
import { DEMO_AT, demoDocument, releaseOf } from '../../support/demo-pricing';

describe('a SKU across regions and currencies (GET /admin/catalog/prices)', () => {
  const release = releaseOf(demoDocument());

  it("prices every region and currency the catalog displays, refusing with the storefront's reason", () => {
    const document = demoDocument();
    const matrix = priceMatrix(release, { sku: 'GAME-STARFALL-PS5', explain: true }, DEMO_AT);
    const displayed = document.display_rules.flatMap((rule) =>
      rule.currency_whitelist.map((currency) => `${rule.region}/${currency}`),
    );
    expect(matrix.cells.map((cell) => `${cell.region}/${cell.currency}`)).toEqual(displayed);
    const de = matrix.cells.find((cell) => cell.region === 'DE' && cell.currency === 'EUR');
    expect(de && 'price' in de ? de.price : undefined).toMatchObject({
      sku: 'GAME-STARFALL-PS5',
      currency: 'EUR',
      price_includes_tax: true,
      explain: { steps: expect.arrayContaining([expect.objectContaining({ step: 'base' })]) },
    });
    const refused = matrix.cells.filter((cell) => 'unavailable' in cell);
    expect(refused.length).toBeGreaterThan(0);
    for (const cell of matrix.cells)
      if ('unavailable' in cell)
        expect(cell.unavailable.error).toMatch(/^(price|currency)_not_available$|^not_found$/);
  });

  it('refuses a SKU the catalog does not have', () => {
    expect(() => priceMatrix(release, { sku: 'NO-SUCH-SKU' }, DEMO_AT)).toThrow(CatalogNotFoundError);
  });
});
