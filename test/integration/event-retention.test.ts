/**
 * Event body retention on DynamoDB Local: an event's expiry is only ever brought forward (an endpoint with a
 * shorter retention), and a body past its expiry is gone for every reader even before DynamoDB's TTL (which
 * deletes within days) removed the item.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoEventStore } from '../../functions/adapters/aws/webhook-store';
import { NO_VERSIONS, outboxItemOf } from '../../functions/usecases/webhooks/events';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const NOW = new Date('2026-11-26T12:00:00.000Z');
const clock = { now: () => NOW };
let events: DynamoEventStore;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  events = new DynamoEventStore(clients.documents, resources.tableNames.events, clock);
});

const itemAt = (at: Date, ttlDays: number) =>
  outboxItemOf(
    { type: 'payout.processed', data: { payout_id: 'po_r' }, trace_id: 'trc_r', versions: NO_VERSIONS },
    at,
    ttlDays,
  );

describe('event retention', () => {
  it('brings an expiry forward, never back', async () => {
    const item = itemAt(NOW, 30);
    await events.put(item);
    const sevenDays = Math.floor(NOW.getTime() / 1000) + 7 * 86_400;
    await events.shortenRetention(item.event_id, sevenDays);
    expect((await events.get(item.event_id))?.expires_at).toBe(sevenDays);
    await events.shortenRetention(item.event_id, sevenDays + 86_400);
    expect((await events.get(item.event_id))?.expires_at).toBe(sevenDays);
  });

  it('reads a body past its expiry as gone, though TTL has not deleted it yet', async () => {
    const item = itemAt(new Date(NOW.getTime() - 8 * 86_400_000), 7);
    await events.put(item);
    expect(await events.get(item.event_id)).toBeUndefined();
    await events.shortenRetention('evt_unknown', 1);
  });
});
