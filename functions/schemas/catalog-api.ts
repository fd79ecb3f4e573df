import { z } from 'zod';
import { currencyCode, identifier, regionCode } from './catalog-document';

/** `GET /catalog/prices` query. */
export const priceQuerySchema = z.strictObject({
  sku: identifier,
  currency: currencyCode,
  region: regionCode,
  pricelist: identifier.optional(),
  channel: identifier.optional(),
  tenant: identifier.optional(),
  buyer_type: z.enum(['consumer', 'business']).optional(),
});

export type PriceQuery = z.infer<typeof priceQuerySchema>;

/** `GET /admin/catalog/export` query: the release in force, a revision, or the part versions a receipt pins. */
const positiveInteger = z
  .string()
  .regex(/^[1-9]\d{0,9}$/, 'a positive integer')
  .transform(Number);

export const exportQuerySchema = z
  .strictObject({
    revision: positiveInteger.optional(),
    pricelist_version: positiveInteger.optional(),
    fx_version: z
      .string()
      .regex(/^fx-[1-9]\d{0,9}$/, 'an fx_version such as "fx-3"')
      .transform((value) => Number(value.slice(3)))
      .optional(),
    tax_rule_version: positiveInteger.optional(),
  })
  .refine(
    (query) => {
      const pinned = [query.pricelist_version, query.fx_version, query.tax_rule_version].filter(
        (value) => value !== undefined,
      ).length;
      return (pinned === 0 || pinned === 3) && !(pinned === 3 && query.revision !== undefined);
    },
    { message: 'give either revision, or all three of pricelist_version, fx_version and tax_rule_version' },
  );
