import { describe, expect, it } from 'vitest';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import { priceQueryFor } from '../../../functions/usecases/catalog/release';
import { minimalDocument } from '../../support/catalog-document';
import { InMemoryCatalogRepository, ManualClock } from './support';

describe("priceQueryFor: a caller key's tenant in the price query (C26)", () => {
  it('keeps a tenant the release prices apart and drops one it does not (the plain storefront entries)', async () => {
    const repository = new InMemoryCatalogRepository();
    const clock = new ManualClock();
    const document = minimalDocument();
    await importCatalog(
      { repository, clock },
      {
        ...document,
        basket_policies: [
          ...document.basket_policies,
          { policy_id: 'nordic', tenant: 'nordic', rounding_scope: 'basket', promo_stack_mode: 'stack_all' },
        ],
        overrides: [
          {
            override_id: 'kiosk',
            target: { tenant: 'kiosk' },
            currency: 'EUR',
            price_or_markup: { markup_percent: '5' },
            priority: 1,
          },
        ],
      },
    );
    const { release } = await new CatalogReader(repository, clock).current();
    const asked = { sku: 'sku_game', currency: 'EUR', region: 'DE', tenant: 'whatever-the-query-said' };
    expect(priceQueryFor(release, asked, 'nordic')).toEqual({ ...asked, tenant: 'nordic' });
    expect(priceQueryFor(release, asked, 'kiosk')).toEqual({ ...asked, tenant: 'kiosk' });
    const { tenant: _dropped, ...plain } = asked;
    expect(priceQueryFor(release, asked, 'demo')).toEqual(plain);
  });
});
