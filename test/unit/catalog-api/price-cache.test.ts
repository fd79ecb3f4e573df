import { beforeEach, describe, expect, it, vi } from 'vitest';
import { getPriceOperation } from '../../../functions/handlers/operations/catalog';
import type { PriceQuery } from '../../../functions/schemas/catalog-api';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { LruMap } from '../../../functions/shared/lru';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import {
  type CachedPrice,
  cacheTtlSeconds,
  computeDisplayPrice,
  freshnessOf,
  PriceCache,
  priceCacheKey,
  priceCacheRequestOf,
  STABLE_CACHE_SECONDS,
  tagKey,
  VOLATILE_CACHE_SECONDS,
  warmPriceCache,
} from '../../../functions/usecases/catalog/price-cache';
import { CatalogNotFoundError, CatalogReader } from '../../../functions/usecases/catalog/reader';
import type { CatalogRelease } from '../../../functions/usecases/catalog/release';
import { minimalDocument } from '../../support/catalog-document';
import { InMemoryCatalogRepository, InMemoryPriceCacheStore, ManualClock, operationRequest } from './support';

const US_USD: PriceQuery = { sku: 'sku_game', region: 'US', currency: 'USD' };

/** The minimal document plus BTC in the US and a second category, so TTLs and tags can differ. */
const cacheDocument = (overrides: Partial<CatalogDocument> = {}): CatalogDocument =>
  minimalDocument({
    fx_rates: {
      base_currency: 'EUR',
      rates: [
        { pair: 'EUR→USD', rate: '1.0842', source: 'ecb', method: 'provider', precision: 4 },
        { pair: 'EUR→BTC', rate: '0.0000105', source: 'twap', method: 'twap', precision: 10 },
      ],
    },
    display_rules: [
      { region: 'DE', currency_whitelist: ['EUR'] },
      { region: 'US', currency_whitelist: ['USD', 'BTC'], charm_pricing: '.99' },
    ],
    ...overrides,
  });

let clock: ManualClock;
let repository: InMemoryCatalogRepository;
let store: InMemoryPriceCacheStore;

const publish = async (document: CatalogDocument = cacheDocument()) => {
  const result = await importCatalog({ repository, clock }, document);
  return result;
};

const currentRelease = async (): Promise<CatalogRelease> =>
  (await new CatalogReader(repository, clock).current({ fresh: true })).release;

const newInstance = (options: Partial<ConstructorParameters<typeof PriceCache>[0]> = {}) =>
  new PriceCache({ store, clock, ...options });

/** A storefront read through `cache`, counting how often the engine priced. */
const readThrough = async (cache: PriceCache, query: PriceQuery = US_USD) => {
  const release = await currentRelease();
  const compute = vi.fn(() => computeDisplayPrice(release, query, clock.now()));
  const result = await cache.read(priceCacheRequestOf(release, query), compute);
  return { ...result, computed: compute.mock.calls.length };
};

beforeEach(async () => {
  clock = new ManualClock();
  repository = new InMemoryCatalogRepository();
  store = new InMemoryPriceCacheStore();
  await publish();
});

describe('cache key', () => {
  it('is exactly pricelist:region:currency:sku:version for the plain storefront read', async () => {
    const release = await currentRelease();
    expect(priceCacheRequestOf(release, US_USD)).toEqual({
      key: 'pl_eur:US:USD:sku_game:1',
      versions: { pricelist_version: 1, fx_version: 'fx-1', tax_rule_version: 1 },
      tags: { sku: 'sku_game', category: 'games', pricelist_version: '1' },
    });
    expect(priceCacheRequestOf(release, { ...US_USD, pricelist: 'pl_eur', buyer_type: 'consumer' }).key).toBe(
      'pl_eur:US:USD:sku_game:1',
    );
  });

  it('adds a suffix only for what changes the price: tenant, channel, business buyers', () => {
    const base = {
      pricelist: 'pl_eur',
      region: 'US',
      currency: 'USD',
      sku: 'sku_game',
      pricelist_version: 3,
    };
    expect(priceCacheKey({ ...base, tenant: 'acme', channel: 'app', buyer_type: 'business' })).toBe(
      'pl_eur:US:USD:sku_game:3|tenant:acme|channel:app|buyer:business',
    );
    expect(priceCacheKey({ ...base, channel: 'web' })).toBe('pl_eur:US:USD:sku_game:3|channel:web');
  });

  it('encodes a colon inside an identifier so two reads cannot share a key', () => {
    const a = priceCacheKey({
      pricelist: 'p',
      region: 'DE',
      currency: 'USD',
      sku: 'AB:CDE:z',
      pricelist_version: 1,
    });
    const b = priceCacheKey({
      pricelist: 'p:DE:USD',
      region: 'AB',
      currency: 'CDE',
      sku: 'z',
      pricelist_version: 1,
    });
    expect(a).not.toBe(b);
    expect(a).toBe('p:DE:USD:AB%3ACDE%3Az:1');
  });

  it('refuses an unknown price list as not found', async () => {
    const release = await currentRelease();
    expect(() => priceCacheRequestOf(release, { ...US_USD, pricelist: 'pl_nope' })).toThrow(
      CatalogNotFoundError,
    );
  });

  it('omits the category tag of a product without one', async () => {
    await publish(
      cacheDocument({
        products: [
          { sku_id: 'sku_game', title: 'Game' },
          { sku_id: 'sku_shirt', title: 'Shirt' },
        ],
      }),
    );
    const release = await currentRelease();
    expect(priceCacheRequestOf(release, US_USD).tags).toEqual({ sku: 'sku_game', pricelist_version: '2' });
  });
});

describe('lifetimes, freshness and the LRU', () => {
  it('keeps stable currencies 300 s and crypto 30 s, overridable per currency', () => {
    expect(cacheTtlSeconds('USD', undefined)).toBe(STABLE_CACHE_SECONDS);
    expect(cacheTtlSeconds('BTC', undefined)).toBe(VOLATILE_CACHE_SECONDS);
    expect(cacheTtlSeconds('SOL', { SOL: 9 })).toBe(VOLATILE_CACHE_SECONDS);
    expect(cacheTtlSeconds('USD', undefined, { USD: 60 })).toBe(60);
  });

  const entry: CachedPrice = {
    key: 'k',
    body: {},
    pricelist_version: 1,
    fx_version: 'fx-1',
    tax_rule_version: 1,
    tags: { sku: 'sku_game', category: 'games', pricelist_version: '1' },
    epochs: { sku: 2, category: 0, pricelist_version: 0 },
    ttl_seconds: 300,
    cached_at: '2026-11-22T12:00:00.000Z',
    expires_at: Date.parse('2026-11-22T12:05:00.000Z') / 1000,
  };
  const versions = { pricelist_version: 1, fx_version: 'fx-1', tax_rule_version: 1 };
  const now = Date.parse('2026-11-22T12:01:00.000Z');

  it('judges an entry fresh, expired, from other versions, or invalidated', () => {
    expect(freshnessOf(entry, versions, { sku: 2 }, now)).toBe('fresh');
    expect(freshnessOf(entry, versions, {}, entry.expires_at * 1000)).toBe('expired');
    expect(freshnessOf(entry, { ...versions, fx_version: 'fx-2' }, {}, now)).toBe('version_mismatch');
    expect(freshnessOf(entry, { ...versions, tax_rule_version: 2 }, {}, now)).toBe('version_mismatch');
    expect(freshnessOf(entry, versions, { sku: 3 }, now)).toBe('invalidated');
    expect(freshnessOf(entry, versions, { category: 1 }, now)).toBe('invalidated');
    // Epochs read longer ago than the entry was written: the entry is newer than what we know, so fresh.
    expect(freshnessOf(entry, versions, { sku: 1 }, now)).toBe('fresh');
  });

  it('bounds the LRU and forgets the least recently used entry first', () => {
    const lru = new LruMap<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.size).toBe(2);
    expect(() => new LruMap(0)).toThrow(RangeError);
  });

  it('bounds the in-process tier of an instance', async () => {
    const cache = newInstance({ localEntries: 1 });
    await readThrough(cache, US_USD);
    await readThrough(cache, { ...US_USD, sku: 'sku_shirt' });
    store.entries.clear();
    expect((await readThrough(cache, US_USD)).source).toBe('miss');
  });
});

describe('two tiers', () => {
  it('misses, then hits locally, then a new instance hits the shared tier', async () => {
    const first = newInstance();
    const miss = await readThrough(first);
    expect(miss).toMatchObject({ source: 'miss', computed: 1, ttlSeconds: 300 });
    expect(store.entries.has('pl_eur:US:USD:sku_game:1')).toBe(true);
    const stored = store.entries.get('pl_eur:US:USD:sku_game:1');
    expect(stored?.expires_at).toBe(Math.floor(clock.now().getTime() / 1000) + 300);
    expect(stored?.epochs).toEqual({ sku: 0, category: 0, pricelist_version: 0 });

    const local = await readThrough(first);
    expect(local).toMatchObject({ source: 'hit-local', computed: 0 });
    expect(local.body).toEqual(miss.body);

    const second = newInstance();
    const shared = await readThrough(second);
    expect(shared).toMatchObject({ source: 'hit-shared', computed: 0 });
    expect(shared.body).toEqual(miss.body);
    expect((await readThrough(second)).source).toBe('hit-local');
  });

  it('expires entries after their TTL: 300 s for USD, 30 s for BTC', async () => {
    const cache = newInstance();
    const btc = { ...US_USD, currency: 'BTC' };
    await readThrough(cache);
    expect(await readThrough(cache, btc)).toMatchObject({ source: 'miss', ttlSeconds: 30 });
    clock.advance(29_000);
    expect((await readThrough(cache, btc)).source).toBe('hit-local');
    clock.advance(1_000);
    expect((await readThrough(cache, btc)).source).toBe('miss');
    clock.advance(269_000);
    expect((await readThrough(cache)).source).toBe('hit-local');
    clock.advance(1_000);
    expect((await readThrough(newInstance())).source).toBe('miss');
    // Its own copy expired too; the new instance's miss rewrote the shared one.
    expect((await readThrough(cache)).source).toBe('hit-shared');
  });

  it('treats an entry computed with another fx_version as a miss', async () => {
    const cache = newInstance();
    const before = await readThrough(cache);
    const document = cacheDocument();
    await publish({
      ...document,
      fx_rates: {
        ...document.fx_rates,
        rates: [{ ...document.fx_rates.rates[0]!, rate: '1.2000' }, document.fx_rates.rates[1]!],
      },
    });
    const after = await readThrough(cache);
    expect(after).toMatchObject({ source: 'miss', computed: 1 });
    expect(after.body).toMatchObject({ pricelist_version: 1, fx_version: 'fx-2' });
    expect(after.body.unit_price).not.toBe(before.body.unit_price);
    expect(store.entries.get('pl_eur:US:USD:sku_game:1')?.fx_version).toBe('fx-2');
  });

  it('never serves the old price after a new publication: the key carries the new version', async () => {
    const cache = newInstance();
    await readThrough(cache);
    const document = cacheDocument();
    const repriced = structuredClone(document);
    repriced.pricelists[0]!.items[0]!.base_price = '79.99';
    await publish(repriced);
    const after = await readThrough(cache);
    expect(after).toMatchObject({ source: 'miss', computed: 1 });
    expect(after.body).toMatchObject({ pricelist_version: 2 });
    expect(store.entries.has('pl_eur:US:USD:sku_game:2')).toBe(true);
  });

  it('caps an entry at the moment a fee schedule of the release takes effect', async () => {
    await publish(
      cacheDocument({
        fees: [
          {
            effective_from: '2026-01-01T00:00:00.000Z',
            cross_border: { percent: '1', domestic_regions: ['DE'] },
          },
          {
            effective_from: '2026-11-22T12:02:00.000Z',
            cross_border: { percent: '2', domestic_regions: ['DE'] },
          },
        ],
      }),
    );
    const cache = newInstance();
    const first = await readThrough(cache);
    expect(store.entries.get('pl_eur:US:USD:sku_game:2')?.expires_at).toBe(
      Date.parse('2026-11-22T12:02:00.000Z') / 1000,
    );
    clock.advance(120_000);
    const second = await readThrough(cache);
    expect(second.source).toBe('miss');
    expect(second.body.fees).not.toEqual(first.body.fees);
  });
});

describe('invalidation by tag', () => {
  it.each([
    ['sku', 'sku_game'],
    ['category', 'games'],
    ['pricelist_version', '1'],
  ] as const)('by %s reaches another instance within a second', async (tag, value) => {
    const storefront = newInstance();
    await readThrough(storefront);
    await readThrough(storefront, { ...US_USD, sku: 'sku_shirt' });
    const admin = newInstance();
    expect(await admin.invalidate(tag, value)).toBe(1);
    expect(store.tagEpochs.get(tagKey(tag, value))).toBe(1);

    // The storefront instance trusts the epochs it read for up to a second...
    clock.advance(999);
    expect((await readThrough(storefront)).source).toBe('hit-local');
    // ...and no longer.
    clock.advance(1);
    const after = await readThrough(storefront);
    expect(after).toMatchObject({ source: 'miss', computed: 1 });
    expect(store.entries.get('pl_eur:US:USD:sku_game:1')?.epochs[tag]).toBe(1);
    expect((await readThrough(storefront)).source).toBe('hit-local');
    // A third instance sees the rewritten entry as fresh.
    expect((await readThrough(newInstance())).source).toBe('hit-shared');

    const shirt = await readThrough(storefront, { ...US_USD, sku: 'sku_shirt' });
    expect(shirt.source).toBe(tag === 'pricelist_version' ? 'miss' : 'hit-local');
  });

  it('serves nothing of an invalidated tag from the shared tier to a fresh instance', async () => {
    await readThrough(newInstance());
    await newInstance().invalidate('sku', 'sku_game');
    expect((await readThrough(newInstance())).source).toBe('miss');
  });

  it('re-reads the epochs an instance needs at most once a second', async () => {
    const cache = newInstance();
    await readThrough(cache);
    await readThrough(cache);
    await readThrough(cache);
    expect(store.calls.epochs).toBe(1);
    clock.advance(1_000);
    await readThrough(cache);
    expect(store.calls.epochs).toBe(2);
  });

  it('counts epochs up on every invalidation', async () => {
    const cache = newInstance();
    expect(await cache.invalidate('category', 'games')).toBe(1);
    expect(await cache.invalidate('category', 'games')).toBe(2);
    expect(await cache.epochsOf({ category: 'games', sku: 'x' })).toEqual({ category: 2, sku: 0 });
  });
});

describe('reading ahead', () => {
  const computeFor = (release: CatalogRelease, query: PriceQuery = US_USD) =>
    vi.fn(() => computeDisplayPrice(release, query, clock.now()));

  it('reads the shared entry once, ahead, and the read takes it instead of reading again', async () => {
    await readThrough(newInstance());
    const release = await currentRelease();
    const request = priceCacheRequestOf(release, US_USD);
    const cache = newInstance();
    const gets = store.calls.get;
    const ahead = cache.prefetch(request);
    expect(ahead).toBeDefined();
    const compute = computeFor(release);
    expect(await cache.read(request, compute, ahead)).toMatchObject({ source: 'hit-shared' });
    expect(compute).not.toHaveBeenCalled();
    expect(store.calls.get - gets).toBe(1);
  });

  it('reads no entry ahead while the in-process tier holds a live one of the same versions', async () => {
    const cache = newInstance();
    await readThrough(cache);
    const request = priceCacheRequestOf(await currentRelease(), US_USD);
    expect(cache.prefetch(request)).toBeUndefined();
    clock.advance(STABLE_CACHE_SECONDS * 1000);
    expect(cache.prefetch(request)).toBeDefined();
  });

  it('shares one epoch read between the read ahead and the read, and between concurrent reads', async () => {
    const release = await currentRelease();
    const request = priceCacheRequestOf(release, US_USD);
    const cache = newInstance();
    await cache.read(request, computeFor(release), cache.prefetch(request));
    expect(store.calls.epochs).toBe(1);
    clock.advance(1_000);
    await Promise.all([cache.epochsOf(request.tags), cache.epochsOf(request.tags)]);
    expect(store.calls.epochs).toBe(2);
  });

  it('reports a failed read ahead and answers a miss', async () => {
    const onError = vi.fn();
    const cache = newInstance({ onError });
    const release = await currentRelease();
    const request = priceCacheRequestOf(release, US_USD);
    await cache.epochsOf(request.tags);
    store.fail = true;
    const ahead = cache.prefetch(request);
    expect(await cache.read(request, computeFor(release), ahead)).toMatchObject({ source: 'miss' });
    expect(onError.mock.calls.map((call) => call[1])).toEqual(['get', 'put']);
  });

  it('guesses from the release of the previous read, and never answers from the guess after a publication', async () => {
    const operation = getPriceOperation(new CatalogReader(repository, clock), clock, newInstance());
    const prices = (query: Record<string, string>) =>
      operationRequest({ resource: '/catalog/prices', query });
    const query = { sku: 'sku_game', region: 'US', currency: 'USD' };
    const before = await operation(prices(query));
    expect(before.headers?.['X-Cache']).toBe('miss');
    // Another instance stored the entry of the channel: the guess of this instance finds it.
    await readThrough(newInstance(), { ...US_USD, channel: 'web' });
    const gets = store.calls.get;
    expect((await operation(prices({ ...query, channel: 'web' }))).headers?.['X-Cache']).toBe('hit-shared');
    expect(store.calls.get - gets).toBe(1);

    const repriced = cacheDocument();
    const item = repriced.pricelists[0]?.items[0];
    if (!item) throw new Error('fixture changed');
    item.base_price = '79.99';
    await publish(repriced);
    for (const channel of [undefined, 'web']) {
      const after = await operation(prices(channel ? { ...query, channel } : query));
      expect(after.headers?.['X-Cache']).toBe('miss');
      expect(after.body).toMatchObject({ pricelist_version: 2 });
      expect((after.body as Record<string, unknown>).unit_price).not.toBe(
        (before.body as Record<string, unknown>).unit_price,
      );
    }
  });
});

describe('a failing shared tier never fails a read', () => {
  it('prices afresh and stores nothing when the epochs cannot be read', async () => {
    const onError = vi.fn();
    const cache = newInstance({ onError });
    store.fail = true;
    const result = await readThrough(cache);
    expect(result).toMatchObject({ source: 'miss', computed: 1 });
    expect(onError).toHaveBeenCalledWith(expect.any(Error), 'epochs');
    store.fail = false;
    expect(store.entries.size).toBe(0);
  });

  it('answers a miss when the entry cannot be read or written', async () => {
    const onError = vi.fn();
    const cache = newInstance({ onError });
    await cache.epochsOf({ sku: 'sku_game', category: 'games', pricelist_version: '1' });
    store.fail = true;
    expect((await readThrough(cache)).source).toBe('miss');
    expect(onError.mock.calls.map((call) => call[1])).toEqual(['get', 'put']);
    // The in-process tier still took it.
    expect((await readThrough(cache)).source).toBe('hit-local');
  });
});

describe('warm-up', () => {
  it('writes the shared entries of the categories in whitelisted region/currency pairs only', async () => {
    const cache = newInstance();
    const release = await currentRelease();
    const result = await warmPriceCache(
      { cache, release, at: clock.now() },
      {
        categories: ['games', 'toys'],
        currencies: ['USD', 'BTC', 'EUR', 'JPY'],
        regions: ['US', 'DE', 'FR'],
      },
    );
    // sku_game only: US×{USD,BTC} and DE×EUR warmed; the other 12 - 3 = 9 pairs skipped.
    expect(result).toEqual({ warmed: 3, skipped: 9 });
    expect([...store.entries.keys()].sort()).toEqual([
      'pl_eur:DE:EUR:sku_game:1',
      'pl_eur:US:BTC:sku_game:1',
      'pl_eur:US:USD:sku_game:1',
    ]);
    expect(store.entries.get('pl_eur:US:BTC:sku_game:1')?.ttl_seconds).toBe(30);
    const read = await readThrough(newInstance());
    expect(read).toMatchObject({ source: 'hit-shared', computed: 0 });
    expect(read.body).toEqual(computeDisplayPrice(release, US_USD, clock.now()).body);
  });

  it('skips what cannot be priced and is not born stale after an invalidation', async () => {
    await publish(
      cacheDocument({
        products: [
          {
            sku_id: 'sku_game',
            title: 'Game',
            category: 'games',
            region_policies: [{ region: 'US', sellable: false }],
          },
          { sku_id: 'sku_shirt', title: 'Shirt', category: 'games' },
        ],
      }),
    );
    const cache = newInstance();
    await newInstance().invalidate('sku', 'sku_shirt');
    await cache.epochsOf({ sku: 'sku_shirt' }); // this instance now trusts epoch 1
    await newInstance().invalidate('sku', 'sku_shirt'); // epoch 2, unseen by `cache` for a second
    const release = await currentRelease();
    const result = await warmPriceCache(
      { cache, release, at: clock.now() },
      { categories: ['games'], currencies: ['USD'], regions: ['US'] },
    );
    expect(result).toEqual({ warmed: 1, skipped: 1 });
    expect(store.entries.get('pl_eur:US:USD:sku_shirt:2')?.epochs.sku).toBe(2);
  });

  it('writes nothing when nothing matches', async () => {
    const cache = newInstance();
    const release = await currentRelease();
    expect(
      await warmPriceCache(
        { cache, release, at: clock.now() },
        { categories: ['none'], currencies: ['USD'], regions: ['US'] },
      ),
    ).toEqual({ warmed: 0, skipped: 0 });
    expect(store.calls.put).toBe(0);
  });
});
