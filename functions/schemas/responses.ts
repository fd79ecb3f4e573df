/**
 * Response bodies of the HTTP APIs, as zod schemas. They are the source of the OpenAPI document
 * (`docs/openapi.json`, see `openapi.ts`) and let tests check what an operation answers. Money and rates are
 * decimal strings (C1). Objects are not strict: new response fields may appear at any time (C24), so a client
 * must ignore fields it does not know.
 */
import * as z from 'zod';
import { OBJECTIVES, type ObjectiveId } from '../definitions/objectives';
import { OPERATOR_ROLES } from '../domain/access/principals';
import { DECIMAL_STRING } from '../domain/money/decimal';
import { ERROR_STATUS, type ErrorCode } from '../handlers/middleware/errors';
import { currencyCode, identifier, regionCode } from './catalog-document';
import { commitRequestSchema, LOCK_TTL_SECONDS, quoteSignature, refundRequestSchema } from './checkout';
import { isoTimestamp } from './envelope';

/**
 * C1: every amount, rate and percentage the service answers with. Only for responses: the service computed
 * these values, so they carry no digit limits; request fields take the bounded `decimalString` of `decimal.ts`.
 */
export const decimalAmount = z
  .string()
  .regex(DECIMAL_STRING, 'a decimal string such as "12.30"')
  .meta({
    description:
      'A decimal number as a string (C1), never a JSON number: rounded amounts carry exactly the ' +
      'currency\'s minor units ("12.30", "1200", "0.125"); unrounded values and rates up to 9 decimals.',
    examples: ['12.30'],
  });

export const moneySchema = z.object({ amount: decimalAmount, currency: currencyCode });

export const roundingModeSchema = z.enum(['HALF_UP', 'BANKERS', 'FLOOR', 'CEIL']);

const positiveVersion = z.number().int().min(1);

/** The versions that produced a calculation (C5); quotes and receipts store them so it can be reproduced. */
export const versionsSchema = z.object({
  pricelist_version: positiveVersion.describe('Version of the price list set (a growing integer).'),
  fx_version: z.string().min(1).describe('The published FX snapshot, e.g. "fx-42".'),
  tax_rule_version: positiveVersion.describe('Version of the tax rule set (a growing integer).'),
});

const quoteId = commitRequestSchema.shape.quote_id;
const receiptId = refundRequestSchema.shape.receipt_id;
const quantity = z.number().int().min(1);

// ------------------------------------------------------------------------------------------------- errors

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export const errorCodeSchema = z.enum(ERROR_CODES);

export const problemSchema = z.object({
  path: z.string().describe('Where the problem is: `$.items[2].quantity`, `query.currency`.'),
  message: z.string(),
});

// ------------------------------------------------------------------------------------------------ pricing

export const taxLineSchema = z.object({
  name: z.string(),
  tax_class: z.string(),
  rate: decimalAmount,
  amount: decimalAmount,
  included: z
    .boolean()
    .describe('`true`: already inside the price (VAT/GST included); `false`: added on top.'),
});

export const feeLineSchema = z.object({ kind: z.string(), amount: decimalAmount });

export const appliedPromotionSchema = z.object({ promo_id: z.string(), amount: decimalAmount });

export const bundleShareSchema = z.object({
  sku_id: z.string(),
  quantity,
  weight: decimalAmount.describe("The position's price before discount: its weight in the split."),
  amount: decimalAmount,
  tax: decimalAmount,
});

export const pricedLineSchema = z.object({
  line: z.number().int().min(0),
  sku_id: z.string(),
  quantity,
  pricing_model: z.enum(['flat', 'tiered', 'bundle']),
  unit_price: decimalAmount.describe("The unit price before discounts, in the display rule's rounding mode."),
  display_price: decimalAmount
    .describe(
      "One unit after this line's promotions, rounded in the display rule's mode from the exact value: the figure " +
        '`GET /catalog/prices` shows.',
    )
    .optional(),
  base: decimalAmount.describe('unit price × quantity, before discounts.'),
  discount: decimalAmount,
  taxes: z.array(taxLineSchema),
  tax: decimalAmount.describe('Σ taxes of the line (included ones are already part of `base`).'),
  fees: decimalAmount.describe("This line's share of the basket's fees."),
  total: decimalAmount.describe('base − discount + excluded tax + fees.'),
  applied_promotions: z.array(appliedPromotionSchema),
  bundle_allocation: z.array(bundleShareSchema).optional(),
  customer_group: z
    .string()
    .optional()
    .describe(
      "C29: the buyer's customer group whose price list or override gave this line a lower unit price.",
    ),
});

export const thresholdOutcomeSchema = z.object({
  promo_id: z.string(),
  kind: z.enum(['free_shipping', 'bonus']),
  bonus: z.string().optional(),
  threshold: decimalAmount,
  basket_total: decimalAmount,
  base_currency_equivalent: moneySchema,
  fx_version: z.string(),
});

/** One conversion made transparent (as Stripe's FX Quotes show it): reference rate, markup, client rate, source. */
export const fxConversionSchema = z.object({
  pair: z.string().describe('`FROM→TO`: from a currency a price, cap, fee or threshold was set in.'),
  from: currencyCode,
  to: currencyCode,
  reference_rate: decimalAmount.describe(
    'The rate the engine used before markup, at 9 decimals: the published rate (direct, inverse, cross through ' +
      'the base currency, or chain), or the manual override in force.',
  ),
  fx_markup_bps: z.number().int().describe('The markup in basis points of the markup rule that applies.'),
  client_rate: decimalAmount.describe('reference_rate × (1 + fx_markup_bps / 10 000), at 9 decimals.'),
  rate_timestamp: isoTimestamp.describe(
    "`effective_from` of the rate; for an inverse, cross or chain rate the oldest leg's; for an override the " +
      'publication that carries it.',
  ),
  fx_version: versionsSchema.shape.fx_version,
  source: z
    .string()
    .describe(
      "The rate's source; for a cross or chain rate the legs' sources joined with `+` (`manual_override`).",
    ),
  override: z
    .object({
      pair: z
        .string()
        .describe('The pair as overridden (either direction of the conversion or of a leg of it).'),
      rate: decimalAmount,
      expires_at: isoTimestamp,
      reason: z.string(),
    })
    .optional()
    .describe(
      'Present while a manual rate override (set by change request) made the reference rate or one of its ' +
        'legs; for several, the one expiring first.',
    ),
});

const fxConversions = z
  .array(fxConversionSchema)
  .optional()
  .describe(
    'Each rate the figures were converted at, one per currency converted from (in code order); only when any was.',
  );

/** C28: one step of an explanation. */
export const explainStepSchema = z.object({
  step: z
    .enum(['base', 'discounts', 'taxes', 'fees', 'rounding'])
    .describe('The step of the calculation order (rule 1); steps are listed in this order.'),
  rule: z
    .string()
    .describe(
      'What acted. base: `price_list`, `tier`, `fx_conversion`, `charm`, `override`, `customer_group`, ' +
        '`bundle_split`, `reverse_charge_net`, `line_amount`; discounts: `stacking`, `promotion`, `discount`; taxes: ' +
        '`tax_rule`, `tax`, `tax_basket_rounding`; fees: `payment`, `cross_border`, `network`, `shipping`, ' +
        '`checkout_fee`, `no_fee`, `threshold_promotion`, `free_shipping_threshold`; rounding: `rounding`, ' +
        '`bundle_allocation`, `basket_rounding`.',
    ),
  line: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('The basket line the step concerns (1 for a price); absent for a basket-level step.'),
  input: z
    .record(z.string(), z.unknown())
    .describe(
      'What the step took. Amounts, rates and percentages are decimal strings (C1); within a line, a step takes ' +
        "the previous one's output (`unit_price`, then `amount`).",
    ),
  output: z
    .record(z.string(), z.unknown())
    .describe(
      "What the step gave; a line's `rounding` step gives exactly the line's rounded figures, `basket_rounding` " +
        "the basket's.",
    ),
  detail: z.string().describe('The rule in words, naming what was chosen and why.'),
});

export const explainSchema = z
  .object({ steps: z.array(explainStepSchema) })
  .describe(
    'C28, only when asked for (`explain`): how the figures came about, step by step in the fixed order base, ' +
      'discounts, taxes, fees, rounding (per line, plus basket-level steps).',
  );

/** C28: why a request has no price. */
export const unpriceableReasonSchema = z.object({
  code: z.enum([
    'region_not_served',
    'currency_not_offered',
    'unknown_currency',
    'currency_blocked',
    'conversion_blocked',
    'provider_blocked',
    'bank_blocked',
    'token_blocked',
    'player_blocked',
    'no_rate',
    'unknown_sku',
    'not_sellable',
    'no_price',
    'no_price_list_in_force',
    'stale_rate',
  ]),
  detail: z.string(),
  sku_id: z.string().optional().describe('The SKU the reason concerns, when it concerns one.'),
});

// -------------------------------------------------------------------------------------------- the bodies

/** `GET /health`: the service answers. */
export const livenessResponseSchema = z.strictObject({ status: z.literal('ok') });

/** `GET /admin/health`: 200 when every component answers, 503 (same body) otherwise. */
export const healthResponseSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  components: z.record(z.string(), z.enum(['ok', 'down'])),
});

/** `GET /catalog/prices`. */
export const priceResponseSchema = z.object({
  sku: identifier,
  unit_price: decimalAmount,
  currency: currencyCode,
  display_price: decimalAmount.describe(
    'What the shopper sees for one unit: after promotions, tax-inclusive where the region includes tax.',
  ),
  price_includes_tax: z.boolean(),
  rounding_mode: roundingModeSchema,
  fx_version: versionsSchema.shape.fx_version,
  pricelist_version: versionsSchema.shape.pricelist_version,
  tax_rule_version: versionsSchema.shape.tax_rule_version,
  tax_breakdown: z.array(taxLineSchema),
  fees: z.array(feeLineSchema),
  applied_promotions: z.array(appliedPromotionSchema),
  fx_rate: decimalAmount
    .optional()
    .describe('Client rate base → display currency, when a conversion happened.'),
  fx_conversions: fxConversions,
  customer_groups: z
    .array(z.string())
    .optional()
    .describe(
      "C29: the request's customer groups that the catalog prices apart (sorted), when there are any.",
    ),
  customer_group: z
    .string()
    .optional()
    .describe('C29: the customer group whose price list or override gave the (lower) unit price.'),
  product_type: z
    .literal('stored_value')
    .optional()
    .describe('A gift card or voucher: sold at face value (no charm ending, no promotion).'),
  quantity_rules: z
    .object({
      min: z.number().int().optional(),
      max: z.number().int().optional(),
      increment: z.number().int().optional(),
    })
    .optional()
    .describe('The quantities a quote accepts for this SKU (else 422 `quantity_not_allowed`).'),
  explain: explainSchema.optional(),
});

/** `POST /admin/catalog/import` (201). */

/** `POST /pricing/quote` (201): a signed quote, locked to its versions until `expires_at` (C9). */
export const computedTotalsSchema = z.object({
  subtotal: decimalAmount,
  discounts: decimalAmount,
  taxes: z.array(taxLineSchema),
  fees: z.array(feeLineSchema),
  total: decimalAmount,
  currency: currencyCode,
});

export const quoteResponseSchema = z.object({
  quote_id: quoteId,
  status: z.literal('open'),
  items_priced: z.array(pricedLineSchema),
  ...computedTotalsSchema.shape,
  region: regionCode,
  buyer_type: z.enum(['consumer', 'business']),
  fx_version: versionsSchema.shape.fx_version,
  pricelist_version: versionsSchema.shape.pricelist_version,
  tax_rule_version: versionsSchema.shape.tax_rule_version,
  fx_rate: decimalAmount.optional(),
  fx_conversions: fxConversions,
  fx_stale: z
    .boolean()
    .describe(
      "Rule 10: `true` when the rate of this currency is past its pair's `stale_after_seconds` (its source is " +
        'failing or its breaker open): the latest valid publication is used. Past `max_age_seconds` the quote is ' +
        'refused with 422 `currency_not_available`, `reason` `stale_rate`.',
    ),
  fx_age_seconds: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Age of that rate in seconds, when the rate policy governs the pair.'),
  lock_ttl: z
    .number()
    .int()
    .min(LOCK_TTL_SECONDS.min)
    .max(LOCK_TTL_SECONDS.max)
    .describe('Seconds the price and `fx_version` stay locked (C9: 300–1800, default 900).'),
  expires_at: isoTimestamp,
  issued_at: isoTimestamp,
  threshold_promotions: z.array(thresholdOutcomeSchema),
  signature: quoteSignature.describe(
    '`v1=` + base64 HMAC-SHA-256 over SHA-256 of the RFC 8785 canonical JSON of the quote without `signature` ' +
      'and `explain` (C9; see docs/decisions.md).',
  ),
  explain: explainSchema
    .optional()
    .describe(
      'C28, when the request asked for it: every step per line and for the basket. Not part of the signed ' +
        'quote nor of the stored one: the receipt and a requote carry none.',
    ),
});

/** Rule 14: the settlement currency may differ from the catalog currency; the spread is recorded. */
export const settlementSchema = z.object({
  currency: currencyCode.describe("The catalog's base currency."),
  rate: decimalAmount.describe('Settlement rate from the basket currency.'),
  source: z.enum(['merchant_bank', 'published']),
  amount: decimalAmount.describe('Total in the settlement currency at the settlement rate.'),
  market_rate: decimalAmount.describe('The published rate of the pinned fx_version.'),
  spread: decimalAmount.describe('Total at the market rate minus the settled amount.'),
});

export const refundKindSchema = refundRequestSchema.shape.kind;

/** A refund as listed on its receipt. */
export const receiptRefundSchema = z.object({
  refund_id: z.string(),
  kind: refundKindSchema,
  amount: decimalAmount,
  currency: currencyCode,
  created_at: isoTimestamp,
});

/** C10's signature fields of a signed document (a receipt or a refund): `key_id` is part of the payload. */
const signatureFields = (document: string) => ({
  hash: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, 'sha256:<lowercase hex>')
    .describe(
      `\`sha256:\` + hex SHA-256 of the RFC 8785 bytes of the ${document} without \`hash\` and \`signature\`.`,
    ),
  signature: z
    .string()
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64')
    .describe('base64 DER ECDSA P-256 (ES256) signature over the same bytes; verify with the key `key_id`.'),
});

/** `POST /pricing/commit` (201) and `GET /receipts/{receipt_id}`: the signed receipt (C10). */
export const receiptResponseSchema = z.object({
  receipt_id: receiptId,
  quote_id: quoteId,
  status: z
    .enum(['issued', 'partially_refunded', 'refunded', 'charged_back'])
    .describe('`issued` in the signed payload; `GET /receipts/{receipt_id}` shows the current status.'),
  issued_at: isoTimestamp,
  key_id: z.string().describe('The signing key: `kid` of a key listed at `GET /keys`.'),
  pricelist_version: versionsSchema.shape.pricelist_version,
  fx_version: versionsSchema.shape.fx_version,
  tax_rule_version: versionsSchema.shape.tax_rule_version,
  computed_totals: computedTotalsSchema,
  breakdown: z
    .object({
      items_priced: z.array(pricedLineSchema),
      threshold_promotions: z.array(thresholdOutcomeSchema),
      rounding_scope: z.enum(['line', 'basket']),
      minor_units: z.number().int(),
      fx_rate: decimalAmount.optional(),
      fx_conversions: fxConversions,
    })
    .describe("The quote's full breakdown: lines (with bundle allocation), threshold promotions, rounding."),
  basket: z.record(z.string(), z.unknown()).describe('The basket as quoted.'),
  settlement: settlementSchema,
  quoted_at: isoTimestamp,
  quote_signature: quoteSignature,
  refunds: z
    .array(receiptRefundSchema)
    .optional()
    .describe('`GET /receipts/{receipt_id}` only; not part of the signed payload.'),
  trace_id: z.string(),
  ...signatureFields('receipt'),
});

/**
 * `POST /pricing/refund` (201): a return or chargeback recalculated with the receipt's versions (rule 13), signed
 * like a receipt (C10) so the finance export's refund files verify on their own.
 */
export const refundResponseSchema = z.object({
  refund_id: z.string(),
  receipt_id: receiptId,
  kind: refundKindSchema,
  lines: z.array(
    z.object({
      sku_id: z.string(),
      quantity,
      amount: decimalAmount,
      tax: decimalAmount.optional(),
    }),
  ),
  amount: decimalAmount.describe('Gross amount refunded.'),
  fee: decimalAmount.describe(
    'Refund fee of the schedule in force at the purchase (rule 13); 0 for chargebacks.',
  ),
  net: decimalAmount.describe('amount − fee.'),
  currency: currencyCode,
  pricelist_version: versionsSchema.shape.pricelist_version,
  fx_version: versionsSchema.shape.fx_version,
  tax_rule_version: versionsSchema.shape.tax_rule_version,
  created_at: isoTimestamp,
  key_id: z.string().describe('The signing key: `kid` of a key listed at `GET /keys`.'),
  ...signatureFields('refund'),
});

const base64Url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'base64url');

/** `GET /keys`: the receipt signing keys as a JWKS (RFC 7517); retired keys stay listed (C10). */
export const jwksResponseSchema = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('EC'),
      crv: z.literal('P-256'),
      x: base64Url,
      y: base64Url,
      kid: z.string().min(1),
      alg: z.literal('ES256'),
      use: z.literal('sig'),
    }),
  ),
});

/** `GET /catalog/limits`: maximum winnings in the catalog currency and their equivalent (rule 15). */
export const limitsResponseSchema = z.object({
  currency: currencyCode,
  region: regionCode,
  max_winnings: moneySchema.describe("In the catalog's base currency."),
  equivalent: moneySchema.describe(
    'In the requested currency at the published rate of `fx_version` (no markup), rounded FLOOR.',
  ),
  fx_rate: decimalAmount.describe('The published rate used: catalog currency → `currency`.'),
  fx_version: versionsSchema.shape.fx_version,
  pricelist_version: versionsSchema.shape.pricelist_version,
});

/** `POST /admin/cache/invalidate`. */
export const cacheInvalidateResponseSchema = z.object({
  tag: z.enum(['sku', 'category', 'pricelist_version']),
  value: z.string(),
  epoch: z.number().int().min(1).describe("The tag's new epoch: entries computed before it are stale."),
});

/** `POST /admin/cache/warm`. */
export const cacheWarmResponseSchema = z.object({
  warmed: z.number().int().min(0).describe('Price projections written.'),
  skipped: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Combinations with no price (unknown or not sellable).'),
});

/** One objective of `GET /admin/slo`. */
export const objectiveReportSchema = z.object({
  description: z.string(),
  target: z.number().describe('Ratios as fractions (0.9999 is 99.99 %), latencies in ms, counts as numbers.'),
  comparison: z
    .enum(['at_least', 'at_most', 'below'])
    .describe('Met when measured ≥ target (`at_least`), ≤ target (`at_most`) or < target (`below`).'),
  unit: z.enum(['ratio', 'ms', 'messages', 'breakers']),
  measured: z.number().nullable().describe('The measured value; null without samples.'),
  samples: z
    .number()
    .int()
    .min(0)
    .describe(
      'What was measured: receipts, commits decided, requests or first attempts over the window; for a live ' +
        'reading, the queues or pairs read.',
    ),
  status: z.enum(['met', 'not_met', 'no_data']),
  basis: z
    .enum(['window', 'live'])
    .describe('`window`: over `window_start`..`window_end`; `live`: read when the report was made.'),
});

const objectiveIds = Object.keys(OBJECTIVES) as ObjectiveId[];

/** `GET /admin/slo`. */
export const serviceObjectivesResponseSchema = z.object({
  window_start: isoTimestamp.describe(
    'Start of the window: 24 h before `window_end` in AWS (CloudWatch), the start of the process locally.',
  ),
  window_end: isoTimestamp,
  source: z
    .enum(['cloudwatch', 'in_process'])
    .describe('Where the window figures come from: CloudWatch in AWS, the counters of the local stack.'),
  objectives: z.object(
    Object.fromEntries(
      objectiveIds.map((id) => [id, objectiveReportSchema.describe(OBJECTIVES[id].description)]),
    ) as Record<ObjectiveId, typeof objectiveReportSchema>,
  ),
  open_breakers: z
    .array(z.object({ pair: z.string(), opened_at: isoTimestamp }))
    .describe('Pairs of the rate policy whose FX circuit breaker is open.'),
});

/** C6: every error of every HTTP API. */
export const errorResponseSchema = z.object({
  error: errorCodeSchema,
  error_description: z.string().describe('Short text for a human; never internals.'),
  trace_id: z.string().describe('Same as the `X-Trace-Id` header.'),
  problems: z.array(problemSchema).optional().describe('`invalid_request`: every validation problem.'),
  rule: z
    .string()
    .optional()
    .describe('`currency_not_available`: the rule that refused (`stale_rate`, `fx_rate`, `currency`).'),
  reason: z.string().optional().describe('`currency_not_available`: `stale_rate` (rule 10).'),
  reasons: z
    .array(unpriceableReasonSchema)
    .optional()
    .describe('`price_not_available` (C28): every reason that applied, not only the first one met.'),
  violations: z
    .array(
      z.strictObject({
        line: z.number().int(),
        sku_id: z.string(),
        quantity: z.number().int(),
        rule: z.enum(['min', 'max', 'increment']),
        limit: z.number().int(),
        detail: z.string(),
      }),
    )
    .optional()
    .describe("`quantity_not_allowed`: every line whose quantity its product's `quantity_rules` refuse."),
  requote: quoteResponseSchema.optional().describe('`quote_expired`: a fresh quote to confirm.'),
});

/** `GET /openapi.json`: this API's OpenAPI 3.1 document. */
export const openApiDocumentSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.looseObject({})),
});

export type ErrorResponse = z.infer<typeof errorResponseSchema>;
export type HealthResponse = z.infer<typeof healthResponseSchema>;
export type PriceResponse = z.infer<typeof priceResponseSchema>;
export type QuoteResponse = z.infer<typeof quoteResponseSchema>;
export type ReceiptResponse = z.infer<typeof receiptResponseSchema>;
export type RefundResponse = z.infer<typeof refundResponseSchema>;
export type JwksResponse = z.infer<typeof jwksResponseSchema>;
export type LimitsResponse = z.infer<typeof limitsResponseSchema>;
export type CacheInvalidateResponse = z.infer<typeof cacheInvalidateResponseSchema>;
export type CacheWarmResponse = z.infer<typeof cacheWarmResponseSchema>;

/** `GET /admin/me`: the signed-in operator (C27). */
export const operatorIdentityResponseSchema = z.object({
  identity: z.string(),
  roles: z.array(z.enum(OPERATOR_ROLES)),
  machine: z.boolean(),
});

/** `GET /admin/catalog/prices`: the SKU in each region and currency displayed, priced or refused with the reason. */
export const priceMatrixResponseSchema = z.object({
  sku: z.string(),
  cells: z.array(
    z.object({
      region: z.string(),
      currency: z.string(),
      price: priceResponseSchema.optional(),
      unavailable: z
        .object({
          error: z.string(),
          message: z.string(),
          details: z.record(z.string(), z.unknown()).optional(),
        })
        .optional(),
    }),
  ),
});
