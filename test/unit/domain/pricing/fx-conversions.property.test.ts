/**
 * FX transparency over random baskets on the demo catalog — as published, with a manual override of EUR↔USD in
 * force (given as USD→EUR, so EUR → USD uses it inverted and EUR → USDT as a chain leg), and with that override
 * expired: every `fx_conversions` entry's client rate is its reference rate × (1 + bps / 10 000) at 9 decimals
 * (BANKERS), computed here on its own; every converted line price was converted at that client rate (the
 * explained `fx_conversion` steps); the entries are exactly the currencies converted from, in code order; and
 * the override is flagged exactly while in force. fast-check prints the seed and the counterexample on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, dec } from '../../../../functions/domain/money/decimal';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import { PricingError } from '../../../../functions/domain/pricing/errors';
import type { BasketRequest, FxConversion } from '../../../../functions/domain/pricing/types';
import type { CatalogDocument } from '../../../../functions/schemas/catalog-document';
import { DEMO_AT, demoDocument, pricingCatalogOf, releaseOf } from '../../../support/demo-pricing';
import { volume } from '../../../support/volume';

const RUNS = { numRuns: volume('FX_CONVERSIONS_PROPERTY_RUNS', { local: 400, ci: 2_000 }) } as const;
const TIMEOUT = 120_000;

const demo = demoDocument();
const EXPIRES = '2026-11-22T13:00:00.000Z';
const withOverride: CatalogDocument = {
  ...demo,
  fx_rates: {
    ...demo.fx_rates,
    overrides: [{ pair: 'USD→EUR', rate: '0.8625', expires_at: EXPIRES, reason: 'ECB feed delayed' }],
  },
};
const catalogs = {
  published: pricingCatalogOf(releaseOf(demo)),
  override: pricingCatalogOf(releaseOf(withOverride)),
};
const INSTANTS = { inForce: DEMO_AT.toISOString(), expired: EXPIRES } as const;

const skus = demo.products.map((product) => product.sku_id);
const pairs = demo.display_rules.flatMap((rule) =>
  rule.currency_whitelist.map((currency) => ({ region: rule.region, currency })),
);

const caseArb = fc.record({
  variant: fc.constantFrom('published' as const, 'override' as const),
  instant: fc.constantFrom('inForce' as const, 'expired' as const),
  request: fc
    .record({
      items: fc.array(
        fc.record({ sku_id: fc.constantFrom(...skus), quantity: fc.integer({ min: 1, max: 9 }) }),
        { minLength: 1, maxLength: 6 },
      ),
      pair: fc.constantFrom(...pairs),
      buyer_type: fc.constantFrom('consumer' as const, 'business' as const),
      channel: fc.option(fc.constantFrom('mobile_app', 'web'), { nil: undefined }),
      customer_groups: fc.option(fc.constant(['b2b-gold']), { nil: undefined }),
    })
    .map(
      ({ pair, channel, customer_groups, ...rest }): BasketRequest => ({
        ...rest,
        ...pair,
        ...(channel ? { channel } : {}),
        ...(customer_groups ? { customer_groups } : {}),
      }),
    ),
});

/** reference × (1 + bps / 10 000), rounded to 9 decimals half-even: C19, written out here on its own. */
const expectedClientRate = (entry: FxConversion): string =>
  dec(entry.reference_rate)
    .times(new Decimal(1).plus(new Decimal(entry.fx_markup_bps).dividedBy(10_000)))
    .toDecimalPlaces(9, Decimal.ROUND_HALF_EVEN)
    .toString();

const figure = (figures: Readonly<Record<string, unknown>>, key: string): string => String(figures[key]);

describe('fx_conversions over random demo baskets', () => {
  it(
    'client rate = reference × (1 + bps / 10 000) at 9 decimals, and every converted line price uses it',
    () => {
      let converted = 0;
      let flagged = 0;
      let linesChecked = 0;
      fc.assert(
        fc.property(caseArb, ({ variant, instant, request }) => {
          const catalog = catalogs[variant];
          const options = { at: INSTANTS[instant] };
          let explained: ReturnType<typeof explainBasket>;
          try {
            explained = explainBasket(catalog, request, options);
          } catch (error) {
            // A basket the catalog refuses (quantity rules, a SKU not sold in the region) has nothing to show.
            if (error instanceof PricingError) return;
            throw error;
          }
          const { pricing, explain } = explained;
          expect(priceBasket(catalog, request, options)).toEqual(pricing);
          const entries = pricing.fx_conversions ?? [];
          expect(entries.length > 0).toBe(pricing.fx_rate !== undefined);
          expect(entries.map((entry) => entry.from)).toEqual(
            [...new Set(entries.map((entry) => entry.from))].sort(),
          );
          const byPair = new Map(entries.map((entry) => [entry.pair, entry]));
          for (const entry of entries) {
            converted += 1;
            expect(entry.to).toBe(request.currency);
            expect(entry.pair).toBe(`${entry.from}→${entry.to}`);
            expect(entry.fx_version).toBe(pricing.versions.fx_version);
            expect(entry.client_rate).toBe(expectedClientRate(entry));
            if (entry.from === catalog.base_currency) expect(entry.client_rate).toBe(pricing.fx_rate);
            const overridable = entry.pair === 'EUR→USD' || entry.pair === 'USD→EUR';
            const inForce = variant === 'override' && instant === 'inForce';
            if (overridable) expect(entry.override !== undefined).toBe(inForce);
            if (!inForce) expect(entry.override).toBeUndefined();
            if (entry.override) flagged += 1;
            if (entry.pair === 'EUR→USD' && inForce) {
              // The override given as USD→EUR, inverted: 1 / 0.8625 at 9 decimals.
              expect(entry.reference_rate).toBe('1.15942029');
            }
          }
          for (const step of explain.steps.filter((candidate) => candidate.rule === 'fx_conversion')) {
            const entry = byPair.get(figure(step.output, 'pair'));
            expect(entry, `a conversion entry for ${figure(step.output, 'pair')}`).toBeDefined();
            if (!entry) continue;
            linesChecked += 1;
            expect(figure(step.output, 'client_rate')).toBe(entry.client_rate);
            expect(figure(step.output, 'published_rate')).toBe(entry.reference_rate);
            expect(step.output.override).toEqual(entry.override);
            const unitPrice = dec(figure(step.input, 'unit_price'))
              .times(dec(entry.client_rate))
              .toDecimalPlaces(9, Decimal.ROUND_HALF_EVEN);
            expect(figure(step.output, 'unit_price')).toBe(unitPrice.toString());
          }
        }),
        RUNS,
      );
      // The runs exercised conversions, and overrides in force among them.
      expect(converted).toBeGreaterThan(0);
      expect(flagged).toBeGreaterThan(0);
      expect(linesChecked).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
