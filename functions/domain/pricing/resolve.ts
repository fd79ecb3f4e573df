import { Decimal, dec, ONE } from '../money/decimal';
import { step } from '../money/rounding';
import { PricingError } from './errors';
import type { CharmEnding, Override, PriceItem, PriceList, PricingCatalog, Product } from './types';

/** How many currencies the `mixed` strategy precomputes when the catalog does not list them (rule 8). */
export const DEFAULT_MIXED_TOP_CURRENCIES = 10;

export interface ResolutionContext {
  readonly catalog: PricingCatalog;
  readonly currency: string;
  readonly region: string;
  readonly minorUnits: number;
  readonly isCrypto: boolean;
  readonly charm: CharmEnding | null;
  readonly tenant?: string;
  readonly campaign?: string;
  /** Converts an amount from a currency into the basket currency at the client rate (9 decimals). */
  readonly convert: (amount: Decimal, from: string) => Decimal;
}

export interface ResolvedItem {
  readonly item: PriceItem;
  readonly product: Product | undefined;
  /** Unit price in the basket currency, before discounts, at 9 decimals. */
  readonly unitPrice: Decimal;
  /** The unit floor (`min_price`) in the basket currency, or zero. */
  readonly minUnitPrice: Decimal;
  /** Whether the price was converted from another currency (and so charm-adjusted where the region says). */
  readonly converted: boolean;
  readonly overrideId?: string;
  /** Bundle positions with their standalone prices × quantity: the weights of the bundle split (rule 5). */
  readonly bundleWeights?: readonly {
    readonly sku_id: string;
    readonly quantity: number;
    readonly weight: Decimal;
  }[];
}

const CHARM_FRACTION: Readonly<Record<CharmEnding, number>> = { '.99': 99, '.95': 95, '.90': 90 };

/**
 * Charm pricing (rule 8), applied in step 1 to a converted price in the display currency (C19): the nearest
 * price with the region's ending, ties to the higher one, never zero or below.
 * - 2 or more minor units (EUR, USD, KWD): the ending is the first two decimals: 12.34 → 11.99, 12.60 → 12.99;
 *   KWD 12.345 → 11.990.
 * - 0 or 1 minor units (JPY, ISK): the ending is the last two digits of the whole amount: ¥1,234 → ¥1,199.
 * - Crypto: no charm (the caller does not call this).
 */
export const applyCharm = (price: Decimal, ending: CharmEnding, minorUnits: number): Decimal => {
  // A free item stays free.
  if (price.lessThanOrEqualTo(0)) return price;
  const period = minorUnits >= 2 ? ONE : new Decimal(100);
  const offset =
    minorUnits >= 2
      ? new Decimal(CHARM_FRACTION[ending]).dividedBy(100)
      : new Decimal(CHARM_FRACTION[ending]);
  let lower = price.dividedBy(period).floor().times(period).plus(offset);
  if (lower.greaterThan(price)) lower = lower.minus(period);
  const upper = lower.plus(period);
  if (lower.lessThanOrEqualTo(0)) return upper;
  return price.minus(lower).lessThan(upper.minus(price)) ? lower : upper;
};

/** Unit price of an item for a quantity: the tier with the highest `min_quantity` not above it. */
export const modelUnitPrice = (item: PriceItem, quantity: number): Decimal => {
  if (item.pricing_model !== 'tiered' || !item.tiers?.length) return dec(item.base_price);
  let price = dec(item.base_price);
  let reached = 0;
  for (const tier of item.tiers) {
    if (tier.min_quantity <= quantity && tier.min_quantity >= reached) {
      reached = tier.min_quantity;
      price = dec(tier.unit_price);
    }
  }
  return price;
};

const SPECIFICITY: Readonly<Record<string, number>> = { sku_id: 4, campaign: 3, category: 2, tenant: 1 };

const targetOf = (override: Override): { kind: string; value: string } => {
  const [kind, value] = Object.entries(override.target)[0] ?? ['', ''];
  return { kind, value: String(value) };
};

/**
 * The override in force for a SKU: matching target and currency; highest `priority`; ties to the most specific
 * target (sku_id > campaign > category > tenant), then the smallest `override_id`.
 */
export const chooseOverride = (
  overrides: readonly Override[],
  context: { sku_id: string; category?: string; tenant?: string; campaign?: string; currency: string },
): Override | undefined => {
  const matches = overrides.filter((override) => {
    if (override.currency !== context.currency) return false;
    const { kind, value } = targetOf(override);
    if (kind === 'sku_id') return value === context.sku_id;
    if (kind === 'category') return value === context.category;
    if (kind === 'tenant') return value === context.tenant;
    if (kind === 'campaign') return value === context.campaign;
    return false;
  });
  return matches.sort((a, b) => {
    if (a.priority !== b.priority) return b.priority - a.priority;
    const specificity = (SPECIFICITY[targetOf(b).kind] ?? 0) - (SPECIFICITY[targetOf(a).kind] ?? 0);
    if (specificity !== 0) return specificity;
    return a.override_id < b.override_id ? -1 : a.override_id > b.override_id ? 1 : 0;
  })[0];
};

const applyOverride = (price: Decimal, override: Override): Decimal =>
  'price' in override.price_or_markup
    ? dec(override.price_or_markup.price)
    : step(price.times(ONE.plus(dec(override.price_or_markup.markup_percent).dividedBy(100))));

/** Which price list serves the basket currency, per the tenant's strategy (rule 8, C21). */
const sourceList = (catalog: PricingCatalog, currency: string): PriceList | undefined => {
  const precomputed = (catalog.currency_pricelists ?? []).find((list) => list.base_currency === currency);
  const { strategy } = catalog;
  if (strategy.kind === 'convert_at_display') return undefined;
  if (strategy.kind === 'price_lists') return precomputed;
  const top =
    strategy.top_currencies ??
    (catalog.currency_pricelists ?? [])
      .slice(0, DEFAULT_MIXED_TOP_CURRENCIES)
      .map((list) => list.base_currency);
  return top.includes(currency) ? precomputed : undefined;
};

/**
 * Lookups by SKU, built once per price list or catalog object. Snapshots are immutable, so an index keyed by
 * the object's identity can never go stale.
 */
const itemIndexes = new WeakMap<PriceList, Map<string, PriceItem>>();
const productIndexes = new WeakMap<readonly Product[], Map<string, Product>>();

const findItem = (list: PriceList, skuId: string): PriceItem | undefined => {
  let index = itemIndexes.get(list);
  if (!index) {
    index = new Map(list.items.map((item) => [item.sku_id, item]));
    itemIndexes.set(list, index);
  }
  return index.get(skuId);
};

const findProduct = (products: readonly Product[], skuId: string): Product | undefined => {
  let index = productIndexes.get(products);
  if (!index) {
    index = new Map(products.map((product) => [product.sku_id, product]));
    productIndexes.set(products, index);
  }
  return index.get(skuId);
};

/** The unit price of one SKU in the basket currency, with everything step 1 decides. */
export const resolveItem = (context: ResolutionContext, skuId: string, quantity: number): ResolvedItem => {
  const { catalog, currency } = context;
  const baseItem = findItem(catalog.pricelist, skuId);
  if (!baseItem) throw new PricingError('unknown_sku', 'pricelist', `unknown SKU ${skuId}`);
  const product = findProduct(catalog.products, skuId);
  const policy = product?.region_policies?.find((candidate) => candidate.region === context.region);
  if (policy && !policy.sellable) {
    throw new PricingError('not_sellable', 'region_policy', `${skuId} is not sold in ${context.region}`);
  }
  const list = sourceList(catalog, currency);
  if (catalog.strategy.kind === 'price_lists' && !list) {
    throw new PricingError('currency_not_available', 'price_lists', `no price list in ${currency}`);
  }
  const listed = list ? findItem(list, skuId) : undefined;
  if (list && !listed && catalog.strategy.kind === 'price_lists') {
    throw new PricingError('no_price', 'price_lists', `no ${currency} price for ${skuId}`);
  }
  const item = listed ?? baseItem;
  const nativePrice = modelUnitPrice(item, quantity);
  const converted = item.base_currency !== currency;
  let unitPrice = converted ? context.convert(nativePrice, item.base_currency) : nativePrice;
  if (converted && context.charm && !context.isCrypto) {
    unitPrice = applyCharm(unitPrice, context.charm, context.minorUnits);
  }
  const override = chooseOverride(catalog.overrides ?? [], {
    sku_id: skuId,
    ...(product?.category ? { category: product.category } : {}),
    ...(context.tenant ? { tenant: context.tenant } : {}),
    ...(context.campaign ? { campaign: context.campaign } : {}),
    currency,
  });
  if (override) unitPrice = applyOverride(unitPrice, override);
  const minUnitPrice = item.min_price
    ? converted
      ? context.convert(dec(item.min_price), item.base_currency)
      : dec(item.min_price)
    : new Decimal(0);

  let bundleWeights: ResolvedItem['bundleWeights'];
  if (item.pricing_model === 'bundle') {
    const positions = item.bundle?.positions ?? [];
    if (positions.length === 0)
      throw new PricingError('no_price', 'bundle', `bundle ${skuId} has no positions`);
    bundleWeights = positions.map((position) => {
      const positionItem = findItem(catalog.pricelist, position.sku_id);
      if (!positionItem || positionItem.pricing_model === 'bundle') {
        throw new PricingError(
          'no_price',
          'bundle',
          `bundle ${skuId} names an unpriced position ${position.sku_id}`,
        );
      }
      const standalone = modelUnitPrice(positionItem, position.quantity).times(position.quantity);
      return { sku_id: position.sku_id, quantity: position.quantity, weight: step(standalone) };
    });
  }
  return {
    item,
    product,
    unitPrice: step(unitPrice),
    minUnitPrice: step(minUnitPrice),
    converted,
    ...(override ? { overrideId: override.override_id } : {}),
    ...(bundleWeights ? { bundleWeights } : {}),
  };
};
