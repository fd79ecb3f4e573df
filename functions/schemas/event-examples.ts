import { CATALOG_EVENT_TYPES, type CatalogEventType, PAYOUT_PROCESSED } from '../domain/webhooks/envelope';

/** An example of one event type: who produces it and its `data`, as a real event of that type carries it. */
export interface EventExample {
  readonly producer: string;
  readonly data: Readonly<Record<string, unknown>>;
}

const catalogExample = (version: number | string): EventExample => ({
  producer: 'catalog',
  data: {
    version,
    effective_from: '2026-11-01T00:00:00.000Z',
    revision: 7,
    trace_id: 'trc_example',
    pricelist_version: 42,
    fx_version: 'fx-318',
    tax_rule_version: 5,
  },
});

/**
 * The example of every event type with a payload schema (what `POST /webhooks/endpoints/{id}/test` sends, marked
 * `test: true`). A unit test checks each against the type's schema (`payoutProcessedSchema`, the catalog events'
 * data as `catalogEvents` writes it).
 */
export const EVENT_EXAMPLES: Readonly<Record<CatalogEventType | typeof PAYOUT_PROCESSED, EventExample>> = {
  'catalog.PriceListUpdated': catalogExample(42),
  'catalog.FXRatePublished': catalogExample('fx-318'),
  'catalog.TaxRuleChanged': catalogExample(5),
  'catalog.PromoChanged': catalogExample(42),
  [PAYOUT_PROCESSED]: {
    producer: 'payments',
    data: { payout_id: 'po_example', status: 'paid', amount_minor: 125_000, currency: 'EUR' },
  },
};

export const EXAMPLE_EVENT_TYPES = [...CATALOG_EVENT_TYPES, PAYOUT_PROCESSED] as const;
export type ExampleEventType = (typeof EXAMPLE_EVENT_TYPES)[number];
