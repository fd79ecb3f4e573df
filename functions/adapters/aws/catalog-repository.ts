import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type {
  CatalogPartKind,
  CatalogRepository,
  Publication,
  PublishRequest,
  StoredPart,
} from '../../ports/catalog';
import { CoalescedRead } from '../../shared/coalesced-read';
import { conditionalFailure } from './dynamo-errors';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** DynamoDB items are at most 400 KB; content is gzip'd and split into chunks well below that. */
const CHUNK_BYTES = 300 * 1024;
const POINTER_KEY = { pk: 'pointer', sk: 'current' } as const;
const PUBLICATIONS = 'publication';

const pad = (value: number): string => String(value).padStart(10, '0');
const partPk = (kind: CatalogPartKind) => `part#${kind}`;
const chunkPk = (kind: CatalogPartKind, version: number) => `chunk#${kind}#${pad(version)}`;

/** The catalog repository on DynamoDB (the same code against DynamoDB Local in the local stack). */
export class DynamoCatalogRepository implements CatalogRepository {
  /**
   * Concurrent callers of `current()` share consistent reads of the pointer (each gets a read issued after it
   * called, so a publication is never missed). In Lambda an instance serves one request at a time and nothing
   * is shared; where one repository serves many requests at once (the local stack), it saves most reads.
   */
  private readonly pointer = new CoalescedRead(async () => {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: POINTER_KEY, ConsistentRead: true }),
    );
    return result.Item ? (result.Item.publication as Publication) : undefined;
  });

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The outbox: catalog events go there in the publication's transaction. */
    private readonly eventsTableName?: string,
  ) {}

  current(): Promise<Publication | undefined> {
    return this.pointer.get();
  }

  async publications(): Promise<Publication[]> {
    const items: Publication[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': PUBLICATIONS },
          ConsistentRead: true,
          ...(exclusiveStartKey ? { ExclusiveStartKey: exclusiveStartKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) items.push(item.publication as Publication);
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
    return items;
  }

  async latestPartVersion(kind: CatalogPartKind): Promise<number> {
    const result = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': partPk(kind) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return Number(result.Items?.[0]?.version ?? 0);
  }

  async part(kind: CatalogPartKind, version: number): Promise<StoredPart | undefined> {
    const header = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: partPk(kind), sk: `v#${pad(version)}` } }),
    );
    if (!header.Item) return undefined;
    const chunks = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': chunkPk(kind, version) },
      }),
    );
    const parts = (chunks.Items ?? []).map((item) => item.data as Uint8Array);
    if (parts.length !== Number(header.Item.chunks))
      throw new Error(`part ${kind} v${version} is incomplete`);
    const json = (await gunzipAsync(Buffer.concat(parts))).toString('utf8');
    return {
      kind,
      version,
      effective_from: String(header.Item.effective_from),
      content_sha256: String(header.Item.content_sha256),
      content: JSON.parse(json),
    };
  }

  /** Writes a part version's chunks, then its header (only if that version does not exist yet). */
  private async writePart(part: StoredPart): Promise<boolean> {
    const compressed = await gzipAsync(Buffer.from(JSON.stringify(part.content), 'utf8'));
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < compressed.length; offset += CHUNK_BYTES) {
      chunks.push(compressed.subarray(offset, offset + CHUNK_BYTES));
    }
    for (let start = 0; start < chunks.length; start += 25) {
      await this.documents.send(
        new BatchWriteCommand({
          RequestItems: {
            [this.tableName]: chunks.slice(start, start + 25).map((data, index) => ({
              PutRequest: {
                Item: { pk: chunkPk(part.kind, part.version), sk: `c#${pad(start + index)}`, data },
              },
            })),
          },
        }),
      );
    }
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: partPk(part.kind),
            sk: `v#${pad(part.version)}`,
            version: part.version,
            effective_from: part.effective_from,
            content_sha256: part.content_sha256,
            chunks: chunks.length,
            bytes: compressed.length,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return false;
      throw error;
    }
  }

  async publish(request: PublishRequest): Promise<'published' | 'conflict'> {
    for (const part of request.newParts) {
      if (!(await this.writePart(part))) return 'conflict';
    }
    const { publication } = request;
    try {
      await this.documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { ...POINTER_KEY, revision: publication.revision, publication },
                ...(request.expectedRevision === 0
                  ? { ConditionExpression: 'attribute_not_exists(pk)' }
                  : {
                      ConditionExpression: 'revision = :expected',
                      ExpressionAttributeValues: { ':expected': request.expectedRevision },
                    }),
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: { pk: PUBLICATIONS, sk: `r#${pad(publication.revision)}`, publication },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            ...(request.events ?? []).map((event) => {
              if (!this.eventsTableName) throw new Error('this repository has no outbox for catalog events');
              return {
                Put: {
                  TableName: this.eventsTableName,
                  Item: event,
                  ConditionExpression: 'attribute_not_exists(event_id)',
                },
              };
            }),
          ],
        }),
      );
      return 'published';
    } catch (error) {
      if (conditionalFailure(error)) return 'conflict';
      throw error;
    }
  }
}
