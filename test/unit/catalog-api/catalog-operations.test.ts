import { beforeEach, describe, expect, it } from 'vitest';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import type { HttpResult } from '../../../functions/handlers/middleware/http';
import {
  getLimitsOperation,
  getPriceOperation,
  invalidateCacheOperation,
  warmCacheOperation,
} from '../../../functions/handlers/operations/catalog';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import { PriceCache } from '../../../functions/usecases/catalog/price-cache';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import { minimalDocument } from '../../support/catalog-document';
import {
  call,
  InMemoryCatalogRepository,
  InMemoryPriceCacheStore,
  ManualClock,
  operationRequest,
} from './support';

let clock: ManualClock;
let repository: InMemoryCatalogRepository;
let store: InMemoryPriceCacheStore;

const limitsDocument = (overrides: Partial<CatalogDocument> = {}): CatalogDocument =>
  minimalDocument({
    fx_rates: {
      base_currency: 'EUR',
      rates: [
        { pair: 'EUR→USD', rate: '1.0842', source: 'ecb', method: 'provider', precision: 4 },
        { pair: 'JPY→EUR', rate: '0.0061587', source: 'ecb', method: 'provider', precision: 7 },
      ],
      // Markup applies to client prices, never to limits.
      markup_rules: [{ fx_markup_bps: 150 }],
    },
    limits: [
      { region: 'US', max_winnings: { amount: '1234.56', currency: 'EUR' } },
      { max_winnings: { amount: '5000', currency: 'EUR' } },
    ],
    ...overrides,
  });

const prices = (query: Record<string, string>) => operationRequest({ resource: '/catalog/prices', query });
const limits = (query: Record<string, string>) => operationRequest({ resource: '/catalog/limits', query });

beforeEach(async () => {
  clock = new ManualClock();
  repository = new InMemoryCatalogRepository();
  store = new InMemoryPriceCacheStore();
  await importCatalog({ repository, clock }, limitsDocument());
});

describe('GET /catalog/prices through the cache', () => {
  it('says which tier answered in X-Cache and keeps the storefront Cache-Control', async () => {
    const operation = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    const query = { sku: 'sku_game', currency: 'USD', region: 'US' };
    const miss = (await operation(prices(query))) as HttpResult;
    expect(miss.statusCode).toBe(200);
    expect(miss.headers).toEqual({
      'Cache-Control': 'public, max-age=300, stale-while-revalidate=600',
      'X-Cache': 'miss',
      Vary: 'x-api-key',
    });
    expect(miss.body).toMatchObject({
      sku: 'sku_game',
      currency: 'USD',
      pricelist_version: 1,
      fx_version: 'fx-1',
    });
    const hit = await operation(prices(query));
    expect(hit.headers?.['X-Cache']).toBe('hit-local');
    expect(JSON.stringify(hit.body)).toBe(JSON.stringify(miss.body));
    const other = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    expect((await other(prices(query))).headers?.['X-Cache']).toBe('hit-shared');
  });

  it('prices without a cache exactly as with one', async () => {
    const cached = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    const plain = getPriceOperation(new CatalogReader(repository, clock), clock);
    const query = { sku: 'sku_game', currency: 'EUR', region: 'DE' };
    const withCache = await cached(prices(query));
    const without = await plain(prices(query));
    expect(without.body).toEqual(withCache.body);
    expect(without.headers?.['X-Cache']).toBe('miss');
  });

  it('answers 404 for an unknown price list, 422 price_not_available with its reasons otherwise, and caches no error', async () => {
    const operation = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    const unknownList = await call(
      operation,
      prices({ sku: 'sku_game', currency: 'USD', region: 'US', pricelist: 'pl_x' }),
    );
    expect(unknownList).toMatchObject({ statusCode: 404, code: 'not_found' });
    const unknownSku = await call(operation, prices({ sku: 'sku_none', currency: 'USD', region: 'US' }));
    expect(unknownSku).toMatchObject({
      statusCode: 422,
      code: 'price_not_available',
      details: { reasons: [{ code: 'unknown_sku', sku_id: 'sku_none' }] },
    });
    const blocked = await call(operation, prices({ sku: 'sku_game', currency: 'EUR', region: 'US' }));
    expect(blocked).toMatchObject({
      statusCode: 422,
      code: 'price_not_available',
      details: { reasons: [{ code: 'currency_not_offered', detail: 'EUR is not offered in US' }] },
    });
    expect(store.entries.size).toBe(0);
  });
});

describe('GET /catalog/limits', () => {
  const operation = () => getLimitsOperation(new CatalogReader(repository, clock), clock);

  it("gives the region's limit and its equivalent at the published rate, FLOOR-rounded, without markup", async () => {
    const result = (await operation()(limits({ currency: 'USD', region: 'US' }))) as HttpResult;
    expect(result.statusCode).toBe(200);
    // 1234.56 × 1.0842 = 1338.509952 → 1338.50 (HALF_UP would say 1338.51; with the 150 bps markup 1358.59).
    expect(result.body).toEqual({
      currency: 'USD',
      region: 'US',
      max_winnings: { amount: '1234.56', currency: 'EUR' },
      equivalent: { amount: '1338.50', currency: 'USD' },
      fx_rate: '1.0842',
      fx_version: 'fx-1',
      pricelist_version: 1,
    });
  });

  it('falls back to the default limit without a region, and floors to 0 minor units for JPY', async () => {
    const result = (await operation()(limits({ currency: 'JPY', region: 'DE' }))) as HttpResult;
    // EUR→JPY is the inverse of JPY→EUR: 1 / 0.0061587 = 162.371929141 (9 decimals); × 5000 = 811859.645705
    // → 811859 (HALF_UP would say 811860).
    expect(result.body).toMatchObject({
      region: 'DE',
      max_winnings: { amount: '5000.00', currency: 'EUR' },
      equivalent: { amount: '811859', currency: 'JPY' },
      fx_version: 'fx-1',
    });
  });

  it('gives the limit itself in the catalog currency', async () => {
    const result = (await operation()(limits({ currency: 'EUR', region: 'US' }))) as HttpResult;
    expect(result.body).toMatchObject({ equivalent: { amount: '1234.56', currency: 'EUR' }, fx_rate: '1' });
  });

  it('refuses an unknown currency, or one no published rate reaches, with 422 currency_not_available', async () => {
    expect(await call(operation(), limits({ currency: 'XYZ', region: 'US' }))).toMatchObject({
      statusCode: 422,
      code: 'currency_not_available',
    });
    expect(await call(operation(), limits({ currency: 'GBP', region: 'US' }))).toMatchObject({
      statusCode: 422,
      code: 'currency_not_available',
    });
  });

  it('answers 404 when no limit applies', async () => {
    await importCatalog(
      { repository, clock },
      limitsDocument({ limits: [{ region: 'US', max_winnings: { amount: '100', currency: 'EUR' } }] }),
    );
    clock.advance(1_000);
    expect(await call(operation(), limits({ currency: 'EUR', region: 'DE' }))).toMatchObject({
      statusCode: 404,
    });
    await importCatalog({ repository, clock }, minimalDocument());
    clock.advance(1_000);
    expect(await call(operation(), limits({ currency: 'EUR', region: 'US' }))).toMatchObject({
      statusCode: 404,
    });
  });

  it('validates the query', async () => {
    const missing = await call(operation(), limits({ currency: 'USD' }));
    expect(missing).toBeInstanceOf(HttpError);
    expect(missing).toMatchObject({ statusCode: 400, code: 'invalid_request' });
  });
});

describe('POST /admin/cache/invalidate and /admin/cache/warm', () => {
  const invalidate = (body: unknown) =>
    operationRequest({ method: 'POST', resource: '/admin/cache/invalidate', body });
  const warm = (body: unknown) => operationRequest({ method: 'POST', resource: '/admin/cache/warm', body });

  it('moves the tag epoch and answers it', async () => {
    const operation = invalidateCacheOperation(new PriceCache({ store, clock }));
    expect(await operation(invalidate({ tag: 'sku', value: 'sku_game' }))).toEqual({
      statusCode: 200,
      body: { tag: 'sku', value: 'sku_game', epoch: 1 },
    });
    expect((await operation(invalidate({ tag: 'pricelist_version', value: '1' }))).body).toMatchObject({
      epoch: 1,
    });
    expect((await operation(invalidate({ tag: 'sku', value: 'sku_game' }))).body).toMatchObject({ epoch: 2 });
  });

  it.each([
    [{ tag: 'brand', value: 'x' }, '$.tag'],
    [{ tag: 'sku' }, '$.value'],
    [{ tag: 'pricelist_version', value: 'v1' }, '$.value'],
    [{ tag: 'sku', value: 'a b' }, '$.value'],
    [{ tag: 'sku', value: 'x', extra: true }, '$'],
  ])('refuses the invalidation body %j naming %s', async (body, path) => {
    const error = await call(invalidateCacheOperation(new PriceCache({ store, clock })), invalidate(body));
    expect(error).toMatchObject({ statusCode: 400, code: 'invalid_request' });
    const problems = (error as HttpError).details?.problems as { path: string }[];
    expect(problems.map((problem) => problem.path)).toContain(path);
  });

  it('warms the whitelisted pairs and reports what it skipped', async () => {
    const operation = warmCacheOperation(
      new CatalogReader(repository, clock),
      new PriceCache({ store, clock }),
      clock,
    );
    const result = await operation(
      warm({ categories: ['games', 'merch'], currencies: ['USD', 'EUR'], regions: ['US', 'DE'] }),
    );
    expect(result).toEqual({ statusCode: 200, body: { warmed: 4, skipped: 4 } });
    expect(store.entries.has('pl_eur:DE:EUR:sku_shirt:1')).toBe(true);
  });

  it('refuses a warm-up body without categories', async () => {
    const operation = warmCacheOperation(
      new CatalogReader(repository, clock),
      new PriceCache({ store, clock }),
      clock,
    );
    expect(
      await call(operation, warm({ categories: [], currencies: ['USD'], regions: ['US'] })),
    ).toMatchObject({
      statusCode: 400,
    });
    expect(await call(operation, warm('not json{'))).toMatchObject({ statusCode: 400 });
  });
});
