/**
 * The catalog import/export document (`POST /admin/catalog/import`, `GET /admin/catalog/export`): the spec's
 * resources with their exact field names, money and rates as decimal strings (C1). Objects are strict: an
 * unknown field is an error naming its path.
 */
import * as z from 'zod';
import { dec } from '../domain/money/decimal';
import {
  AMOUNT_LIMITS,
  decimalString,
  describeLimits,
  PERCENT_LIMITS,
  RATE_LIMITS,
  TAX_RATE_LIMITS,
} from './decimal';
import { isoTimestamp } from './envelope';
import { ratePolicySchema } from './rate-policy';

/** Decimal fields by what they mean (bounded: see `decimal.ts`). */
export const amountDecimal = decimalString(AMOUNT_LIMITS);
const rateDecimal = decimalString(RATE_LIMITS);
const taxRateDecimal = decimalString(TAX_RATE_LIMITS);
const percentDecimal = decimalString(PERCENT_LIMITS);
const signedPercentDecimal = decimalString({ ...PERCENT_LIMITS, sign: 'signed' });
export const currencyCode = z.string().regex(/^[A-Z]{3,5}$/, 'a currency code such as "EUR" or "USDT"');
export const regionCode = z.string().regex(/^[A-Z]{2}$|^\*$/, 'an ISO 3166 region such as "DE"');
export const identifier = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'letters, digits and _ . : - (1–128)');
const roundingMode = z.enum(['HALF_UP', 'BANKERS', 'FLOOR', 'CEIL']);
const money = z.strictObject({ amount: amountDecimal, currency: currencyCode });
const positiveInt = z.number().int().min(1).max(1_000_000);

export const productSchema = z.strictObject({
  sku_id: identifier,
  title: z.string().min(1).max(500),
  category: identifier.optional(),
  attributes: z.record(z.string(), z.string().max(1000)).optional(),
  region_policies: z.array(z.strictObject({ region: regionCode, sellable: z.boolean() })).optional(),
  /** `stored_value` (gift cards, vouchers): priced at face value, no charm ending, no promotion. */
  product_type: z.enum(['standard', 'stored_value']).optional(),
  quantity_rules: z
    .strictObject({
      min: positiveInt.optional(),
      max: positiveInt.optional(),
      increment: positiveInt.optional(),
    })
    .optional(),
});

export const priceItemSchema = z.strictObject({
  sku_id: identifier,
  base_price: amountDecimal,
  base_currency: currencyCode,
  tax_class: identifier,
  pricing_model: z.enum(['flat', 'tiered', 'bundle']),
  promo_refs: z.array(identifier).optional(),
  tiers: z.array(z.strictObject({ min_quantity: positiveInt, unit_price: amountDecimal })).optional(),
  bundle: z
    .strictObject({
      positions: z.array(z.strictObject({ sku_id: identifier, quantity: positiveInt })).min(1),
    })
    .optional(),
  min_price: amountDecimal.optional(),
});

/** C29: a customer group, as price lists, overrides and promotions target it and buyers name it. */
export const customerGroup = identifier;

export const pricelistSchema = z.strictObject({
  pricelist_id: identifier,
  base_currency: currencyCode,
  effective_from: isoTimestamp.optional(),
  effective_to: isoTimestamp.optional(),
  /** C29: only buyers of this group get this list's prices (never the primary list). */
  customer_group: customerGroup.optional(),
  /** A list derived from another one: its SKUs without an item of their own cost the parent's price ± percent. */
  derived_from: z
    .strictObject({
      pricelist_id: identifier,
      adjustment_percent: signedPercentDecimal.refine(
        (value) => dec(value).greaterThan(-100),
        'above -100 (a list cannot make prices zero or negative)',
      ),
    })
    .optional(),
  items: z.array(priceItemSchema),
});

const pair = z.string().regex(/^[A-Z]{3,5}(→|->)[A-Z]{3,5}$/, 'a pair such as "EUR→USD"');

export const fxRateSchema = z.strictObject({
  pair,
  rate: rateDecimal,
  source: z.string().min(1).max(100),
  method: z.enum(['provider', 'median', 'twap']),
  precision: z.number().int().min(0).max(12),
  effective_from: isoTimestamp.optional(),
});

/** Longest reason an override may give. */
export const OVERRIDE_REASON_MAX_CHARS = 200;

/**
 * A manual rate for a published pair (either direction), set and removed only by change request: while in force
 * (the pricing instant before `expires_at`) it is the pair's reference rate; once expired it is ignored and stays
 * until removed.
 */
export const fxOverrideSchema = z.strictObject({
  pair,
  rate: rateDecimal,
  expires_at: isoTimestamp,
  reason: z.string().trim().min(1).max(OVERRIDE_REASON_MAX_CHARS),
});

/** The two currencies of a pair as the schema writes it (`EUR→USD` or `EUR->USD`), sorted: either direction. */
const undirected = (text: string): string => text.split(/→|->/).sort().join('|');

export const fxRatesSchema = z
  .strictObject({
    base_currency: currencyCode,
    rates: z.array(fxRateSchema),
    markup_rules: z
      .array(
        z.strictObject({
          channel: identifier.optional(),
          region: regionCode.optional(),
          fx_markup_bps: z.number().int().min(-10_000).max(10_000),
        }),
      )
      .optional(),
    overrides: z.array(fxOverrideSchema).optional(),
  })
  .superRefine((fx, ctx) => {
    const published = new Set(fx.rates.map((rate) => undirected(rate.pair)));
    const seen = new Map<string, number>();
    (fx.overrides ?? []).forEach((override, index) => {
      const key = undirected(override.pair);
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['overrides', index, 'pair'],
          message: `one override per pair: ${override.pair} (in either direction) is also at [${first}]`,
        });
      } else seen.set(key, index);
      if (!published.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: ['overrides', index, 'pair'],
          message: `no published rate for ${override.pair} in either direction: an override replaces one`,
        });
      }
    });
  });

export const taxComponentSchema = z.strictObject({
  name: identifier,
  rate: taxRateDecimal,
  compound: z.boolean().optional(),
});

export const taxRuleSchema = z.strictObject({
  region: regionCode,
  tax_mode: z.strictObject({ type: z.enum(['VAT', 'GST']), inclusion: z.enum(['included', 'excluded']) }),
  rates: z.record(identifier, z.array(taxComponentSchema)),
  threshold: money.optional(),
  rounding: z.strictObject({ mode: roundingMode, level: z.enum(['per_unit', 'per_line', 'per_basket']) }),
  business_buyers: z.enum(['reverse_charge', 'same']).optional(),
});

export const displayRuleSchema = z.strictObject({
  region: regionCode,
  currency_whitelist: z.array(currencyCode).min(1),
  minor_units: z.record(currencyCode, z.number().int().min(0).max(18)).optional(),
  rounding_mode: roundingMode.optional(),
  charm_pricing: z.enum(['.99', '.95', '.90']).nullable().optional(),
});

export const overrideSchema = z.strictObject({
  override_id: identifier,
  target: z.union([
    z.strictObject({ sku_id: identifier }),
    z.strictObject({ category: identifier }),
    z.strictObject({ tenant: identifier }),
    z.strictObject({ campaign: identifier }),
    z.strictObject({ customer_group: customerGroup }),
  ]),
  currency: currencyCode,
  price_or_markup: z.union(
    [z.strictObject({ price: amountDecimal }), z.strictObject({ markup_percent: signedPercentDecimal })],
    // A failed union names only its own path, so its message says what each side takes.
    `either { price }, ${describeLimits(AMOUNT_LIMITS)}, or { markup_percent }, ` +
      `${describeLimits(PERCENT_LIMITS)} (may be negative)`,
  ),
  priority: z.number().int().min(-1_000_000).max(1_000_000),
});

export const basketPolicySchema = z.strictObject({
  policy_id: identifier,
  tenant: identifier.optional(),
  rounding_scope: z.enum(['line', 'basket']),
  promo_stack_mode: z.enum(['best_single', 'stack_all']),
  free_shipping_thresholds: z.array(money).optional(),
  bundle_rules: z.strictObject({ allow_partial_returns: z.boolean() }).optional(),
});

/** C29: a promotion only buyers of a customer group get. */
const promotionTarget = z.strictObject({ customer_group: customerGroup });

const promotionCondition = z.strictObject({
  regions: z.array(regionCode).optional(),
  currencies: z.array(currencyCode).optional(),
  skus: z.array(identifier).optional(),
  categories: z.array(identifier).optional(),
  channels: z.array(identifier).optional(),
});

export const promotionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('percentage'),
    promo_id: identifier,
    condition: promotionCondition,
    // Refinements after a failed check would still run: `percentDecimal` aborts on its failures, so only a
    // bounded decimal is ever parsed here.
    percent: percentDecimal.refine((value) => dec(value).lessThanOrEqualTo(100), 'at most 100'),
    cap: money.optional(),
    stackable: z.boolean(),
    priority: z.number().int().min(-1_000_000).max(1_000_000),
    target: promotionTarget.optional(),
  }),
  z.strictObject({
    kind: z.enum(['free_shipping', 'bonus']),
    promo_id: identifier,
    condition: promotionCondition,
    threshold: money,
    bonus: z.string().max(200).optional(),
    target: promotionTarget.optional(),
  }),
]);

export const feeScheduleSchema = z.strictObject({
  effective_from: isoTimestamp,
  payment: z
    .array(
      z.strictObject({
        method: identifier.optional(),
        provider: identifier.optional(),
        percent: percentDecimal,
        fixed: money.optional(),
      }),
    )
    .optional(),
  cross_border: z.strictObject({ percent: percentDecimal, domestic_regions: z.array(regionCode) }).optional(),
  network: z.record(currencyCode, amountDecimal).optional(),
  shipping: z.record(regionCode, money).optional(),
  /** Charged on a refund: percent of the refunded amount plus a fixed part (rule 13). */
  refund: z.strictObject({ percent: percentDecimal, fixed: money.optional() }).optional(),
});

export const availabilitySchema = z.strictObject({
  blocked_currencies: z
    .array(z.strictObject({ currency: currencyCode, regions: z.array(regionCode).optional() }))
    .optional(),
  blocked_banks: z.array(identifier).optional(),
  blocked_tokens: z.array(identifier).optional(),
  blocked_providers: z
    .array(z.strictObject({ provider: identifier, currencies: z.array(currencyCode).optional() }))
    .optional(),
  blocked_conversions: z.array(z.strictObject({ from: currencyCode, to: currencyCode })).optional(),
  player_blocks: z
    .array(z.strictObject({ player_id: identifier, currencies: z.array(currencyCode) }))
    .optional(),
});

export const limitSchema = z.strictObject({
  region: regionCode.optional(),
  /** Maximum winnings in the catalog's base currency (rule 15). */
  max_winnings: money,
});

export const settingsSchema = z.strictObject({
  pricing_strategy: z.enum(['convert_at_display', 'price_lists', 'mixed']),
  mixed_top_currencies: z.array(currencyCode).max(50).optional(),
  crypto_minor_units: z.record(currencyCode, z.number().int().min(0).max(18)).optional(),
});

/** The whole document. `pricelists[0]` is the primary list; its currency is the catalog's base currency. */
export const catalogDocumentSchema = z.strictObject({
  effective_from: isoTimestamp.optional(),
  settings: settingsSchema,
  products: z.array(productSchema),
  pricelists: z.array(pricelistSchema).min(1),
  fx_rates: fxRatesSchema,
  settlement_rates: z.array(fxRateSchema).optional(),
  /** How rates are fetched, aggregated and protected (rules 9 and 10); changes only by change request. */
  rate_policy: ratePolicySchema.optional(),
  tax_rules: z.array(taxRuleSchema),
  display_rules: z.array(displayRuleSchema).min(1),
  overrides: z.array(overrideSchema).optional(),
  basket_policies: z.array(basketPolicySchema).min(1),
  promotions: z.array(promotionSchema).optional(),
  fees: z.array(feeScheduleSchema).optional(),
  availability: availabilitySchema.optional(),
  limits: z.array(limitSchema).optional(),
});

export type CatalogDocument = z.infer<typeof catalogDocumentSchema>;
