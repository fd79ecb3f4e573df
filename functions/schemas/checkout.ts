/**
 * Checkout API bodies: quotes (C9), commits into receipts (C10) and refunds. Limits from C22: at most 100 lines,
 * quantity at most 10 000 per line.
 */
import * as z from 'zod';
import { MAX_CUSTOMER_GROUPS } from './catalog-api';
import { amountDecimal, currencyCode, customerGroup, identifier, regionCode } from './catalog-document';
import { isoTimestamp } from './envelope';

export const MAX_BASKET_LINES = 100;
export const MAX_LINE_QUANTITY = 10_000;
/** C9: the lock lasts 300–1800 s, 900 by default. */
export const LOCK_TTL_SECONDS = { min: 300, max: 1800, default: 900 } as const;

const quantity = z.number().int().min(1).max(MAX_LINE_QUANTITY);

export const quoteRequestSchema = z.strictObject({
  items: z
    .array(z.strictObject({ sku_id: identifier, quantity }))
    .min(1)
    .max(MAX_BASKET_LINES),
  region: regionCode,
  currency: currencyCode,
  buyer_type: z.enum(['consumer', 'business']),
  channel: identifier.optional(),
  tenant: identifier.optional(),
  campaign: identifier.optional(),
  payment: z
    .strictObject({
      method: identifier.optional(),
      provider: identifier.optional(),
      bank: identifier.optional(),
      token: identifier.optional(),
    })
    .optional(),
  player_id: identifier.optional(),
  customer_groups: z
    .array(customerGroup)
    .max(MAX_CUSTOMER_GROUPS)
    .optional()
    .describe(
      `C29: the buyer's customer groups (at most ${MAX_CUSTOMER_GROUPS}); the lowest price any of them gives ` +
        "applies. Recorded in the quote's basket, so a commit, a refund and a receipt check price the same.",
    ),
  explain: z
    .boolean()
    .optional()
    .describe(
      'C28: `true` adds `explain` to the answer (every step per line and for the basket); not part of the ' +
        'signed or stored quote.',
    ),
  lock_ttl: z.number().int().min(LOCK_TTL_SECONDS.min).max(LOCK_TTL_SECONDS.max).optional(),
  checkout_fees: z
    .array(
      z.strictObject({
        kind: identifier,
        amount: amountDecimal,
      }),
    )
    .max(20)
    .optional(),
});

export type QuoteRequest = z.infer<typeof quoteRequestSchema>;

export const quoteSignature = z.string().regex(/^v1=[A-Za-z0-9+/]+={0,2}$/, 'v1=<base64>');

export const commitRequestSchema = z.strictObject({
  quote_id: z.string().regex(/^q_[0-9A-HJKMNP-TV-Z]{26}$/, 'a quote id (q_…)'),
  signature: quoteSignature,
});

export const refundRequestSchema = z.strictObject({
  receipt_id: z.string().regex(/^rcpt_[0-9A-HJKMNP-TV-Z]{26}$/, 'a receipt id (rcpt_…)'),
  kind: z.enum(['return', 'chargeback']),
  lines: z
    .array(z.strictObject({ sku_id: identifier, quantity }))
    .min(1)
    .max(MAX_BASKET_LINES),
  reason: z.string().max(500).optional(),
});

export const receiptPathSchema = z.strictObject({
  receipt_id: refundRequestSchema.shape.receipt_id,
});

export const limitsQuerySchema = z.strictObject({
  currency: currencyCode,
  region: regionCode,
});

export { isoTimestamp };
