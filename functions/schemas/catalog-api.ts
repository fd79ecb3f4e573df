import * as z from 'zod';
import { MAX_CATALOG_UPLOAD_BYTES } from '../definitions/limits';
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
    /** `link`: always a 303 to a download link, whatever the size. */
    delivery: z.enum(['inline', 'link']).optional(),
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

/** A catalog export handed out as a file (`GET /admin/catalog/export`, 303): where to download it. */
export const exportLinkResponseSchema = z.object({
  url: z.string().describe('Pre-signed download URL of the gzip JSON document (no credentials needed).'),
  expires_at: z.string().describe('When the URL stops working.'),
  bytes: z.number().int().nonnegative().describe('Size of the gzip file.'),
  content_type: z.literal('application/gzip'),
  versions: z.string().describe('pricelist_version,fx_version,tax_rule_version of the exported parts.'),
  revision: z.number().int().positive().optional().describe('The catalog revision exported.'),
});

/** `POST /admin/catalog/uploads` (201): where to PUT a catalog document before importing it by its id. */
export const catalogUploadResponseSchema = z.object({
  upload_id: z.string().regex(/^upl_[0-9A-HJKMNP-TV-Z]{26}$/),
  method: z.literal('PUT'),
  url: z.string().describe('Pre-signed upload URL: one HTTP PUT of the document, gzip or plain JSON.'),
  expires_at: z.string().describe('When the URL stops working.'),
  bytes: z
    .number()
    .int()
    .positive()
    .describe('The size the URL accepts, exactly (its signed Content-Length).'),
  max_bytes: z.number().int().positive().describe('Largest document accepted, stored or decompressed.'),
});

/** `POST /admin/catalog/uploads`: the size of the document to upload, signed into the link (S3 takes no other). */
export const createUploadRequestSchema = z.strictObject({
  bytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_CATALOG_UPLOAD_BYTES)
    .describe('Size in bytes of the file to PUT (gzip or plain JSON); the link accepts exactly this size.'),
});

/** `POST /admin/catalog/import` by upload: the id of an uploaded document instead of the document itself. */
export const importByUploadSchema = z.strictObject({
  upload_id: catalogUploadResponseSchema.shape.upload_id,
  effective_from: z.string().optional(),
});

/** `GET /admin/catalog/prices` query: a SKU (of a tenant's prices when the catalog prices it apart). */
export const priceMatrixQuerySchema = z.strictObject({
  sku: identifier,
  tenant: identifier.optional(),
  explain: explainParameter.optional(),
});
