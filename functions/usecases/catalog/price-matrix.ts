import { PricingError } from '../../domain/pricing/errors';
import type { PriceQuery } from '../../schemas/catalog-api';
import { computeDisplayPrice } from './price-cache';
import { CatalogNotFoundError } from './reader';
import type { CatalogRelease } from './release';

/** One region and currency of a SKU: its price as `GET /catalog/prices` answers it, or why there is none. */
export type PriceCell =
  | { readonly region: string; readonly currency: string; readonly price: Record<string, unknown> }
  | {
      readonly region: string;
      readonly currency: string;
      readonly unavailable: {
        readonly error: string;
        readonly message: string;
        readonly details?: Readonly<Record<string, unknown>>;
      };
    };

/**
 * `GET /admin/catalog/prices?sku=`: one unit of the SKU priced in every region and currency the release displays
 * (each display rule's currency whitelist), through the same engine and code as the storefront's price read, with
 * the explanation (C28) when asked. A combination the engine refuses (not sellable there, a blocked currency, no
 * rate) says why, as the storefront's 422 would.
 */
export const priceMatrix = (
  release: CatalogRelease,
  query: {
    readonly sku: string;
    readonly tenant?: string | undefined;
    readonly explain?: boolean | undefined;
  },
  at: Date,
): { sku: string; cells: PriceCell[] } => {
  const commercial = release.commercial.content;
  if (!commercial.products.some((product) => product.sku_id === query.sku))
    throw new CatalogNotFoundError(`no product ${query.sku}`);
  const cells: PriceCell[] = [];
  for (const rule of commercial.display_rules) {
    for (const currency of rule.currency_whitelist) {
      const priceQuery: PriceQuery = {
        sku: query.sku,
        region: rule.region,
        currency,
        ...(query.tenant !== undefined ? { tenant: query.tenant } : {}),
        ...(query.explain ? { explain: true } : {}),
      };
      try {
        cells.push({
          region: rule.region,
          currency,
          price: computeDisplayPrice(release, priceQuery, at).body,
        });
      } catch (error) {
        if (!(error instanceof PricingError || error instanceof CatalogNotFoundError)) throw error;
        cells.push({
          region: rule.region,
          currency,
          unavailable: {
            error: error.code,
            message: error.message,
            ...(error.details !== undefined ? { details: error.details } : {}),
          },
        });
      }
    }
  }
  return { sku: query.sku, cells };
};
