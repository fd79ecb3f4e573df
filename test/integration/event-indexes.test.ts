/**
 * The events' keys-only indexes on DynamoDB Local (`by-day-keys`, `fanout-pending-keys`): a day listing and the
 * sweeper's pending read give whole events, read back by key; recording the fan-out writes only the pending
 * marker's removal, an expunction no index at all; and every stage of their staged replacement reads only indexes
 * its tables have built, on its own tables and on the next stage's.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoEventStore } from '../../functions/adapters/aws/webhook-store';
import { createTableInput } from '../../functions/adapters/local/bootstrap';
import { TABLES } from '../../functions/definitions';
import type { OutboxItem } from '../../functions/schemas/envelope';
import { NO_VERSIONS, outboxItemOf } from '../../functions/usecases/webhooks/events';
import { engineClients, provisionIsolated, uniquePrefix } from '../support/engines';
import { indexWrites, stagedTables } from '../support/staged-indexes';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const NOW = new Date('2026-11-27T12:00:00.000Z');
const clock = { now: () => NOW };
const DAY = '2026-11-27';

/** An event of about 2 KB (its body is what a whole-item index would have copied), `minute` minutes into the day. */
const eventAt = (minute: number): OutboxItem =>
  outboxItemOf(
    {
      type: 'payout.processed',
      data: { payout_id: `po_${minute}`, note: 'n'.repeat(2_000) },
      trace_id: `trc_${minute}`,
      versions: NO_VERSIONS,
    },
    new Date(Date.parse(`${DAY}T08:00:00.000Z`) + minute * 60_000),
    30,
  );

const listDay = async (events: DynamoEventStore): Promise<OutboxItem[]> => {
  const items: OutboxItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await events.byDay(DAY, `${DAY}T00:00:00.000Z`, `${DAY}T23:59:59.999Z`, 4, cursor);
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
};

describe('the events indexes copy keys only', () => {
  let events: DynamoEventStore;

  beforeAll(async () => {
    events = new DynamoEventStore(
      clients.documents,
      (await provisionIsolated(clients)).tableNames.events,
      clock,
    );
  });

  it('a put writes one small entry to each index; the fan-out record removes the pending one only; an expunction none', async () => {
    const item = eventAt(0);
    expect(await indexWrites(clients.dynamoDb, () => events.put(item))).toEqual({
      'by-day-keys': 1,
      'fanout-pending-keys': 1,
    });
    expect(
      await indexWrites(clients.dynamoDb, () => events.markFannedOut(item.event_id, NOW.toISOString(), 2)),
    ).toEqual({ 'fanout-pending-keys': 1 });
    expect(
      await indexWrites(clients.dynamoDb, () => events.expunge(item.event_id, NOW.toISOString(), 'op')),
    ).toEqual({});
  });

  it('a day listing and the pending read give whole events, in time order', async () => {
    const written = [1, 2, 3, 4, 5, 6].map(eventAt);
    for (const item of written) await events.put(item);
    const listed = (await listDay(events)).filter((item) => item.expunged_at === undefined);
    expect(listed.map((item) => item.event_id)).toEqual(written.map((item) => item.event_id));
    expect(listed[2]).toEqual(written[2]);
    const pending = await events.pendingFanout(`${DAY}T23:00:00.000Z`, 3);
    expect(pending).toEqual(written.slice(0, 3));
  });
});

describe('the staged replacement of the events indexes', () => {
  it("each stage reads only indexes its tables have built, on its own tables and on the next stage's", async () => {
    const written = [0, 1, 2, 3, 4].map(eventAt);
    for (const { stage, shape, table, readRetired } of stagedTables(TABLES.events)) {
      const name = `${uniquePrefix()}events`;
      await clients.dynamoDb.send(new CreateTableCommand(createTableInput(table, name)));
      const events = new DynamoEventStore(clients.documents, name, clock, {
        readRetiredIndexes: readRetired,
      });
      for (const item of written) await events.put(item);
      const context = `stage ${stage} on the ${shape} table`;
      expect(await listDay(events), context).toEqual(written);
      expect(await events.pendingFanout(`${DAY}T23:00:00.000Z`, 10), context).toEqual(written);
    }
  });
});
