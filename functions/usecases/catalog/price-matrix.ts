import type { PriceQuery } from '../../schemas/catalog-api';
import { displayPriceOrRefusal } from './price-cache';
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
      const computed = displayPriceOrRefusal(release, priceQuery, at);
      cells.push(
        computed instanceof Error
          ? {
              region: rule.region,
              currency,
              unavailable: {
                error: computed.code,
                message: computed.message,
                ...(computed.details !== undefined ? { details: computed.details } : {}),
              },
            }
          : { region: rule.region, currency, price: computed.body },
      );
    }
  }
  return { sku: query.sku, cells };
};
