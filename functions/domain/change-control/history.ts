/**
 * Price and rate history (C30): which keyed entries of a catalog part a new version changed. A SKU's price item
 * is one entry per price list (`subject` `sku:<sku_id>`, `scope` the price list id); a rate one entry per rate set
 * (`subject` `pair:<FROM>-<TO>`, `scope` `display` or `settlement`), a manual FX override of a pair one entry of
 * scope `override`. An entry changed when it was added, removed,
 * or its RFC 8785 form differs (any field: a tier, `min_price`, a rate's source or `effective_from`). Pure: parts
 * come in as plain data.
 */
import { canonicalJson, type Json } from '../money/canonical';
import { canonicalPairOf, pairSegment } from './patch';

/** The part kinds that hold history subjects: commercial (price items) and fx (rates). */
export type HistoryPartKind = 'commercial' | 'fx';

export type HistoryChangeType = 'added' | 'changed' | 'removed';

export interface HistoryChange {
  /** `sku:<sku_id>` or `pair:<FROM>-<TO>`. */
  readonly subject: string;
  /** The price list id, or `display` / `settlement` / `override` for a rate. */
  readonly scope: string;
  /** The price list's currency (price items only). */
  readonly currency?: string;
  readonly change: HistoryChangeType;
  /** The entry in the new version; absent when it was removed. */
  readonly value?: unknown;
}

interface KeyedEntry {
  readonly subject: string;
  readonly scope: string;
  readonly currency?: string;
  readonly value: unknown;
  readonly canonical: string;
}

export const skuSubject = (skuId: string): string => `sku:${skuId}`;

/** The subject of a pair (`EUR→USD`, `EUR->USD` or `EUR-USD`), or undefined when it is no pair. */
export const pairSubject = (pair: string): string | undefined => {
  const canonical = canonicalPairOf(pair);
  return canonical ? `pair:${pairSegment(canonical)}` : undefined;
};

/** The part kind a subject's entries live in. */
export const partKindOfSubject = (subject: string): HistoryPartKind =>
  subject.startsWith('pair:') ? 'fx' : 'commercial';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const listOf = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);

const field = (value: unknown, name: string): unknown => (isRecord(value) ? value[name] : undefined);

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Every keyed entry of a part (only those of `subject` when given): price items, or display and settlement rates. */
const keyedEntries = (kind: HistoryPartKind, content: unknown, subject?: string): Map<string, KeyedEntry> => {
  const entries = new Map<string, KeyedEntry>();
  if (!isRecord(content)) return entries;
  const add = (entry: Omit<KeyedEntry, 'canonical'>) => {
    if (subject !== undefined && entry.subject !== subject) return;
    entries.set(`${entry.subject}\u0000${entry.scope}`, {
      ...entry,
      canonical: canonicalJson(entry.value as Json),
    });
  };
  if (kind === 'commercial') {
    const wanted = subject?.startsWith('sku:') ? subject.slice(4) : undefined;
    for (const list of listOf(content.pricelists)) {
      if (!isRecord(list)) continue;
      const listId = text(list.pricelist_id);
      if (listId === undefined) continue;
      for (const item of listOf(list.items)) {
        const sku = text(field(item, 'sku_id'));
        if (sku === undefined || (wanted !== undefined && sku !== wanted)) continue;
        const currency = text(field(item, 'base_currency')) ?? text(list.base_currency);
        add({ subject: skuSubject(sku), scope: listId, ...(currency ? { currency } : {}), value: item });
      }
    }
    return entries;
  }
  const fx = isRecord(content.fx_rates) ? content.fx_rates : undefined;
  const rateSets: readonly (readonly [string, unknown])[] = [
    ['display', fx?.rates],
    ['settlement', content.settlement_rates],
    ['override', fx?.overrides],
  ];
  for (const [scope, rates] of rateSets) {
    for (const rate of listOf(rates)) {
      const pair = text(field(rate, 'pair'));
      const rateSubject = pair === undefined ? undefined : pairSubject(pair);
      if (rateSubject !== undefined) add({ subject: rateSubject, scope, value: rate });
    }
  }
  return entries;
};

/**
 * What changed from `before` (the version it replaces; undefined for the first) to `after`, entry by entry
 * (only `subject`'s entries when given). Order: subject, then scope.
 */
export const historyChanges = (
  kind: HistoryPartKind,
  before: unknown,
  after: unknown,
  subject?: string,
): HistoryChange[] => {
  const old = keyedEntries(kind, before, subject);
  const fresh = keyedEntries(kind, after, subject);
  const changes: HistoryChange[] = [];
  const meta = (entry: KeyedEntry) => ({
    subject: entry.subject,
    scope: entry.scope,
    ...(entry.currency ? { currency: entry.currency } : {}),
  });
  for (const [key, entry] of fresh) {
    const previous = old.get(key);
    if (!previous) changes.push({ ...meta(entry), change: 'added', value: entry.value });
    else if (previous.canonical !== entry.canonical) {
      changes.push({ ...meta(entry), change: 'changed', value: entry.value });
    }
  }
  for (const [key, entry] of old) {
    if (!fresh.has(key)) changes.push({ ...meta(entry), change: 'removed' });
  }
  return changes.sort((a, b) =>
    a.subject === b.subject ? compare(a.scope, b.scope) : compare(a.subject, b.subject),
  );
};
