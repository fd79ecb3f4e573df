import { describe, expect, it, vi } from 'vitest';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import { minimalDocument } from '../../support/catalog-document';
import { InMemoryCatalogRepository, ManualClock } from '../catalog-api/support';

/** The minimal document's products with another title: a change of the commercial part. */
const titled = (title: string) => minimalDocument().products.map((product) => ({ ...product, title }));

describe('CatalogReader while a future-dated publication waits', () => {
  it('reads only publications newer than those it has seen, and answers the one in force', async () => {
    const clock = new ManualClock(new Date('2026-11-22T12:00:00.000Z'));
    const repository = new InMemoryCatalogRepository();
    await importCatalog({ repository, clock }, minimalDocument());
    await importCatalog(
      { repository, clock },
      minimalDocument({
        effective_from: '2026-11-22T12:01:00.000Z',
        products: titled('second'),
      }),
    );
    const reader = new CatalogReader(repository, clock);
    const listed = vi.spyOn(repository, 'publications');

    expect((await reader.current()).publication.revision).toBe(1);
    expect((await reader.current()).publication.revision).toBe(1);
    expect(listed.mock.calls.map(([options]) => options)).toEqual([{}, { afterRevision: 2 }]);

    await importCatalog(
      { repository, clock },
      minimalDocument({
        effective_from: '2026-11-22T12:02:00.000Z',
        products: titled('third'),
      }),
    );
    clock.advance(61_000);
    expect((await reader.current()).publication.revision).toBe(2);
    expect(listed.mock.calls.at(-1)?.[0]).toEqual({ afterRevision: 2 });
    clock.advance(60_000);
    expect((await reader.current()).publication.revision).toBe(3);
  });
});
