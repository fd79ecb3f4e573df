import { catalogEvents } from '../../functions/usecases/catalog/import';

/**
 * The events a first publication with every part and a promotion writes: one of each catalog type, as
 * `catalogEvents` makes them (what the example and event-type catalog tests compare with).
 */
export const everyCatalogEvent = () =>
  catalogEvents(
    {
      effective_from: '2026-11-01T00:00:00.000Z',
      revision: 3,
      versions: { commercial: 4, fx: 9, tax: 2 },
    } as unknown as Parameters<typeof catalogEvents>[0],
    [
      { kind: 'commercial', content: { pricelists: [], promotions: [{ promo_id: 'p1' }] } },
      { kind: 'fx', content: {} },
      { kind: 'tax', content: {} },
    ] as unknown as Parameters<typeof catalogEvents>[1],
    {},
    { traceId: 'trc_x', at: new Date('2026-11-01T00:00:00.000Z'), bodyTtlDays: 30 },
  );
