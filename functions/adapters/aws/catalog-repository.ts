import { createHash, randomUUID } from 'node:crypto';
import {
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { HistoryChangeType } from '../../domain/change-control/history';
import type {
  CatalogPartKind,
  CatalogRepository,
  HistoryPosition,
  HistoryRecord,
  Publication,
  PublishRequest,
  StoredPart,
} from '../../ports/catalog';
import type { ObjectStore } from '../../ports/object-store';
import { conditionalFailure } from './dynamo-errors';
import { CHUNK_BYTES, gunzipJson, gzipJson, readGzipChunks, writeCompressedChunks } from './gzip-chunks';
import { type ItemBatches, itemBatchesOf } from './item-batches';

const POINTER_KEY = { pk: 'pointer', sk: 'current' } as const;
/**
 * Replicas of the pointer, each its own partition key, written in the publication's transaction: readers take
 * one each time, so N × a partition's 3 000 consistent reads/s, with the same guarantee (a consistent read after
 * the transaction sees the new pointer on every replica; during it, the old one). 32 keep each under 50 % of a
 * partition at 30 000 price reads/s plus quotes and commits (docs/capacity.md §8a). Each repository reads them in
 * turn from a random start, so its reads spread evenly.
 */
export const POINTER_REPLICAS = 32;
/**
 * Part versions from this size (gzip) up get a file copy when the repository has a file store: those a cold start
 * would otherwise read as several chunks from one partition (docs/capacity.md §3, cold starts).
 */
export const PART_FILE_MIN_BYTES = CHUNK_BYTES;
const replicaKey = (replica: number) => ({ pk: `pointer#${replica}`, sk: 'current' }) as const;
const PUBLICATIONS = 'publication';
/** Partition of the marks of change requests already published (one item each, `sk` = the `cr_id`). */
const PUBLISHED_CHANGES = 'published-change';

/** Partition of the history index markers: `sk` = the part kind, `version` = its first indexed version. */
const HISTORY_START = 'history-start';

const pad = (value: number): string => String(value).padStart(10, '0');
/** One partition per history subject; `sk` sorts by part version, then scope (newest last). */
const historyPk = (subject: string) => `history#${subject}`;
const historySk = (position: HistoryPosition) => `v#${pad(position.version)}#${position.scope}`;
/** History records written in one BatchWriteItem, and such calls in flight at once. */
const HISTORY_BATCH = 25;
const HISTORY_CALLS_IN_FLIGHT = 4;
const MAX_WRITE_ROUNDS = 8;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const partPk = (kind: CatalogPartKind) => `part#${kind}`;
/**
 * The chunks of a part version live in a partition of their own writer (`chunk_set`, recorded on the header):
 * writers racing for the same version number each write their own chunks, and only the header's are ever read.
 * (With one partition per version, a writer that lost the header could overwrite the winner's chunks.) Headers
 * written before carry no `chunk_set`: their chunks are in `chunk#<kind>#<version>`.
 */
const chunkPk = (kind: CatalogPartKind, version: number, chunkSet?: string) =>
  `chunk#${kind}#${pad(version)}${chunkSet === undefined ? '' : `#${chunkSet}`}`;

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
  /** The pointer replica this instance reads next. */
  private nextReplica = Math.floor(Math.random() * POINTER_REPLICAS);
  /** Part kinds whose history start marker is known to be written (it never changes once written). */
  private readonly indexedKinds = new Set<CatalogPartKind>();

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The outbox: catalog events go there in the publication's transaction. */
    private readonly eventsTableName?: string,
    /**
     * Copies of part versions larger than one chunk (`PART_FILE_MIN_BYTES`): written beside the chunks by a
     * writer that has it, read first by a reader that has it (a cold start's one GET, from a store that scales
     * with readers), the chunks being the fallback and the copy of record.
     */
    private readonly partFiles?: ObjectStore,
    /** Told when a header names a copy this repository could not use (the chunks were read instead). */
    private readonly onCopyUnusable?: (key: string, reason: string) => void,
  ) {
    this.batches = itemBatchesOf(documents);
  }

  async current(options: { readonly primary?: boolean } = {}): Promise<Publication | undefined> {
    const pointer = () => this.batches.get(this.tableName, POINTER_KEY, { consistent: true });
    if (options.primary) {
      const item = await pointer();
      return item ? (item.publication as Publication) : undefined;
    }
    // Round robin from a random start: an instance spreads its reads evenly, instances start apart.
    this.nextReplica = (this.nextReplica + 1) % POINTER_REPLICAS;
    const replica = await this.batches.get(this.tableName, replicaKey(this.nextReplica), {
      consistent: true,
    });
    // A catalog last published before the replicas existed has only the pointer itself.
    const item = replica ?? (await pointer());
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

  async publication(revision: number): Promise<Publication | undefined> {
    const item = await this.batches.get(
      this.tableName,
      { pk: PUBLICATIONS, sk: `r#${pad(revision)}` },
      { consistent: true },
    );
    return item ? (item.publication as Publication) : undefined;
  }

  async history(
    subject: string,
    options: { readonly limit: number; readonly before?: HistoryPosition },
  ): Promise<{ readonly records: readonly HistoryRecord[]; readonly more: boolean }> {
    const page = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: options.before ? 'pk = :pk AND sk < :before' : 'pk = :pk',
        ExpressionAttributeValues: {
          ':pk': historyPk(subject),
          ...(options.before ? { ':before': historySk(options.before) } : {}),
        },
        ScanIndexForward: false,
        Limit: options.limit,
        ConsistentRead: true,
      }),
    );
    const records = (page.Items ?? []).map(
      (item): HistoryRecord => ({
        subject,
        scope: String(item.scope),
        ...(typeof item.currency === 'string' ? { currency: item.currency } : {}),
        change: item.change as HistoryChangeType,
        ...(typeof item.value_json === 'string' ? { value: JSON.parse(item.value_json) as unknown } : {}),
        kind: item.kind as CatalogPartKind,
        version: Number(item.version),
        revision: Number(item.revision),
      }),
    );
    return { records, more: page.LastEvaluatedKey !== undefined };
  }

  async historyStart(kind: CatalogPartKind): Promise<number | undefined> {
    const item = await this.batches.get(
      this.tableName,
      { pk: HISTORY_START, sk: kind },
      { consistent: true },
    );
    return item ? Number(item.version) : undefined;
  }

  /** Records the first indexed version of a part kind, once (the first writer wins; later ones are indexed too). */
  private async markIndexed(kind: CatalogPartKind, version: number): Promise<void> {
    if (this.indexedKinds.has(kind)) return;
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: HISTORY_START, sk: kind, version },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
    this.indexedKinds.add(kind);
  }

  /** Writes history records (idempotent puts: a record names an immutable part version), a few calls at a time. */
  private async writeHistory(records: readonly HistoryRecord[]): Promise<void> {
    const batches: HistoryRecord[][] = [];
    for (let start = 0; start < records.length; start += HISTORY_BATCH) {
      batches.push(records.slice(start, start + HISTORY_BATCH));
    }
    const writeBatch = async (batch: readonly HistoryRecord[]): Promise<void> => {
      let pending: BatchWriteCommandInput['RequestItems'] = {
        [this.tableName]: batch.map((record) => ({
          PutRequest: {
            Item: {
              pk: historyPk(record.subject),
              sk: historySk(record),
              kind: record.kind,
              version: record.version,
              revision: record.revision,
              scope: record.scope,
              change: record.change,
              ...(record.currency ? { currency: record.currency } : {}),
              ...(record.value === undefined ? {} : { value_json: JSON.stringify(record.value) }),
            },
          },
        })),
      };
      for (let round = 0; pending && Object.keys(pending).length > 0; round += 1) {
        if (round >= MAX_WRITE_ROUNDS) throw new Error('history: records left unprocessed after retries');
        if (round > 0) await pause(25 * 2 ** round);
        const result: BatchWriteCommandOutput = await this.documents.send(
          new BatchWriteCommand({ RequestItems: pending }),
        );
        pending = result.UnprocessedItems;
      }
    };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batches.length) {
        const batch = batches[next];
        next += 1;
        if (batch) await writeBatch(batch);
      }
    };
    await Promise.all(Array.from({ length: Math.min(HISTORY_CALLS_IN_FLIGHT, batches.length) }, worker));
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
    const chunkSet = typeof header.Item.chunk_set === 'string' ? header.Item.chunk_set : undefined;
    const content =
      (await this.fromFile(header.Item)) ??
      (await readGzipChunks(
        this.documents,
        this.chunkLocation(kind, version, chunkSet),
        Number(header.Item.chunks),
      ));
    return {
      kind,
      version,
      effective_from: String(header.Item.effective_from),
      content_sha256: String(header.Item.content_sha256),
      content,
    };
  }

  /**
   * A part version's content from its file copy, when the header names one and this repository reads files:
   * `undefined` (read the chunks) when the copy is missing, unreadable or not the bytes the header recorded.
   */
  private async fromFile(header: Record<string, unknown>): Promise<unknown> {
    if (!this.partFiles || typeof header.file_key !== 'string') return undefined;
    const unusable = (reason: string) => {
      this.onCopyUnusable?.(String(header.file_key), reason);
      return undefined;
    };
    try {
      const bytes = await this.partFiles.get(header.file_key);
      if (!bytes) return unusable('missing');
      if (createHash('sha256').update(bytes).digest('hex') !== header.file_sha256)
        return unusable('not the bytes its header recorded');
      return await gunzipJson(bytes);
    } catch (error) {
      return unusable(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  }

  private chunkLocation(kind: CatalogPartKind, version: number, chunkSet?: string) {
    return {
      tableName: this.tableName,
      partitionKey: { name: 'pk', value: chunkPk(kind, version, chunkSet) },
      sortKeyName: 'sk',
      prefix: 'c#',
    };
  }

  /** Writes a part version's chunks, then its header (only if that version does not exist yet). */
  private async writePart(part: StoredPart): Promise<boolean> {
    const chunkSet = randomUUID();
    const compressed = await gzipJson(part.content);
    const written = await writeCompressedChunks(
      this.documents,
      this.chunkLocation(part.kind, part.version, chunkSet),
      compressed,
    );
    // The file copy goes in before the header that names it: a reader never finds a header without its copy.
    const file =
      this.partFiles && compressed.byteLength >= PART_FILE_MIN_BYTES
        ? {
            file_key: `parts/${part.kind}/${pad(part.version)}-${chunkSet}.json.gz`,
            file_sha256: createHash('sha256').update(compressed).digest('hex'),
          }
        : undefined;
    if (file && this.partFiles) await this.partFiles.putOnce(file.file_key, compressed, 'application/gzip');
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
            chunk_set: chunkSet,
            chunks: written.chunks,
            bytes: written.bytes,
            ...(file ?? {}),
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
    // The history index of the new versions goes in before the pointer moves: a publication is never visible
    // without its history. A publication that loses the race leaves records that readers skip (see `history`).
    if (request.history) {
      for (const part of request.newParts) await this.markIndexed(part.kind, part.version);
      await this.writeHistory(request.history);
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
            ...Array.from({ length: POINTER_REPLICAS }, (_, replica) => ({
              Put: {
                TableName: this.tableName,
                Item: { ...replicaKey(replica), revision: publication.revision, publication },
              },
            })),
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
