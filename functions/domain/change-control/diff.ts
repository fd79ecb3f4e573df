/**
 * What a change request changes, against what is in force (C23): prices per SKU, price list and currency with
 * the move in percent, products, tax rate components, exchange rates and promotions. Pure: both documents come
 * in as plain data (the import format, money and rates as decimal strings).
 */
import { canonicalJson, type Json } from '../money/canonical';
import { Decimal, dec, ONE } from '../money/decimal';
import { step } from '../money/rounding';
import { canonicalPairOf } from './patch';

/** The parts of an import document the diff reads; anything else is compared as a whole section. */
export interface DiffableDocument {
  readonly products?: readonly { readonly sku_id: string }[];
  readonly pricelists?: readonly {
    readonly pricelist_id: string;
    readonly items: readonly {
      readonly sku_id: string;
      readonly base_price: string;
      readonly base_currency: string;
      readonly min_price?: string;
      readonly tiers?: readonly { readonly min_quantity: number; readonly unit_price: string }[];
    }[];
  }[];
  readonly tax_rules?: readonly {
    readonly region: string;
    readonly rates: Readonly<Record<string, readonly { readonly name: string; readonly rate: string }[]>>;
  }[];
  readonly fx_rates?: {
    readonly rates: readonly { readonly pair: string; readonly rate: string }[];
    readonly overrides?: readonly FxOverrideEntry[];
  };
  readonly settlement_rates?: readonly { readonly pair: string; readonly rate: string }[];
  readonly promotions?: readonly { readonly promo_id: string }[];
  readonly [section: string]: unknown;
}

export interface PriceChange {
  readonly pricelist_id: string;
  readonly sku_id: string;
  readonly currency: string;
  readonly from?: string;
  readonly to?: string;
  /** Signed move from `from` to `to` in percent, two decimals (`"-12.50"`); only on changed prices. */
  readonly move_percent?: string;
}

interface FxOverrideEntry {
  readonly pair: string;
  readonly rate: string;
  readonly expires_at: string;
}

export interface RateChange {
  readonly pair: string;
  readonly from?: string;
  readonly to?: string;
  readonly move_percent?: string;
  /**
   * `settlement` for a settlement rate (rule 14), `override` for a manual override of a display rate (its move is
   * against the published rate: `from` the published rate and `to` the override when one is set or changed, the
   * other way round when one is removed), else the display rate set.
   */
  readonly set: 'display' | 'settlement' | 'override';
  /** An override set or changed: until when it is in force. */
  readonly expires_at?: string;
}

export interface TaxChange {
  readonly region: string;
  readonly tax_class: string;
  readonly component: string;
  readonly from?: string;
  readonly to?: string;
}

export interface IdChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export interface CatalogDiff {
  /** Top-level sections whose content differs (`products`, `pricelists`, `tax_rules`, `rate_policy`…). */
  readonly sections_changed: readonly string[];
  readonly prices: {
    readonly added: readonly PriceChange[];
    readonly removed: readonly PriceChange[];
    readonly changed: readonly PriceChange[];
  };
  readonly products: IdChanges;
  readonly promotions: IdChanges;
  readonly tax_rates: readonly TaxChange[];
  readonly fx_rates: readonly RateChange[];
}

const sameJson = (a: unknown, b: unknown): boolean =>
  (a === undefined && b === undefined) ||
  (a !== undefined && b !== undefined && canonicalJson(a as Json) === canonicalJson(b as Json));

/** Signed move in percent with two decimals (a fall that rounds to zero is "0.00"); none from zero. */
export const movePercent = (from: string, to: string): string | undefined => {
  const base = dec(from);
  if (base.isZero()) return undefined;
  // Half away from zero, named explicitly: a display figure (the guardrail compares exact values).
  const move = dec(to).minus(base).div(base).times(100).toFixed(2, Decimal.ROUND_HALF_UP);
  return move === '-0.00' ? '0.00' : move;
};

const byId = <T>(values: readonly T[] | undefined, idOf: (value: T) => string): Map<string, T> =>
  new Map((values ?? []).map((value) => [idOf(value), value]));

const idChanges = <T>(
  before: readonly T[] | undefined,
  after: readonly T[] | undefined,
  idOf: (value: T) => string,
): IdChanges => {
  const old = byId(before, idOf);
  const fresh = byId(after, idOf);
  return {
    added: [...fresh.keys()].filter((id) => !old.has(id)),
    removed: [...old.keys()].filter((id) => !fresh.has(id)),
    changed: [...fresh.entries()]
      .filter(([id, value]) => old.has(id) && !sameJson(old.get(id), value))
      .map(([id]) => id),
  };
};

type Item = NonNullable<DiffableDocument['pricelists']>[number]['items'][number];

const priceItems = (document: DiffableDocument | undefined): Map<string, { list: string; item: Item }> => {
  const items = new Map<string, { list: string; item: Item }>();
  for (const list of document?.pricelists ?? []) {
    for (const item of list.items) {
      items.set(`${list.pricelist_id}\u0000${item.sku_id}`, { list: list.pricelist_id, item });
    }
  }
  return items;
};

const diffPrices = (current: DiffableDocument | undefined, proposed: DiffableDocument) => {
  const before = priceItems(current);
  const after = priceItems(proposed);
  const entry = (list: string, item: Item) => ({
    pricelist_id: list,
    sku_id: item.sku_id,
    currency: item.base_currency,
  });
  const added: PriceChange[] = [];
  const changed: PriceChange[] = [];
  for (const [key, { list, item }] of after) {
    const old = before.get(key)?.item;
    if (!old) {
      added.push({ ...entry(list, item), to: item.base_price });
    } else if (!dec(old.base_price).eq(dec(item.base_price)) || old.base_currency !== item.base_currency) {
      const move =
        old.base_currency === item.base_currency ? movePercent(old.base_price, item.base_price) : undefined;
      changed.push({
        ...entry(list, item),
        from: old.base_price,
        to: item.base_price,
        ...(move === undefined ? {} : { move_percent: move }),
      });
    }
  }
  const removed = [...before.entries()]
    .filter(([key]) => !after.has(key))
    .map(([, { list, item }]) => ({ ...entry(list, item), from: item.base_price }));
  return { added, removed, changed };
};

const taxComponents = (document: DiffableDocument | undefined): Map<string, TaxChange> => {
  const components = new Map<string, TaxChange>();
  for (const rule of document?.tax_rules ?? []) {
    for (const [taxClass, list] of Object.entries(rule.rates)) {
      for (const component of list) {
        components.set(`${rule.region}\u0000${taxClass}\u0000${component.name}`, {
          region: rule.region,
          tax_class: taxClass,
          component: component.name,
          to: component.rate,
        });
      }
    }
  }
  return components;
};

const diffTaxRates = (current: DiffableDocument | undefined, proposed: DiffableDocument): TaxChange[] => {
  const before = taxComponents(current);
  const after = taxComponents(proposed);
  const changes: TaxChange[] = [];
  for (const [key, component] of after) {
    const old = before.get(key);
    if (!old) changes.push(component);
    else if (!dec(old.to ?? '0').eq(dec(component.to ?? '0'))) changes.push({ ...component, from: old.to });
  }
  for (const [key, component] of before) {
    if (!after.has(key)) {
      const { to, ...rest } = component;
      changes.push({ ...rest, from: to });
    }
  }
  return changes;
};

const diffRates = (
  before: readonly { pair: string; rate: string }[] | undefined,
  after: readonly { pair: string; rate: string }[] | undefined,
  set: RateChange['set'],
): RateChange[] => {
  const old = byId(before, (rate) => rate.pair);
  const fresh = byId(after, (rate) => rate.pair);
  const changes: RateChange[] = [];
  for (const [pair, rate] of fresh) {
    const previous = old.get(pair);
    if (!previous) changes.push(rateMove(pair, undefined, rate.rate, set));
    else if (!dec(previous.rate).eq(dec(rate.rate)))
      changes.push(rateMove(pair, previous.rate, rate.rate, set));
  }
  for (const [pair, rate] of old)
    if (!fresh.has(pair)) changes.push(rateMove(pair, rate.rate, undefined, set));
  return changes;
};

/** A move from → to as a rate change: with the move in percent when both are known. */
const rateMove = (
  pair: string,
  from: string | undefined,
  to: string | undefined,
  set: RateChange['set'],
): RateChange => {
  const move = from !== undefined && to !== undefined ? movePercent(from, to) : undefined;
  return {
    pair,
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(move === undefined ? {} : { move_percent: move }),
    set,
  };
};

/** The published display rate of a pair in its direction (the inverse of the opposite pair at 9 decimals). */
const publishedRate = (
  rates: readonly { pair: string; rate: string }[] | undefined,
  pair: string,
): string | undefined => {
  const wanted = canonicalPairOf(pair);
  const opposite = wanted?.split('→').reverse().join('→');
  for (const rate of rates ?? []) {
    const canonical = canonicalPairOf(rate.pair);
    if (canonical === wanted) return rate.rate;
    if (canonical === opposite && !dec(rate.rate).isZero())
      return step(ONE.dividedBy(dec(rate.rate))).toString();
  }
  return undefined;
};

/**
 * Overrides set, changed or removed, each as a move of the pair's reference rate against the published rate of
 * the proposed document (so the rate guardrail judges an override like a rate change).
 */
const diffOverrides = (current: DiffableDocument | undefined, proposed: DiffableDocument): RateChange[] => {
  const old = byId(current?.fx_rates?.overrides, (override) => override.pair);
  const fresh = byId(proposed.fx_rates?.overrides, (override) => override.pair);
  const published = (pair: string) => publishedRate(proposed.fx_rates?.rates, pair);
  const changes: RateChange[] = [];
  for (const [pair, override] of fresh) {
    if (sameJson(old.get(pair), override)) continue;
    changes.push({
      ...rateMove(pair, published(pair), override.rate, 'override'),
      expires_at: override.expires_at,
    });
  }
  for (const [pair, override] of old) {
    if (!fresh.has(pair)) changes.push(rateMove(pair, override.rate, published(pair), 'override'));
  }
  return changes;
};

/** The diff of a proposed document against the one in force (`undefined` when nothing is published yet). */
export const diffCatalog = (
  current: DiffableDocument | undefined,
  proposed: DiffableDocument,
): CatalogDiff => {
  const sections = new Set([...Object.keys(current ?? {}), ...Object.keys(proposed)]);
  return {
    sections_changed: [...sections]
      .filter((section) => section !== 'effective_from' && !sameJson(current?.[section], proposed[section]))
      .sort(),
    prices: diffPrices(current, proposed),
    products: idChanges(current?.products, proposed.products, (product) => product.sku_id),
    promotions: idChanges(current?.promotions, proposed.promotions, (promotion) => promotion.promo_id),
    tax_rates: diffTaxRates(current, proposed),
    fx_rates: [
      ...diffRates(current?.fx_rates?.rates, proposed.fx_rates?.rates, 'display'),
      ...diffOverrides(current, proposed),
      ...diffRates(current?.settlement_rates, proposed.settlement_rates, 'settlement'),
    ],
  };
};
