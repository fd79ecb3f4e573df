/**
 * `GET /catalog/history` (C30): the versions in which a SKU's price item, or a pair's rate, changed.
 */
import * as z from 'zod';
import { canonicalPairOf } from '../domain/change-control/patch';
import { currencyCode, identifier } from './catalog-document';
import { isoTimestamp } from './envelope';

export const catalogHistoryQuerySchema = z
  .strictObject({
    sku: identifier.optional().describe('The SKU whose price items are wanted (one entry per price list).'),
    pair: z
      .string()
      .max(16)
      .refine((value) => canonicalPairOf(value) !== undefined, 'a pair such as EUR-USD (or EUR→USD)')
      .optional()
      .describe('The rate pair whose rates are wanted: `EUR-USD`, or `EUR→USD` URL-encoded.'),
    pricelist: identifier.optional().describe('With `sku`: only this price list (`pricelist_id`).'),
    currency: currencyCode.optional().describe('With `sku`: only price lists in this currency.'),
    limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size (1–100, default 20).'),
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,400}$/, 'the cursor of the previous page')
      .optional()
      .describe('The `cursor` of the previous page.'),
  })
  .superRefine((query, ctx) => {
    if ((query.sku === undefined) === (query.pair === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['sku'], message: 'give exactly one of sku and pair' });
    }
    if (query.pair !== undefined) {
      for (const name of ['pricelist', 'currency'] as const) {
        if (query[name] !== undefined) {
          ctx.addIssue({ code: 'custom', path: [name], message: 'only with sku' });
        }
      }
    }
  });

const approverSchema = z.object({ by: z.string(), at: isoTimestamp });

export const catalogHistoryItemSchema = z.object({
  sku_id: z.string().optional(),
  pair: z.string().optional().describe('The pair, canonical (`EUR→USD`).'),
  pricelist_id: z.string().optional(),
  currency: z.string().optional().describe("The price list's currency."),
  rate_set: z
    .enum(['display', 'settlement', 'override'])
    .optional()
    .describe(
      '`display`: fx_rates; `settlement`; `override`: a manual override of the pair (fx_rates.overrides).',
    ),
  change: z.enum(['added', 'changed', 'removed']),
  value: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('The price item (or rate) in that version, in the import format; null when removed.'),
  pricelist_version: z.number().int().positive().optional(),
  fx_version: z.string().optional(),
  revision: z.number().int().positive().describe('The publication that put the version in force.'),
  effective_from: isoTimestamp,
  published_at: isoTimestamp,
  change_request: z
    .object({
      cr_id: z.string(),
      kind: z.string(),
      status: z.string(),
      author: z.string(),
      note: z.string().optional(),
      approvers: z.array(approverSchema),
    })
    .optional()
    .describe('The change request behind the publication (none for an automatic rate tick).'),
  release: z
    .object({
      journal_entry_id: z
        .string()
        .describe('`release:<cr_id>`, or `fx-publication:<fx_version>` for an automatic rate tick.'),
      journal_index: z.number().int().nonnegative().optional(),
      cr_id: z.string().optional(),
      url: z.string().optional().describe('The route of the DSSE-signed release.'),
      release_sha256: z.string().optional(),
    })
    .optional(),
});

export const catalogHistoryResponseSchema = z.object({
  items: z.array(catalogHistoryItemSchema).describe('Newest first.'),
  cursor: z.string().optional().describe('Present when older entries may follow.'),
});
