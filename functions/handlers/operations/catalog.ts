import { z } from 'zod';
import { formatAmount, isCrypto } from '../../domain/money/currency';
import { dec } from '../../domain/money/decimal';
import { priceBasket } from '../../domain/pricing/basket';
import type { CatalogRepository } from '../../ports/catalog';
import type { Clock } from '../../ports/clock';
import { exportQuerySchema, priceQuerySchema } from '../../schemas/catalog-api';
import { importCatalog } from '../../usecases/catalog/import';
import type { CatalogReader } from '../../usecases/catalog/reader';
import { joinRelease, toPricingCatalog } from '../../usecases/catalog/release';
import { HttpError } from '../middleware/errors';
import type { Operation } from '../middleware/http';
import { parseJsonBody, parseWith } from '../middleware/validation';

/** Storefront cache lifetimes (C22): 300 s for stable currencies, 30 s for volatile ones (crypto). */
export const STABLE_CACHE_SECONDS = 300;
export const VOLATILE_CACHE_SECONDS = 30;

/**
 * `GET /catalog/prices`: one unit of a SKU priced through the whole engine (promotions, taxes, fees that apply
 * to it alone), with the versions that produced it. Storefront reads may be served stale-while-revalidate.
 */
export const getPriceOperation =
  (reader: CatalogReader, clock: Clock): Operation =>
  async ({ event }) => {
    const query = parseWith(priceQuerySchema, event.queryStringParameters ?? {}, 'query');
    const { release } = await reader.current();
    const catalog = toPricingCatalog(release, {
      ...(query.tenant ? { tenant: query.tenant } : {}),
      at: clock.now(),
    });
    if (query.pricelist) {
      const known = [catalog.pricelist, ...(catalog.currency_pricelists ?? [])].some(
        (list) => list.pricelist_id === query.pricelist,
      );
      if (!known) throw new HttpError('not_found', `no price list ${query.pricelist}`);
    }
    const priced = priceBasket(catalog, {
      items: [{ sku_id: query.sku, quantity: 1 }],
      region: query.region,
      currency: query.currency,
      buyer_type: query.buyer_type ?? 'consumer',
      ...(query.channel ? { channel: query.channel } : {}),
      ...(query.tenant ? { tenant: query.tenant } : {}),
    });
    const line = priced.items_priced[0];
    if (!line) throw new HttpError('not_found', `no price for ${query.sku}`);
    const displayRule = catalog.display_rules.find((rule) => rule.region === query.region);
    const ttl = isCrypto(query.currency, catalog.crypto_minor_units)
      ? VOLATILE_CACHE_SECONDS
      : STABLE_CACHE_SECONDS;
    return {
      statusCode: 200,
      headers: { 'Cache-Control': `public, max-age=${ttl}, stale-while-revalidate=${ttl * 2}` },
      body: {
        sku: query.sku,
        unit_price: line.base,
        currency: priced.currency,
        // What the shopper sees for one unit: after promotions; tax-inclusive where the region's tax is included.
        display_price: formatAmount(dec(line.base).minus(dec(line.discount)), priced.minor_units),
        price_includes_tax: line.taxes.some((tax) => tax.included),
        rounding_mode: displayRule?.rounding_mode ?? 'HALF_UP',
        fx_version: priced.versions.fx_version,
        pricelist_version: priced.versions.pricelist_version,
        tax_rule_version: priced.versions.tax_rule_version,
        tax_breakdown: line.taxes,
        fees: priced.fees,
        applied_promotions: line.applied_promotions,
        ...(priced.fx_rate ? { fx_rate: priced.fx_rate } : {}),
      },
    };
  };

/** `POST /admin/catalog/import`: everything is validated first; publication is all or nothing. */
export const importCatalogOperation =
  (repository: CatalogRepository, clock: Clock): Operation =>
  async ({ event }) => {
    const document = parseJsonBody(z.unknown(), event.body, event.isBase64Encoded);
    const result = await importCatalog({ repository, clock }, document);
    return { statusCode: 201, body: result };
  };

/** `GET /admin/catalog/export`: the release in force (or of a revision), in the import format. */
export const exportCatalogOperation =
  (repository: CatalogRepository, reader: CatalogReader): Operation =>
  async ({ event }) => {
    const query = parseWith(exportQuerySchema, event.queryStringParameters ?? {}, 'query');
    const publications = query.revision ? await repository.publications() : [];
    const publication = query.revision
      ? publications.find((entry) => entry.revision === query.revision)
      : (await reader.current({ fresh: true })).publication;
    if (!publication) throw new HttpError('not_found', `no catalog revision ${query.revision}`);
    const release = await reader.release(publication.versions);
    return {
      statusCode: 200,
      headers: { 'X-Catalog-Revision': String(publication.revision) },
      body: { effective_from: publication.effective_from, ...joinRelease(release) },
    };
  };
