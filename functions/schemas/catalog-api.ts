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

/** `GET /admin/catalog/export` query. */
export const exportQuerySchema = z.strictObject({
  revision: z
    .string()
    .regex(/^[1-9]\d{0,9}$/, 'a positive integer')
    .transform(Number)
    .optional(),
});
