/** The webhook bodies the signing and verifying benchmarks sign and verify. */

/** The event id of {@link catalogEventJson}'s event. */
export const BENCH_EVENT_ID = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';

/**
 * A `catalog.PriceListUpdated` event ({@link BENCH_EVENT_ID}) of exactly `bytes` bytes of JSON: `changed` lists
 * `changedSkus` prices (default one per 100 bytes), and a note pads it to the size.
 */
export const catalogEventJson = (bytes: number, changedSkus = Math.floor(bytes / 100)): string => {
  const event = {
    event_id: BENCH_EVENT_ID,
    type: 'catalog.PriceListUpdated',
    version: '2026-11-01',
    ts: '2026-11-01T12:00:00.000Z',
    attempt: 1,
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    pricelist_version: 42,
    fx_version: 'fx_2026-11-01T11:45:00Z',
    tax_rule_version: 7,
    data: {
      version: 42,
      effective_from: '2026-11-01T12:00:00.000Z',
      changed: Array.from({ length: changedSkus }, (_, index) => ({
        sku_id: `sku_${index}`,
        price: `${index}.99`,
      })),
      note: '',
    },
  };
  const padding = bytes - Buffer.byteLength(JSON.stringify(event));
  if (padding < 0) throw new Error(`bench body template is larger than ${bytes} bytes`);
  event.data.note = 'x'.repeat(padding);
  const body = JSON.stringify(event);
  if (Buffer.byteLength(body) !== bytes) throw new Error('bench body has the wrong size');
  return body;
};
