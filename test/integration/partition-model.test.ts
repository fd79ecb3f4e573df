/**
 * The partition load model's measuring instrument (bench/partition-model.ts) against DynamoDB Local: the units a
 * request consumed land on the keys it touched — the base table's and, for a write, the index keys the item had
 * and has — and scaled to a goal rate a key shared by every operation (a planted hot key) is reported above
 * 50 % of a partition's limit, while keys of one entity each (fresh ids) are not.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAtGoals, overCeiling, PartitionRecorder, type PhaseUsage } from '../../bench/partition-model';
import type { AwsClients } from '../../functions/adapters/aws/clients';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { engineClients, provisionIsolated } from '../support/engines';

let measured: AwsClients;
let raw: AwsClients;
let resources: ProvisionedResources;
let recorder: PartitionRecorder;

beforeAll(async () => {
  measured = engineClients();
  raw = engineClients();
  resources = await provisionIsolated(raw);
  recorder = new PartitionRecorder(raw.dynamoDb);
  recorder.instrument(measured.dynamoDb);
  recorder.mapTables(resources.tableNames);
}, 60_000);

afterAll(() => {
  measured?.documents.destroy();
  raw?.documents.destroy();
});

/** Runs `operations` operations in two halves, as the workload does. */
const phase = async (name: string, operations: number, operation: (index: number) => Promise<void>) => {
  const usage = recorder.start(name);
  for (let index = 0; index < operations; index += 1) {
    if (index === Math.floor(operations / 2)) recorder.secondHalf();
    await operation(index);
  }
  usage.operations = operations;
  recorder.stop();
  return usage;
};

const unitsOn = (usage: PhaseUsage, name: string) => usage.units.get(name);

describe('the partition recorder', () => {
  it('puts a write’s units on the item’s key, and its index units on the index keys it left and entered', async () => {
    const table = resources.tableNames.deliveries;
    const eventId = `ev-${randomUUID()}`;
    const usage = await phase('moves', 2, async (index) => {
      if (index === 0) {
        await measured.documents.send(
          new PutCommand({
            TableName: table,
            Item: {
              event_id: eventId,
              endpoint_id: 'ep_1',
              endpoint_shard: 'ep_1#7',
              status: 'pending',
              ts_id: `t#${eventId}`,
            },
          }),
        );
      } else {
        await measured.documents.send(
          new UpdateCommand({
            TableName: table,
            Key: { event_id: eventId, endpoint_id: 'ep_1' },
            UpdateExpression: 'SET #status = :delivered',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':delivered': 'delivered' },
          }),
        );
      }
    });
    expect(unitsOn(usage, `deliveries ${eventId}`)?.write).toBeGreaterThanOrEqual(2);
    // The put entered `pending`; the update left it (a delete there) and entered `delivered`. The endpoint index
    // copies keys only: the put wrote there, the update (no key of it changed) did not.
    expect(unitsOn(usage, 'deliveries/by-status-keys pending')?.write).toBeGreaterThan(1);
    expect(unitsOn(usage, 'deliveries/by-status-keys delivered')?.write).toBeGreaterThan(0);
    expect(unitsOn(usage, 'deliveries/by-endpoint-keys ep_1#7')?.write).toBe(1);
    expect(recorder.errors).toEqual([]);
  });

  it('puts a query’s units on the partition its key condition names', async () => {
    const usage = await phase('query', 2, async () => {
      await measured.documents.send(
        new QueryCommand({
          TableName: resources.tableNames.deliveries,
          IndexName: 'by-status-keys',
          KeyConditionExpression: '#status = :status',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':status': 'delivered' },
        }),
      );
    });
    expect(unitsOn(usage, 'deliveries/by-status-keys delivered')?.read).toBeGreaterThan(0);
  });
});

describe('the model at goal rates', () => {
  it('reports a planted hot key shared by every operation above 50 %, and keys of one entity each below', async () => {
    const table = resources.tableNames.idempotency;
    const usage = await phase('planted', 20, async () => {
      // The planted hot key: every operation writes the same item.
      await measured.documents.send(
        new PutCommand({ TableName: table, Item: { id: 'planted-hot-key', n: 1 } }),
      );
      // A key of its own per operation, written and removed.
      const own = `own-${randomUUID()}`;
      await measured.documents.send(new PutCommand({ TableName: table, Item: { id: own, n: 1 } }));
      await measured.documents.send(new DeleteCommand({ TableName: table, Key: { id: own } }));
    });
    const loads = loadAtGoals(new Map([['planted', usage]]), { planted: 1_000 });
    const over = overCeiling(loads);
    expect(over.map((load) => load.name)).toEqual(['idempotency planted-hot-key']);
    expect(over[0]).toMatchObject({ writePerSecond: 1_000, share: 1, perEntity: false });
    const entity = loads.find((load) => load.name.startsWith('idempotency own-'));
    expect(entity).toMatchObject({ perEntity: true });
    expect(entity?.share).toBeLessThan(0.01);
  });

  it('scales each phase by its own rate and sums phases on a shared key', () => {
    const key = { table: 'catalog' as const, key: 'pointer' };
    const usageOf = (read: number): PhaseUsage => ({
      operations: 10,
      units: new Map([['catalog pointer', { ref: key, read, write: 0, halves: 3 }]]),
    });
    const [load] = loadAtGoals(
      new Map([
        ['price', usageOf(10)],
        ['quote', usageOf(20)],
      ]),
      { price: 1_000, quote: 100 },
    );
    // 1 read per price read at 1 000/s, 2 per quote at 100/s.
    expect(load).toMatchObject({ name: 'catalog pointer', readPerSecond: 1_200, mostFrom: 'price' });
    expect(load?.share).toBeCloseTo(0.4);
  });

  it('spreads a sharded family over its declared size, though a short run touched only its low members', () => {
    // 10 operations wrote 10 units over members 0…9 of a 16-key family (each member once).
    const members = Array.from({ length: 10 }, (_, shard) => {
      const ref = { table: 'events' as const, index: 'by-day', key: `2026-11-26#${shard}` };
      return [`events/by-day 2026-11-26#${shard}`, { ref, read: 0, write: 1, halves: 1 }] as const;
    });
    const usage: PhaseUsage = { operations: 10, units: new Map(members) };
    const seen = loadAtGoals(new Map([['delivery', usage]]), { delivery: 1_000 });
    const declared = loadAtGoals(new Map([['delivery', usage]]), { delivery: 1_000 }, (ref) =>
      ref.table === 'events' && ref.index === 'by-day' ? 16 : undefined,
    );
    // 1 000 writes/s over the family: 100 per member if it had 10 members, 62.5 with its 16.
    expect(seen).toMatchObject([{ name: 'events/by-day 2026-11-26#* (10 keys)', writePerSecond: 100 }]);
    expect(declared).toMatchObject([{ name: 'events/by-day 2026-11-26#* (16 keys)', writePerSecond: 62.5 }]);
  });
});
