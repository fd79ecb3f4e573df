import { CATALOG_EVENT_TYPES, PAYOUT_PROCESSED } from '../domain/webhooks/envelope';
import { eventTypeDefinition } from './event-types';

/** An example of one event type: who produces it and its `data`, as a real event of that type carries it. */
export interface EventExample {
  readonly producer: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export const EXAMPLE_EVENT_TYPES = [...CATALOG_EVENT_TYPES, PAYOUT_PROCESSED] as const;
export type ExampleEventType = (typeof EXAMPLE_EVENT_TYPES)[number];

/**
 * The example of every event type a test event may be sent as (what `POST /webhooks/endpoints/{id}/test` sends,
 * marked `test: true`): the catalog's examples (`event-types.ts`) of the catalog and payout types. Operational
 * events are the service's own signals and are not sent as tests.
 */
const exampleOf = (type: ExampleEventType): EventExample => {
  const definition = eventTypeDefinition(type);
  if (!definition) throw new Error(`no catalog entry for ${type}`);
  return definition.example;
};

export const EVENT_EXAMPLES: Readonly<Record<ExampleEventType, EventExample>> = {
  'catalog.PriceListUpdated': exampleOf('catalog.PriceListUpdated'),
  'catalog.FXRatePublished': exampleOf('catalog.FXRatePublished'),
  'catalog.TaxRuleChanged': exampleOf('catalog.TaxRuleChanged'),
  'catalog.PromoChanged': exampleOf('catalog.PromoChanged'),
  [PAYOUT_PROCESSED]: exampleOf(PAYOUT_PROCESSED),
};
