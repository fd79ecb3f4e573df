import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  BUCKETS,
  type BucketDefinition,
  type BucketId,
  QUEUES,
  type QueueDefinition,
  type QueueId,
  queueById,
  TABLES,
  type TableDefinition,
  type TableId,
  visibilityTimeoutSeconds,
} from '../../definitions';
import { documentClientOf } from '../aws/clients';
import { INDEX_BACKFILLS } from '../aws/migrations';

const SECONDS_PER_DAY = 86_400;

export interface ProvisionedResources {
  readonly tableNames: Record<TableId, string>;
  readonly streamArns: Partial<Record<TableId, string>>;
  readonly queueUrls: Record<QueueId, string>;
  readonly queueArns: Record<QueueId, string>;
  readonly bucketNames: Record<BucketId, string>;
}

const attributeDefinitionsOf = (table: TableDefinition) => {
  const keys = [table.partitionKey, table.sortKey];
  for (const index of table.globalSecondaryIndexes ?? []) keys.push(index.partitionKey, index.sortKey);
  const unique = new Map<string, string>();
  for (const key of keys) if (key) unique.set(key.name, key.type);
  return [...unique].map(([AttributeName, AttributeType]) => ({
    AttributeName,
    AttributeType: AttributeType as 'S' | 'N' | 'B',
  }));
};

const keySchemaOf = (partitionKey: { name: string }, sortKey?: { name: string }) => [
  { AttributeName: partitionKey.name, KeyType: 'HASH' as const },
  ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' as const }] : []),
];

/** The CreateTable request for a definition; also what the CDK table construct expresses. */
export const createTableInput = (table: TableDefinition, tableName: string): CreateTableCommandInput => ({
  TableName: tableName,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: attributeDefinitionsOf(table),
  KeySchema: keySchemaOf(table.partitionKey, table.sortKey),
  ...(table.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: table.stream } } : {}),
  ...(table.globalSecondaryIndexes?.length
    ? {
        GlobalSecondaryIndexes: table.globalSecondaryIndexes.map((index) => ({
          IndexName: index.name,
          KeySchema: keySchemaOf(index.partitionKey, index.sortKey),
          Projection: { ProjectionType: index.projection ?? 'ALL' },
        })),
      }
    : {}),
});

const waitForActive = async (client: DynamoDBClient, tableName: string) => {
  for (let i = 0; i < 100; i += 1) {
    const description = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (description.Table?.TableStatus === 'ACTIVE') return description.Table;
    await sleep(100);
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
};

const tableExists = async (client: DynamoDBClient, tableName: string): Promise<boolean> => {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return false;
    throw error;
  }
};

const deleteTable = async (client: DynamoDBClient, tableName: string) => {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  for (let i = 0; i < 100 && (await tableExists(client, tableName)); i += 1) await sleep(100);
};

/** Every item of `from` written to `to` (an ACTIVE table with the same keys), page by page. */
const copyItems = async (client: DynamoDBClient, from: string, to: string) => {
  const documents = documentClientOf(client);
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({ TableName: from, Limit: 500, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    const items = page.Items ?? [];
    for (let index = 0; index < items.length; index += 25) {
      let requests = items.slice(index, index + 25).map((Item) => ({ PutRequest: { Item } }));
      for (let round = 0; requests.length > 0; round += 1) {
        if (round > 8) throw new Error(`copying ${from} to ${to}: writes left unprocessed`);
        if (round > 0) await sleep(25 * 2 ** round);
        const result = await documents.send(new BatchWriteCommand({ RequestItems: { [to]: requests } }));
        requests = (result.UnprocessedItems?.[to] ?? []) as typeof requests;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
};

/** The copy a table is rebuilt through. */
const rebuildCopyOf = (tableName: string) => `${tableName}.rebuild`;

/** The table's description, or `undefined` when there is no such table. */
const describe = async (client: DynamoDBClient, tableName: string) => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
};

/**
 * A table kept from an earlier start (a data directory) whose indexes (names and projections) are not its
 * definition's (a staged index replacement since) is rebuilt in that shape: its items copied to a table of the new shape, the table dropped
 * and recreated, the items copied back, the new index keys backfilled (`INDEX_BACKFILLS`), the copy dropped.
 * DynamoDB Local does not reliably finish an index that UpdateTable adds to a table among busy ones, so the
 * rebuild does not use it.
 *
 * A start killed half-way resumes from what it finds, without losing an item: while the table still has its old
 * shape it was not dropped, so the copy may be partial and is made again; once the table is gone, or back in the
 * new shape, it was dropped after a complete copy, so it is restored (again) from the copy, which goes last.
 */
const rebuildTable = async (client: DynamoDBClient, table: TableDefinition, tableName: string) => {
  const copy = rebuildCopyOf(tableName);
  const wanted = indexShapes(table.globalSecondaryIndexes);
  const original = await describe(client, tableName);
  const dropped = original === undefined || indexShapes(original.GlobalSecondaryIndexes) === wanted;
  if (!dropped) {
    if (await tableExists(client, copy)) await deleteTable(client, copy);
    const { stream: _stream, ...withoutStream } = table;
    await client.send(new CreateTableCommand(createTableInput(withoutStream, copy)));
    await waitForActive(client, copy);
    await copyItems(client, tableName, copy);
  }
  if (await tableExists(client, tableName)) await deleteTable(client, tableName);
  await client.send(new CreateTableCommand(createTableInput(table, tableName)));
  await waitForActive(client, tableName);
  await copyItems(client, copy, tableName);
  for (const index of table.globalSecondaryIndexes ?? []) {
    const backfill = INDEX_BACKFILLS[index.name];
    if (backfill) await backfill(documentClientOf(client), tableName);
  }
  await deleteTable(client, copy);
};

/** The indexes of a definition or a table description, each as its name and projection, sorted. */
const indexShapes = (
  indexes: readonly {
    readonly IndexName?: string;
    readonly name?: string;
    readonly Projection?: { readonly ProjectionType?: string };
    readonly projection?: string;
  }[] = [],
) =>
  JSON.stringify(
    indexes
      .map(
        (index) =>
          `${index.IndexName ?? index.name ?? ''} ${index.Projection?.ProjectionType ?? index.projection ?? 'ALL'}`,
      )
      .sort(),
  );

/**
 * Creates the table if missing (else moves it to its definition's indexes), enables its stream and TTL if needed;
 * safe to run on every start.
 */
export const ensureTable = async (
  client: DynamoDBClient,
  table: TableDefinition,
  tableName: string,
): Promise<string | undefined> => {
  // A rebuild stopped half-way: finish it first.
  if (await tableExists(client, rebuildCopyOf(tableName))) await rebuildTable(client, table, tableName);
  try {
    await client.send(new CreateTableCommand(createTableInput(table, tableName)));
  } catch (error) {
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  let description = await waitForActive(client, tableName);
  if (indexShapes(description.GlobalSecondaryIndexes) !== indexShapes(table.globalSecondaryIndexes)) {
    await rebuildTable(client, table, tableName);
    description = await waitForActive(client, tableName);
  }
  if (table.stream && !description.StreamSpecification?.StreamEnabled) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: { StreamEnabled: true, StreamViewType: table.stream },
      }),
    );
    description = await waitForActive(client, tableName);
  }
  if (table.timeToLiveAttribute) {
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    if (ttl.TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: table.timeToLiveAttribute, Enabled: true },
        }),
      );
    }
  }
  return description.LatestStreamArn;
};

const queueAttributesOf = (
  queue: QueueDefinition,
  queueArns: Partial<Record<string, string>>,
  visibilityOverrideSeconds?: number,
) => {
  const attributes: Record<string, string> = {
    MessageRetentionPeriod: String(queue.retentionDays * SECONDS_PER_DAY),
    VisibilityTimeout: String(visibilityOverrideSeconds ?? visibilityTimeoutSeconds(queueIdOf(queue))),
  };
  if (queue.deadLetter) {
    const target = queueArns[queue.deadLetter.queue];
    if (!target) throw new Error(`dead-letter queue ${queue.deadLetter.queue} must be created first`);
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: target,
      maxReceiveCount: queue.deadLetter.maxReceiveCount,
    });
  }
  return attributes;
};

const queueIdOf = (queue: QueueDefinition): QueueId =>
  (Object.keys(QUEUES) as QueueId[]).find((id) => QUEUES[id].id === queue.id) as QueueId;

/** Creates the queue or brings an existing one's attributes to the definition. */
export const ensureQueue = async (
  client: SQSClient,
  queueName: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> => {
  let url: string | undefined;
  try {
    url = (await client.send(new CreateQueueCommand({ QueueName: queueName, Attributes: attributes })))
      .QueueUrl;
  } catch (error) {
    if ((error as Error).name !== 'QueueAlreadyExists' && (error as Error).name !== 'QueueNameExists')
      throw error;
    url = (await client.send(new GetQueueUrlCommand({ QueueName: queueName }))).QueueUrl;
    if (url) await client.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
  }
  if (!url) throw new Error(`queue ${queueName} has no URL`);
  const described = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const arn = described.Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${queueName} has no ARN`);
  return { url, arn };
};

export const ensureBucket = async (client: S3Client, bucketName: string): Promise<void> => {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucketName }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
};

export interface ProvisionOptions {
  readonly dynamoDb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  /** Prepended to every physical name (tests isolate themselves with a unique prefix). */
  readonly namePrefix?: string;
  /**
   * The visibility timeout of every queue, instead of its definition's (≥ 6 × its consumer's timeout, as in
   * AWS): how long a message received by a consumer that died stays hidden. Fault tests that kill the stack
   * shorten it so its in-flight deliveries come back within seconds.
   */
  readonly visibilityTimeoutSeconds?: number;
}

/**
 * Creates every table, queue (dead-letter queues first, then work queues with their redrive policy) and bucket
 * from the definitions module: the same definitions the CDK stacks deploy. Idempotent across restarts.
 */
export const provisionResources = async (options: ProvisionOptions): Promise<ProvisionedResources> => {
  const prefix = options.namePrefix ?? '';
  const tableNames = {} as Record<TableId, string>;
  const streamArns: Partial<Record<TableId, string>> = {};
  for (const [id, table] of Object.entries(TABLES) as [TableId, TableDefinition][]) {
    tableNames[id] = `${prefix}${table.id}`;
    const streamArn = await ensureTable(options.dynamoDb, table, tableNames[id]);
    if (table.stream && streamArn) streamArns[id] = streamArn;
  }

  const queueUrls = {} as Record<QueueId, string>;
  const queueArns = {} as Record<QueueId, string>;
  const arnsByDefinitionId: Record<string, string> = {};
  const ordered = (Object.entries(QUEUES) as [QueueId, QueueDefinition][]).sort(
    ([, a], [, b]) => Number(Boolean(a.deadLetter)) - Number(Boolean(b.deadLetter)),
  );
  for (const [id, queue] of ordered) {
    if (queue.deadLetter) queueById(queue.deadLetter.queue);
    const created = await ensureQueue(
      options.sqs,
      `${prefix}${queue.id}`,
      queueAttributesOf(queue, arnsByDefinitionId, options.visibilityTimeoutSeconds),
    );
    queueUrls[id] = created.url;
    queueArns[id] = created.arn;
    arnsByDefinitionId[queue.id] = created.arn;
  }

  const bucketNames = {} as Record<BucketId, string>;
  for (const [id, bucket] of Object.entries(BUCKETS) as [BucketId, BucketDefinition][]) {
    bucketNames[id] = `${prefix}${bucket.id}`;
    await ensureBucket(options.s3, bucketNames[id]);
  }
  return { tableNames, streamArns, queueUrls, queueArns, bucketNames };
};
