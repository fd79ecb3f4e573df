/**
 * Patch-sized change requests (C30): `{ op: "set" | "remove", path, value? }` operations on the catalog in force.
 * A path names entries by their ids, never by an array index, so it means the same entry whatever order the
 * lists are in and whatever was added before it:
 *
 * - `/pricelists/<pricelist_id>/items/<sku_id>`: a price item (the price list must exist);
 * - `/products/<sku_id>`, `/promotions/<promo_id>`, `/overrides/<override_id>`;
 * - `/fx_rates/rates/<FROM>-<TO>` and `/settlement_rates/<FROM>-<TO>`: a rate (`EUR-USD`; `EUR→USD` and
 *   `EUR->USD`, raw or percent-encoded, name the same pair);
 * - `/fx_rates/overrides/<FROM>-<TO>`: a manual rate override of a pair (`fx_rates.overrides`, created by `set`);
 * - `/tax_rules/<region>/rates/<tax_class>/<name>`: one component of a tax class (the region's rule must exist).
 *
 * Segments are percent-decoded. `set` replaces the entry in place or appends it (creating an absent optional
 * section or tax class); `remove` takes it out (the list stays, possibly empty). Pure: values are checked by a
 * validator the caller passes (the import schema of the entry), the document is plain data.
 */
import { canonicalJson, type Json } from '../money/canonical';

export type PatchOp = 'set' | 'remove';

export interface PatchOperation {
  readonly op: PatchOp;
  readonly path: string;
  readonly value?: unknown;
}

export type PatchTarget =
  | { readonly type: 'price_item'; readonly pricelist_id: string; readonly sku_id: string }
  | { readonly type: 'product'; readonly sku_id: string }
  | { readonly type: 'promotion'; readonly promo_id: string }
  | { readonly type: 'override'; readonly override_id: string }
  /** `pair` is canonical: `EUR→USD`. */
  | { readonly type: 'fx_rate'; readonly pair: string }
  /** A manual override of a pair's rate (`fx_rates.overrides`); `pair` is canonical. */
  | { readonly type: 'fx_override'; readonly pair: string }
  | { readonly type: 'settlement_rate'; readonly pair: string }
  | {
      readonly type: 'tax_component';
      readonly region: string;
      readonly tax_class: string;
      readonly name: string;
    };

export type PatchTargetType = PatchTarget['type'];

export type PatchDocument = Readonly<Record<string, unknown>>;

/** A refused operation: `path` is a JSON path in the request (`$.operations[2].value.base_price`). */
export interface PatchProblem {
  readonly path: string;
  readonly message: string;
}

/** Checks a value for its target's schema: the value as it is to be stored, or problems relative to it. */
export type PatchValueCheck = (
  target: PatchTarget,
  value: unknown,
) => { readonly value: unknown } | { readonly problems: readonly PatchProblem[] };

export const PATCH_PATHS: readonly string[] = [
  '/pricelists/<pricelist_id>/items/<sku_id>',
  '/products/<sku_id>',
  '/promotions/<promo_id>',
  '/overrides/<override_id>',
  '/fx_rates/rates/<FROM>-<TO>',
  '/fx_rates/overrides/<FROM>-<TO>',
  '/settlement_rates/<FROM>-<TO>',
  '/tax_rules/<region>/rates/<tax_class>/<name>',
];

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const REGION = /^[A-Z]{2}$|^\*$/;
const PAIR = /^([A-Z]{3,5})(?:->|→|-)([A-Z]{3,5})$/;

/** `EUR→USD` for `EUR-USD`, `EUR->USD` or `EUR→USD`; undefined for anything else. */
export const canonicalPairOf = (text: string): string | undefined => {
  const match = PAIR.exec(text);
  if (!match || match[1] === match[2]) return undefined;
  return `${match[1]}→${match[2]}`;
};

/** The path form of a pair: `EUR-USD` (ASCII, nothing to encode). */
export const pairSegment = (pair: string): string => pair.replace('→', '-').replace('->', '-');

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/** The target a path names, or why it names none. */
export const parsePatchPath = (path: string): PatchTarget | { readonly error: string } => {
  const unknown = { error: `unknown path; paths are ${PATCH_PATHS.join(', ')}` };
  if (!path.startsWith('/')) return unknown;
  const raw = path.slice(1).split('/');
  const segments = raw.map(decode);
  if (segments.some((segment) => segment === undefined || segment === '')) {
    return { error: 'a path segment is empty or not valid percent-encoding' };
  }
  const parts = segments as string[];
  const id = (value: string | undefined, what: string): string | { error: string } =>
    value !== undefined && ID.test(value)
      ? value
      : { error: `${what} must be an id (letters, digits, _ . : -)` };
  const [section, a, b, c, d] = parts;
  const withId = <T extends PatchTarget>(
    value: string | undefined,
    what: string,
    make: (id: string) => T,
  ): T | { error: string } => {
    const checked = id(value, what);
    return typeof checked === 'string' ? make(checked) : checked;
  };
  switch (section) {
    case 'pricelists': {
      if (parts.length !== 4 || b !== 'items') return unknown;
      const list = id(a, 'the price list');
      if (typeof list !== 'string') return list;
      return withId(c, 'the SKU', (sku_id) => ({ type: 'price_item', pricelist_id: list, sku_id }));
    }
    case 'products':
      if (parts.length !== 2) return unknown;
      return withId(a, 'the SKU', (sku_id) => ({ type: 'product', sku_id }));
    case 'promotions':
      if (parts.length !== 2) return unknown;
      return withId(a, 'the promotion', (promo_id) => ({ type: 'promotion', promo_id }));
    case 'overrides':
      if (parts.length !== 2) return unknown;
      return withId(a, 'the override', (override_id) => ({ type: 'override', override_id }));
    case 'fx_rates':
    case 'settlement_rates': {
      const inFx = section === 'fx_rates' && parts.length === 3 && (a === 'rates' || a === 'overrides');
      const pairText = section === 'fx_rates' ? (inFx ? b : undefined) : a;
      if (pairText === undefined || (section === 'settlement_rates' && parts.length !== 2)) return unknown;
      const pair = canonicalPairOf(pairText);
      if (!pair) return { error: 'the pair must be two currencies such as EUR-USD (or EUR→USD)' };
      const type =
        section === 'settlement_rates' ? 'settlement_rate' : a === 'rates' ? 'fx_rate' : 'fx_override';
      return { type, pair };
    }
    case 'tax_rules': {
      if (parts.length !== 5 || b !== 'rates') return unknown;
      if (a === undefined || !REGION.test(a)) return { error: 'the region must be such as DE (or *)' };
      const taxClass = id(c, 'the tax class');
      if (typeof taxClass !== 'string') return taxClass;
      return withId(d, 'the component', (name) => ({
        type: 'tax_component',
        region: a,
        tax_class: taxClass,
        name,
      }));
    }
    default:
      return unknown;
  }
};

/** The canonical path of a target (what the problems and stale reasons name). */
export const patchPathOf = (target: PatchTarget): string => {
  switch (target.type) {
    case 'price_item':
      return `/pricelists/${target.pricelist_id}/items/${target.sku_id}`;
    case 'product':
      return `/products/${target.sku_id}`;
    case 'promotion':
      return `/promotions/${target.promo_id}`;
    case 'override':
      return `/overrides/${target.override_id}`;
    case 'fx_rate':
      return `/fx_rates/rates/${pairSegment(target.pair)}`;
    case 'fx_override':
      return `/fx_rates/overrides/${pairSegment(target.pair)}`;
    case 'settlement_rate':
      return `/settlement_rates/${pairSegment(target.pair)}`;
    case 'tax_component':
      return `/tax_rules/${target.region}/rates/${target.tax_class}/${target.name}`;
  }
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const same = (a: unknown, b: unknown): boolean =>
  a === b || (a !== undefined && b !== undefined && canonicalJson(a as Json) === canonicalJson(b as Json));

/**
 * Where a target lives: the list holding it (undefined when its container is absent and would be created), how
 * to recognise it, its id field and value, and how to put a new list back into the document.
 */
interface Slot {
  readonly list: readonly unknown[] | undefined;
  readonly matches: (element: unknown) => boolean;
  readonly idField: string;
  readonly id: string;
  readonly write: (list: readonly unknown[]) => Record<string, unknown>;
}

const listOf = (value: unknown): readonly unknown[] | undefined => (Array.isArray(value) ? value : undefined);

const field = (element: unknown, name: string): unknown => (isRecord(element) ? element[name] : undefined);

const byField =
  (name: string, id: string) =>
  (element: unknown): boolean =>
    field(element, name) === id;

const byPair =
  (pair: string) =>
  (element: unknown): boolean => {
    const text = field(element, 'pair');
    return typeof text === 'string' && canonicalPairOf(text) === pair;
  };

/** A top-level list section (`products`, `promotions`, …); an absent optional one is created by `set`. */
const sectionSlot = (
  document: PatchDocument,
  section: string,
  idField: string,
  id: string,
  matches = byField(idField, id),
): Slot | { error: string } => {
  const current = document[section];
  if (current !== undefined && !Array.isArray(current)) return { error: `${section} is not a list` };
  return {
    list: listOf(current),
    matches,
    idField,
    id,
    write: (list) => ({ ...document, [section]: list }),
  };
};

const slotOf = (document: PatchDocument, target: PatchTarget): Slot | { error: string } => {
  switch (target.type) {
    case 'price_item': {
      const lists = listOf(document.pricelists) ?? [];
      const index = lists.findIndex(byField('pricelist_id', target.pricelist_id));
      const list = lists[index];
      if (!isRecord(list)) return { error: `no price list ${target.pricelist_id}` };
      return {
        list: listOf(list.items),
        matches: byField('sku_id', target.sku_id),
        idField: 'sku_id',
        id: target.sku_id,
        write: (items) => ({
          ...document,
          pricelists: lists.map((entry, at) => (at === index ? { ...list, items } : entry)),
        }),
      };
    }
    case 'product':
      return sectionSlot(document, 'products', 'sku_id', target.sku_id);
    case 'promotion':
      return sectionSlot(document, 'promotions', 'promo_id', target.promo_id);
    case 'override':
      return sectionSlot(document, 'overrides', 'override_id', target.override_id);
    case 'settlement_rate':
      return sectionSlot(document, 'settlement_rates', 'pair', target.pair, byPair(target.pair));
    case 'fx_rate':
    case 'fx_override': {
      const fx = document.fx_rates;
      if (!isRecord(fx)) return { error: 'the catalog has no fx_rates' };
      const key = target.type === 'fx_rate' ? 'rates' : 'overrides';
      return {
        list: listOf(fx[key]),
        matches: byPair(target.pair),
        idField: 'pair',
        id: target.pair,
        write: (entries) => ({ ...document, fx_rates: { ...fx, [key]: entries } }),
      };
    }
    case 'tax_component': {
      const rules = listOf(document.tax_rules) ?? [];
      const index = rules.findIndex(byField('region', target.region));
      const rule = rules[index];
      if (!isRecord(rule)) return { error: `no tax rule for region ${target.region}` };
      const rates = isRecord(rule.rates) ? rule.rates : {};
      return {
        list: listOf(rates[target.tax_class]),
        matches: byField('name', target.name),
        idField: 'name',
        id: target.name,
        write: (components) => ({
          ...document,
          tax_rules: rules.map((entry, at) =>
            at === index ? { ...rule, rates: { ...rates, [target.tax_class]: components } } : entry,
          ),
        }),
      };
    }
  }
};

/** The entry a target names in a document, or undefined when there is none (or its container is absent). */
export const readTarget = (document: PatchDocument, target: PatchTarget): unknown => {
  const slot = slotOf(document, target);
  if ('error' in slot) return undefined;
  return slot.list?.find(slot.matches);
};

/** The id a value carries for its target's id field, if any (a pair compared canonically). */
const idMismatch = (slot: Slot, target: PatchTarget, value: Record<string, unknown>): boolean => {
  const given = value[slot.idField];
  if (given === undefined) return false;
  if (target.type === 'fx_rate' || target.type === 'fx_override' || target.type === 'settlement_rate') {
    return typeof given !== 'string' || canonicalPairOf(given) !== target.pair;
  }
  return given !== slot.id;
};

export type PatchResult =
  | { readonly document: Record<string, unknown> }
  | { readonly problems: readonly PatchProblem[] };

/**
 * Applies the operations in order to `document` (each sees the result of those before it). Every refused
 * operation is reported with its index and path; the document is returned only when none is refused.
 */
export const applyPatch = (
  document: PatchDocument,
  operations: readonly PatchOperation[],
  check: PatchValueCheck,
): PatchResult => {
  const problems: PatchProblem[] = [];
  let result: Record<string, unknown> = { ...document };
  for (const [index, operation] of operations.entries()) {
    const at = `$.operations[${index}]`;
    const refuse = (message: string, where = at): void => {
      problems.push({ path: where, message: `${operation.op} ${operation.path}: ${message}` });
    };
    const target = parsePatchPath(operation.path);
    if ('error' in target) {
      refuse(target.error, `${at}.path`);
      continue;
    }
    const slot = slotOf(result, target);
    if ('error' in slot) {
      refuse(slot.error, `${at}.path`);
      continue;
    }
    const list = slot.list ?? [];
    const position = list.findIndex(slot.matches);
    if (operation.op === 'remove') {
      if (operation.value !== undefined) refuse('a remove takes no value', `${at}.value`);
      else if (position < 0) refuse('nothing to remove: there is no such entry');
      else result = slot.write(list.filter((_, i) => i !== position));
      continue;
    }
    const value = operation.value;
    if (value === undefined || value === null) {
      refuse('a set needs a value', `${at}.value`);
      continue;
    }
    if (!isRecord(value)) {
      refuse('the value must be an object', `${at}.value`);
      continue;
    }
    if (idMismatch(slot, target, value)) {
      refuse(`the value's ${slot.idField} must be the path's (${slot.id})`, `${at}.value.${slot.idField}`);
      continue;
    }
    // The id is the path's. A pair keeps the spelling already published (else FROM→TO), whichever spelling of
    // the same pair the value gives, so re-setting a rate never changes it by its spelling alone.
    const idValue = slot.idField === 'pair' ? (field(list[position], 'pair') ?? slot.id) : slot.id;
    const checked = check(target, { ...value, [slot.idField]: idValue });
    if ('problems' in checked) {
      for (const problem of checked.problems) refuse(problem.message, `${at}.value${problem.path}`);
      continue;
    }
    result = slot.write(
      position < 0
        ? [...list, checked.value]
        : list.map((entry, i) => (i === position ? checked.value : entry)),
    );
  }
  return problems.length > 0 ? { problems } : { document: result };
};

/**
 * The targets of the operations whose entry differs between `base` (what the change was reviewed against) and
 * `current` (what is in force now): another publication changed what this patch changes. A target named twice
 * is reported once.
 */
export const patchConflicts = (
  operations: readonly PatchOperation[],
  base: PatchDocument,
  current: PatchDocument,
): string[] => {
  const conflicts = new Set<string>();
  for (const operation of operations) {
    const target = parsePatchPath(operation.path);
    if ('error' in target) continue;
    const path = patchPathOf(target);
    if (!same(readTarget(base, target), readTarget(current, target))) conflicts.add(path);
  }
  return [...conflicts];
};
