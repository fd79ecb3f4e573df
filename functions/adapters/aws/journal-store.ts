/**
 * The audit journal on DynamoDB (table `journal`: partition key `pk` S, sort key `seq` N) and its write-once
 * mirror on S3 (bucket `journal`, Object Lock in compliance mode in AWS).
 *
 * Items:
 * - `pk='entry', seq=<index>`: `entry` (the entry's RFC 8785 text, its leaf bytes) and `leaf_hash` (hex).
 * - `pk='head', seq=<tree_size>`: a signed tree head (`log_id`, `tree_size`, `root_hash`, `timestamp`,
 *   `envelope`).
 * - `pk='state', seq=0`: `size`, `peaks` (the Merkle frontier, hex, largest first), `last_head_size`,
 *   `last_head_at`, `mirrored_size`. The only item ever updated, always conditionally.
 * - `pk='id#<entry_id>', seq=0`: `index`, the idempotency marker of an entry id.
 *
 * An append is one `TransactWriteItems`: put the entry and put the id marker (both only where nothing is),
 * update the state on condition that its size is still the entry's index (`attribute_not_exists` for the
 * first). A head is put only where none is, in one transaction with the state's `last_head_size` moving up.
 * Nothing is ever overwritten.
 *
 * Mirror objects: `journal/entries/<index, 12 digits>.json` (the entry's RFC 8785 text) and
 * `journal/heads/<tree_size, 12 digits>.json` (the signed head's RFC 8785 text), `application/json`, put with
 * `If-None-Match: *`: S3 refuses to replace an object (412), and a 412 over the same bytes is a copy already
 * made. fauxqs accepts the header without enforcing it, so locally a put replaces the object; the journal only
 * ever puts the same bytes under a key.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { DsseEnvelope } from '../../domain/audit/dsse';
import {
  type AppendRequest,
  type JournalMirror,
  type JournalState,
  type JournalStore,
  journalEntryKey,
  journalHeadKey,
  type MirrorOutcome,
  type SignedTreeHead,
  type StoredEntry,
  type StoredEntryRecord,
} from '../../ports/journal';
import { conditionalFailure } from './dynamo-errors';
import { putIfNoneMatch } from './object-store';

const ENTRY = 'entry';
const HEAD = 'head';
const STATE_KEY = { pk: 'state', seq: 0 } as const;
const idKey = (entryId: string) => ({ pk: `id#${entryId}`, seq: 0 });

type Item = Record<string, unknown>;

const recordOf = (item: Item): StoredEntryRecord => {
  const json = String(item.entry);
  return { entry: JSON.parse(json) as StoredEntry, json, leaf_hash: String(item.leaf_hash) };
};

const headOf = (item: Item): SignedTreeHead => {
  const envelope = item.envelope as DsseEnvelope;
  return {
    log_id: String(item.log_id),
    tree_size: Number(item.tree_size),
    root_hash: String(item.root_hash),
    timestamp: String(item.timestamp),
    envelope: {
      payloadType: envelope.payloadType,
      payload: envelope.payload,
      signatures: envelope.signatures.map(({ keyid, sig }) => ({ keyid, sig })),
    },
  };
};

/** The journal's items on DynamoDB (the same code against DynamoDB Local in the local stack). */
export class DynamoJournalStore implements JournalStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** A transaction whose conditions failed (or that collided with another) wrote nothing: `conflict`. */
  private async transact(items: NonNullable<TransactWriteCommand['input']['TransactItems']>) {
    try {
      await this.documents.send(new TransactWriteCommand({ TransactItems: items }));
      return 'done' as const;
    } catch (error) {
      if (conditionalFailure(error) !== undefined) return 'conflict' as const;
      throw error;
    }
  }

  /** Up to `limit` items of a query (all of them without a limit), following its pages. */
  private async query(input: Omit<QueryCommandInput, 'TableName'>, limit?: number): Promise<Item[]> {
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          ...input,
          TableName: this.tableName,
          ConsistentRead: true,
          ...(limit === undefined ? {} : { Limit: limit - items.length }),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...((page.Items ?? []) as Item[]));
      start = page.LastEvaluatedKey;
    } while (start && (limit === undefined || items.length < limit));
    return items;
  }

  private async get(key: { pk: string; seq: number }): Promise<Item | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    return result.Item;
  }

  async state(): Promise<JournalState | undefined> {
    const item = await this.get(STATE_KEY);
    if (!item) return undefined;
    return {
      size: Number(item.size),
      peaks: (item.peaks as string[] | undefined) ?? [],
      last_head_size: Number(item.last_head_size ?? 0),
      ...(typeof item.last_head_at === 'string' ? { last_head_at: item.last_head_at } : {}),
      mirrored_size: Number(item.mirrored_size ?? 0),
    };
  }

  async append(request: AppendRequest): Promise<'appended' | 'conflict'> {
    const { index, entry_id } = request.entry;
    const outcome = await this.transact([
      {
        Put: {
          TableName: this.tableName,
          Item: { pk: ENTRY, seq: index, entry: request.json, leaf_hash: request.leaf_hash },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: { ...idKey(entry_id), index },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: this.tableName,
          Key: STATE_KEY,
          UpdateExpression:
            'SET #size = :size, peaks = :peaks, last_head_size = if_not_exists(last_head_size, :zero), ' +
            'mirrored_size = if_not_exists(mirrored_size, :zero)',
          ConditionExpression: index === 0 ? 'attribute_not_exists(pk)' : '#size = :expected',
          ExpressionAttributeNames: { '#size': 'size' },
          ExpressionAttributeValues: {
            ':size': index + 1,
            ':peaks': [...request.peaks],
            ':zero': 0,
            ...(index === 0 ? {} : { ':expected': index }),
          },
        },
      },
    ]);
    return outcome === 'done' ? 'appended' : 'conflict';
  }

  async indexOf(entryId: string): Promise<number | undefined> {
    const item = await this.get(idKey(entryId));
    return item ? Number(item.index) : undefined;
  }

  async entry(index: number): Promise<StoredEntryRecord | undefined> {
    const item = await this.get({ pk: ENTRY, seq: index });
    return item ? recordOf(item) : undefined;
  }

  /** Up to `limit` items of one kind from `seq = from` on, in `seq` order. */
  private range(pk: string, from: number, limit: number): Promise<Item[]> {
    return this.query(
      {
        KeyConditionExpression: 'pk = :pk AND seq >= :from',
        ExpressionAttributeValues: { ':pk': pk, ':from': from },
      },
      limit,
    );
  }

  async entries(from: number, limit: number): Promise<StoredEntryRecord[]> {
    return (await this.range(ENTRY, from, limit)).map(recordOf);
  }

  async leafHashes(size: number): Promise<string[]> {
    if (size === 0) return [];
    const items = await this.query({
      KeyConditionExpression: 'pk = :pk AND seq < :size',
      ExpressionAttributeValues: { ':pk': ENTRY, ':size': size },
      ProjectionExpression: 'seq, leaf_hash',
    });
    const hashes: string[] = [];
    for (const item of items) {
      // A missing entry ends the list: the caller sees fewer hashes than it asked for.
      if (Number(item.seq) !== hashes.length) break;
      hashes.push(String(item.leaf_hash));
    }
    return hashes;
  }

  async putHead(head: SignedTreeHead): Promise<'written' | 'conflict'> {
    const outcome = await this.transact([
      {
        Put: {
          TableName: this.tableName,
          Item: { pk: HEAD, seq: head.tree_size, ...head },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: this.tableName,
          Key: STATE_KEY,
          UpdateExpression: 'SET last_head_size = :size, last_head_at = :at',
          ConditionExpression: 'last_head_size < :size AND #size >= :size',
          ExpressionAttributeNames: { '#size': 'size' },
          ExpressionAttributeValues: { ':size': head.tree_size, ':at': head.timestamp },
        },
      },
    ]);
    return outcome === 'done' ? 'written' : 'conflict';
  }

  async head(treeSize: number): Promise<SignedTreeHead | undefined> {
    const item = await this.get({ pk: HEAD, seq: treeSize });
    return item ? headOf(item) : undefined;
  }

  async latestHead(): Promise<SignedTreeHead | undefined> {
    const [item] = await this.query(
      {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': HEAD },
        ScanIndexForward: false,
      },
      1,
    );
    return item ? headOf(item) : undefined;
  }

  async heads(from: number, limit: number): Promise<SignedTreeHead[]> {
    return (await this.range(HEAD, from, limit)).map(headOf);
  }

  async markMirrored(size: number): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: STATE_KEY,
          UpdateExpression: 'SET mirrored_size = :size',
          ConditionExpression: 'attribute_exists(pk) AND mirrored_size < :size',
          ExpressionAttributeValues: { ':size': size },
        }),
      );
    } catch (error) {
      // Another run got there first: the mark only ever moves up.
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }
}

/** An object exists under the key with other bytes than the ones to write: the mirror never replaces one. */
export class MirrorConflictError extends Error {
  constructor(readonly key: string) {
    super(`the mirror already holds other content at ${key}`);
    this.name = 'MirrorConflictError';
  }
}

/** The journal's write-once copy on S3. */
export class S3JournalMirror implements JournalMirror {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  putEntry(index: number, json: string): Promise<MirrorOutcome> {
    return this.put(journalEntryKey(index), json);
  }

  putHead(treeSize: number, json: string): Promise<MirrorOutcome> {
    return this.put(journalHeadKey(treeSize), json);
  }

  private async put(key: string, body: string): Promise<MirrorOutcome> {
    const outcome = await putIfNoneMatch(
      this.s3,
      {
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: 'application/json',
        // A write into an Object Lock bucket must carry a checksum; S3 also checks the bytes against it.
        ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
      },
      async () => {
        const existing = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
        return (await existing.Body?.transformToString('utf8')) === body;
      },
    );
    if (outcome === 'conflict') throw new MirrorConflictError(key);
    return outcome;
  }
}
