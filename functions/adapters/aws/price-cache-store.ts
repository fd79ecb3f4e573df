import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  CACHE_TAGS,
  type CachedPrice,
  type CacheTag,
  type PriceBody,
  type PriceCacheStore,
} from '../../usecases/catalog/price-cache';
import { type ItemBatches, itemBatchesOf } from './item-batches';

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

/**
 * The attribute holding a price entry (item format 2): everything but the key and `expires_at`, as one JSON
 * string. One string attribute is cheaper to marshal, store and read back than a dozen attributes with nested
 * maps (on both sides: the SDK and DynamoDB), and keeps the body's key order, so a hit answers byte for byte
 * what the miss answered. Items of the earlier format (one attribute per field) have no `entry`: they read as
 * a miss and are overwritten under the same key by the next write.
 */
const ENTRY = 'entry';

/** A stored price projection, or undefined when the item is not one (or is malformed: a miss, not a 500). */
const entryOf = (item: Record<string, unknown>): CachedPrice | undefined => {
  const text = item[ENTRY];
  if (!isString(text) || !isString(item.key) || !isNumber(item.expires_at)) return undefined;
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (
    !isRecord(stored) ||
    !isRecord(stored.body) ||
    !isNumber(stored.pricelist_version) ||
    !isString(stored.fx_version) ||
    !isNumber(stored.tax_rule_version) ||
    !isNumber(stored.ttl_seconds) ||
    !isString(stored.cached_at)
  )
    return undefined;
  return {
    key: item.key,
    body: stored.body as PriceBody,
    pricelist_version: stored.pricelist_version,
    fx_version: stored.fx_version,
    tax_rule_version: stored.tax_rule_version,
    tags: tagRecord(stored.tags, isString),
    epochs: tagRecord(stored.epochs, isNumber),
    ttl_seconds: stored.ttl_seconds,
    cached_at: stored.cached_at,
    expires_at: item.expires_at,
  };
};

/** `key`, `expires_at` (the table's TTL attribute) and the rest of the entry as one JSON string. */
const itemOf = (entry: CachedPrice): Record<string, unknown> => ({
  key: entry.key,
  expires_at: entry.expires_at,
  [ENTRY]: JSON.stringify({
    body: entry.body,
    pricelist_version: entry.pricelist_version,
    fx_version: entry.fx_version,
    tax_rule_version: entry.tax_rule_version,
    tags: entry.tags,
    epochs: entry.epochs,
    ttl_seconds: entry.ttl_seconds,
    cached_at: entry.cached_at,
  }),
});

/**
 * The shared price projection on DynamoDB (`TABLES.priceCache`, partition key `key`, TTL `expires_at`): price
 * entries (`key`, `expires_at`, `entry`: the rest as JSON) and tag epoch items (`tag#<tag>#<value>`, `epoch`
 * counter, no TTL) in the one table.
 *
 * Entry reads and writes go through the client's grouped calls (`ItemBatches`): alone they are one
 * `GetItem`/`PutItem`; when one client serves many requests at once (the local stack's instances share it),
 * calls asked for meanwhile share one `BatchGetItem`/`BatchWriteItem`, and an entry read travels with the
 * catalog pointer read of the same request.
 */
export class DynamoPriceCacheStore implements PriceCacheStore {
  private readonly batches: ItemBatches;

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.batches = itemBatchesOf(documents);
  }

  async get(key: string): Promise<CachedPrice | undefined> {
    const item = await this.batches.get(this.tableName, { key });
    return item ? entryOf(item) : undefined;
  }

  /** Many entries (a warm-up) go out 25 to a `BatchWriteItem`; a key written twice keeps its last entry. */
  async put(entries: readonly CachedPrice[]): Promise<void> {
    await Promise.all(
      entries.map((entry) => this.batches.put(this.tableName, { key: entry.key }, itemOf(entry))),
    );
  }

  /**
   * Strongly consistent reads, so an invalidation is seen by the next re-read, wherever it ran. They go through
   * the grouped calls too: asked for in the same turn as a request's pointer and entry reads, they travel in
   * the same `BatchGetItem` (the table is then read consistently for that call).
   */
  async epochs(tagKeys: readonly string[]): Promise<ReadonlyMap<string, number>> {
    const keys = [...new Set(tagKeys)];
    const items = await Promise.all(
      keys.map((key) => this.batches.get(this.tableName, { key }, { consistent: true })),
    );
    const epochs = new Map<string, number>();
    for (const item of items)
      if (item && isString(item.key) && isNumber(item.epoch)) epochs.set(item.key, item.epoch);
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
