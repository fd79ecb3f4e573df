import * as z from 'zod';
import { currencyCode, identifier, regionCode } from './catalog-document';

/** C29: a buyer names at most this many customer groups. */
export const MAX_CUSTOMER_GROUPS = 10;

/** `customer_groups=b2b-gold,vip`: identifiers separated by commas (an identifier has none). */
const customerGroupsParameter = z
  .string()
  .regex(
    new RegExp(`^[A-Za-z0-9_.:-]{1,128}(,[A-Za-z0-9_.:-]{1,128}){0,${MAX_CUSTOMER_GROUPS - 1}}$`),
    `1–${MAX_CUSTOMER_GROUPS} customer groups separated by commas (letters, digits and _ . : -, 1–128 each)`,
  )
  .transform((value) => value.split(','))
  .describe(
    `C29: the buyer's customer groups, comma-separated (at most ${MAX_CUSTOMER_GROUPS}); the lowest price any of ` +
      'them gives applies. Groups the catalog does not target change nothing.',
  );

/** `explain=true`: add the explanation (C28); such a read bypasses the price cache and is not cacheable. */
const explainParameter = z
  .enum(['true', 'false'])
  .transform((value) => value === 'true')
  .describe(
    'C28: `true` adds `explain` (every step of the calculation); such an answer is computed fresh, bypasses the ' +
      'price cache and carries `Cache-Control: no-store`.',
  );

/** `GET /catalog/prices` query. */
export const priceQuerySchema = z.strictObject({
  sku: identifier,
  currency: currencyCode,
  region: regionCode,
  pricelist: identifier.optional(),
  channel: identifier.optional(),
  tenant: identifier.optional(),
  buyer_type: z.enum(['consumer', 'business']).optional(),
  customer_groups: customerGroupsParameter.optional(),
  explain: explainParameter.optional(),
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
