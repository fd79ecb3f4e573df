/**
 * Deliveries listed by endpoint in shards (`<endpoint_id>#0` … `#63`) and by status through keys-only indexes on
 * DynamoDB Local: the shard key written at creation and hidden from the port, listings merged over the shards in
 * time order page by page and read back by key, a claim that writes nothing to an index; the staged replacement
 * of the indexes that copied whole deliveries (each stage reading what it may); deliveries written before the
 * shard key backfilled (resumably, each once) by `npm run migrate -- endpoint-shards` and by the local stack's
 * start on a table of an older shape.
 */
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { run as migrate } from '../../bin/migrate';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { backfillEndpointShards, type MigrationProgress } from '../../functions/adapters/aws/migrations';
import { DynamoDeliveryRepository } from '../../functions/adapters/aws/webhook-store';
import { createTableInput, ensureTable } from '../../functions/adapters/local/bootstrap';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import { TABLES, type TableDefinition } from '../../functions/definitions';
import { ENDPOINT_SHARDS, endpointShardKey } from '../../functions/domain/webhooks/envelope';
import { InvalidCursorError } from '../../functions/shared/cursor';
import { cliWorld } from '../support/cli-world';
import { deliveryRecord } from '../support/delivery-records';
import { engineClients, provisionIsolated, uniquePrefix } from '../support/engines';
import { indexWrites, stagedTables } from '../support/staged-indexes';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const DAY = { from: '2026-11-22T00:00:00.000Z', to: '2026-11-22T23:59:59.999Z' };

const record = (minute: number, endpointId: string) => deliveryRecord(minute, endpointId);

const listAll = async (repository: DynamoDeliveryRepository, endpointId: string, pageSize: number) => {
  const listed: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 500; pages += 1) {
    const page = await repository.query({ endpointId }, DAY.from, DAY.to, pageSize, cursor);
    listed.push(...page.items.map((item) => `${item.event_id}/${item.endpoint_id}`));
    cursor = page.cursor;
    if (!cursor) return listed;
  }
  throw new Error('the listing did not end');
};

/** The deliveries table as it was before the keys-only indexes: the retired ones, which copy whole items. */
const OLD_SHAPE: TableDefinition = {
  ...TABLES.deliveries,
  globalSecondaryIndexes: [...(TABLES.deliveries.retiredGlobalSecondaryIndexes ?? [])],
  retiredGlobalSecondaryIndexes: [],
};

/** A table (of the old shape by default) holding `count` deliveries to one endpoint written without the new key. */
const oldTable = async (count: number, endpointId: string, shape = OLD_SHAPE): Promise<string> => {
  const tableName = `${uniquePrefix()}deliveries`;
  await clients.dynamoDb.send(new CreateTableCommand(createTableInput(shape, tableName)));
  for (let minute = 0; minute < count; minute += 1)
    await clients.documents.send(new PutCommand({ TableName: tableName, Item: record(minute, endpointId) }));
  return tableName;
};

const indexesOf = async (tableName: string) =>
  (
    (await clients.dynamoDb.send(new DescribeTableCommand({ TableName: tableName }))).Table
      ?.GlobalSecondaryIndexes ?? []
  )
    .filter((index) => index.IndexStatus !== 'DELETING')
    .map((index) => `${index.IndexName} ${index.Projection?.ProjectionType}`)
    .sort();

describe('deliveries by endpoint, in shards', () => {
  let deliveries: DynamoDeliveryRepository;
  let tableName: string;

  beforeAll(async () => {
    tableName = (await provisionIsolated(clients)).tableNames.deliveries;
    deliveries = new DynamoDeliveryRepository(clients.documents, tableName);
  });

  it('writes the shard key once at creation, hides it from the port, and lists every shard in time order, page by page', async () => {
    const expected: string[] = [];
    for (let minute = 0; minute < 150; minute += 1) {
      const created = await deliveries.createIfAbsent(record(minute, 'ep_a'));
      expected.push(`${created.event_id}/ep_a`);
      if (minute % 3 === 0) await deliveries.createIfAbsent(record(minute, 'ep_b'));
    }
    const raw = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { event_id: 'evt_0007', endpoint_id: 'ep_a' } }),
    );
    expect(raw.Item?.endpoint_shard).toBe(endpointShardKey('ep_a', 'evt_0007'));
    expect(await deliveries.get('evt_0007', 'ep_a')).not.toHaveProperty('endpoint_shard');
    const shards = new Set(expected.map((id) => endpointShardKey('ep_a', id.split('/')[0] as string)));
    expect(shards.size).toBeGreaterThan(ENDPOINT_SHARDS / 2);

    expect(await listAll(deliveries, 'ep_a', 7)).toEqual(expected);
    expect(await listAll(deliveries, 'ep_a', 200)).toEqual(expected);
    expect(await listAll(deliveries, 'ep_b', 11)).toHaveLength(50);
    expect(await listAll(deliveries, 'ep_none', 10)).toEqual([]);

    // A window inside the day: only its deliveries, still in order.
    const window = await deliveries.query(
      { endpointId: 'ep_a' },
      '2026-11-22T10:10:00.000Z',
      '2026-11-22T10:19:59.999Z',
      50,
    );
    expect(window.items.map((item) => item.event_id)).toEqual(
      Array.from({ length: 10 }, (_, index) => `evt_${String(10 + index).padStart(4, '0')}`),
    );
    expect(window.cursor).toBeUndefined();
  });

  it("refuses a status listing's cursor, and a cursor of another listing's kind, as invalid", async () => {
    const byStatus = await deliveries.query({ status: 'pending' }, DAY.from, DAY.to, 5);
    expect(byStatus.cursor).toBeDefined();
    await expect(
      deliveries.query({ endpointId: 'ep_a' }, DAY.from, DAY.to, 5, byStatus.cursor),
    ).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('indexes keys only: a listing reads the deliveries back whole, and only a status change writes to an index', async () => {
    const created = await deliveries.createIfAbsent(record(500, 'ep_k'));
    const raw = await clients.documents.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'by-endpoint-keys',
        KeyConditionExpression: 'endpoint_shard = :key',
        ExpressionAttributeValues: { ':key': endpointShardKey('ep_k', created.event_id) },
      }),
    );
    expect(Object.keys(raw.Items?.[0] ?? {}).sort()).toEqual([
      'endpoint_id',
      'endpoint_shard',
      'event_id',
      'ts_id',
    ]);
    expect((await deliveries.query({ endpointId: 'ep_k' }, DAY.from, DAY.to, 10)).items).toEqual([created]);

    // The claim sets the attempt and its lease: no index key, so no index write.
    const now = '2026-11-22T19:00:00.000Z';
    expect(
      await indexWrites(clients.dynamoDb, () =>
        deliveries.claim(created.event_id, 'ep_k', 1, now, '2026-11-22T19:01:00.000Z'),
      ),
    ).toEqual({});
    // The outcome moves the delivery to another status: its key leaves one place of the status index for another.
    const attempt = { attempt: 1, at: now, outcome: 'delivered' as const, http_status: 204, duration_ms: 12 };
    expect(
      await indexWrites(clients.dynamoDb, () =>
        deliveries.recordAttempt(created.event_id, 'ep_k', attempt, { status: 'delivered' }, now),
      ),
    ).toEqual({ 'by-status-keys': 2 });
    const delivered = await deliveries.query({ status: 'delivered' }, DAY.from, DAY.to, 10);
    expect(delivered.items).toEqual([
      expect.objectContaining({ event_id: created.event_id, status: 'delivered', attempts: [attempt] }),
    ]);
    expect(delivered.items[0]).not.toHaveProperty('endpoint_shard');
  });
});

describe('the staged replacement of the indexes, and deliveries older than the shard key', () => {
  it("each stage reads only indexes its tables have built, on its own shape and on the next stage's", async () => {
    const expected = Array.from({ length: 12 }, (_, minute) => `${record(minute, 'ep_s').event_id}/ep_s`);
    for (const { stage, shape, table, readRetired } of stagedTables(TABLES.deliveries)) {
      const name = `${uniquePrefix()}deliveries`;
      await clients.dynamoDb.send(new CreateTableCommand(createTableInput(table, name)));
      const repository = new DynamoDeliveryRepository(clients.documents, name, {
        readRetiredIndexes: readRetired,
      });
      for (let minute = 0; minute < 12; minute += 1) await repository.createIfAbsent(record(minute, 'ep_s'));
      expect(await listAll(repository, 'ep_s', 5), `stage ${stage} on the ${shape} table`).toEqual(expected);
      const pending = await repository.query({ status: 'pending' }, DAY.from, DAY.to, 20);
      expect(pending.items.map((item) => `${item.event_id}/${item.endpoint_id}`)).toEqual(expected);
      expect(pending.items[0]).toEqual(record(0, 'ep_s'));
    }
  });

  it('deliveries written before the shard key are listed once backfilled, each once, resumably', async () => {
    const tableName = await oldTable(60, 'ep_old', TABLES.deliveries);
    const expected = Array.from({ length: 60 }, (_, minute) => `${record(minute, 'ep_old').event_id}/ep_old`);
    const repository = new DynamoDeliveryRepository(clients.documents, tableName);
    expect(await listAll(repository, 'ep_old', 9)).toEqual([]);

    // A run stopped after its first pages, resumed from the progress it saved: every delivery updated once.
    let saved: MigrationProgress | undefined;
    let pages = 0;
    await expect(
      backfillEndpointShards(clients.documents, tableName, {
        segments: 2,
        pageSize: 10,
        onPage: (progress) => {
          saved = progress;
          pages += 1;
          if (pages === 2) throw new Error('stopped');
        },
      }),
    ).rejects.toThrow('stopped');
    expect(saved).toBeDefined();
    const resumed = await backfillEndpointShards(clients.documents, tableName, {
      segments: 2,
      pageSize: 10,
      progress: saved as MigrationProgress,
    });
    const again = await backfillEndpointShards(clients.documents, tableName);
    expect(again.updated).toBe(0);
    expect(resumed.updated).toBeLessThanOrEqual(60);
    expect(await listAll(repository, 'ep_old', 9)).toEqual(expected);
  });

  it('npm run migrate -- endpoint-shards backfills a table, saves its progress, resumes from it, and refuses a wrong line', async () => {
    const tableName = await oldTable(25, 'ep_cli');
    // The CLI's own client (it destroys it at the end), pointed at DynamoDB Local.
    const client = () =>
      new DynamoDBClient({
        endpoint: inject('dynamoDbEndpoint'),
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
    const first = cliWorld({});
    const line = [
      'endpoint-shards',
      '--table',
      tableName,
      '--segments',
      '3',
      '--page-size',
      '4',
      '--state',
      's.json',
    ];
    expect(await migrate(line, first.io, client)).toBe(0);
    expect(JSON.parse(first.out.join(''))).toEqual({
      migration: 'endpoint-shards',
      table: tableName,
      scanned: 25,
      updated: 25,
    });
    expect(JSON.parse(first.written.get('s.json') ?? '{}')).toEqual({
      migration: 'endpoint-shards',
      segments: [null, null, null],
    });
    const raw = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { event_id: 'evt_0003', endpoint_id: 'ep_cli' } }),
    );
    expect(raw.Item?.endpoint_shard).toBe(endpointShardKey('ep_cli', 'evt_0003'));

    // A finished state: the rerun reads nothing. A state of another segment count is refused.
    const done = cliWorld({ 's.json': first.written.get('s.json') ?? '' });
    expect(await migrate(line, done.io, client)).toBe(0);
    expect(JSON.parse(done.out.join(''))).toMatchObject({ scanned: 0, updated: 0 });
    const other = cliWorld({ 's.json': JSON.stringify({ segments: [null] }) });
    expect(await migrate(line, other.io, client)).toBe(2);
    expect(other.err.join('')).toContain('holds no progress of 3 segments');
    // A save cut short by a kill: refused with what to do (starting over repeats no write).
    const cut = cliWorld({ 's.json': '{"migration":"endpoint-shards","segm' });
    expect(await migrate(line, cut.io, client)).toBe(2);
    expect(cut.err.join('')).toContain(
      's.json is not a saved progress (cut short?): remove it to start over',
    );

    const wrong = cliWorld({});
    expect(await migrate(['endpoint-shards'], wrong.io, client)).toBe(2);
    expect(wrong.err.join('')).toContain('--table names the deliveries table');
    expect(await migrate(['reindex', '--table', tableName], wrong.io, client)).toBe(2);
    expect(wrong.err.join('')).toContain('unknown migration reindex');
  });

  it("the local stack's start rebuilds a kept table of the old shape in the new one, the old deliveries listable", async () => {
    const tableName = await oldTable(30, 'ep_kept');
    expect(await indexesOf(tableName)).toEqual(['by-endpoint-shard ALL', 'by-status ALL']);
    await ensureTable(clients.dynamoDb, TABLES.deliveries, tableName);
    expect(await indexesOf(tableName)).toEqual(['by-endpoint-keys KEYS_ONLY', 'by-status-keys KEYS_ONLY']);
    const repository = new DynamoDeliveryRepository(clients.documents, tableName);
    expect(await listAll(repository, 'ep_kept', 8)).toHaveLength(30);
    expect((await repository.get('evt_0029', 'ep_kept'))?.status).toBe('pending');
    // Idempotent: a second start changes nothing.
    await ensureTable(clients.dynamoDb, TABLES.deliveries, tableName);
    expect(await listAll(repository, 'ep_kept', 8)).toHaveLength(30);
  });

  /** A copy table holding deliveries `from` … `to - 1` of one endpoint, as a killed rebuild leaves it. */
  const copyWith = async (tableName: string, endpointId: string, from: number, to: number) => {
    await clients.dynamoDb.send(
      new CreateTableCommand(createTableInput(TABLES.deliveries, `${tableName}.rebuild`)),
    );
    for (let minute = from; minute < to; minute += 1)
      await clients.documents.send(
        new PutCommand({ TableName: `${tableName}.rebuild`, Item: record(minute, endpointId) }),
      );
  };

  const afterStart = async (tableName: string, endpointId: string) => {
    await ensureTable(clients.dynamoDb, TABLES.deliveries, tableName);
    await expect(
      clients.dynamoDb.send(new DescribeTableCommand({ TableName: `${tableName}.rebuild` })),
    ).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    expect(await indexesOf(tableName)).toEqual(['by-endpoint-keys KEYS_ONLY', 'by-status-keys KEYS_ONLY']);
    return listAll(new DynamoDeliveryRepository(clients.documents, tableName), endpointId, 6);
  };

  it('a rebuild killed after the table was dropped resumes from its copy at the next start, nothing lost', async () => {
    // Killed after the copy was filled and the table dropped: only `<table>.rebuild` holds the items.
    const tableName = `${uniquePrefix()}deliveries`;
    await copyWith(tableName, 'ep_copy', 0, 20);
    expect(await afterStart(tableName, 'ep_copy')).toHaveLength(20);
  });

  it('a rebuild killed while filling its copy starts the copy again from the intact table, nothing lost', async () => {
    // Killed during the first copy: the table still has its old shape and every item; the copy has 5 of 25.
    const tableName = await oldTable(25, 'ep_partial');
    await copyWith(tableName, 'ep_partial', 0, 5);
    expect(await afterStart(tableName, 'ep_partial')).toHaveLength(25);
  });

  it('a rebuild killed while restoring the table restores it again from the complete copy, nothing lost', async () => {
    // Killed during the copy back: the table is in the new shape with 3 items, the copy has all 15.
    const tableName = `${uniquePrefix()}deliveries`;
    await clients.dynamoDb.send(new CreateTableCommand(createTableInput(TABLES.deliveries, tableName)));
    for (let minute = 0; minute < 3; minute += 1)
      await clients.documents.send(new PutCommand({ TableName: tableName, Item: record(minute, 'ep_back') }));
    await copyWith(tableName, 'ep_back', 0, 15);
    expect(await afterStart(tableName, 'ep_back')).toHaveLength(15);
  });
});
