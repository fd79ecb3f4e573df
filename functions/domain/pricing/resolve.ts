import { Decimal, dec, ONE } from '../money/decimal';
import { type RoundingMode, round, step } from '../money/rounding';
import { PricingError } from './errors';
import { type ExplainFigures, type ExplainTrace, figure } from './explain';
import type {
  CharmEnding,
  Override,
  PriceItem,
  PriceList,
  PriceTier,
  PricingCatalog,
  Product,
} from './types';

/** Whether a product is priced at face value (gift cards, vouchers): no charm ending, no promotion. */
export const isStoredValue = (product: Product | undefined): boolean =>
  product?.product_type === 'stored_value';

/** How many currencies the `mixed` strategy precomputes when the catalog does not list them (rule 8). */
export const DEFAULT_MIXED_TOP_CURRENCIES = 10;

export interface ResolutionContext {
  readonly catalog: PricingCatalog;
  readonly currency: string;
  readonly region: string;
  readonly minorUnits: number;
  readonly isCrypto: boolean;
  readonly charm: CharmEnding | null;
  /** The display rule's rounding mode (HALF_UP when absent): how a derived list's prices are rounded. */
  readonly displayMode?: RoundingMode;
  readonly tenant?: string;
  readonly campaign?: string;
  /** The buyer's customer groups (C29); absent or empty: none. */
  readonly customerGroups?: ReadonlySet<string>;
  /** The instant of pricing (ISO 8601 UTC with ms): price lists not in force then are not used. */
  readonly at?: string;
  /** Converts an amount from a currency into the basket currency at the client rate (9 decimals). */
  readonly convert: (amount: Decimal, from: string) => Decimal;
  /** Only when explaining (C28): where the steps go, and the figures of a conversion from a currency. */
  readonly trace?: ExplainTrace;
  readonly rateFigures?: (from: string) => ExplainFigures;
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
  /** The customer group whose price won (C29), when one gave a lower price than everyone gets. */
  readonly customerGroup?: string;
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

/** The tier `modelUnitPrice` picks, for an explanation (tiered items only). */
const reachedTier = (
  item: PriceItem,
  tiers: readonly PriceTier[],
  quantity: number,
): { min_quantity: number; unit_price: string } => {
  let reached = { min_quantity: 0, unit_price: item.base_price };
  for (const tier of tiers) {
    if (tier.min_quantity <= quantity && tier.min_quantity >= reached.min_quantity) reached = tier;
  }
  return reached;
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

/**
 * Whether a price list is in force at `at` (from `effective_from`, until `effective_to` excluded). Both are ISO
 * 8601 UTC with milliseconds (the catalog schema's form), so they compare as strings. No instant: in force.
 */
export const inForce = (list: PriceList, at: string | undefined): boolean =>
  at === undefined ||
  (list.effective_from <= at && (list.effective_to === undefined || at < list.effective_to));

/** Which price list serves the basket currency, per the tenant's strategy (rule 8, C21); only lists in force. */
export const sourceList = (catalog: PricingCatalog, currency: string, at?: string): PriceList | undefined => {
  const precomputed = (catalog.currency_pricelists ?? []).find(
    (list) => list.base_currency === currency && inForce(list, at),
  );
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

export const findItem = (list: PriceList, skuId: string): PriceItem | undefined => {
  let index = itemIndexes.get(list);
  if (!index) {
    index = new Map(list.items.map((item) => [item.sku_id, item]));
    itemIndexes.set(list, index);
  }
  return index.get(skuId);
};

export const findProduct = (products: readonly Product[], skuId: string): Product | undefined => {
  let index = productIndexes.get(products);
  if (!index) {
    index = new Map(products.map((product) => [product.sku_id, product]));
    productIndexes.set(products, index);
  }
  return index.get(skuId);
};

const listIndexes = new WeakMap<PricingCatalog, Map<string, PriceList>>();

/** Every price list of a catalog by id (primary, per currency, per customer group), built once per catalog. */
const listById = (catalog: PricingCatalog, id: string): PriceList | undefined => {
  let index = listIndexes.get(catalog);
  if (!index) {
    const lists = [
      catalog.pricelist,
      ...(catalog.currency_pricelists ?? []),
      ...(catalog.group_pricelists ?? []),
    ];
    index = new Map(lists.map((list) => [list.pricelist_id, list]));
    listIndexes.set(catalog, index);
  }
  return index.get(id);
};

/** A derived list's price for a SKU it does not list itself, with each figure of its derivation. */
interface DerivedPrice {
  readonly parent: PriceList;
  /** The parent's item: its model, tiers, tax class, floor and bundle are the derived list's. */
  readonly item: PriceItem;
  readonly factor: Decimal;
  /** The parent's unit price for the quantity, in the parent's currency. */
  readonly native: Decimal;
  /** … in the basket currency at the client rate. */
  readonly inCurrency: Decimal;
  /** … times the factor, at 9 decimals. */
  readonly adjusted: Decimal;
  /** … with the region's charm ending (when it has one and the product takes one). */
  readonly charmed: Decimal;
  /** … rounded to the currency's minor units in the display rule's mode: the derived price. */
  readonly price: Decimal;
}

/**
 * The price a derived list gives a SKU it does not list itself: the parent's unit price (tier for the quantity)
 * in the basket currency, × (1 + adjustment_percent / 100), then the region's charm ending and the display
 * rule's rounding to minor units. Computed from the parent of the same release at pricing time, so the derived
 * list follows every change of its parent. A stored-value product (`faceValue`) is only converted and rounded.
 * Undefined when the list is not derived or its parent lacks the SKU.
 */
const derivedPrice = (
  context: ResolutionContext,
  list: PriceList,
  skuId: string,
  quantity: number,
  faceValue: boolean,
): DerivedPrice | undefined => {
  const derivation = list.derived_from;
  const parent = derivation ? listById(context.catalog, derivation.pricelist_id) : undefined;
  const item = parent ? findItem(parent, skuId) : undefined;
  if (!derivation || !parent || !item) return undefined;
  const native = modelUnitPrice(item, quantity);
  const inCurrency = context.convert(native, parent.base_currency);
  // A stored-value product keeps its face value: converted, never adjusted nor charm-priced.
  const factor = faceValue ? ONE : ONE.plus(dec(derivation.adjustment_percent).dividedBy(100));
  const adjusted = step(inCurrency.times(factor));
  const charm = faceValue || context.isCrypto ? null : context.charm;
  const charmed = charm ? applyCharm(adjusted, charm, context.minorUnits) : adjusted;
  const price = round(charmed, context.minorUnits, context.displayMode ?? 'HALF_UP');
  return { parent, item, factor, native, inCurrency, adjusted, charmed, price };
};

/** The group targets of a catalog (C29), by group: overrides and price lists. Built once per catalog object. */
interface GroupTargets {
  readonly overrides: ReadonlyMap<string, readonly Override[]>;
  readonly lists: ReadonlyMap<string, readonly PriceList[]>;
}

const groupIndexes = new WeakMap<PricingCatalog, GroupTargets>();

const groupTargetsOf = (catalog: PricingCatalog): GroupTargets => {
  let index = groupIndexes.get(catalog);
  if (!index) {
    const overrides = new Map<string, Override[]>();
    for (const override of catalog.overrides ?? []) {
      if (!('customer_group' in override.target)) continue;
      const group = override.target.customer_group;
      overrides.set(group, [...(overrides.get(group) ?? []), override]);
    }
    const lists = new Map<string, PriceList[]>();
    for (const list of catalog.group_pricelists ?? []) {
      if (list.customer_group === undefined) continue;
      lists.set(list.customer_group, [...(lists.get(list.customer_group) ?? []), list]);
    }
    index = { overrides, lists };
    groupIndexes.set(catalog, index);
  }
  return index;
};

interface GroupCandidate {
  readonly customer_group: string;
  readonly source: 'override' | 'pricelist';
  readonly id: string;
  readonly priority: number;
  readonly price: Decimal;
  /** Why the candidate could not price (explanation only): then it has no price and never wins. */
  readonly refused?: string;
}

/** Lowest price first; ties: higher priority, then the smaller id, then the group; refused ones last. */
const byBestPrice = (a: GroupCandidate, b: GroupCandidate): number => {
  // A candidate that could not price is listed last (explanations only).
  if ((a.refused === undefined) !== (b.refused === undefined)) return a.refused === undefined ? -1 : 1;
  const price = a.price.comparedTo(b.price);
  if (price !== 0) return price;
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return a.customer_group < b.customer_group ? -1 : a.customer_group > b.customer_group ? 1 : 0;
};

/**
 * C29: what each of the buyer's groups offers for this SKU — every override targeting the group in the basket
 * currency (on the price everyone gets before overrides), and every group price list in force that lists the SKU
 * (its tier, converted and charm-priced like any list for another currency). A group list no rate reaches is
 * not applicable (listed as refused when explaining).
 */
const groupCandidates = (
  context: ResolutionContext,
  groups: ReadonlySet<string>,
  skuId: string,
  quantity: number,
  listPrice: Decimal,
  faceValue: boolean,
): GroupCandidate[] => {
  const targets = groupTargetsOf(context.catalog);
  const candidates: GroupCandidate[] = [];
  for (const group of groups) {
    for (const override of targets.overrides.get(group) ?? []) {
      if (override.currency !== context.currency) continue;
      candidates.push({
        customer_group: group,
        source: 'override',
        id: override.override_id,
        priority: override.priority,
        price: step(applyOverride(listPrice, override)),
      });
    }
    for (const list of targets.lists.get(group) ?? []) {
      if (!inForce(list, context.at)) continue;
      const item = findItem(list, skuId);
      if (!item && !list.derived_from) continue;
      let price: Decimal;
      try {
        const priced = item
          ? listedPrice(context, list.base_currency, modelUnitPrice(item, quantity), faceValue)
          : derivedPrice(context, list, skuId, quantity, faceValue)?.price;
        if (priced === undefined) continue;
        price = priced;
      } catch (error) {
        if (!(error instanceof PricingError)) throw error;
        if (!context.trace) continue;
        candidates.push({
          customer_group: group,
          source: 'pricelist',
          id: list.pricelist_id,
          priority: 0,
          price: ZERO_PRICE,
          refused: error.message,
        });
        continue;
      }
      candidates.push({
        customer_group: group,
        source: 'pricelist',
        id: list.pricelist_id,
        priority: 0,
        price: step(price),
      });
    }
  }
  return candidates;
};

const ZERO_PRICE = new Decimal(0);

/** A listed price in the basket currency: converted at the client rate, then charm-priced, when from another. */
const listedPrice = (
  context: ResolutionContext,
  from: string,
  native: Decimal,
  faceValue: boolean,
): Decimal => {
  if (from === context.currency) return native;
  const converted = context.convert(native, from);
  return context.charm && !faceValue && !context.isCrypto
    ? applyCharm(converted, context.charm, context.minorUnits)
    : converted;
};

const describeOverride = (override: Override): ExplainFigures => ({
  override_id: override.override_id,
  target: { ...override.target },
  priority: override.priority,
  ...('price' in override.price_or_markup
    ? { price: override.price_or_markup.price }
    : { markup_percent: override.price_or_markup.markup_percent }),
});

/** The unit price of one SKU in the basket currency, with everything step 1 decides. */
export const resolveItem = (
  context: ResolutionContext,
  skuId: string,
  quantity: number,
  line = 1,
): ResolvedItem => {
  const { catalog, currency, trace } = context;
  const baseItem = findItem(catalog.pricelist, skuId);
  if (!baseItem) throw new PricingError('unknown_sku', 'pricelist', `unknown SKU ${skuId}`);
  const product = findProduct(catalog.products, skuId);
  const policy = product?.region_policies?.find((candidate) => candidate.region === context.region);
  if (policy && !policy.sellable) {
    throw new PricingError('not_sellable', 'region_policy', `${skuId} is not sold in ${context.region}`);
  }
  const list = sourceList(catalog, currency, context.at);
  if (catalog.strategy.kind === 'price_lists' && !list) {
    const dormant = (catalog.currency_pricelists ?? []).some(
      (candidate) => candidate.base_currency === currency,
    );
    throw dormant
      ? new PricingError(
          'no_price',
          'pricelist_in_force',
          `no price list in ${currency} in force at ${context.at}`,
        )
      : new PricingError('currency_not_available', 'price_lists', `no price list in ${currency}`);
  }
  const listed = list ? findItem(list, skuId) : undefined;
  // A stored-value product (gift card) is sold at face value: no charm ending, no list adjustment.
  const faceValue = isStoredValue(product);
  const charm = faceValue ? null : context.charm;
  const derived = list && !listed ? derivedPrice(context, list, skuId, quantity, faceValue) : undefined;
  if (list && !listed && !derived && catalog.strategy.kind === 'price_lists') {
    throw new PricingError('no_price', 'price_lists', `no ${currency} price for ${skuId}`);
  }
  const item = listed ?? derived?.item ?? baseItem;
  const nativePrice = derived ? derived.native : modelUnitPrice(item, quantity);
  // Whether the price came from another currency: a derived price is already in the basket currency.
  const converted = !derived && item.base_currency !== currency;
  if (trace) {
    const source = derived ? derived.parent : listed && list ? list : catalog.pricelist;
    trace.add({
      step: 'base',
      rule: 'price_list',
      line,
      input: { sku_id: skuId, quantity, strategy: catalog.strategy.kind, currency },
      output: { unit_price: figure(dec(item.base_price)), currency: item.base_currency },
      detail:
        `${skuId} from price list ${source.pricelist_id} (version ${source.version}, ${source.base_currency}, ` +
        `in force from ${source.effective_from}${source.effective_to ? ` to ${source.effective_to}` : ''}); ` +
        `pricing model ${item.pricing_model}, strategy ${catalog.strategy.kind}` +
        (derived && list ? `; the parent of ${list.pricelist_id}, which derives its price` : ''),
    });
    if (item.pricing_model === 'tiered' && item.tiers?.length) {
      const tier = reachedTier(item, item.tiers, quantity);
      trace.add({
        step: 'base',
        rule: 'tier',
        line,
        input: { unit_price: figure(dec(item.base_price)), quantity },
        output: { unit_price: figure(nativePrice), min_quantity: tier.min_quantity },
        detail:
          tier.min_quantity === 0
            ? `quantity ${quantity} reaches no tier: the base price applies`
            : `quantity ${quantity} reaches the tier from ${tier.min_quantity}`,
      });
    }
  }
  let unitPrice = converted ? context.convert(nativePrice, item.base_currency) : nativePrice;
  if (trace && (converted || (derived && item.base_currency !== currency))) {
    trace.add({
      step: 'base',
      rule: 'fx_conversion',
      line,
      input: { unit_price: figure(nativePrice), currency: item.base_currency },
      ...conversionStep(context, item.base_currency, derived ? derived.inCurrency : unitPrice),
    });
  }
  if (derived && list) {
    unitPrice = derived.price;
    if (trace) explainDerivation(context, trace, line, list, derived, faceValue);
  }
  if (converted && charm && !context.isCrypto) {
    const before = unitPrice;
    unitPrice = applyCharm(unitPrice, charm, context.minorUnits);
    trace?.add({
      step: 'base',
      rule: 'charm',
      line,
      input: { unit_price: figure(before) },
      output: { unit_price: figure(unitPrice) },
      detail: before.eq(unitPrice)
        ? `already ends in ${charm} (region ${context.region})`
        : `charm pricing of region ${context.region}: the nearest price ending in ${charm}`,
    });
  }
  const override = chooseOverride(catalog.overrides ?? [], {
    sku_id: skuId,
    ...(product?.category ? { category: product.category } : {}),
    ...(context.tenant ? { tenant: context.tenant } : {}),
    ...(context.campaign ? { campaign: context.campaign } : {}),
    currency,
  });
  const listPrice = unitPrice;
  if (override) {
    unitPrice = applyOverride(unitPrice, override);
    trace?.add({
      step: 'base',
      rule: 'override',
      line,
      input: { unit_price: figure(listPrice) },
      output: { unit_price: figure(step(unitPrice)), ...describeOverride(override) },
      detail:
        `override ${override.override_id} (priority ${override.priority}, target ` +
        `${Object.entries(override.target)
          .map(([kind, value]) => `${kind} ${value}`)
          .join('')}): ` +
        ('price' in override.price_or_markup
          ? `price ${override.price_or_markup.price} ${override.currency}`
          : `markup ${override.price_or_markup.markup_percent} %`),
    });
  }
  let overrideId = override?.override_id;
  let customerGroup: string | undefined;
  const groups = context.customerGroups;
  if (groups && groups.size > 0) {
    const everyone = step(unitPrice);
    const candidates = groupCandidates(context, groups, skuId, quantity, listPrice, faceValue).sort(
      byBestPrice,
    );
    const best = candidates.find((candidate) => candidate.refused === undefined);
    // A group changes the price only when it makes it lower than everyone's.
    const winner = best?.price.lessThan(everyone) === true ? best : undefined;
    if (winner) {
      unitPrice = winner.price;
      customerGroup = winner.customer_group;
      overrideId = winner.source === 'override' ? winner.id : overrideId;
    }
    trace?.add({
      step: 'base',
      rule: 'customer_group',
      line,
      input: { unit_price: figure(everyone), customer_groups: [...groups].sort() },
      output: {
        unit_price: figure(step(unitPrice)),
        customer_group: winner ? winner.customer_group : null,
        candidates: candidates.map((candidate) => ({
          customer_group: candidate.customer_group,
          source: candidate.source,
          id: candidate.id,
          priority: candidate.priority,
          ...(candidate.refused === undefined
            ? { unit_price: figure(candidate.price) }
            : { refused: candidate.refused }),
        })),
      },
      detail: winner
        ? `customer group ${winner.customer_group} wins: ${winner.source} ${winner.id} gives ${figure(winner.price)}, ` +
          `below ${figure(everyone)} (lowest price; ties by priority, then id)`
        : candidates.length === 0
          ? 'no price list or override of the catalog targets these customer groups'
          : `no customer group gives less than ${figure(everyone)}`,
    });
  }
  // The floor follows the price: converted from the item's currency, and adjusted like a derived price.
  const floorIn = item.min_price
    ? item.base_currency === currency
      ? dec(item.min_price)
      : context.convert(dec(item.min_price), item.base_currency)
    : undefined;
  const minUnitPrice = floorIn ? (derived ? step(floorIn.times(derived.factor)) : floorIn) : ZERO_PRICE;

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
    if (trace) {
      const total = bundleWeights.reduce((acc, position) => acc.plus(position.weight), new Decimal(0));
      trace.add({
        step: 'base',
        rule: 'bundle_split',
        line,
        input: {
          positions: bundleWeights.map((position) => ({
            sku_id: position.sku_id,
            quantity: position.quantity,
            weight: figure(position.weight),
          })),
        },
        output: {
          shares: bundleWeights.map((position) => ({
            sku_id: position.sku_id,
            share: figure(total.isZero() ? new Decimal(0) : step(position.weight.dividedBy(total))),
          })),
        },
        detail:
          `rule 5: the bundle's price is split over its positions in proportion to their standalone prices ` +
          `(${catalog.pricelist.base_currency}, before discount); the amounts are allocated in step 5`,
      });
    }
  }
  return {
    item,
    product,
    unitPrice: step(unitPrice),
    minUnitPrice: step(minUnitPrice),
    converted,
    ...(overrideId ? { overrideId } : {}),
    ...(customerGroup ? { customerGroup } : {}),
    ...(bundleWeights ? { bundleWeights } : {}),
  };
};

/** A derived list's step: the adjustment of its parent's price, then the region's charm ending and rounding. */
const explainDerivation = (
  context: ResolutionContext,
  trace: ExplainTrace,
  line: number,
  list: PriceList,
  derived: DerivedPrice,
  faceValue: boolean,
): void => {
  const percent = faceValue ? '0' : (list.derived_from?.adjustment_percent ?? '0');
  const charm = faceValue || context.isCrypto ? null : context.charm;
  const mode = context.displayMode ?? 'HALF_UP';
  trace.add({
    step: 'base',
    rule: 'derived_list',
    line,
    input: {
      pricelist_id: list.pricelist_id,
      parent_pricelist_id: derived.parent.pricelist_id,
      unit_price: figure(derived.inCurrency),
      adjustment_percent: percent,
    },
    output: {
      adjusted: figure(derived.adjusted),
      ...(derived.charmed.eq(derived.adjusted) ? {} : { charmed: figure(derived.charmed) }),
      unit_price: figure(derived.price),
      rounding_mode: mode,
    },
    detail:
      `price list ${list.pricelist_id} derives from ${derived.parent.pricelist_id}: ${figure(derived.inCurrency)} ` +
      `× (1 ${percent.startsWith('-') ? '−' : '+'} ${percent.replace(/^[-+]/, '')} %) = ${figure(derived.adjusted)}` +
      (faceValue ? ' (a stored-value product keeps its face value: no adjustment, no charm ending)' : '') +
      (charm
        ? `, charm pricing of region ${context.region} (ending ${charm}) gives ${figure(derived.charmed)}`
        : '') +
      `, rounded ${mode} to ${context.minorUnits} decimals`,
  });
};

/** Output and detail of a conversion step: the pair, published rate, markup, client rate and `fx_version`. */
const conversionStep = (
  context: ResolutionContext,
  from: string,
  converted: Decimal,
): { output: ExplainFigures; detail: string } => {
  // Set whenever a trace is (the engine gives both or neither).
  const rate = (context.rateFigures as (currency: string) => ExplainFigures)(from);
  return {
    output: { unit_price: figure(converted), currency: context.currency, ...rate },
    detail:
      `converted ${from}→${context.currency} at the client rate ${String(rate.client_rate)} = published ` +
      `${String(rate.published_rate)} × (1 + ${String(rate.fx_markup_bps)} bps) of ${String(rate.fx_version)}, ` +
      'kept at 9 decimals',
  };
};
