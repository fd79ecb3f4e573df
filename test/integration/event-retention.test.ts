/**
 * Event body retention on DynamoDB Local: the fan-out's record brings an event's expiry forward (an endpoint with a
 * shorter retention), and a body past its expiry is gone for every reader — read by id, listed by day, expunged —
 * even before DynamoDB's TTL (which deletes within days) removed the item.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoDeliveryRepository, DynamoEventStore } from '../../functions/adapters/aws/webhook-store';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../functions/usecases/webhooks/context';
import { NO_VERSIONS, outboxItemOf, publishEvent } from '../../functions/usecases/webhooks/events';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const NOW = new Date('2026-11-26T12:00:00.000Z');
const clock = { now: () => NOW };
let events: DynamoEventStore;
let deliveries: DynamoDeliveryRepository;
let table: string;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  table = resources.tableNames.events;
  events = new DynamoEventStore(clients.documents, table, clock);
  deliveries = new DynamoDeliveryRepository(clients.documents, resources.tableNames.deliveries);
});

const itemAt = (at: Date, ttlDays: number) =>
  outboxItemOf(
    { type: 'payout.processed', data: { payout_id: 'po_r' }, trace_id: 'trc_r', versions: NO_VERSIONS },
    at,
    ttlDays,
  );

describe('event retention', () => {
  it("keeps the body of a tenant's events as long as its retention (WEBHOOK_TENANT_RETENTION_DAYS), others the default", async () => {
    const ctx = {
      clock,
      events,
      deliveries,
      settings: { ...DEFAULT_WEBHOOK_SETTINGS, tenantRetentionDays: { 'eu-1': 7 } },
    };
    const publish = (tenant: string) =>
      publishEvent(
        ctx,
        {
          type: 'payout.processed',
          tenant,
          data: { payout_id: 'po_t', status: 'paid', amount_minor: 1, currency: 'EUR' },
        },
        'trc_t',
        NO_VERSIONS,
      );
    const short = await publish('eu-1');
    const other = await publish('us-1');
    const days = (item: { expires_at: number } | undefined) =>
      item ? (item.expires_at - Math.floor(NOW.getTime() / 1000)) / 86_400 : undefined;
    expect(days(await events.get(short.item.event_id))).toBe(7);
    expect(days(await events.get(other.item.event_id))).toBe(30);
  });

  it('brings the expiry forward with the fan-out record, and leaves it when none is given', async () => {
    const item = itemAt(NOW, 30);
    await events.put(item);
    const sevenDays = Math.floor(NOW.getTime() / 1000) + 7 * 86_400;
    await events.markFannedOut(item.event_id, NOW.toISOString(), 2, sevenDays);
    expect(await events.get(item.event_id)).toMatchObject({ expires_at: sevenDays, fanned_out_to: 2 });
    await events.markFannedOut(item.event_id, NOW.toISOString(), 2);
    expect((await events.get(item.event_id))?.expires_at).toBe(sevenDays);
  });

  it('a body past its expiry is gone for every reader though TTL has not deleted it yet', async () => {
    const at = new Date(NOW.getTime() - 8 * 86_400_000);
    const item = itemAt(at, 7);
    await events.put(item);
    expect(await events.get(item.event_id)).toBeUndefined();
    const day = at.toISOString().slice(0, 10);
    const listed = await events.byDay(day, `${day}T00:00:00.000Z`, `${day}T23:59:59.999Z`, 50);
    expect(listed.items.map((listedItem) => listedItem.event_id)).not.toContain(item.event_id);
    expect(await events.expunge(item.event_id, NOW.toISOString(), 'operator:test')).toBeUndefined();
  });

  it('records nothing for an event that does not exist', async () => {
    await events.markFannedOut('evt_unknown', NOW.toISOString(), 1, 1);
    const raw = await clients.documents.send(
      new GetCommand({ TableName: table, Key: { event_id: 'evt_unknown' } }),
    );
    expect(raw.Item).toBeUndefined();
  });
});
