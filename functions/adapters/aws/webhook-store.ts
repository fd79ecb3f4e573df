import { createHash } from 'node:crypto';
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { type GlobalSecondaryIndexDefinition, TABLES } from '../../definitions';
import {
  type DeliveryStatus,
  dayKeys,
  endpointShardKey,
  endpointShardKeys,
  FANOUT_PENDING_MARKERS,
  shardOf,
} from '../../domain/webhooks/envelope';
import type { Clock } from '../../ports/clock';
import type { RequestCompletion } from '../../ports/idempotency';
import type {
  AttemptRecord,
  ClaimResult,
  ConfirmationRecord,
  ConfirmResult,
  DeliveryRecord,
  DeliveryRepository,
  DpopReplayCache,
  EndpointChanges,
  EndpointRecord,
  EndpointRepository,
  EndpointUpdateOptions,
  EventStore,
  Page,
  ReplayOutcome,
  ReplayRecord,
  ReplayRepository,
  ReplayTally,
} from '../../ports/webhooks';
import { type OutboxItem, outboxItemSchema } from '../../schemas/envelope';
import { cursorCodec, keyCursor } from '../../shared/cursor';
import { conditionalFailure } from './dynamo-errors';
import { writeWithCompletion } from './idempotency-ledger';
import { itemBatchesOf } from './item-batches';
import { type ListingPosition, mergedPage, type ShardPage } from './sharded-query';

/** The listings' cursors: each query's `LastEvaluatedKey` (the table's key and the index's). */
/** A day's listing over its shards: the last `ts_id` returned. */
/** A merged listing's cursor: the last item returned (its sort value and tie-breaker, `sharded-query.ts`). */
const positionCursor = (listing: string) =>
  cursorCodec(listing, (position): ListingPosition | undefined => {
    if (typeof position !== 'object' || position === null || Array.isArray(position)) return undefined;
    const { sort, tie, ...rest } = position as { sort?: unknown; tie?: unknown };
    return Object.keys(rest).length === 0 &&
      typeof sort === 'string' &&
      typeof tie === 'string' &&
      sort.length <= 600 &&
      tie.length <= 300
      ? { sort, tie }
      : undefined;
  });

const eventsByDay = positionCursor('events-by-day-shards');

/**
 * One shard's query of a time-ordered index (`<key attribute> = <shard key> AND ts_id BETWEEN lower AND upper`),
 * as a merged listing reads it.
 */
const timeIndexQuery =
  (
    documents: DynamoDBDocumentClient,
    tableName: string,
    indexName: string,
    keyAttribute: string,
    upper: string,
  ) =>
  async (key: string, lower: string, limit: number, start?: Record<string, unknown>): Promise<ShardPage> => {
    const result = await documents.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: indexName,
        KeyConditionExpression: '#key = :key AND ts_id BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#key': keyAttribute },
        ExpressionAttributeValues: { ':key': key, ':from': lower, ':to': upper },
        Limit: limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    return {
      items: result.Items ?? [],
      ...(result.LastEvaluatedKey ? { next: result.LastEvaluatedKey } : {}),
    };
  };

/** Whether an index of a table copies only keys (its items are read back by key). */
const keysOnly = (table: 'events' | 'deliveries', indexName: string): boolean =>
  (TABLES[table].globalSecondaryIndexes as readonly GlobalSecondaryIndexDefinition[]).some(
    (index) => index.name === indexName && index.projection === 'KEYS_ONLY',
  );

/**
 * The items a keys-only index page names, read by their table key in the page's order (`BatchGetItem` through the
 * client's batcher). Consistent reads: an index entry is written with its item, so the item it names exists and is
 * at least as new (an eventually consistent read could miss one just created, and a cursor would move past it for
 * good). One that expired (TTL) or was deleted since the index was read is left out.
 */
const itemsByKey = async (
  documents: DynamoDBDocumentClient,
  tableName: string,
  entries: readonly Record<string, unknown>[],
  keyNames: readonly string[],
): Promise<Record<string, unknown>[]> => {
  const batches = itemBatchesOf(documents);
  const items = await Promise.all(
    entries.map((entry) =>
      batches.get(tableName, Object.fromEntries(keyNames.map((name) => [name, String(entry[name])])), {
        consistent: true,
      }),
    ),
  );
  return items.filter((item): item is Record<string, unknown> => item !== undefined);
};

/** Which index a listing reads: its replacement, or the retired one while the replacement is built. */
const indexRead = (
  index: { readonly name: string; readonly retired: string },
  readRetired: ReadonlySet<string> | undefined,
): string => (readRetired?.has(index.retired) ? index.retired : index.name);

const compareText = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0);
const endpointsScan = keyCursor('endpoints', { endpoint_id: 'string' });
/** A listing by status over its shards: the last delivery returned (its `ts_id` and endpoint). */
const deliveriesByStatus = positionCursor('deliveries-by-status-shards');
/** A listing by endpoint over its shards: the same position (the endpoint is the tie-breaker, constant here). */
const deliveriesByEndpointShards = positionCursor('deliveries-by-endpoint-shards');

/** The events' listings: keys-only indexes read back by key (the retired ones, whole, while they are built). */
const EVENT_INDEX = {
  day: { name: 'by-day-keys', retired: 'by-day' },
  pending: { name: 'fanout-pending-keys', retired: 'fanout-pending' },
} as const satisfies Record<
  string,
  {
    readonly name: (typeof TABLES.events.globalSecondaryIndexes)[number]['name'];
    readonly retired: (typeof TABLES.events.retiredGlobalSecondaryIndexes)[number]['name'];
  }
>;

export interface EventStoreOptions {
  /** Retired indexes read instead of their replacements while those are built (`READ_RETIRED_INDEXES`). */
  readonly readRetiredIndexes?: ReadonlySet<string>;
}

/** The outbox on the events table. */
export class DynamoEventStore implements EventStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** What "expired" is measured against (the service's clock). */
    private readonly clock: Clock = { now: () => new Date() },
    private readonly options: EventStoreOptions = {},
  ) {}

  /** An index page's events, whole: read back by key from a keys-only index. */
  private async whole(indexName: string, entries: readonly Record<string, unknown>[]) {
    return keysOnly('events', indexName)
      ? itemsByKey(this.documents, this.tableName, entries, ['event_id'])
      : [...entries];
  }

  async put(item: OutboxItem, completion?: RequestCompletion): Promise<boolean> {
    try {
      await writeWithCompletion(
        this.documents,
        {
          Put: {
            TableName: this.tableName,
            Item: item,
            ConditionExpression: 'attribute_not_exists(event_id)',
          },
        },
        completion,
      );
      return true;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return false;
      throw error;
    }
  }

  async get(eventId: string): Promise<OutboxItem | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: { event_id: eventId }, ConsistentRead: true }),
    );
    return this.live(result.Item);
  }

  /**
   * The item as the service sees it: parsed, and gone once past its expiry (DynamoDB's TTL deletes an expired
   * item within days, not at once).
   */
  private live(item: Record<string, unknown> | undefined): OutboxItem | undefined {
    if (!item) return undefined;
    const parsed = outboxItemSchema.parse(item);
    return parsed.expires_at * 1000 <= this.clock.now().getTime() ? undefined : parsed;
  }

  async markFannedOut(eventId: string, at: string, deliveries: number, expiresAt?: number): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { event_id: eventId },
          UpdateExpression: `SET fanned_out_at = if_not_exists(fanned_out_at, :at), fanned_out_to = :n${
            expiresAt !== undefined ? ', expires_at = :expires' : ''
          } REMOVE fanout_pending`,
          ConditionExpression: 'attribute_exists(event_id)',
          ExpressionAttributeValues: {
            ':at': at,
            ':n': deliveries,
            ...(expiresAt !== undefined ? { ':expires': expiresAt } : {}),
          },
        }),
      );
    } catch (error) {
      // The body expired (TTL) meanwhile: nothing left to mark.
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }

  async expunge(eventId: string, at: string, by: string): Promise<OutboxItem | undefined> {
    try {
      const result = await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { event_id: eventId },
          UpdateExpression: 'SET expunged_at = :at, expunged_by = :by REMOVE #data',
          ConditionExpression: 'attribute_exists(event_id) AND attribute_not_exists(expunged_at)',
          ExpressionAttributeNames: { '#data': 'data' },
          ExpressionAttributeValues: { ':at': at, ':by': by },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return this.live(result.Attributes);
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
      // Expunged before (its first record stands), or no such item.
      return this.get(eventId);
    }
  }

  /** The oldest `limit` events whose fan-out is not recorded: each marker's partition read, merged by time. */
  async pendingFanout(before: string, limit: number): Promise<OutboxItem[]> {
    const indexName = indexRead(EVENT_INDEX.pending, this.options.readRetiredIndexes);
    const pages = await Promise.all(
      FANOUT_PENDING_MARKERS.map((marker) =>
        this.documents.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: indexName,
            KeyConditionExpression: 'fanout_pending = :pending AND ts_id < :before',
            ExpressionAttributeValues: { ':pending': marker, ':before': before },
            Limit: limit,
          }),
        ),
      ),
    );
    const oldest = pages
      .flatMap((page) => page.Items ?? [])
      .sort((left, right) => compareText(String(left.ts_id ?? ''), String(right.ts_id ?? '')))
      .slice(0, limit);
    // Read back consistently: one whose fan-out was recorded since the index was read is no longer pending.
    return (await this.whole(indexName, oldest))
      .filter((item) => item.fanout_pending !== undefined)
      .map((item) => outboxItemSchema.parse(item));
  }

  /**
   * A day's events in time order: the day's shards (and its plain key, for events written before the shards)
   * merged by `ts_id` (`sharded-query.ts`: each shard read only as far as the page needs). The cursor is the last
   * event returned.
   */
  async byDay(
    day: string,
    from: string,
    to: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<OutboxItem>> {
    const after = cursor === undefined ? undefined : eventsByDay.decode(cursor);
    // `#` sorts before every ULID character, `~` after: the window covers every id at its ends.
    const upper = `${to}#~`;
    if (`${from}#` > upper || (after && after.sort > upper)) return { items: [] };
    const indexName = indexRead(EVENT_INDEX.day, this.options.readRetiredIndexes);
    const page = await mergedPage(
      {
        keys: dayKeys(day),
        query: timeIndexQuery(this.documents, this.tableName, indexName, 'day', upper),
        sortOf: (item) => String(item.ts_id),
        tieOf: (item) => String(item.event_id),
      },
      { lower: `${from}#`, limit, ...(after ? { after } : {}) },
    );
    return {
      items: (await this.whole(indexName, page.items)).flatMap((item) => this.live(item) ?? []),
      ...(page.next ? { cursor: eventsByDay.encode(page.next) } : {}),
    };
  }
}

/** Every field an update may change: a field missing here would be dropped silently, so the compiler checks the list. */
const ENDPOINT_FIELD_SET: { readonly [Field in keyof Required<EndpointChanges>]: true } = {
  url: true,
  destination: true,
  external_id: true,
  topics: true,
  event_types: true,
  filter: true,
  description: true,
  version: true,
  status: true,
  disabled_reason: true,
  secret_ciphertext: true,
  previous_secret_expires_at: true,
  dpop_jwk: true,
  dpop_jkt: true,
  mtls: true,
  rate_limit: true,
  ordering: true,
  disable_after_days: true,
  retention_days: true,
  signature_scheme: true,
  signing_algorithm: true,
  auth_ciphertext: true,
  auth: true,
  consecutive_timeouts: true,
  paused_until: true,
  failing_since: true,
  failing_warned: true,
  partner_key_sha256: true,
  previous_partner_key_sha256: true,
  previous_partner_key_valid_until: true,
};
const ENDPOINT_FIELDS = Object.keys(ENDPOINT_FIELD_SET) as (keyof EndpointChanges)[];

export class DynamoEndpointRepository implements EndpointRepository {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(record: EndpointRecord, completion?: RequestCompletion): Promise<void> {
    await writeWithCompletion(
      this.documents,
      {
        Put: {
          TableName: this.tableName,
          Item: record,
          ConditionExpression: 'attribute_not_exists(endpoint_id)',
        },
      },
      completion,
    );
  }

  async get(
    endpointId: string,
    options: { readonly consistent?: boolean } = {},
  ): Promise<EndpointRecord | undefined> {
    const result = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { endpoint_id: endpointId },
        ConsistentRead: options.consistent ?? true,
      }),
    );
    return result.Item as EndpointRecord | undefined;
  }

  async list(limit: number, cursor?: string): Promise<Page<EndpointRecord>> {
    const start = endpointsScan.decode(cursor);
    const result = await this.documents.send(
      new ScanCommand({
        TableName: this.tableName,
        Limit: limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const next = endpointsScan.encode(result.LastEvaluatedKey);
    const items = ((result.Items ?? []) as EndpointRecord[]).sort((a, b) =>
      a.endpoint_id < b.endpoint_id ? -1 : 1,
    );
    return { items, ...(next ? { cursor: next } : {}) };
  }

  async byPartnerKey(partnerKeySha256: string): Promise<EndpointRecord | undefined> {
    for (const [index, attribute] of [
      ['by-partner-key', 'partner_key_sha256'],
      ['by-previous-partner-key', 'previous_partner_key_sha256'],
    ] as const) {
      const result = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: index,
          KeyConditionExpression: `${attribute} = :hash`,
          ExpressionAttributeValues: { ':hash': partnerKeySha256 },
          Limit: 1,
        }),
      );
      const found = result.Items?.[0] as EndpointRecord | undefined;
      if (found) return found;
    }
    return undefined;
  }

  async subscribers(): Promise<EndpointRecord[]> {
    const endpoints: EndpointRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new ScanCommand({
          TableName: this.tableName,
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      endpoints.push(...((page.Items ?? []) as EndpointRecord[]));
      start = page.LastEvaluatedKey;
    } while (start);
    return endpoints;
  }

  async update(
    endpointId: string,
    changes: EndpointChanges,
    at: string,
    options: EndpointUpdateOptions = {},
  ): Promise<EndpointRecord | undefined> {
    const names: Record<string, string> = { '#updated_at': 'updated_at' };
    const values: Record<string, unknown> = { ':updated_at': at };
    const { expected, completion } = options;
    const sets = ['#updated_at = :updated_at'];
    const removes: string[] = [];
    for (const field of ENDPOINT_FIELDS) {
      if (!(field in changes)) continue;
      names[`#${field}`] = field;
      const value = changes[field];
      if (value === undefined) removes.push(`#${field}`);
      else {
        sets.push(`#${field} = :${field}`);
        values[`:${field}`] = value;
      }
    }
    const update = {
      TableName: this.tableName,
      Key: { endpoint_id: endpointId },
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: expected
        ? 'attribute_exists(endpoint_id) AND #updated_at = :expected_updated_at AND secret_ciphertext = :expected_secret'
        : 'attribute_exists(endpoint_id)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: {
        ...values,
        // The secret's ciphertext changes with every rotation (a fresh IV), so two updates within one
        // millisecond still cannot both pass for a rotation.
        ...(expected
          ? { ':expected_updated_at': expected.updated_at, ':expected_secret': expected.secret_ciphertext }
          : {}),
      },
    };
    try {
      if (expected) {
        // Conditional on the record read: the new one is that record with the changes (no read-back needed,
        // which a transaction carrying the request's completion could not do).
        await writeWithCompletion(this.documents, { Update: update }, completion);
        return withChanges(expected, changes, at);
      }
      if (completion) throw new Error('an endpoint update with a completion needs the record it changes');
      const result = await this.documents.send(new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW' }));
      return result.Attributes as EndpointRecord | undefined;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return undefined;
      throw error;
    }
  }

  async delete(endpointId: string): Promise<boolean> {
    try {
      await this.documents.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { endpoint_id: endpointId },
          ConditionExpression: 'attribute_exists(endpoint_id)',
        }),
      );
      return true;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return false;
      throw error;
    }
  }

  async noteTimeout(endpointId: string): Promise<void> {
    await this.health(endpointId, 'ADD consecutive_timeouts :one', 'attribute_exists(endpoint_id)', {
      ':one': 1,
    });
  }

  async clearTimeouts(endpointId: string): Promise<void> {
    await this.health(endpointId, 'REMOVE consecutive_timeouts', 'attribute_exists(consecutive_timeouts)');
  }

  async pauseUntil(endpointId: string, until: string): Promise<void> {
    await this.health(
      endpointId,
      'SET paused_until = :until',
      'attribute_exists(endpoint_id) AND (attribute_not_exists(paused_until) OR paused_until < :until)',
      { ':until': until },
    );
  }

  async noteFailing(endpointId: string, at: string): Promise<void> {
    await this.health(
      endpointId,
      'SET failing_since = :at',
      'attribute_exists(endpoint_id) AND attribute_not_exists(failing_since)',
      { ':at': at },
    );
  }

  async clearFailing(endpointId: string): Promise<void> {
    await this.health(endpointId, 'REMOVE failing_since, failing_warned', 'attribute_exists(failing_since)');
  }

  async noteWarned(endpointId: string, failingSince: string, percent: number): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { endpoint_id: endpointId },
          UpdateExpression: 'SET failing_warned = :percent',
          ConditionExpression:
            'failing_since = :since AND (attribute_not_exists(failing_warned) OR failing_warned < :percent)',
          ExpressionAttributeValues: { ':since': failingSince, ':percent': percent },
        }),
      );
      return true;
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
      return false;
    }
  }

  /** A delivery-health write: never touches `updated_at`, so it cannot make an operator's change conflict. */
  private async health(
    endpointId: string,
    update: string,
    condition: string,
    values?: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { endpoint_id: endpointId },
          UpdateExpression: update,
          ConditionExpression: condition,
          ...(values ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }
}

/** `record` with `changes` applied as the update expression applies them (`undefined` removes). */
const withChanges = (record: EndpointRecord, changes: EndpointChanges, at: string): EndpointRecord => {
  const next: Record<string, unknown> = { ...record, updated_at: at };
  for (const field of ENDPOINT_FIELDS) {
    if (!(field in changes)) continue;
    const value = changes[field];
    if (value === undefined) delete next[field];
    else next[field] = value;
  }
  return next as unknown as EndpointRecord;
};

/**
 * The deliveries' listings: each walks a keys-only index (a claim or an outcome then writes nothing to it) and
 * reads the deliveries back by key; during a staged replacement (`READ_RETIRED_INDEXES`) the retired index that
 * copied whole items is read instead, as it is.
 */
const DELIVERY_INDEX = {
  endpoint: { name: 'by-endpoint-keys', retired: 'by-endpoint-shard', key: 'endpoint_shard' },
  status: { name: 'by-status-keys', retired: 'by-status', key: 'status' },
} as const satisfies Record<
  string,
  {
    readonly name: (typeof TABLES.deliveries.globalSecondaryIndexes)[number]['name'];
    readonly retired: (typeof TABLES.deliveries.retiredGlobalSecondaryIndexes)[number]['name'];
    readonly key: string;
  }
>;

/**
 * The status index is written on every status change of every delivery: one key per status would be one
 * partition for all of them (≈ 330 deliveries/s). The stored `status` carries a shard of the delivery's keys
 * (`pending#0` … `pending#63`): the store writes and compares that form and answers the status alone; a listing by
 * status merges the 64 shards and the plain status of deliveries written before (docs/capacity.md §8a).
 */
export const STATUS_SHARDS = 64;

/** The stored form of a delivery's status: `<status>#<shard of its event and endpoint>`. */
export const storedStatus = (eventId: string, endpointId: string, status: DeliveryStatus): string =>
  `${status}#${shardOf(`${eventId}#${endpointId}`, STATUS_SHARDS)}`;

/** A stored delivery as the port knows it: its status alone, without the index key `endpoint_shard`. */
const decoded = <T extends Record<string, unknown> | undefined>(item: T): T => {
  if (!item) return item;
  const { endpoint_shard: _shard, ...record } = item;
  return (
    typeof record.status === 'string' ? { ...record, status: record.status.split('#')[0] } : record
  ) as T;
};

/** Every status index key of a status: each shard's, and the plain status of deliveries written before. */
const statusKeys = (status: DeliveryStatus): string[] => [
  status,
  ...Array.from({ length: STATUS_SHARDS }, (_, shard) => `${status}#${shard}`),
];

export interface DeliveryRepositoryOptions {
  /**
   * Retired indexes read instead of their replacements while those are built (`READ_RETIRED_INDEXES`, the
   * `add-` stages of a staged replacement, `functions/definitions/index-migration.ts`).
   */
  readonly readRetiredIndexes?: ReadonlySet<string>;
}

export class DynamoDeliveryRepository implements DeliveryRepository {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: DeliveryRepositoryOptions = {},
  ) {}

  private key(eventId: string, endpointId: string) {
    return { event_id: eventId, endpoint_id: endpointId };
  }

  async createIfAbsent(record: DeliveryRecord): Promise<DeliveryRecord> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...record,
            status: storedStatus(record.event_id, record.endpoint_id, record.status),
            endpoint_shard: endpointShardKey(record.endpoint_id, record.event_id),
          },
          ConditionExpression: 'attribute_not_exists(event_id)',
        }),
      );
      return record;
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
      const stored = await this.get(record.event_id, record.endpoint_id);
      if (!stored)
        throw new Error(`delivery ${record.event_id}/${record.endpoint_id} vanished`, { cause: error });
      return stored;
    }
  }

  async get(eventId: string, endpointId: string): Promise<DeliveryRecord | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(eventId, endpointId), ConsistentRead: true }),
    );
    return decoded(result.Item) as DeliveryRecord | undefined;
  }

  async confirm(
    eventId: string,
    endpointId: string,
    confirmation: ConfirmationRecord,
  ): Promise<ConfirmResult> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(eventId, endpointId),
          UpdateExpression: 'SET confirmation = :confirmation',
          // The outcome happens once: only a record that exists and has no confirmation yet takes one.
          ConditionExpression: 'attribute_exists(event_id) AND attribute_not_exists(confirmation)',
          ExpressionAttributeValues: { ':confirmation': confirmation },
        }),
      );
      return { status: 'confirmed', confirmation };
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
    const stored = await this.get(eventId, endpointId);
    if (!stored) return { status: 'missing' };
    if (!stored.confirmation)
      throw new Error(`delivery ${eventId}/${endpointId}: confirmation refused but absent`);
    return { status: 'exists', confirmation: stored.confirmation };
  }

  async forEvent(eventId: string): Promise<DeliveryRecord[]> {
    const records: DeliveryRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'event_id = :id',
          ExpressionAttributeValues: { ':id': eventId },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      records.push(...((page.Items ?? []).map(decoded) as DeliveryRecord[]));
      start = page.LastEvaluatedKey;
    } while (start);
    return records;
  }

  async claim(
    eventId: string,
    endpointId: string,
    attempt: number,
    now: string,
    leaseUntil: string,
    orderSeq?: number,
  ): Promise<ClaimResult> {
    try {
      const claimed = await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(eventId, endpointId),
          UpdateExpression: 'SET last_attempt = :n, lease_until = :lease',
          ConditionExpression:
            'attribute_exists(event_id) AND (last_attempt < :n OR ' +
            '(last_attempt = :n AND completed_attempt < :n AND (attribute_not_exists(lease_until) OR lease_until < :now)))' +
            (orderSeq !== undefined ? ' AND (attribute_not_exists(order_seq) OR order_seq = :seq)' : ''),
          ExpressionAttributeValues: {
            ':n': attempt,
            ':lease': leaseUntil,
            ':now': now,
            ...(orderSeq !== undefined ? { ':seq': orderSeq } : {}),
          },
          // Whether the event was expunged comes back with the write (no read units).
          ReturnValues: 'ALL_NEW',
        }),
      );
      return claimed.Attributes?.event_expunged !== undefined ? 'expunged' : 'claimed';
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
    const stored = await this.get(eventId, endpointId);
    if (!stored) return 'missing';
    // Moved to another place of its key (a replay numbered it again): this message's place is not its own.
    if (orderSeq !== undefined && stored.order_seq !== undefined && stored.order_seq !== orderSeq)
      return 'done';
    if (stored.completed_attempt >= attempt || stored.last_attempt > attempt) return 'done';
    return 'busy';
  }

  async markEventExpunged(eventId: string, endpointId: string, at: string): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(eventId, endpointId),
          UpdateExpression: 'SET event_expunged = if_not_exists(event_expunged, :at)',
          ConditionExpression: 'attribute_exists(event_id)',
          ExpressionAttributeValues: { ':at': at },
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }

  async recordAttempt(
    eventId: string,
    endpointId: string,
    attempt: AttemptRecord,
    next: {
      readonly status: DeliveryStatus;
      readonly next_attempt_at?: string;
      readonly stop_reason?: string;
    },
    at: string,
  ): Promise<void> {
    const sets = [
      'completed_attempt = :n',
      'attempts = list_append(if_not_exists(attempts, :empty), :attempt)',
      '#status = :status',
      'updated_at = :at',
    ];
    const removes = ['lease_until'];
    const values: Record<string, unknown> = {
      ':n': attempt.attempt,
      ':attempt': [attempt],
      ':empty': [],
      ':status': storedStatus(eventId, endpointId, next.status),
      ':at': at,
    };
    if (next.next_attempt_at) {
      sets.push('next_attempt_at = :next');
      values[':next'] = next.next_attempt_at;
    } else removes.push('next_attempt_at');
    if (next.stop_reason) {
      sets.push('stop_reason = :reason');
      values[':reason'] = next.stop_reason;
    } else removes.push('stop_reason');
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(eventId, endpointId),
          UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
          ConditionExpression: 'attribute_exists(event_id) AND completed_attempt < :n',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      // Recorded already (a duplicate message of the same attempt): the first record stands.
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }

  async startReplay(
    eventId: string,
    endpointId: string,
    replayId: string,
    expectedStatus: DeliveryStatus,
    at: string,
  ): Promise<number | undefined> {
    try {
      const result = await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(eventId, endpointId),
          UpdateExpression:
            'SET #status = :retrying, replay_id = :replay, replay_from_status = :expected, updated_at = :at REMOVE stop_reason',
          // The expected status in either stored form (deliveries written before the shards carry it plain).
          ConditionExpression: '#status IN (:expected, :expectedStored)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':retrying': storedStatus(eventId, endpointId, 'retrying'),
            ':replay': replayId,
            ':at': at,
            ':expected': expectedStatus,
            ':expectedStored': storedStatus(eventId, endpointId, expectedStatus),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const record = decoded(result.Attributes) as DeliveryRecord | undefined;
      return record ? Math.max(record.last_attempt, record.completed_attempt) + 1 : undefined;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return undefined;
      throw error;
    }
  }

  async revertReplay(
    eventId: string,
    endpointId: string,
    replayId: string,
    previousStatus: DeliveryStatus,
  ): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(eventId, endpointId),
          UpdateExpression: 'SET #status = :previous REMOVE replay_id, replay_from_status',
          ConditionExpression:
            '#status IN (:retrying, :retryingStored) AND replay_id = :replay AND completed_attempt = last_attempt',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':previous': storedStatus(eventId, endpointId, previousStatus),
            ':retrying': 'retrying',
            ':retryingStored': storedStatus(eventId, endpointId, 'retrying'),
            ':replay': replayId,
          },
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }

  async query(
    index: { readonly endpointId: string } | { readonly status: DeliveryStatus },
    from: string,
    to: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<DeliveryRecord>> {
    // An empty window (`from` after `to`) reads nothing: DynamoDB refuses a BETWEEN whose bounds are inverted.
    if (`${from}#` > `${to}#~`) return { items: [] };
    if ('status' in index) return this.byShards(statusKeys(index.status), 'status', from, to, limit, cursor);
    return this.byShards(endpointShardKeys(index.endpointId), 'endpoint', from, to, limit, cursor);
  }

  /**
   * Deliveries of one status or one endpoint, in time order: the index's shards merged (`sharded-query.ts`). The
   * cursor names its listing, so one of a status listing is refused by an endpoint listing.
   */
  private async byShards(
    keys: string[],
    index: 'status' | 'endpoint',
    from: string,
    to: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<DeliveryRecord>> {
    const codec = index === 'status' ? deliveriesByStatus : deliveriesByEndpointShards;
    const after = cursor === undefined ? undefined : codec.decode(cursor);
    const upper = `${to}#~`;
    // A cursor past the window (reused with an earlier `to`): nothing is left in it.
    if (after && after.sort > upper) return { items: [] };
    const { key } = DELIVERY_INDEX[index];
    const indexName = indexRead(DELIVERY_INDEX[index], this.options.readRetiredIndexes);
    const page = await mergedPage(
      {
        keys,
        query: timeIndexQuery(this.documents, this.tableName, indexName, key, upper),
        sortOf: (item) => String(item.ts_id),
        tieOf: (item) => String(item.endpoint_id),
      },
      { lower: `${from}#`, limit, ...(after ? { after } : {}) },
    );
    const items = keysOnly('deliveries', indexName)
      ? await itemsByKey(this.documents, this.tableName, page.items, ['event_id', 'endpoint_id'])
      : page.items;
    return {
      items: items.map(decoded) as unknown as DeliveryRecord[],
      ...(page.next ? { cursor: codec.encode(page.next) } : {}),
    };
  }
}

const SUMMARY = 'summary';

/** A replay summary's tally: the sizes of its outcome sets, once the summary is written (it names `enqueued`). */
const tallyOf = (summary: Record<string, unknown> | undefined): ReplayTally | undefined => {
  if (!summary || typeof summary.enqueued !== 'number') return undefined;
  const ended = (outcome: ReplayOutcome): number => {
    const members = summary[`ended_${outcome}`];
    return members instanceof Set ? members.size : 0;
  };
  return {
    enqueued: summary.enqueued,
    delivered: ended('delivered'),
    dead: ended('dead'),
    stopped: ended('stopped'),
  };
};
const WRITE_BATCH = 25;

export class DynamoReplayRepository implements ReplayRepository {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(record: ReplayRecord, completion?: RequestCompletion): Promise<void> {
    const { deliveries, ...summary } = record;
    const items: Record<string, unknown>[] = deliveries.map((delivery) => ({
      replay_id: record.replay_id,
      sk: `d#${delivery.event_id}#${delivery.endpoint_id}`,
      ...delivery,
      expires_at: record.expires_at,
    }));
    for (let index = 0; index < items.length; index += WRITE_BATCH) {
      let requests = items.slice(index, index + WRITE_BATCH).map((Item) => ({ PutRequest: { Item } }));
      for (let round = 0; requests.length > 0; round += 1) {
        if (round > 8) throw new Error('replay: writes left unprocessed after retries');
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
        const result = await this.documents.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
        );
        requests = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      }
    }
    // The summary last: a replay is visible only once every delivery it names is stored; with the request's
    // completion, in the same transaction. An update, not a put: deliveries that ended already are in its sets.
    const fields = Object.entries(summary);
    await writeWithCompletion(
      this.documents,
      {
        Update: {
          TableName: this.tableName,
          Key: { replay_id: record.replay_id, sk: SUMMARY },
          UpdateExpression: `SET ${fields
            .filter(([name]) => name !== 'replay_id')
            .map((_, index) => `#f${index} = :f${index}`)
            .join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(
            fields.filter(([name]) => name !== 'replay_id').map(([name], index) => [`#f${index}`, name]),
          ),
          ExpressionAttributeValues: Object.fromEntries(
            fields.filter(([name]) => name !== 'replay_id').map(([, value], index) => [`:f${index}`, value]),
          ),
        },
      },
      completion,
    );
  }

  async noteFinished(
    replayId: string,
    eventId: string,
    endpointId: string,
    outcome: ReplayOutcome,
  ): Promise<ReplayTally | undefined> {
    // One write, idempotent by nature: the delivery's key is added to its outcome's set on the summary item (a
    // delivery noted again, by a redelivered message or racing consumers, is one member). It needs no summary yet:
    // a delivery may end before the replay's record is written, and that write keeps the sets.
    const result = await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { replay_id: replayId, sk: SUMMARY },
        UpdateExpression: 'ADD #ended :key',
        ExpressionAttributeNames: { '#ended': `ended_${outcome}` },
        ExpressionAttributeValues: { ':key': new Set([`${eventId}#${endpointId}`]) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return tallyOf(result.Attributes);
  }

  async tally(replayId: string): Promise<ReplayTally | undefined> {
    const result = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { replay_id: replayId, sk: SUMMARY },
        ConsistentRead: true,
      }),
    );
    return tallyOf(result.Item);
  }

  async get(replayId: string): Promise<ReplayRecord | undefined> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'replay_id = :id',
          ExpressionAttributeValues: { ':id': replayId },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const summary = items.find((item) => item.sk === SUMMARY);
    if (!summary) return undefined;
    const { sk: _sk, ...rest } = summary;
    return {
      ...(rest as Omit<ReplayRecord, 'deliveries'>),
      deliveries: items
        .filter((item) => item.sk !== SUMMARY)
        .map((item) => ({ event_id: String(item.event_id), endpoint_id: String(item.endpoint_id) })),
    };
  }
}

/** Prefix of the replay cache's items in the idempotency table (Powertools' records start `http#`). */
export const DPOP_JTI_KEY_PREFIX = 'dpop-jti';

/**
 * The DPoP `jti` replay cache as items of the idempotency table: `id` = `dpop-jti#<key thumbprint>#<SHA-256 of
 * the jti>`, expiring (the table's TTL attribute `expiration`) when the proof could no longer be accepted. A
 * conditional put claims a `jti`; an item past its expiration that TTL has not removed yet no longer counts.
 */
export class DynamoDpopReplayCache implements DpopReplayCache {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async remember(keyThumbprint: string, jti: string, expiresAt: number, now: Date): Promise<boolean> {
    const jtiHash = createHash('sha256').update(jti, 'utf8').digest('hex');
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            id: `${DPOP_JTI_KEY_PREFIX}#${keyThumbprint}#${jtiHash}`,
            expiration: expiresAt,
            kind: 'dpop_jti',
          },
          ConditionExpression: 'attribute_not_exists(id) OR #expiration < :now',
          ExpressionAttributeNames: { '#expiration': 'expiration' },
          ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
        }),
      );
      return true;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return false;
      throw error;
    }
  }
}
