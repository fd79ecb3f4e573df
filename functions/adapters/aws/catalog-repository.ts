import {
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
import { conditionalFailure } from './dynamo-errors';
import { readGzipChunks, writeGzipChunks } from './gzip-chunks';
import { type ItemBatches, itemBatchesOf } from './item-batches';

const POINTER_KEY = { pk: 'pointer', sk: 'current' } as const;
const PUBLICATIONS = 'publication';
/** Partition of the marks of change requests already published (one item each, `sk` = the `cr_id`). */
const PUBLISHED_CHANGES = 'published-change';

const pad = (value: number): string => String(value).padStart(10, '0');
const partPk = (kind: CatalogPartKind) => `part#${kind}`;
const chunkPk = (kind: CatalogPartKind, version: number) => `chunk#${kind}#${pad(version)}`;

/** The catalog repository on DynamoDB (the same code against DynamoDB Local in the local stack). */
export class DynamoCatalogRepository implements CatalogRepository {
  /**
   * Pointer reads are consistent and go through the client's grouped reads: concurrent callers share one read,
   * and it may travel in the same `BatchGetItem` as other single-item reads (the price projection's). Each
   * caller joins only a read that has not been sent yet, so a publication is never missed. In Lambda an
   * instance serves one request at a time and nothing is shared between requests; where one client serves many
   * requests at once (the local stack), it saves most round trips.
   */
  private readonly batches: ItemBatches;

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The outbox: catalog events go there in the publication's transaction. */
    private readonly eventsTableName?: string,
  ) {
    this.batches = itemBatchesOf(documents);
  }

  async current(): Promise<Publication | undefined> {
    const item = await this.batches.get(this.tableName, POINTER_KEY, { consistent: true });
    return item ? (item.publication as Publication) : undefined;
  }

  async publications(options: { readonly afterRevision?: number } = {}): Promise<Publication[]> {
    const items: Publication[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    const after = options.afterRevision;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
          ExpressionAttributeValues: {
            ':pk': PUBLICATIONS,
            ...(after === undefined ? {} : { ':after': `r#${pad(after)}` }),
          },
          ConsistentRead: true,
          ...(exclusiveStartKey ? { ExclusiveStartKey: exclusiveStartKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) items.push(item.publication as Publication);
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
    return items;
  }

  async publicationOfChange(changeRequestId: string): Promise<Publication | undefined> {
    const mark = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: PUBLISHED_CHANGES, sk: changeRequestId },
        ConsistentRead: true,
      }),
    );
    if (!mark.Item) return undefined;
    const published = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: PUBLICATIONS, sk: `r#${pad(Number(mark.Item.revision))}` },
        ConsistentRead: true,
      }),
    );
    return published.Item?.publication as Publication | undefined;
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
    const content = await readGzipChunks(
      this.documents,
      this.chunkLocation(kind, version),
      Number(header.Item.chunks),
    );
    return {
      kind,
      version,
      effective_from: String(header.Item.effective_from),
      content_sha256: String(header.Item.content_sha256),
      content,
    };
  }

  private chunkLocation(kind: CatalogPartKind, version: number) {
    return {
      tableName: this.tableName,
      partitionKey: { name: 'pk', value: chunkPk(kind, version) },
      sortKeyName: 'sk',
      prefix: 'c#',
    };
  }

  /** Writes a part version's chunks, then its header (only if that version does not exist yet). */
  private async writePart(part: StoredPart): Promise<boolean> {
    const written = await writeGzipChunks(
      this.documents,
      this.chunkLocation(part.kind, part.version),
      part.content,
    );
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
            chunks: written.chunks,
            bytes: written.bytes,
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
            // One publication per change request, ever: a retried or concurrent completion of the same approved
            // change cannot publish it twice.
            ...(publication.change_request_id
              ? [
                  {
                    Put: {
                      TableName: this.tableName,
                      Item: {
                        pk: PUBLISHED_CHANGES,
                        sk: publication.change_request_id,
                        revision: publication.revision,
                      },
                      ConditionExpression: 'attribute_not_exists(pk)',
                    },
                  },
                ]
              : []),
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
