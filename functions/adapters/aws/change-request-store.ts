import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ChangeRequestStatus } from '../../domain/change-control/approvals';
import type {
  ChangeRequestContent,
  ChangeRequestPage,
  ChangeRequestRecord,
  ChangeRequestStore,
} from '../../ports/change-requests';
import type { RequestCompletion } from '../../ports/idempotency';
import { keyCursor } from '../../shared/cursor';
import { conditionalFailure } from './dynamo-errors';
import { readGzipChunks, writeGzipChunks } from './gzip-chunks';
import { writeWithCompletion } from './idempotency-ledger';

const HEAD = 'head';
const CONTENT_PREFIX = 'content#';
/** Partition of the `by-created` index: every change request's head item. */
const LIST = 'cr';

/** The listing's cursor: the `by-created` query's `LastEvaluatedKey`. */
const changeRequestsByCreated = keyCursor('change-requests', {
  cr_id: 'string',
  sk: 'string',
  list: 'string',
  created_key: 'string',
});

/**
 * Change requests on their table: per `cr_id`, the head item (`sk = head`: the record as a map, its status and
 * version for conditional updates, `list`/`created_key` for the newest-first index) and the content (payload,
 * proposed document, diff) as gzip'd chunks (`sk = content#<n>`), written once before the head.
 */
export class DynamoChangeRequestStore implements ChangeRequestStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private location(crId: string) {
    return {
      tableName: this.tableName,
      partitionKey: { name: 'cr_id', value: crId },
      sortKeyName: 'sk',
      prefix: CONTENT_PREFIX,
    };
  }

  private headItem(record: ChangeRequestRecord, chunks: number) {
    return {
      cr_id: record.cr_id,
      sk: HEAD,
      list: LIST,
      created_key: `${record.created_at}#${record.cr_id}`,
      status: record.status,
      version: record.version,
      chunks,
      record,
    };
  }

  async create(
    record: ChangeRequestRecord,
    content: ChangeRequestContent,
    completion?: RequestCompletion,
  ): Promise<void> {
    const { chunks } = await writeGzipChunks(this.documents, this.location(record.cr_id), content);
    // The head makes the request exist (content without a head is never read); with the request's completion.
    await writeWithCompletion(
      this.documents,
      {
        Put: {
          TableName: this.tableName,
          Item: this.headItem(record, chunks),
          ConditionExpression: 'attribute_not_exists(cr_id)',
        },
      },
      completion,
    );
  }

  private async head(crId: string): Promise<Record<string, unknown> | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: { cr_id: crId, sk: HEAD }, ConsistentRead: true }),
    );
    return result.Item;
  }

  async get(crId: string): Promise<ChangeRequestRecord | undefined> {
    return (await this.head(crId))?.record as ChangeRequestRecord | undefined;
  }

  async content(crId: string): Promise<ChangeRequestContent | undefined> {
    const head = await this.head(crId);
    if (!head) return undefined;
    return (await readGzipChunks(
      this.documents,
      this.location(crId),
      Number(head.chunks),
    )) as ChangeRequestContent;
  }

  async update(record: ChangeRequestRecord, completion?: RequestCompletion): Promise<'updated' | 'conflict'> {
    const head = await this.head(record.cr_id);
    if (!head) return 'conflict';
    try {
      await writeWithCompletion(
        this.documents,
        {
          Put: {
            TableName: this.tableName,
            Item: this.headItem(record, Number(head.chunks)),
            ConditionExpression: '#version = :expected',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':expected': record.version - 1 },
          },
        },
        completion,
      );
      return 'updated';
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return 'conflict';
      throw error;
    }
  }

  async list(options: {
    readonly status?: ChangeRequestStatus;
    readonly limit: number;
    readonly cursor?: string;
  }): Promise<ChangeRequestPage> {
    const items: ChangeRequestRecord[] = [];
    let start: Record<string, unknown> | undefined = changeRequestsByCreated.decode(options.cursor);
    // A status filter is applied after the key condition: keep reading until the page is full or the end.
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'by-created',
          KeyConditionExpression: '#list = :list',
          ScanIndexForward: false,
          Limit: options.limit - items.length,
          ExpressionAttributeValues: {
            ':list': LIST,
            ...(options.status ? { ':status': options.status } : {}),
          },
          ExpressionAttributeNames: { '#list': 'list', ...(options.status ? { '#status': 'status' } : {}) },
          ...(options.status ? { FilterExpression: '#status = :status' } : {}),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) items.push(item.record as ChangeRequestRecord);
      start = page.LastEvaluatedKey;
    } while (start && items.length < options.limit);
    const next = changeRequestsByCreated.encode(start);
    return { items, ...(next ? { next_cursor: next } : {}) };
  }
}
