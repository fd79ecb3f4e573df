/**
 * Helpers for the change-control tests: edited copies of the minimal catalog document, promotions and rates
 * that the import schema accepts, and fast-check arbitraries for documents shaped as the diff and merge read them.
 */
import fc from 'fast-check';
import type { DiffableDocument } from '../../../functions/domain/change-control/diff';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { minimalDocument } from '../../support/catalog-document';

type Promotion = NonNullable<CatalogDocument['promotions']>[number];
type FxRate = CatalogDocument['fx_rates']['rates'][number];

/** A deep copy of the minimal document, edited in place by `edit`. */
export const edited = (
  edit: (document: CatalogDocument) => void,
  start: CatalogDocument = minimalDocument(),
): CatalogDocument => {
  const document = structuredClone(start);
  edit(document);
  return document;
};

/** `sku_game` at 64.99 USD: the item of a second (USD) price list. */
export const usdGameItem = () => ({
  sku_id: 'sku_game',
  base_price: '64.99',
  base_currency: 'USD',
  tax_class: 'standard',
  pricing_model: 'flat' as const,
});

export const percentagePromotion = (promo_id: string, percent = '10'): Promotion => ({
  kind: 'percentage',
  promo_id,
  condition: { regions: ['DE'] },
  percent,
  stackable: false,
  priority: 1,
});

export const fxRate = (pair: string, rate: string): FxRate => ({
  pair,
  rate,
  source: 'ecb',
  method: 'provider',
  precision: 4,
});

/** The item `sku_id` of the first price list (the minimal document has `sku_game` and `sku_shirt`). */
export const itemOf = (document: CatalogDocument, sku_id: string) => {
  const item = document.pricelists[0]!.items.find((entry) => entry.sku_id === sku_id);
  if (!item) throw new Error(`no item ${sku_id}`);
  return item;
};

const PAIRS = ['EUR→USD', 'EUR→GBP', 'EUR→JPY', 'USD→EUR'] as const;
const RATES = ['0.85', '1.0842', '1.10', '157.3'] as const;
const IDS = ['a', 'b', 'c'] as const;
const AMOUNTS = ['0', '0.00', '4.99', '19.00', '19', '59.99', '100'] as const;

export const rateArb = fc.record({ pair: fc.constantFrom(...PAIRS), rate: fc.constantFrom(...RATES) });

/** A list of rates with distinct pairs (as the import schema's consumers expect). */
export const ratesArb = fc.uniqueArray(rateArb, { selector: (rate) => rate.pair, maxLength: PAIRS.length });

const itemArb = fc.record(
  {
    sku_id: fc.constantFrom(...IDS),
    base_price: fc.constantFrom(...AMOUNTS),
    base_currency: fc.constantFrom('EUR', 'USD'),
    min_price: fc.constantFrom(...AMOUNTS),
    tiers: fc.array(
      fc.record({ min_quantity: fc.integer({ min: 1, max: 10 }), unit_price: fc.constantFrom(...AMOUNTS) }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['sku_id', 'base_price', 'base_currency'] },
);

const pricelistArb = fc.record({
  pricelist_id: fc.constantFrom('pl_eur', 'pl_usd'),
  items: fc.uniqueArray(itemArb, { selector: (item) => item.sku_id, maxLength: 3 }),
});

const taxRuleArb = fc.record({
  region: fc.constantFrom('DE', 'US'),
  rates: fc.dictionary(
    fc.constantFrom('standard', 'reduced'),
    fc.uniqueArray(
      fc.record({ name: fc.constantFrom('vat', 'levy'), rate: fc.constantFrom('0.19', '0.07', '0') }),
      {
        selector: (component) => component.name,
        maxLength: 2,
      },
    ),
  ),
});

/** Any JSON value for a section the diff and the merge compare as a whole (parsed, so never -0). */
const opaqueArb: fc.Arbitrary<unknown> = fc.json({ maxDepth: 2 }).map((text): unknown => JSON.parse(text));

/** Documents with the sections the diff reads (each optional) plus opaque ones, `effective_from` included. */
export const diffableArb: fc.Arbitrary<DiffableDocument> = fc.record(
  {
    effective_from: fc.constantFrom('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'),
    settings: opaqueArb,
    products: fc.uniqueArray(
      fc.record({ sku_id: fc.constantFrom(...IDS), title: fc.constantFrom('A', 'B') }),
      {
        selector: (product) => product.sku_id,
      },
    ),
    pricelists: fc.uniqueArray(pricelistArb, { selector: (list) => list.pricelist_id }),
    tax_rules: fc.uniqueArray(taxRuleArb, { selector: (rule) => rule.region }),
    fx_rates: fc.record(
      { base_currency: fc.constantFrom('EUR', 'USD'), rates: ratesArb, markup_rules: opaqueArb },
      { requiredKeys: ['rates'] },
    ),
    settlement_rates: ratesArb,
    promotions: fc.uniqueArray(
      fc.record({ promo_id: fc.constantFrom(...IDS), percent: fc.constantFrom('5', '10') }),
      {
        selector: (promotion) => promotion.promo_id,
      },
    ),
    display_rules: opaqueArb,
  },
  { requiredKeys: [] },
);

/** A document and an edit of it: each section kept, replaced by another value, or removed. */
export const editedArb = (document: DiffableDocument): fc.Arbitrary<DiffableDocument> =>
  diffableArb.chain((other) =>
    fc
      .array(fc.constantFrom('keep', 'replace', 'remove'), {
        minLength: 12,
        maxLength: 12,
      })
      .map((choices) => {
        const sections = [...new Set([...Object.keys(document), ...Object.keys(other)])].sort();
        const result: Record<string, unknown> = {};
        sections.forEach((section, index) => {
          const choice = choices[index % choices.length];
          const value =
            choice === 'keep' ? document[section] : choice === 'replace' ? other[section] : undefined;
          if (value !== undefined) result[section] = value;
        });
        return result as DiffableDocument;
      }),
  );
