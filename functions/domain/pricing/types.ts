/**
 * Inputs and outputs of the pricing engine. Field names follow the specification where it names them; money and
 * rates are decimal strings (C1). Everything here is plain data: the engine is a pure function of it.
 */
import type { RoundingMode } from '../money/rounding';

/** An amount in a named currency, as on the wire: `{ "amount": "12.30", "currency": "EUR" }`. */
export interface MoneyInput {
  readonly amount: string;
  readonly currency: string;
}

export interface Product {
  readonly sku_id: string;
  readonly title: string;
  readonly category?: string;
  readonly attributes?: Readonly<Record<string, string>>;
  readonly region_policies?: readonly { readonly region: string; readonly sellable: boolean }[];
  /**
   * `stored_value`: a gift card or voucher, whose price is its face value: never charm-priced, never reached by a
   * promotion (nor counted towards a threshold promotion). `standard` when absent.
   */
  readonly product_type?: ProductType;
  /** Quantities a quote accepts for this SKU (checked before pricing; a price read shows them). */
  readonly quantity_rules?: QuantityRules;
}

export type ProductType = 'standard' | 'stored_value';

/**
 * Per-SKU order quantities: at least `min`, at most `max`, a multiple of `increment` (`min` and `max` are
 * multiples of it, so every quantity between them on the increment's grid is allowed).
 */
export interface QuantityRules {
  readonly min?: number;
  readonly max?: number;
  readonly increment?: number;
}

/** `flat`: one unit price. `tiered`: unit price by quantity tier. `bundle`: positions sold together (C21). */
export type PricingModel = 'flat' | 'tiered' | 'bundle';

export interface PriceTier {
  /** The tier applies from this quantity on (the first tier starts at 1). */
  readonly min_quantity: number;
  readonly unit_price: string;
}

export interface BundlePosition {
  readonly sku_id: string;
  readonly quantity: number;
}

export interface PriceItem {
  readonly sku_id: string;
  /** Unit price in `base_currency`; for `tiered`, the price of the first tier; for `bundle`, the bundle price. */
  readonly base_price: string;
  readonly base_currency: string;
  readonly tax_class: string;
  readonly pricing_model: PricingModel;
  readonly promo_refs?: readonly string[];
  readonly tiers?: readonly PriceTier[];
  readonly bundle?: { readonly positions: readonly BundlePosition[] };
  /** Floor for the discounted unit price, in `base_currency` (rule 7's `min_price` safeguard). */
  readonly min_price?: string;
}

export interface PriceList {
  readonly pricelist_id: string;
  readonly base_currency: string;
  /** In force from this instant (ISO 8601 UTC) … */
  readonly effective_from: string;
  /** … until this one, excluded (open-ended when absent). */
  readonly effective_to?: string;
  readonly version: number;
  readonly items: readonly PriceItem[];
  /** C29: a list only buyers of this customer group get (their price is the lowest applicable one). */
  readonly customer_group?: string;
  /**
   * A list derived from a parent list: a SKU it does not list itself costs the parent's price (in the basket
   * currency) adjusted by `adjustment_percent`, then given the region's charm ending and display rounding.
   */
  readonly derived_from?: PriceListDerivation;
}

export interface PriceListDerivation {
  readonly pricelist_id: string;
  /** Percent up (positive) or down (negative, above −100), e.g. `"-15"` or `"7.5"`. */
  readonly adjustment_percent: string;
}

/** Rule 8 / C21: how a display price is found. */
export interface PricingStrategy {
  readonly kind: 'convert_at_display' | 'price_lists' | 'mixed';
  /** `mixed`: currencies with a precomputed price list (default: the 10 most used). */
  readonly top_currencies?: readonly string[];
}

export interface FxRate {
  /** `FROM→TO` (an ASCII `->` is accepted too). */
  readonly pair: string;
  readonly rate: string;
  readonly source: string;
  readonly method: string;
  readonly precision: number;
  readonly effective_from: string;
  readonly version: string;
}

/**
 * A manual rate for one pair, set by change request: while in force (the pricing instant before `expires_at`) it
 * replaces the pair's published rate in both directions (inverted for the opposite one) and as a leg of cross
 * and chain rates. It is the reference rate: the markup still applies on top.
 */
export interface FxOverride {
  /** `FROM→TO` (an ASCII `->` is accepted too); a published pair in either direction. */
  readonly pair: string;
  readonly rate: string;
  /** ISO 8601 UTC with ms; in force while the pricing instant is before it. */
  readonly expires_at: string;
  readonly reason: string;
  /** The rate's timestamp: the publication of the fx snapshot that carries it. */
  readonly effective_from: string;
}

/** One published snapshot of every rate: `fx_version` (C5). */
export interface FxRateSet {
  readonly fx_version: string;
  readonly base_currency: string;
  readonly rates: readonly FxRate[];
  /** Manual rates, at most one per pair; an expired one stays in the snapshot and is ignored. */
  readonly overrides?: readonly FxOverride[];
}

/** Client rate = published rate × (1 + bps / 10 000), by channel and region; the most specific rule wins. */
export interface FxMarkupRule {
  readonly channel?: string;
  readonly region?: string;
  readonly fx_markup_bps: number;
}

/** One rate of a tax (several may apply to one class: federal + state), applied in list order. */
export interface TaxComponent {
  readonly name: string;
  readonly rate: string;
  /** A compound rate is levied on the net amount plus the components before it. */
  readonly compound?: boolean;
}

export type TaxRoundingLevel = 'per_unit' | 'per_line' | 'per_basket';

export interface TaxRule {
  readonly region: string;
  readonly tax_mode: { readonly type: 'VAT' | 'GST'; readonly inclusion: 'included' | 'excluded' };
  /** Components by tax class; a class not listed is not taxed. */
  readonly rates: Readonly<Record<string, readonly TaxComponent[]>>;
  /** Tax applies only when the basket's taxable amount is at least this (e.g. a registration threshold). */
  readonly threshold?: MoneyInput;
  readonly rounding: { readonly mode: RoundingMode; readonly level: TaxRoundingLevel };
  /** What business buyers get: `reverse_charge` (no tax charged, prices shown net) or `same`. */
  readonly business_buyers?: 'reverse_charge' | 'same';
}

export interface TaxRuleSet {
  /** A positive integer that only grows (C5). */
  readonly tax_rule_version: number;
  readonly rules: readonly TaxRule[];
}

export type CharmEnding = '.99' | '.95' | '.90';

export interface DisplayRule {
  readonly region: string;
  readonly currency_whitelist: readonly string[];
  /** Minor units per currency where they differ from ISO 4217 / the crypto defaults. */
  readonly minor_units?: Readonly<Record<string, number>>;
  /** Rounding of display prices (HALF_UP by default: "UX rounding"). */
  readonly rounding_mode?: RoundingMode;
  readonly charm_pricing?: CharmEnding | null;
}

export type OverrideTarget =
  | { readonly sku_id: string }
  | { readonly category: string }
  | { readonly tenant: string }
  | { readonly campaign: string }
  /** C29: applies to buyers of that group, and only when it gives them a lower price. */
  | { readonly customer_group: string };

/** C29: a promotion only buyers of this customer group get. */
export interface CustomerGroupTarget {
  readonly customer_group: string;
}

export interface Override {
  readonly override_id: string;
  readonly target: OverrideTarget;
  /** The display currency the override applies to. */
  readonly currency: string;
  /** An absolute unit price in `currency`, or a markup in percent on the resolved price (negative: markdown). */
  readonly price_or_markup: { readonly price: string } | { readonly markup_percent: string };
  /** Higher wins; ties go to the more specific target (sku_id > campaign > category > tenant), then the id. */
  readonly priority: number;
}

export interface BasketPolicy {
  readonly rounding_scope: 'line' | 'basket';
  readonly promo_stack_mode: 'best_single' | 'stack_all';
  readonly free_shipping_thresholds?: readonly MoneyInput[];
  readonly bundle_rules?: { readonly allow_partial_returns: boolean };
}

export interface PromotionCondition {
  readonly regions?: readonly string[];
  readonly currencies?: readonly string[];
  readonly skus?: readonly string[];
  readonly categories?: readonly string[];
  readonly channels?: readonly string[];
}

/** Rule 7: a condition, a percentage and a cap. */
export interface Promotion {
  readonly promo_id: string;
  readonly condition: PromotionCondition;
  readonly percent: string;
  /** Largest total discount this promotion gives on one basket. */
  readonly cap?: MoneyInput;
  readonly stackable: boolean;
  /** Order of application when stacking (higher first), and tie-break for `best_single`. */
  readonly priority: number;
  /** Only buyers of this customer group get it (C29). */
  readonly target?: CustomerGroupTarget;
}

/** Rule 6: free shipping or a bonus once the basket total reaches a threshold. */
export interface ThresholdPromotion {
  readonly promo_id: string;
  readonly kind: 'free_shipping' | 'bonus';
  readonly threshold: MoneyInput;
  readonly condition: PromotionCondition;
  readonly bonus?: string;
  /** Only buyers of this customer group get it (C29). */
  readonly target?: CustomerGroupTarget;
}

export interface PaymentFee {
  readonly method?: string;
  readonly provider?: string;
  readonly percent: string;
  readonly fixed?: MoneyInput;
}

export interface FeeSchedule {
  readonly payment?: readonly PaymentFee[];
  /** Charged when the buyer's region is not one of the merchant's domestic regions. */
  readonly cross_border?: { readonly percent: string; readonly domestic_regions: readonly string[] };
  /** Network fee per crypto currency, in that currency. */
  readonly network?: Readonly<Record<string, string>>;
  /** Shipping per region (`*` for any other), waived by a free-shipping threshold promotion. */
  readonly shipping?: Readonly<Record<string, MoneyInput>>;
}

export interface AvailabilityRules {
  readonly blocked_currencies?: readonly {
    readonly currency: string;
    readonly regions?: readonly string[];
  }[];
  readonly blocked_banks?: readonly string[];
  readonly blocked_tokens?: readonly string[];
  readonly blocked_providers?: readonly {
    readonly provider: string;
    readonly currencies?: readonly string[];
  }[];
  /** Conversions that must not happen (e.g. no pricing in X converted from the base currency). */
  readonly blocked_conversions?: readonly { readonly from: string; readonly to: string }[];
  readonly player_blocks?: readonly { readonly player_id: string; readonly currencies: readonly string[] }[];
}

/** Everything in force for one calculation, with the versions that identify it. */
export interface PricingCatalog {
  readonly base_currency: string;
  readonly pricelist: PriceList;
  /** Precomputed price lists, one per display currency (strategy `price_lists` / `mixed`). */
  readonly currency_pricelists?: readonly PriceList[];
  /** Price lists of customer groups (C29), each in its own currency, converted for another one. */
  readonly group_pricelists?: readonly PriceList[];
  readonly strategy: PricingStrategy;
  readonly products: readonly Product[];
  readonly fx: FxRateSet;
  readonly fx_markup_rules?: readonly FxMarkupRule[];
  readonly tax_rules: TaxRuleSet;
  readonly display_rules: readonly DisplayRule[];
  readonly overrides?: readonly Override[];
  readonly basket_policy: BasketPolicy;
  readonly promotions?: readonly Promotion[];
  readonly threshold_promotions?: readonly ThresholdPromotion[];
  readonly fees?: FeeSchedule;
  readonly availability?: AvailabilityRules;
  /** Crypto currencies and their minor units (defaults BTC 8, ETH 8, USDT 6). */
  readonly crypto_minor_units?: Readonly<Record<string, number>>;
}

export interface BasketLine {
  readonly sku_id: string;
  readonly quantity: number;
}

export interface BasketRequest {
  readonly items: readonly BasketLine[];
  readonly region: string;
  readonly currency: string;
  readonly buyer_type: 'consumer' | 'business';
  readonly channel?: string;
  readonly tenant?: string;
  readonly campaign?: string;
  readonly payment?: {
    readonly method?: string;
    readonly provider?: string;
    readonly bank?: string;
    readonly token?: string;
  };
  readonly player_id?: string;
  /** C29: the buyer's customer groups; the lowest price any of them (or none) gives is the buyer's. */
  readonly customer_groups?: readonly string[];
  /** Fees added at checkout pricing (rule 8), in the basket currency. */
  readonly checkout_fees?: readonly { readonly kind: string; readonly amount: string }[];
}

// ---------------------------------------------------------------- output

export interface TaxLine {
  readonly name: string;
  readonly tax_class: string;
  readonly rate: string;
  readonly amount: string;
  /** `true`: already inside the price (VAT/GST included); `false`: added on top. */
  readonly included: boolean;
}

export interface FeeLine {
  readonly kind: string;
  readonly amount: string;
}

export interface AppliedPromotion {
  readonly promo_id: string;
  readonly amount: string;
}

export interface BundleShare {
  readonly sku_id: string;
  readonly quantity: number;
  /** The position's price before discount: its weight in the split. */
  readonly weight: string;
  /** Its share of the line total and of the line's tax: what a return of this position refunds. */
  readonly amount: string;
  readonly tax: string;
}

export interface PricedLine {
  readonly line: number;
  readonly sku_id: string;
  readonly quantity: number;
  readonly pricing_model: PricingModel;
  /** The unit price before discounts, rounded in the display rule's mode (C19: display rounding). */
  readonly unit_price: string;
  /**
   * What the shopper sees for one unit after this line's promotions, rounded in the display rule's mode from
   * the exact value (never from the line's bankers-rounded amounts): the same figure `GET /catalog/prices` shows.
   */
  readonly display_price: string;
  /** unit price × quantity, before discounts. */
  readonly base: string;
  readonly discount: string;
  readonly taxes: readonly TaxLine[];
  /** Σ taxes of the line (included ones are already part of `base`). */
  readonly tax: string;
  /** This line's share of the basket's fees. */
  readonly fees: string;
  /** base − discount + excluded tax + fees. */
  readonly total: string;
  readonly applied_promotions: readonly AppliedPromotion[];
  readonly bundle_allocation?: readonly BundleShare[];
  /** C29: the customer group whose price list or override gave this line its (lower) unit price. */
  readonly customer_group?: string;
}

export interface ThresholdOutcome {
  readonly promo_id: string;
  readonly kind: 'free_shipping' | 'bonus';
  readonly bonus?: string;
  readonly threshold: string;
  readonly basket_total: string;
  /** The basket total's equivalent in the catalog's base currency, fixed by `fx_version` (rule 6). */
  readonly base_currency_equivalent: MoneyInput;
  readonly fx_version: string;
}

export interface PricingVersions {
  readonly pricelist_version: number;
  readonly fx_version: string;
  readonly tax_rule_version: number;
}

export interface BasketPricing {
  readonly currency: string;
  readonly region: string;
  readonly buyer_type: 'consumer' | 'business';
  readonly rounding_scope: 'line' | 'basket';
  readonly minor_units: number;
  readonly items_priced: readonly PricedLine[];
  readonly subtotal: string;
  readonly discounts: string;
  readonly taxes: readonly TaxLine[];
  readonly fees: readonly FeeLine[];
  readonly total: string;
  readonly threshold_promotions: readonly ThresholdOutcome[];
  /** The client rate from the base currency to the basket currency (after markup), when a conversion happened. */
  readonly fx_rate?: string;
  /** Each rate the basket was converted at, one per currency converted from (in code order); only when any was. */
  readonly fx_conversions?: readonly FxConversion[];
  readonly versions: PricingVersions;
}

/** The override a conversion used (for a cross or chain rate with several, the one expiring first). */
export interface FxOverrideInUse {
  readonly pair: string;
  readonly rate: string;
  readonly expires_at: string;
  readonly reason: string;
}

/**
 * One conversion, made transparent (as Stripe's FX Quotes show it): the reference rate the engine used, the
 * markup, the client rate = reference × (1 + bps / 10 000) at 9 decimals, and where the reference came from.
 */
export interface FxConversion {
  /** `FROM→TO`. */
  readonly pair: string;
  readonly from: string;
  readonly to: string;
  /** The published rate (or the override in force): direct, inverse, cross or chain, at 9 decimals. */
  readonly reference_rate: string;
  readonly fx_markup_bps: number;
  readonly client_rate: string;
  /** `effective_from` of the rate; for an inverse, cross or chain rate the oldest leg's. */
  readonly rate_timestamp: string;
  readonly fx_version: string;
  /** The rate's source; for a cross or chain rate the legs' sources joined with `+`. */
  readonly source: string;
  /** Present while a manual override made (a leg of) the reference rate. */
  readonly override?: FxOverrideInUse;
}
