/**
 * The examples test events send (`POST /webhooks/endpoints/{id}/test`) are what a real event of their type carries:
 * the payout example passes the payload schema producers are held to, and the catalog examples have exactly the
 * fields `catalogEvents` writes, each of the type it writes.
 */
import { describe, expect, it } from 'vitest';
import { CATALOG_EVENT_TYPES, PAYOUT_PROCESSED } from '../../../functions/domain/webhooks/envelope';
import { EVENT_EXAMPLES, EXAMPLE_EVENT_TYPES } from '../../../functions/schemas/event-examples';
import { payoutProcessedSchema } from '../../../functions/schemas/webhooks';
import { everyCatalogEvent } from '../../support/catalog-events';

describe('event examples', () => {
  it('cover every event type with a payload schema', () => {
    expect([...EXAMPLE_EVENT_TYPES].sort()).toEqual([...CATALOG_EVENT_TYPES, PAYOUT_PROCESSED].sort());
    expect(Object.keys(EVENT_EXAMPLES).sort()).toEqual([...EXAMPLE_EVENT_TYPES].sort());
  });

  it('the payout example passes the payout.processed schema', () => {
    expect(payoutProcessedSchema.safeParse(EVENT_EXAMPLES[PAYOUT_PROCESSED].data).success).toBe(true);
  });

  it('each catalog example has the fields, and their types, of a real event of its own type', () => {
    const real = everyCatalogEvent();
    const shape = (data: Readonly<Record<string, unknown>> | undefined) =>
      Object.fromEntries(Object.entries(data ?? {}).map(([key, value]) => [key, typeof value]));
    expect(real.map((event) => event.type).sort()).toEqual([...CATALOG_EVENT_TYPES].sort());
    for (const event of real) {
      const type = event.type as (typeof CATALOG_EVENT_TYPES)[number];
      expect(EVENT_EXAMPLES[type].producer).toBe(event.producer);
      expect(shape(EVENT_EXAMPLES[type].data), type).toEqual(shape(event.data));
    }
  });
});
