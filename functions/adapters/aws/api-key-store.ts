import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CallerScope } from '../../domain/access/principals';
import {
  ApiKeyConflictError,
  type ApiKeyGrant,
  type ApiKeyPage,
  type ApiKeyRecord,
  type ApiKeyRotation,
  type ApiKeyStore,
} from '../../ports/api-keys';
import type { RequestCompletion } from '../../ports/idempotency';
import { keyCursor } from '../../shared/cursor';
import { conditionalFailure } from './dynamo-errors';
import { writeWithCompletion } from './idempotency-ledger';

const KEY_LIST = 'keys';
const keyPk = (keyId: string) => `key#${keyId}`;
const hashPk = (sha256: string) => `hash#${sha256}`;

interface KeyItem {
  readonly pk: string;
  readonly list: string;
  readonly created_key: string;
  readonly record_json: string;
  readonly tenant: string;
  readonly current_sha256: string;
  readonly previous_sha256?: string;
}

interface HashItem {
  readonly pk: string;
  readonly key_id: string;
  readonly tenant: string;
  readonly scopes: readonly CallerScope[];
  readonly channels: readonly string[];
  /** Absent on items written before keys bound customer groups (C29): none. */
  readonly customer_groups?: readonly string[];
  readonly expires_at?: number;
}

/** The listing's cursor: the `by-created` query's `LastEvaluatedKey`. */
const keysByCreated = keyCursor('api-keys', { pk: 'string', list: 'string', created_key: 'string' });

/** The record of a key item; one stored before keys bound customer groups (C29) binds none. */
const recordOf = (item: KeyItem): ApiKeyRecord => {
  const stored = JSON.parse(item.record_json) as Omit<ApiKeyRecord, 'customer_groups'> &
    Partial<Pick<ApiKeyRecord, 'customer_groups'>>;
  return { ...stored, customer_groups: stored.customer_groups ?? [] };
};

/** Caller keys on DynamoDB: `key#<key_id>` records and `hash#<sha256>` items the authorizer reads. */
export class DynamoApiKeyStore implements ApiKeyStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  private keyItem(record: ApiKeyRecord, current: string, previous?: string): KeyItem {
    return {
      pk: keyPk(record.key_id),
      list: KEY_LIST,
      created_key: `${record.created_at}#${record.key_id}`,
      record_json: JSON.stringify(record),
      tenant: record.tenant,
      current_sha256: current,
      ...(previous ? { previous_sha256: previous } : {}),
    };
  }

  private hashItem(record: ApiKeyRecord, sha256: string, validUntil?: number): HashItem {
    return {
      pk: hashPk(sha256),
      key_id: record.key_id,
      tenant: record.tenant,
      scopes: record.scopes,
      channels: record.channels,
      customer_groups: record.customer_groups,
      ...(validUntil === undefined ? {} : { expires_at: validUntil }),
    };
  }

  private async write(
    keyId: string,
    items: Parameters<typeof writeWithCompletion>[1],
    completion: RequestCompletion | undefined,
  ): Promise<void> {
    try {
      await writeWithCompletion(this.documents, items, completion);
    } catch (error) {
      if (conditionalFailure(error) === 'condition') throw new ApiKeyConflictError(keyId);
      throw error;
    }
  }

  async create(record: ApiKeyRecord, secretSha256: string, completion?: RequestCompletion): Promise<void> {
    await this.write(
      record.key_id,
      [
        {
          Put: {
            TableName: this.table,
            Item: this.keyItem(record, secretSha256),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: this.table,
            Item: this.hashItem(record, secretSha256),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      completion,
    );
  }

  async get(keyId: string) {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: { pk: keyPk(keyId) }, ConsistentRead: true }),
    );
    const item = result.Item as KeyItem | undefined;
    if (!item) return undefined;
    return {
      record: recordOf(item),
      current: item.current_sha256,
      ...(item.previous_sha256 ? { previous: item.previous_sha256 } : {}),
    };
  }

  async list(options: { tenant?: string; limit: number; cursor?: string }): Promise<ApiKeyPage> {
    const start = keysByCreated.decode(options.cursor);
    const result = await this.documents.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'by-created',
        KeyConditionExpression: '#list = :list',
        ...(options.tenant ? { FilterExpression: 'tenant = :tenant' } : {}),
        ExpressionAttributeNames: { '#list': 'list' },
        ExpressionAttributeValues: {
          ':list': KEY_LIST,
          ...(options.tenant ? { ':tenant': options.tenant } : {}),
        },
        ScanIndexForward: false,
        Limit: options.limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const cursor = keysByCreated.encode(result.LastEvaluatedKey);
    return {
      items: (result.Items ?? []).map((item) => recordOf(item as KeyItem)),
      ...(cursor ? { cursor } : {}),
    };
  }

  async grantOf(secretSha256: string): Promise<ApiKeyGrant | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: { pk: hashPk(secretSha256) } }),
    );
    const item = result.Item as HashItem | undefined;
    if (!item) return undefined;
    return {
      key_id: item.key_id,
      tenant: item.tenant,
      scopes: item.scopes,
      channels: item.channels ?? [],
      customer_groups: item.customer_groups ?? [],
      ...(item.expires_at === undefined ? {} : { valid_until: item.expires_at }),
    };
  }

  async rotate(change: ApiKeyRotation, completion?: RequestCompletion): Promise<void> {
    const { record, expectedCurrent, nextSha256, previousToDrop, previousValidUntil } = change;
    const keeps = previousValidUntil !== undefined;
    await this.write(
      record.key_id,
      [
        {
          Put: {
            TableName: this.table,
            Item: this.keyItem(record, nextSha256, keeps ? expectedCurrent : undefined),
            ConditionExpression: 'current_sha256 = :current',
            ExpressionAttributeValues: { ':current': expectedCurrent },
          },
        },
        {
          Put: {
            TableName: this.table,
            Item: this.hashItem(record, nextSha256),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        keeps
          ? {
              Put: {
                TableName: this.table,
                Item: this.hashItem(record, expectedCurrent, previousValidUntil),
              },
            }
          : { Delete: { TableName: this.table, Key: { pk: hashPk(expectedCurrent) } } },
        ...(previousToDrop && previousToDrop !== expectedCurrent
          ? [{ Delete: { TableName: this.table, Key: { pk: hashPk(previousToDrop) } } }]
          : []),
      ],
      completion,
    );
  }

  async revoke(
    change: { readonly record: ApiKeyRecord; readonly hashes: readonly string[] },
    completion?: RequestCompletion,
  ): Promise<void> {
    const [current] = change.hashes;
    await this.write(
      change.record.key_id,
      [
        {
          Put: {
            TableName: this.table,
            Item: this.keyItem(change.record, current ?? ''),
            ConditionExpression: 'current_sha256 = :current',
            ExpressionAttributeValues: { ':current': current ?? '' },
          },
        },
        ...change.hashes.map((hash) => ({
          Delete: { TableName: this.table, Key: { pk: hashPk(hash) } },
        })),
      ],
      completion,
    );
  }
}
