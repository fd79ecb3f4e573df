/**
 * The stores behind partner callbacks, on DynamoDB Local: a confirmation is written once on its delivery
 * record (conditional write) however many writers race, and the DPoP `jti` cache claims each `jti` once per key
 * until it expires.
 */
import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoDeliveryRepository, DynamoDpopReplayCache } from '../../functions/adapters/aws/webhook-store';
import type { ConfirmationRecord, DeliveryRecord } from '../../functions/ports/webhooks';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let deliveries: DynamoDeliveryRepository;
let replays: DynamoDpopReplayCache;
let idempotencyTable: string;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  deliveries = new DynamoDeliveryRepository(clients.documents, resources.tableNames.deliveries);
  replays = new DynamoDpopReplayCache(clients.documents, resources.tableNames.idempotency);
  idempotencyTable = resources.tableNames.idempotency;
});

const delivery = (eventId: string, endpointId: string): DeliveryRecord => ({
  event_id: eventId,
  endpoint_id: endpointId,
  event_type: 'payout.processed',
  ts_id: `2026-11-22T10:00:00.000Z#${eventId}`,
  status: 'delivered',
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:01.000Z',
  last_attempt: 1,
  completed_attempt: 1,
  attempts: [],
  expires_at: 1_900_000_000,
});

const confirmation = (index: number): ConfirmationRecord => ({
  outcome: index % 2 === 0 ? 'accepted' : 'rejected',
  reference: `ref-${index}`,
  confirmed_at: `2026-11-22T10:00:${String(index).padStart(2, '0')}.000Z`,
  idempotency_key_sha256: String(index).padStart(64, '0'),
});

describe('DynamoDeliveryRepository.confirm', () => {
  it('records one confirmation of 20 racing writers; the others get it back', async () => {
    await deliveries.createIfAbsent(delivery('evt_race', 'ep_a'));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => deliveries.confirm('evt_race', 'ep_a', confirmation(index))),
    );
    const confirmed = results.filter((result) => result.status === 'confirmed');
    expect(confirmed).toHaveLength(1);
    const winner = confirmed[0]?.status === 'confirmed' ? confirmed[0].confirmation : undefined;
    for (const result of results.filter((candidate) => candidate.status !== 'confirmed')) {
      expect(result).toEqual({ status: 'exists', confirmation: winner });
    }
    const stored = await deliveries.get('evt_race', 'ep_a');
    expect(stored?.confirmation).toEqual(winner);
    // The rest of the record is untouched.
    expect(stored).toMatchObject({
      status: 'delivered',
      last_attempt: 1,
      updated_at: '2026-11-22T10:00:01.000Z',
    });
  });

  it('creates nothing for a delivery that does not exist', async () => {
    await deliveries.createIfAbsent(delivery('evt_other', 'ep_a'));
    expect(await deliveries.confirm('evt_other', 'ep_b', confirmation(1))).toEqual({ status: 'missing' });
    expect(await deliveries.confirm('evt_none', 'ep_a', confirmation(1))).toEqual({ status: 'missing' });
    expect(await deliveries.get('evt_other', 'ep_b')).toBeUndefined();
    expect(await deliveries.get('evt_none', 'ep_a')).toBeUndefined();
  });
});

describe('DynamoDpopReplayCache', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  const nowSeconds = now.getTime() / 1000;

  it('claims a jti once per key, also under concurrency', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, () => replays.remember('jkt-a', 'jti-1', nowSeconds + 60, now)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await replays.remember('jkt-a', 'jti-1', nowSeconds + 60, now)).toBe(false);
    // Another key's proof with the same jti is another proof.
    expect(await replays.remember('jkt-b', 'jti-1', nowSeconds + 60, now)).toBe(true);
  });

  it('forgets a jti once its proof could no longer be accepted, even before TTL removes the item', async () => {
    expect(await replays.remember('jkt-a', 'jti-2', nowSeconds + 60, now)).toBe(true);
    expect(await replays.remember('jkt-a', 'jti-2', nowSeconds + 60, new Date(now.getTime() + 60_000))).toBe(
      false,
    );
    expect(await replays.remember('jkt-a', 'jti-2', nowSeconds + 200, new Date(now.getTime() + 61_000))).toBe(
      true,
    );
  });

  it('stores hashes under its own prefix, with the TTL attribute of the idempotency table', async () => {
    expect(await replays.remember('jkt-c', 'a jti with spaces', nowSeconds + 60, now)).toBe(true);
    const id = `dpop-jti#jkt-c#${createHash('sha256').update('a jti with spaces').digest('hex')}`;
    const item = await clients.documents.send(
      new GetCommand({ TableName: idempotencyTable, Key: { id }, ConsistentRead: true }),
    );
    expect(item.Item).toEqual({ id, expiration: nowSeconds + 60, kind: 'dpop_jti' });
  });
});
