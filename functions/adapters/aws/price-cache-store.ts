import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { Batcher } from '../../shared/batcher';
import {
  CACHE_TAGS,
  type CachedPrice,
  type CacheTag,
  type PriceBody,
  type PriceCacheStore,
} from '../../usecases/catalog/price-cache';

/** BatchWriteItem takes at most 25 items, BatchGetItem at most 100 keys. */
const WRITE_BATCH = 25;
const READ_BATCH = 100;
const MAX_ROUNDS = 8;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const chunksOf = <T>(items: readonly T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const tagRecord = <T>(
  value: unknown,
  valid: (entry: unknown) => entry is T,
): Partial<Record<CacheTag, T>> => {
  const result: Partial<Record<CacheTag, T>> = {};
  if (!isRecord(value)) return result;
  for (const tag of CACHE_TAGS) {
    const entry = value[tag];
    if (valid(entry)) result[tag] = entry;
  }
  return result;
};

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A stored price projection, or undefined when the item is not one (or is malformed: a miss, not a 500). */
const entryOf = (item: Record<string, unknown>): CachedPrice | undefined => {
  if (item.kind !== 'price' || !isString(item.body)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(item.body);
  } catch {
    return undefined;
  }
  if (
    !isRecord(body) ||
    !isString(item.key) ||
    !isNumber(item.pricelist_version) ||
    !isString(item.fx_version) ||
    !isNumber(item.tax_rule_version) ||
    !isNumber(item.ttl_seconds) ||
    !isString(item.cached_at) ||
    !isNumber(item.expires_at)
  )
    return undefined;
  return {
    key: item.key,
    body: body as PriceBody,
    pricelist_version: item.pricelist_version,
    fx_version: item.fx_version,
    tax_rule_version: item.tax_rule_version,
    tags: tagRecord(item.tags, isString),
    epochs: tagRecord(item.epochs, isNumber),
    ttl_seconds: item.ttl_seconds,
    cached_at: item.cached_at,
    expires_at: item.expires_at,
  };
};

/**
 * The body is stored as its JSON text, so a hit answers byte for byte what the miss answered (DynamoDB maps do
 * not keep key order). `expires_at` is the table's TTL attribute.
 */
const itemOf = (entry: CachedPrice): Record<string, unknown> => ({
  key: entry.key,
  kind: 'price',
  body: JSON.stringify(entry.body),
  pricelist_version: entry.pricelist_version,
  fx_version: entry.fx_version,
  tax_rule_version: entry.tax_rule_version,
  tags: entry.tags,
  epochs: entry.epochs,
  ttl_seconds: entry.ttl_seconds,
  cached_at: entry.cached_at,
  expires_at: entry.expires_at,
});

/**
 * The shared price projection on DynamoDB (`TABLES.priceCache`, partition key `key`, TTL `expires_at`): price
 * entries and tag epoch items (`tag#<tag>#<value>`, `epoch` counter, no TTL) in the one table.
 *
 * Single reads and writes go through batchers: alone they are one `GetItem`/`PutItem`; when one store serves
 * many requests at once (the local stack's instances share it), calls arriving meanwhile share one
 * `BatchGetItem`/`BatchWriteItem`.
 */
export class DynamoPriceCacheStore implements PriceCacheStore {
  private readonly reads = new Batcher<string, CachedPrice | undefined>(
    (keys) => this.getAll(keys),
    READ_BATCH,
  );
  private readonly writes = new Batcher<CachedPrice, void>(async (entries) => {
    await this.putAll(entries);
    return entries.map(() => undefined);
  }, WRITE_BATCH);

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  get(key: string): Promise<CachedPrice | undefined> {
    return this.reads.submit(key);
  }

  async put(entries: readonly CachedPrice[]): Promise<void> {
    if (entries.length === 1 && entries[0]) await this.writes.submit(entries[0]);
    else await this.putAll(entries);
  }

  private async getAll(keys: readonly string[]): Promise<(CachedPrice | undefined)[]> {
    if (keys.length === 1 && keys[0] !== undefined) {
      const result = await this.documents.send(
        new GetCommand({ TableName: this.tableName, Key: { key: keys[0] } }),
      );
      return [result.Item ? entryOf(result.Item) : undefined];
    }
    const found = new Map<string, CachedPrice | undefined>();
    let pending: Record<string, unknown>[] = [...new Set(keys)].map((key) => ({ key }));
    for (let round = 0; pending.length > 0; round += 1) {
      if (round >= MAX_ROUNDS) throw new Error('price cache: reads left unprocessed after retries');
      if (round > 0) await pause(25 * 2 ** round);
      const result = await this.documents.send(
        new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending } } }),
      );
      for (const item of result.Responses?.[this.tableName] ?? [])
        if (isString(item.key)) found.set(item.key, entryOf(item));
      pending = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return keys.map((key) => found.get(key));
  }

  private async putAll(entries: readonly CachedPrice[]): Promise<void> {
    if (entries.length === 1 && entries[0]) {
      await this.documents.send(new PutCommand({ TableName: this.tableName, Item: itemOf(entries[0]) }));
      return;
    }
    // Duplicate keys in one batch are refused by DynamoDB: the last entry of a key wins.
    const unique = [...new Map(entries.map((entry) => [entry.key, entry])).values()];
    for (const chunk of chunksOf(unique, WRITE_BATCH)) {
      let requests = chunk.map((entry) => ({ PutRequest: { Item: itemOf(entry) } }));
      for (let round = 0; requests.length > 0; round += 1) {
        if (round >= MAX_ROUNDS) throw new Error('price cache: writes left unprocessed after retries');
        if (round > 0) await pause(25 * 2 ** round);
        const result = await this.documents.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
        );
        requests = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      }
    }
  }

  /** Strongly consistent reads, so an invalidation is seen by the next re-read, wherever it ran. */
  async epochs(tagKeys: readonly string[]): Promise<ReadonlyMap<string, number>> {
    const epochs = new Map<string, number>();
    for (const chunk of chunksOf([...new Set(tagKeys)], READ_BATCH)) {
      let keys: Record<string, unknown>[] = chunk.map((key) => ({ key }));
      for (let round = 0; keys.length > 0; round += 1) {
        if (round >= MAX_ROUNDS) throw new Error('price cache: epoch reads left unprocessed after retries');
        if (round > 0) await pause(25 * 2 ** round);
        const result = await this.documents.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tableName]: {
                Keys: keys,
                ConsistentRead: true,
                // `key` is a reserved word.
                ProjectionExpression: '#key, #epoch',
                ExpressionAttributeNames: { '#key': 'key', '#epoch': 'epoch' },
              },
            },
          }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          if (isString(item.key) && isNumber(item.epoch)) epochs.set(item.key, item.epoch);
        }
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return epochs;
  }

  async bump(tagKey: string): Promise<number> {
    const result = await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { key: tagKey },
        UpdateExpression: 'ADD #epoch :one SET #kind = :kind',
        ExpressionAttributeNames: { '#epoch': 'epoch', '#kind': 'kind' },
        ExpressionAttributeValues: { ':one': 1, ':kind': 'tag_epoch' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const epoch = result.Attributes?.epoch;
    if (!isNumber(epoch)) throw new Error('price cache: the tag epoch was not returned');
    return epoch;
  }
}
