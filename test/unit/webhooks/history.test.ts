/**
 * `GET /webhooks/events` by day (usecases/webhooks/history.ts): a page the store answers short, with more of the
 * day behind its cursor (events past their expiry are left out before DynamoDB's TTL deletes them), is read on,
 * so no event of the day is skipped.
 */
import { describe, expect, it } from 'vitest';
import type { EventStore, Page } from '../../../functions/ports/webhooks';
import type { OutboxItem } from '../../../functions/schemas/envelope';
import { NO_VERSIONS, outboxItemOf } from '../../../functions/usecases/webhooks/events';
import { listEvents } from '../../../functions/usecases/webhooks/history';

const at = (minute: number) =>
  outboxItemOf(
    { type: 'payout.processed', data: { payout_id: `po_${minute}` }, trace_id: 'trc', versions: NO_VERSIONS },
    new Date(Date.parse('2026-11-27T08:00:00.000Z') + minute * 60_000),
    30,
  );

describe('listEvents by day', () => {
  it('reads a day on past a short page, and pages on from where it stopped', async () => {
    const day = [0, 1, 2, 3, 4, 5].map(at);
    // The store's pages of the day: two items each, the first answered with one (the other expired).
    const pages = new Map<string | undefined, Page<OutboxItem>>([
      [undefined, { items: [day[0] as OutboxItem], cursor: 'c1' }],
      ['c1', { items: [day[2] as OutboxItem, day[3] as OutboxItem], cursor: 'c2' }],
      ['c2', { items: [day[4] as OutboxItem, day[5] as OutboxItem] }],
    ]);
    const reads: (string | undefined)[] = [];
    const events = {
      byDay: async (_day: string, _from: string, _to: string, _limit: number, cursor?: string) => {
        reads.push(cursor);
        return pages.get(cursor) ?? { items: [] };
      },
    } as unknown as EventStore;
    const ctx = {
      clock: { now: () => new Date('2026-11-27T12:00:00.000Z') },
      events,
      deliveries: { forEvent: async () => [] },
    } as unknown as Parameters<typeof listEvents>[0];
    const window = { from: '2026-11-27T00:00:00.000Z', to: '2026-11-27T23:59:59.999Z' };
    const first = await listEvents(ctx, { ...window, limit: 3 });
    expect(first.items.map((item) => item.event_id)).toEqual(
      [day[0], day[2], day[3]].map((item) => item?.event_id),
    );
    expect(reads).toEqual([undefined, 'c1']);
    const second = await listEvents(ctx, { ...window, limit: 3, cursor: first.cursor });
    expect(second.items.map((item) => item.event_id)).toEqual([day[4], day[5]].map((item) => item?.event_id));
    expect(second.cursor).toBeUndefined();
  });
});
