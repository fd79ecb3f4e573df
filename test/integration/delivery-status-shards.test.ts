/**
 * Deliveries' status stored in shards (`pending#0` … `pending#63`) on DynamoDB Local: the store answers the status
 * alone, a listing by status merges the shards and the plain status of deliveries written before, in time order
 * (ties by endpoint), page by page, each delivery once; status changes move a delivery between listings; a replay
 * restarts and reverts a delivery stored in either form.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import {
  DynamoDeliveryRepository,
  STATUS_SHARDS,
  storedStatus,
} from '../../functions/adapters/aws/webhook-store';
import type { DeliveryStatus } from '../../functions/domain/webhooks/envelope';
import type { DeliveryRecord } from '../../functions/ports/webhooks';
import { deliveryRecord } from '../support/delivery-records';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let deliveries: DynamoDeliveryRepository;
let tableName: string;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  tableName = resources.tableNames.deliveries;
  deliveries = new DynamoDeliveryRepository(clients.documents, tableName);
});

const record = (minute: number, endpointId: string, status: DeliveryStatus): DeliveryRecord =>
  deliveryRecord(minute, endpointId, status, 3);

const listAll = async (status: DeliveryStatus, pageSize: number): Promise<string[]> => {
  const listed: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages += 1) {
    const page = await deliveries.query(
      { status },
      '2026-11-22T00:00:00.000Z',
      '2026-11-22T23:59:59.999Z',
      pageSize,
      cursor,
    );
    listed.push(...page.items.map((item) => `${item.event_id}/${item.endpoint_id}:${item.status}`));
    cursor = page.cursor;
    if (!cursor) break;
  }
  return listed;
};

describe('deliveries by status, in shards', () => {
  it('stores the sharded form, answers the status alone, and lists every shard and the pre-shard form in order, page by page', async () => {
    const created: DeliveryRecord[] = [];
    // 40 events × 3 endpoints pending: ties on ts_id (one event, three endpoints) within and across shards.
    for (let minute = 0; minute < 40; minute += 1)
      for (const endpoint of ['ep_a', 'ep_b', 'ep_c'])
        created.push(await deliveries.createIfAbsent(record(minute, endpoint, 'pending')));
    // Deliveries written before the shards: the plain status.
    const legacy = [record(100, 'ep_a', 'pending'), record(101, 'ep_b', 'dead')];
    for (const item of legacy)
      await clients.documents.send(new PutCommand({ TableName: tableName, Item: item }));

    const raw = await clients.documents.send(
      new GetCommand({
        TableName: tableName,
        Key: { event_id: 'evt_000', endpoint_id: 'ep_a' },
        ConsistentRead: true,
      }),
    );
    expect(raw.Item?.status).toBe(storedStatus('evt_000', 'ep_a', 'pending'));
    expect(raw.Item?.status).toMatch(/^pending#\d+$/);
    expect((await deliveries.get('evt_000', 'ep_a'))?.status).toBe('pending');
    expect((await deliveries.forEvent('evt_000')).map((item) => item.status)).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
    const shards = new Set(created.map((item) => storedStatus(item.event_id, item.endpoint_id, 'pending')));
    expect(shards.size).toBeGreaterThan(STATUS_SHARDS / 2);

    const expected = [...created, legacy[0] as DeliveryRecord].map(
      (item) => `${item.event_id}/${item.endpoint_id}:pending`,
    );
    expect(await listAll('pending', 7)).toEqual(expected);
    expect(await listAll('pending', 500)).toEqual(expected);
    expect(await listAll('dead', 7)).toEqual(['evt_101/ep_b:dead']);

    // A cursor reused with a window that ends before it, and an inverted window: nothing, not an error.
    const first = await deliveries.query(
      { status: 'pending' },
      '2026-11-22T00:00:00.000Z',
      '2026-11-22T23:59:59.999Z',
      50,
    );
    expect(first.cursor).toBeDefined();
    const before = await deliveries.query(
      { status: 'pending' },
      '2026-11-22T00:00:00.000Z',
      '2026-11-22T10:05:00.000Z',
      50,
      first.cursor,
    );
    expect(before.items).toEqual([]);
    for (const index of [{ status: 'pending' as const }, { endpointId: 'ep_a' }]) {
      expect(
        (await deliveries.query(index, '2026-11-23T00:00:00.000Z', '2026-11-22T00:00:00.000Z', 10)).items,
      ).toEqual([]);
    }
  });

  it('a claim after the event was expunged says so (a message may carry a copy of the event); a missing one stays missing', async () => {
    await deliveries.markEventExpunged('evt_002', 'ep_a', '2026-11-22T10:00:30.000Z');
    await deliveries.markEventExpunged('evt_002', 'ep_a', '2026-11-22T10:00:40.000Z');
    expect((await deliveries.get('evt_002', 'ep_a'))?.event_expunged).toBe('2026-11-22T10:00:30.000Z');
    expect(
      await deliveries.claim('evt_002', 'ep_a', 1, '2026-11-22T10:01:00.000Z', '2026-11-22T10:02:00.000Z'),
    ).toBe('expunged');
    await deliveries.markEventExpunged('evt_404', 'ep_a', '2026-11-22T10:00:30.000Z');
    expect(await deliveries.get('evt_404', 'ep_a')).toBeUndefined();
  });

  it('moves a delivery between listings with its status, and replays one stored in either form', async () => {
    expect(
      await deliveries.claim('evt_001', 'ep_b', 1, '2026-11-22T10:01:00.000Z', '2026-11-22T10:02:00.000Z'),
    ).toBe('claimed');
    await deliveries.recordAttempt(
      'evt_001',
      'ep_b',
      { attempt: 1, at: '2026-11-22T10:01:01.000Z', duration_ms: 5, outcome: 'delivered', http_status: 200 },
      { status: 'delivered' },
      '2026-11-22T10:01:01.000Z',
    );
    expect(await listAll('delivered', 10)).toEqual(['evt_001/ep_b:delivered']);
    expect(await listAll('pending', 500)).not.toContain('evt_001/ep_b:pending');

    // A replay of the sharded one and of the pre-shard dead one: restarted, then reverted.
    for (const [eventId, endpointId, from] of [
      ['evt_001', 'ep_b', 'delivered'],
      ['evt_101', 'ep_b', 'dead'],
    ] as const) {
      expect(
        await deliveries.startReplay(eventId, endpointId, 'rpl_1', from, '2026-11-22T11:00:00.000Z'),
      ).toBeGreaterThan(0);
      expect((await deliveries.get(eventId, endpointId))?.status).toBe('retrying');
      await deliveries.revertReplay(eventId, endpointId, 'rpl_1', from);
      expect((await deliveries.get(eventId, endpointId))?.status).toBe(from);
    }
    expect(await listAll('dead', 7)).toEqual(['evt_101/ep_b:dead']);
    expect(await listAll('retrying', 7)).toEqual([]);
    // A replay that expects another status changes nothing.
    expect(
      await deliveries.startReplay('evt_002', 'ep_a', 'rpl_2', 'dead', '2026-11-22T11:00:00.000Z'),
    ).toBeUndefined();
  });
});
