/**
 * Three-way merge of a change request onto what is in force when it is published (C23). A change is reviewed
 * against the publication it was based on; meanwhile other changes (or automatic rate ticks) may publish. Each
 * top-level section merges on its own: a section the change left as it was takes what is in force now; a section
 * nobody else touched takes the change's; a section both changed differently is a conflict, and the change is
 * stale. Exchange rates (and FX overrides) merge per pair, so automatic ticks of other pairs never make a rate
 * change stale.
 */
import { canonicalJson, type Json } from '../money/canonical';

export type Document = Readonly<Record<string, unknown>>;

export type MergeResult =
  | { readonly merged: Record<string, unknown> }
  | { readonly conflicts: readonly string[] };

const same = (a: unknown, b: unknown): boolean =>
  a === b || (a !== undefined && b !== undefined && canonicalJson(a as Json) === canonicalJson(b as Json));

type Rate = { readonly pair: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ratesOf = (value: unknown): Map<string, unknown> | undefined => {
  if (!Array.isArray(value)) return undefined;
  const rates = new Map<string, unknown>();
  for (const rate of value as Rate[]) {
    if (!isRecord(rate) || typeof rate.pair !== 'string' || rates.has(rate.pair)) return undefined;
    rates.set(rate.pair, rate);
  }
  return rates;
};

/** One value, three ways; `undefined` in the result means "absent". */
const mergeValue = (
  path: string,
  base: unknown,
  proposed: unknown,
  current: unknown,
  conflicts: string[],
): unknown => {
  if (same(proposed, base)) return current;
  if (same(current, base) || same(proposed, current)) return proposed;
  conflicts.push(path);
  return proposed;
};

/** A list of rates keyed by `pair`, merged pair by pair, in the order: current pairs, then new ones. */
const mergeRates = (
  path: string,
  base: unknown,
  proposed: unknown,
  current: unknown,
  conflicts: string[],
): unknown => {
  // A list only one side changed is taken whole (as it is, in its order, absent when removed).
  if (same(proposed, base)) return current;
  if (same(current, base) || same(proposed, current)) return proposed;
  const [b, p, c] = [ratesOf(base ?? []), ratesOf(proposed ?? []), ratesOf(current ?? [])];
  if (!b || !p || !c) return mergeValue(path, base, proposed, current, conflicts);
  const pairs = [...new Set([...c.keys(), ...p.keys(), ...b.keys()])];
  const merged = pairs
    .map((pair) => mergeValue(`${path}[${pair}]`, b.get(pair), p.get(pair), c.get(pair), conflicts))
    .filter((rate) => rate !== undefined);
  return merged.length === 0 && (proposed === undefined || current === undefined) ? undefined : merged;
};

const mergeFxRates = (base: unknown, proposed: unknown, current: unknown, conflicts: string[]): unknown => {
  if (!isRecord(base) || !isRecord(proposed) || !isRecord(current)) {
    return mergeValue('fx_rates', base, proposed, current, conflicts);
  }
  const merged: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(current), ...Object.keys(proposed), ...Object.keys(base)])) {
    // Rates and overrides are keyed by pair: each pair merges on its own.
    const value =
      key === 'rates' || key === 'overrides'
        ? mergeRates(`fx_rates.${key}`, base[key], proposed[key], current[key], conflicts)
        : mergeValue(`fx_rates.${key}`, base[key], proposed[key], current[key], conflicts);
    if (value !== undefined) merged[key] = value;
  }
  return merged;
};

/** Merges the change (`proposed`, made against `base`) onto `current`. */
export const mergeChange = (base: Document, proposed: Document, current: Document): MergeResult => {
  const conflicts: string[] = [];
  const merged: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(current), ...Object.keys(proposed), ...Object.keys(base)])) {
    if (key === 'effective_from') continue;
    const value =
      key === 'fx_rates'
        ? mergeFxRates(base[key], proposed[key], current[key], conflicts)
        : key === 'settlement_rates'
          ? mergeRates(key, base[key], proposed[key], current[key], conflicts)
          : mergeValue(key, base[key], proposed[key], current[key], conflicts);
    if (value !== undefined) merged[key] = value;
  }
  return conflicts.length > 0 ? { conflicts } : { merged };
};
