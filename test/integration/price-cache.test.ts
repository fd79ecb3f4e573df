import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoCatalogRepository } from '../../functions/adapters/aws/catalog-repository';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoPriceCacheStore } from '../../functions/adapters/aws/price-cache-store';
import type { HttpResult } from '../../functions/handlers/middleware/http';
import { getPriceOperation } from '../../functions/handlers/operations/catalog';
import type { Clock } from '../../functions/ports/clock';
import type { PriceQuery } from '../../functions/schemas/catalog-api';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import { importCatalog } from '../../functions/usecases/catalog/import';
import {
  type CachedPrice,
  computeDisplayPrice,
  PriceCache,
  priceCacheRequestOf,
  tagKey,
  warmPriceCache,
} from '../../functions/usecases/catalog/price-cache';
import { CatalogReader } from '../../functions/usecases/catalog/reader';
import { minimalDocument } from '../support/catalog-document';
import { engineClients, provisionIsolated } from '../support/engines';
import { operationRequest } from '../unit/catalog-api/support';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const START = new Date('2026-11-22T12:00:00.000Z');
let now = START;
const clock: Clock = { now: () => now };
const advance = (ms: number) => {
  now = new Date(now.getTime() + ms);
};

let repository: DynamoCatalogRepository;
let store: DynamoPriceCacheStore;
let cacheTable: string;
let catalogTable: string;
/** Failures of the shared tier reported by any instance: none expected. */
let failures: unknown[] = [];

const US_USD: PriceQuery = { sku: 'sku_game', region: 'US', currency: 'USD' };

/** One function instance: its own catalog reader and its own in-process tier, sharing the table. */
const instance = () => {
  const reader = new CatalogReader(repository, clock);
  const cache = new PriceCache({ store, clock, onError: (error) => failures.push(error) });
  const read = async (query: PriceQuery = US_USD) => {
    const { release } = await reader.current();
    let computed = 0;
    const result = await cache.read(priceCacheRequestOf(release, query), () => {
      computed += 1;
      return computeDisplayPrice(release, query, clock.now());
    });
    return { ...result, computed };
  };
  return { reader, cache, read };
};

const rawItem = async (key: string) =>
  (await clients.documents.send(new GetCommand({ TableName: cacheTable, Key: { key } }))).Item;

/** A stored price entry: `key`, `expires_at` and the rest of the entry in the `entry` JSON attribute. */
const storedEntry = async (key: string) => {
  const item = await rawItem(key);
  if (typeof item?.entry !== 'string') return undefined;
  return { ...item, entry: JSON.parse(item.entry) as Record<string, unknown> };
};

beforeEach(async () => {
  const resources = await provisionIsolated(clients);
  repository = new DynamoCatalogRepository(
    clients.documents,
    resources.tableNames.catalog,
    resources.tableNames.events,
  );
  cacheTable = resources.tableNames.priceCache;
  catalogTable = resources.tableNames.catalog;
  store = new DynamoPriceCacheStore(clients.documents, cacheTable);
  now = START;
  failures = [];
  await importCatalog({ repository, clock }, minimalDocument());
});

afterEach(() => {
  expect(failures).toEqual([]);
});

/** A read of one of the pointer's replicas (any of them: readers pick one at random). */
const POINTER_REPLICA = { pk: expect.stringMatching(/^pointer#([0-9]|[12][0-9]|3[01])$/), sk: 'current' };

describe('price cache on DynamoDB Local', () => {
  it('misses, hits locally, then a new instance hits the shared table', async () => {
    const first = instance();
    const miss = await first.read();
    expect(miss).toMatchObject({ source: 'miss', computed: 1, ttlSeconds: 300 });

    // One string attribute besides the key and the TTL attribute.
    const item = await rawItem('pl_eur:US:USD:sku_game:1');
    expect(Object.keys(item ?? {}).sort()).toEqual(['entry', 'expires_at', 'key']);
    expect(item).toMatchObject({ key: 'pl_eur:US:USD:sku_game:1', expires_at: START.getTime() / 1000 + 300 });
    expect(JSON.parse(String(item?.entry))).toEqual({
      body: miss.body,
      pricelist_version: 1,
      fx_version: 'fx-1',
      tax_rule_version: 1,
      tags: { sku: 'sku_game', category: 'games', pricelist_version: '1' },
      epochs: { sku: 0, category: 0, pricelist_version: 0 },
      ttl_seconds: 300,
      cached_at: START.toISOString(),
    });

    expect(await first.read()).toMatchObject({ source: 'hit-local', computed: 0 });
    const second = await instance().read();
    expect(second).toMatchObject({ source: 'hit-shared', computed: 0 });
    expect(JSON.stringify(second.body)).toBe(JSON.stringify(miss.body));
  });

  it.each([
    ['sku', 'sku_game'],
    ['category', 'games'],
    ['pricelist_version', '1'],
  ] as const)('invalidation by %s reaches a second instance within a second', async (tag, value) => {
    const storefront = instance();
    await storefront.read();
    expect((await storefront.read()).source).toBe('hit-local');

    const admin = instance();
    expect(await admin.cache.invalidate(tag, value)).toBe(1);
    const epochItem = await rawItem(tagKey(tag, value));
    expect(epochItem).toMatchObject({ kind: 'tag_epoch', epoch: 1 });
    expect(epochItem?.expires_at).toBeUndefined();

    advance(1_000);
    expect(await storefront.read()).toMatchObject({ source: 'miss', computed: 1 });
    expect((await storedEntry('pl_eur:US:USD:sku_game:1'))?.entry.epochs).toMatchObject({ [tag]: 1 });
    // A fresh instance takes the rewritten entry.
    expect((await instance().read()).source).toBe('hit-shared');
  });

  it('never serves the old price after a publication with a new pricelist_version', async () => {
    const storefront = instance();
    const before = await storefront.read();
    const repriced: CatalogDocument = structuredClone(minimalDocument());
    const item = repriced.pricelists[0]?.items[0];
    if (!item) throw new Error('fixture changed');
    item.base_price = '79.99';
    await importCatalog({ repository, clock }, repriced);
    // The reader trusts its pointer for up to a second (C18); afterwards the new version is in force.
    advance(1_000);
    const after = await storefront.read();
    expect(after).toMatchObject({ source: 'miss', computed: 1 });
    expect(after.body).toMatchObject({ pricelist_version: 2 });
    expect(after.body.unit_price).not.toBe(before.body.unit_price);
    expect(await rawItem('pl_eur:US:USD:sku_game:2')).toBeDefined();
    // The old entry is still in the table under the old version's key, and is never read as current.
    expect(await rawItem('pl_eur:US:USD:sku_game:1')).toBeDefined();
    expect((await instance().read()).body).toMatchObject({
      pricelist_version: 2,
      unit_price: after.body.unit_price,
    });
  });

  it('expires entries after their TTL even before DynamoDB deletes them', async () => {
    await instance().read();
    advance(299_000);
    expect((await instance().read()).source).toBe('hit-shared');
    advance(1_000);
    expect((await rawItem('pl_eur:US:USD:sku_game:1'))?.expires_at).toBe(START.getTime() / 1000 + 300);
    expect((await instance().read()).source).toBe('miss');
  });

  it('never keeps a price converted at an FX override past the override’s expiry', async () => {
    const expiresAt = new Date(START.getTime() + 120_000);
    const document = minimalDocument();
    await importCatalog(
      { repository, clock },
      {
        ...document,
        fx_rates: {
          ...document.fx_rates,
          overrides: [
            { pair: 'EUR→USD', rate: '1.2000', expires_at: expiresAt.toISOString(), reason: 'feed delayed' },
          ],
        },
      },
    );
    advance(1_000);
    const storefront = instance();
    const during = await storefront.read();
    expect(during).toMatchObject({ source: 'miss', computed: 1 });
    expect(during.body).toMatchObject({
      fx_version: 'fx-2',
      fx_conversions: [{ pair: 'EUR→USD', reference_rate: '1.2', override: { rate: '1.2000' } }],
    });
    // The entry ends with the override (2 minutes), not with the currency's 300 s.
    expect((await rawItem('pl_eur:US:USD:sku_game:1'))?.expires_at).toBe(expiresAt.getTime() / 1000);
    // A price that converted nothing did not use the override: it keeps its full lifetime.
    await storefront.read({ sku: 'sku_game', region: 'DE', currency: 'EUR' });
    expect((await rawItem('pl_eur:DE:EUR:sku_game:1'))?.expires_at).toBe(now.getTime() / 1000 + 300);

    advance(118_999);
    expect((await instance().read()).source).toBe('hit-shared');
    advance(1);
    // Expired with the override: priced again at the published rate, in the same fx_version.
    const after = await storefront.read();
    expect(after).toMatchObject({ source: 'miss', computed: 1 });
    expect(after.body).toMatchObject({
      fx_version: 'fx-2',
      fx_conversions: [{ pair: 'EUR→USD', reference_rate: '1.0842' }],
    });
    expect((after.body.fx_conversions as { override?: unknown }[])[0]?.override).toBeUndefined();
    expect(after.body.unit_price).not.toBe(during.body.unit_price);
    expect((await rawItem('pl_eur:US:USD:sku_game:1'))?.expires_at).toBe(now.getTime() / 1000 + 300);
  });

  it('warms every SKU of a category in batches, and a storefront read then hits the shared table', async () => {
    const products = Array.from({ length: 40 }, (_, index) => ({
      sku_id: `sku_${index}`,
      title: `Game ${index}`,
      category: 'launch',
    }));
    const document = minimalDocument();
    await importCatalog(
      { repository, clock },
      minimalDocument({
        products: [...document.products, ...products],
        pricelists: [
          {
            ...(document.pricelists[0] as CatalogDocument['pricelists'][number]),
            items: [
              ...(document.pricelists[0]?.items ?? []),
              ...products.map((product, index) => ({
                sku_id: product.sku_id,
                base_price: `${10 + index}.00`,
                base_currency: 'EUR',
                tax_class: 'standard',
                pricing_model: 'flat' as const,
              })),
            ],
          },
        ],
      }),
    );
    const admin = instance();
    const { release } = await admin.reader.current({ fresh: true });
    const result = await warmPriceCache(
      { cache: admin.cache, release, at: clock.now() },
      { categories: ['launch'], currencies: ['USD', 'EUR'], regions: ['US', 'DE'] },
    );
    expect(result).toEqual({ warmed: 80, skipped: 80 });
    const warmed = await storedEntry('pl_eur:DE:EUR:sku_39:2');
    expect(warmed?.entry).toMatchObject({ pricelist_version: 2, tags: { category: 'launch' } });
    const read = await instance().read({ sku: 'sku_7', region: 'US', currency: 'USD' });
    expect(read).toMatchObject({ source: 'hit-shared', computed: 0 });
    expect(read.body).toEqual(
      computeDisplayPrice(release, { sku: 'sku_7', region: 'US', currency: 'USD' }, clock.now()).body,
    );
  });

  it('counts epochs atomically under concurrent invalidations and reads them in batches over 100', async () => {
    const epochs = await Promise.all(Array.from({ length: 10 }, () => store.bump(tagKey('sku', 'sku_game'))));
    expect([...epochs].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const keys = Array.from({ length: 150 }, (_, index) => tagKey('sku', `sku_${index}`));
    await store.bump(keys[149] as string);
    const read = await store.epochs([...keys, tagKey('sku', 'sku_game')]);
    expect(read.get(tagKey('sku', 'sku_game'))).toBe(10);
    expect(read.get(keys[149] as string)).toBe(1);
    expect(read.get(keys[0] as string)).toBeUndefined();
  });

  it('reads a malformed item as a miss', async () => {
    const entry: CachedPrice = {
      key: 'pl_eur:US:USD:sku_game:1',
      body: { sku: 'sku_game' },
      pricelist_version: 1,
      fx_version: 'fx-1',
      tax_rule_version: 1,
      tags: { sku: 'sku_game' },
      epochs: { sku: 0 },
      ttl_seconds: 300,
      cached_at: START.toISOString(),
      expires_at: START.getTime() / 1000 + 300,
    };
    await store.put([entry, { ...entry, key: 'other' }]);
    expect(await store.get(entry.key)).toEqual(entry);
    const malformed = [
      { entry: '{not json' },
      { entry: JSON.stringify({ body: { sku: 'sku_game' } }) },
      { entry: 42 },
      { kind: 'tag_epoch', epoch: 3 },
    ];
    for (const attributes of malformed) {
      await clients.documents.send(
        new PutCommand({
          TableName: cacheTable,
          Item: { key: entry.key, expires_at: entry.expires_at, ...attributes },
        }),
      );
      expect(await store.get(entry.key)).toBeUndefined();
    }
    expect(await store.get(tagKey('sku', 'nothing'))).toBeUndefined();
  });

  it('reads an item of the earlier format (one attribute per field) as a miss, and the miss replaces it', async () => {
    const key = 'pl_eur:US:USD:sku_game:1';
    await clients.documents.send(
      new PutCommand({
        TableName: cacheTable,
        Item: {
          key,
          kind: 'price',
          body: JSON.stringify({ sku: 'sku_game', unit_price: '1.00' }),
          pricelist_version: 1,
          fx_version: 'fx-1',
          tax_rule_version: 1,
          tags: { sku: 'sku_game', category: 'games', pricelist_version: '1' },
          epochs: { sku: 0, category: 0, pricelist_version: 0 },
          ttl_seconds: 300,
          cached_at: START.toISOString(),
          expires_at: START.getTime() / 1000 + 300,
        },
      }),
    );
    expect(await store.get(key)).toBeUndefined();
    const read = await instance().read();
    expect(read).toMatchObject({ source: 'miss', computed: 1 });
    expect(read.body.unit_price).not.toBe('1.00');
    expect(Object.keys((await rawItem(key)) ?? {}).sort()).toEqual(['entry', 'expires_at', 'key']);
    expect((await instance().read()).source).toBe('hit-shared');
  });

  it('answers each of many concurrent reads and writes with its own entry when they share batches', async () => {
    const entryFor = (index: number): CachedPrice => ({
      key: `pl_eur:US:USD:sku_${index}:1`,
      body: { sku: `sku_${index}`, unit_price: `${index}.00` },
      pricelist_version: 1,
      fx_version: 'fx-1',
      tax_rule_version: 1,
      tags: { sku: `sku_${index}` },
      epochs: { sku: 0 },
      ttl_seconds: 300,
      cached_at: START.toISOString(),
      expires_at: START.getTime() / 1000 + 300,
    });
    // 60 single writes at once: the first goes alone, the rest share BatchWriteItem calls of at most 25.
    await Promise.all(Array.from({ length: 60 }, (_, index) => store.put([entryFor(index)])));
    // 120 single reads at once, every stored key twice and 60 keys never written.
    const keys = [
      ...Array.from({ length: 60 }, (_, index) => entryFor(index).key),
      ...Array.from({ length: 60 }, (_, index) => entryFor(index).key),
      ...Array.from({ length: 60 }, (_, index) => `pl_eur:US:USD:absent_${index}:1`),
    ];
    const read = await Promise.all(keys.map((key) => store.get(key)));
    read.forEach((entry, position) => {
      if (position < 120) expect(entry).toEqual(entryFor(position % 60));
      else expect(entry).toBeUndefined();
    });
  });
});

describe('GET /catalog/prices on DynamoDB Local: one round trip for the pointer and the entry', () => {
  /** The DynamoDB calls `run` makes: command name and, for a BatchGetItem, the keys asked per table. */
  const callsDuring = async (run: () => Promise<unknown>) => {
    const send = vi.spyOn(clients.documents, 'send');
    try {
      await run();
      return send.mock.calls.map(([command]) => {
        const input = command.input as {
          RequestItems?: Record<string, { Keys: unknown[]; ConsistentRead?: boolean }>;
        };
        return {
          command: command.constructor.name,
          ...(input.RequestItems && command.constructor.name === 'BatchGetCommand'
            ? { tables: input.RequestItems }
            : {}),
        };
      });
    } finally {
      send.mockRestore();
    }
  };
  const prices = (query: Record<string, string>) => operationRequest({ resource: '/catalog/prices', query });
  const storefront = () => {
    const cache = new PriceCache({ store, clock, onError: (error) => failures.push(error) });
    return getPriceOperation(new CatalogReader(repository, clock), clock, cache);
  };

  it('reads the pointer with the entry guessed from the previous release, and due epochs with them', async () => {
    const operation = storefront();
    expect(
      (await operation(prices({ sku: 'sku_game', region: 'US', currency: 'USD' }))).headers,
    ).toMatchObject({
      'X-Cache': 'miss',
    });

    // A key this instance never read: the pointer and the shared entry in one call, then the miss is written.
    const web = await callsDuring(() =>
      operation(prices({ sku: 'sku_game', region: 'US', currency: 'USD', channel: 'web' })),
    );
    expect(web).toEqual([
      {
        command: 'BatchGetCommand',
        tables: {
          [catalogTable]: { Keys: [POINTER_REPLICA], ConsistentRead: true },
          [cacheTable]: { Keys: [{ key: 'pl_eur:US:USD:sku_game:1|channel:web' }] },
        },
      },
      { command: 'PutCommand' },
    ]);

    // A second later the tag epochs are due: read consistently beside the pointer; the entry is a local hit.
    advance(1_000);
    let hit: HttpResult | undefined;
    const due = await callsDuring(async () => {
      hit = await operation(prices({ sku: 'sku_game', region: 'US', currency: 'USD' }));
    });
    expect(hit?.headers).toMatchObject({ 'X-Cache': 'hit-local' });
    expect(due).toEqual([
      {
        command: 'BatchGetCommand',
        tables: {
          [catalogTable]: { Keys: [POINTER_REPLICA], ConsistentRead: true },
          [cacheTable]: {
            Keys: [
              { key: tagKey('sku', 'sku_game') },
              { key: tagKey('category', 'games') },
              { key: tagKey('pricelist_version', '1') },
            ],
            ConsistentRead: true,
          },
        },
      },
    ]);
  });

  it('never answers from the guess once a publication moved the pointer, even in the same call', async () => {
    const operation = storefront();
    const query = { sku: 'sku_game', region: 'US', currency: 'USD', channel: 'web' };
    const before = (await operation(prices(query))).body as Record<string, unknown>;
    expect(before).toMatchObject({ pricelist_version: 1 });
    // Another instance's entry for the same key, so that the guess would find a live entry of version 1.
    expect((await storefront()(prices({ ...query, channel: 'app' }))).headers).toMatchObject({
      'X-Cache': 'miss',
    });

    const repriced: CatalogDocument = structuredClone(minimalDocument());
    const item = repriced.pricelists[0]?.items[0];
    if (!item) throw new Error('fixture changed');
    item.base_price = '79.99';
    await importCatalog({ repository, clock }, repriced);

    for (const channel of ['web', 'app']) {
      const after = await operation(prices({ ...query, channel }));
      expect(after.headers).toMatchObject({ 'X-Cache': 'miss' });
      expect(after.body).toMatchObject({ pricelist_version: 2 });
      expect((after.body as Record<string, unknown>).unit_price).not.toBe(before.unit_price);
    }
    expect(await rawItem(`pl_eur:US:USD:sku_game:2|channel:web`)).toBeDefined();
  });
});
