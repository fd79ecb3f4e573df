/**
 * Display rounding of an exact half (issue 16, C19): `GET /catalog/prices` and a quote line show a unit price in
 * the display rule's `rounding_mode`, rounded once from the exact value, so the two always agree — in every
 * mode, for a price stored on a half and for one that lands on a half after conversion.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../../functions/domain/money/decimal';
import { ROUNDING_MODES, type RoundingMode, round } from '../../../functions/domain/money/rounding';
import { priceBasket } from '../../../functions/domain/pricing/basket';

import { importCatalog } from '../../../functions/usecases/catalog/import';
import { computeDisplayPrice } from '../../../functions/usecases/catalog/price-cache';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import { toPricingCatalog } from '../../../functions/usecases/catalog/release';
import { minimalDocument } from '../../support/catalog-document';
import { InMemoryCatalogRepository, ManualClock } from './support';

const AT = new Date('2026-11-22T12:00:00.000Z');

/** A release whose `sku_game` costs `eurPrice` EUR (DE, VAT included) and converts at `usdRate` (US, no charm). */
const releaseWith = async (mode: RoundingMode, eurPrice: string, usdRate: string) => {
  const repository = new InMemoryCatalogRepository();
  const clock = new ManualClock(AT);
  const document = minimalDocument();
  await importCatalog(
    { repository, clock },
    {
      ...document,
      pricelists: document.pricelists.map((list) => ({
        ...list,
        items: list.items.map((item) =>
          item.sku_id === 'sku_game' ? { ...item, base_price: eurPrice } : item,
        ),
      })),
      fx_rates: {
        base_currency: 'EUR',
        rates: [{ pair: 'EUR→USD', rate: usdRate, source: 'ecb', method: 'provider', precision: 12 }],
      },
      display_rules: [
        { region: 'DE', currency_whitelist: ['EUR'], rounding_mode: mode },
        { region: 'US', currency_whitelist: ['USD'], rounding_mode: mode },
      ],
    },
  );
  return (await new CatalogReader(repository, clock).current()).release;
};

/** The unit price and display price of one `sku_game` on the price route and in a quote line. */
const bothRoutes = async (mode: RoundingMode, eurPrice: string, usdRate: string, region: 'DE' | 'US') => {
  const release = await releaseWith(mode, eurPrice, usdRate);
  const currency = region === 'DE' ? 'EUR' : 'USD';
  const route = computeDisplayPrice(release, { sku: 'sku_game', currency, region }, AT).body;
  const quote = priceBasket(toPricingCatalog(release, { at: AT }), {
    items: [{ sku_id: 'sku_game', quantity: 1 }],
    region,
    currency,
    buyer_type: 'consumer',
  }).items_priced[0];
  return {
    route: { unit_price: route.unit_price, display_price: route.display_price, mode: route.rounding_mode },
    quote: { unit_price: quote?.unit_price, display_price: quote?.display_price },
  };
};

/** Whole cents plus half a cent: 0.005 to 1 000 000.005. */
const halfCents = fc
  .integer({ min: 0, max: 100_000_000 })
  .map((cents) => dec(BigInt(cents)).plus('0.5').dividedBy(100));

describe('display rounding of an exact half (both routes, every mode)', () => {
  it('shows 14.645 in each mode as rounding the exact value in that mode, on both routes', async () => {
    const expected: Record<RoundingMode, string> = {
      HALF_UP: '14.65',
      BANKERS: '14.64',
      FLOOR: '14.64',
      CEIL: '14.65',
    };
    for (const mode of ROUNDING_MODES) {
      // Stored on a half (DE, EUR) and converted onto one (10.00 EUR × 1.4645 = 14.645 USD).
      for (const [price, rate, region] of [
        ['14.645', '1.0842', 'DE'],
        ['10.00', '1.4645', 'US'],
      ] as const) {
        const { route, quote } = await bothRoutes(mode, price, rate, region);
        expect(route, `${mode} ${region}`).toEqual({
          unit_price: expected[mode],
          display_price: expected[mode],
          mode,
        });
        expect(quote, `${mode} ${region}`).toEqual({
          unit_price: expected[mode],
          display_price: expected[mode],
        });
      }
    }
  });

  it.each(ROUNDING_MODES)(
    'agrees with rounding the exact half in %s, stored or converted (property)',
    async (mode) => {
      await fc.assert(
        fc.asyncProperty(halfCents, fc.boolean(), async (exact, converted) => {
          const expected = round(exact, 2, mode).toFixed(2);
          // Converted: 1.00 EUR at a rate equal to the exact value lands on it in USD.
          const { route, quote } = converted
            ? await bothRoutes(mode, '1.00', exact.toFixed(3), 'US')
            : await bothRoutes(mode, exact.toFixed(3), '1.0842', 'DE');
          expect(route).toEqual({ unit_price: expected, display_price: expected, mode });
          expect(quote).toEqual({ unit_price: expected, display_price: expected });
        }),
        { numRuns: 60 },
      );
    },
  );
});
