import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import type { ServiceDependencies } from '../../composition/dependencies';
import type { CatalogRepository } from '../../ports/catalog';
import type { CatalogFiles } from '../../ports/catalog-files';
import type { Clock } from '../../ports/clock';
import {
  createUploadRequestSchema,
  exportQuerySchema,
  type PriceQuery,
  priceMatrixQuerySchema,
  priceQuerySchema,
} from '../../schemas/catalog-api';
import { currencyCode, identifier, regionCode } from '../../schemas/catalog-document';
import { limitsQuerySchema } from '../../schemas/checkout';
import { newId } from '../../shared/ids';
import { exportCatalog } from '../../usecases/catalog/export';
import { createUpload, deliverExport } from '../../usecases/catalog/files';
import { limitsOf } from '../../usecases/catalog/limits';
import {
  CACHE_TAGS,
  computeDisplayPrice,
  PriceCache,
  type PriceCacheRequest,
  priceCacheRequestOf,
  warmPriceCache,
} from '../../usecases/catalog/price-cache';
import { priceMatrix } from '../../usecases/catalog/price-matrix';
import type { CatalogReader } from '../../usecases/catalog/reader';
import { type CatalogRelease, priceQueryFor } from '../../usecases/catalog/release';
import { causeOf, type Operation } from '../middleware/http';
import { callerOf, callerTenant } from '../middleware/principal';
import { parseJsonBody, parseWith } from '../middleware/validation';

/** Storefront cache lifetimes (C22): 300 s for stable currencies, 30 s for volatile ones (crypto). */
export { STABLE_CACHE_SECONDS, VOLATILE_CACHE_SECONDS } from '../../usecases/catalog/price-cache';

/**
 * Shared caches may keep a price, but per caller key (`Vary: x-api-key`): a key's tenant can change the price,
 * and a CDN must never answer one tenant with another's.
 */
const storefrontCacheControl = (ttlSeconds: number): string =>
  `public, max-age=${ttlSeconds}, stale-while-revalidate=${ttlSeconds * 2}`;
const VARY = { Vary: 'x-api-key' };

/**
 * `GET /catalog/prices`: one unit of a SKU priced through the whole engine (promotions, taxes, fees that apply
 * to it alone), with the versions that produced it. Served through the two-tier price cache (C18) when one is
 * given; `X-Cache` says which tier answered. A CDN may serve it stale-while-revalidate. With `explain=true`
 * (C28) it is computed fresh with its explanation, bypassing the cache (`X-Cache: bypass`,
 * `Cache-Control: no-store`).
 */
export const getPriceOperation = (reader: CatalogReader, clock: Clock, cache?: PriceCache): Operation => {
  /** The release this instance's previous read saw: most likely still current, so its key is worth a guess. */
  let previous: CatalogRelease | undefined;
  const guessFor = (query: PriceQuery) => {
    if (!cache || !previous) return undefined;
    let request: PriceCacheRequest;
    try {
      request = priceCacheRequestOf(previous, query);
    } catch {
      return undefined;
    }
    return { release: previous, request, shared: cache.prefetch(request) };
  };
  return async ({ event, principal }) => {
    const asked = parseWith(priceQuerySchema, event.queryStringParameters ?? {}, 'query');
    const tenant = callerTenant(callerOf(principal), asked, 'reads prices');
    const queryFor = (release: CatalogRelease): PriceQuery => priceQueryFor(release, asked, tenant);
    // C28: an explained price is computed fresh, never read from nor written to the cache, and not cacheable.
    if (asked.explain) {
      const { release } = await reader.current();
      const computed = computeDisplayPrice(release, queryFor(release), clock.now());
      return {
        statusCode: 200,
        headers: { 'Cache-Control': 'no-store', 'X-Cache': 'bypass', ...VARY },
        body: computed.body,
      };
    }
    // The shared entry is asked for before the pointer, in the same turn: both go out in one BatchGetItem.
    const guess = previous ? guessFor(queryFor(previous)) : undefined;
    const { release } = await reader.current();
    previous = release;
    const query = queryFor(release);
    if (!cache) {
      const computed = computeDisplayPrice(release, query, clock.now());
      return {
        statusCode: 200,
        headers: { 'Cache-Control': storefrontCacheControl(computed.ttlSeconds), 'X-Cache': 'miss', ...VARY },
        body: computed.body,
      };
    }
    // The guess stands only if the pointer, read after this request arrived, gives the same release.
    const confirmed = guess?.release === release ? guess : undefined;
    const read = await cache.read(
      confirmed?.request ?? priceCacheRequestOf(release, query),
      () => computeDisplayPrice(release, query, clock.now(), cache.ttlOverrides),
      confirmed?.shared,
    );
    return {
      statusCode: 200,
      headers: { 'Cache-Control': storefrontCacheControl(read.ttlSeconds), 'X-Cache': read.source, ...VARY },
      body: read.body,
    };
  };
};

/** `GET /admin/catalog/prices?sku=&tenant=&explain=`: operators see a SKU across regions and currencies. */
export const priceMatrixOperation =
  (reader: CatalogReader, clock: Clock): Operation =>
  async ({ event }) => {
    const query = parseWith(priceMatrixQuerySchema, event.queryStringParameters ?? {}, 'query');
    const { release } = await reader.current();
    return {
      statusCode: 200,
      headers: { 'Cache-Control': 'no-store' },
      body: priceMatrix(release, query, clock.now()),
    };
  };

/** `GET /catalog/limits?currency=&region=` (rule 15). */
export const getLimitsOperation =
  (reader: CatalogReader, clock: Clock): Operation =>
  async ({ event }) => {
    const query = parseWith(limitsQuerySchema, event.queryStringParameters ?? {}, 'query');
    const { release } = await reader.current();
    return { statusCode: 200, body: limitsOf(release, query.currency, query.region, clock.now()) };
  };

/** `POST /admin/cache/invalidate` body. A `pricelist_version` value is a positive integer. */
export const invalidateCacheRequestSchema = z
  .strictObject({ tag: z.enum(CACHE_TAGS), value: identifier })
  .refine((body) => body.tag !== 'pricelist_version' || /^[1-9]\d{0,9}$/.test(body.value), {
    message: 'a pricelist_version is a positive integer',
    path: ['value'],
  });

/** `POST /admin/cache/warm` body. */
export const warmCacheRequestSchema = z.strictObject({
  categories: z.array(identifier).min(1).max(100),
  currencies: z.array(currencyCode).min(1).max(50),
  regions: z.array(regionCode).min(1).max(250),
});

/** `POST /admin/cache/invalidate`: moves the tag's epoch; every instance stops serving its entries within 1 s. */
export const invalidateCacheOperation =
  (cache: PriceCache): Operation =>
  async ({ event }) => {
    const body = parseJsonBody(invalidateCacheRequestSchema, event.body, event.isBase64Encoded);
    const epoch = await cache.invalidate(body.tag, body.value);
    return { statusCode: 200, body: { tag: body.tag, value: body.value, epoch } };
  };

/** `POST /admin/cache/warm`: precomputes the shared entries of those categories before a campaign. */
export const warmCacheOperation =
  (reader: CatalogReader, cache: PriceCache, clock: Clock): Operation =>
  async ({ event }) => {
    const body = parseJsonBody(warmCacheRequestSchema, event.body, event.isBase64Encoded);
    const { release } = await reader.current({ fresh: true });
    const result = await warmPriceCache({ cache, release, at: clock.now() }, body, cache.ttlOverrides);
    return { statusCode: 200, body: result };
  };

/**
 * `GET /admin/catalog/export`: the release in force (or of a revision, or pinned versions), in the import format:
 * in the body up to `EXPORT_INLINE_MAX_BYTES`, else (or with `delivery=link`) a 303 to a download link of the same
 * document as gzip JSON, with the link in the body too.
 */
export const exportCatalogOperation =
  (repository: CatalogRepository, reader: CatalogReader, files: CatalogFiles, clock: Clock): Operation =>
  async ({ event }) => {
    const query = parseWith(exportQuerySchema, event.queryStringParameters ?? {}, 'query');
    const exported = await exportCatalog(
      reader,
      repository,
      query.pricelist_version && query.fx_version && query.tax_rule_version
        ? {
            kind: 'versions',
            commercial: query.pricelist_version,
            fx: query.fx_version,
            tax: query.tax_rule_version,
          }
        : query.revision
          ? { kind: 'revision', revision: query.revision }
          : { kind: 'current' },
    );
    const headers: Record<string, string> = { 'X-Catalog-Versions': exported.versions };
    if (exported.revision !== undefined) headers['X-Catalog-Revision'] = String(exported.revision);
    const { link } = await deliverExport(files, exported.document, {
      link: query.delivery === 'link',
      at: clock.now(),
    });
    if (!link) return { statusCode: 200, headers, body: exported.document };
    return {
      statusCode: 303,
      headers: { ...headers, Location: link.url },
      body: {
        ...link,
        versions: exported.versions,
        ...(exported.revision === undefined ? {} : { revision: exported.revision }),
      },
    };
  };

/** `POST /admin/catalog/uploads`: a link to upload a catalog document, imported later by its `upload_id`. */
export const createCatalogUploadOperation =
  (files: CatalogFiles): Operation =>
  async ({ event }) => {
    const { bytes } = parseJsonBody(createUploadRequestSchema, event.body, event.isBase64Encoded);
    return { statusCode: 201, body: await createUpload(files, newId('upl'), bytes) };
  };

/** The two-tier price cache of one function instance (C18); a failing cache degrades to misses, logged. */
export const priceCacheFor = (deps: ServiceDependencies, logger: Logger): PriceCache =>
  new PriceCache({
    store: deps.priceCacheStore,
    clock: deps.clock,
    onError: (error, failure) => logger.warn('price cache degraded', { failure, ...causeOf(error) }),
  });
