/**
 * Properties of `priceBasket` over random VALID catalogs and baskets (see `arbitraries.ts`). fast-check prints
 * the seed and the counterexample path on failure: rerun with `{ seed, path }` to reproduce.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, type Json } from '../../../../functions/domain/money/canonical';
import { isCrypto, minorUnitsOf } from '../../../../functions/domain/money/currency';
import { Decimal, dec, sum, ZERO } from '../../../../functions/domain/money/decimal';
import { roundCeil, step } from '../../../../functions/domain/money/rounding';
import { priceBasket } from '../../../../functions/domain/pricing/basket';
import { clientRate, FxTable, markupBpsFor } from '../../../../functions/domain/pricing/fx';
import { resolveItem } from '../../../../functions/domain/pricing/resolve';
import { chargesTax, netOf } from '../../../../functions/domain/pricing/tax';
import type {
  BasketPricing,
  BasketRequest,
  PricingCatalog,
} from '../../../../functions/domain/pricing/types';
import { volume } from '../../../support/volume';
import { MINOR_UNITS, type PricingCase, pricingCaseArb } from './arbitraries';

/**
 * 10 000 runs of each property with `CI=true`; 1 000 in a local `npm test`, which keeps the whole suite within
 * its ten minutes on a 2-core machine (the properties cost about 130 s at 10 000 runs).
 */
const RUNS = { numRuns: volume('BASKET_PROPERTY_RUNS', { local: 1_000, ci: 10_000 }) } as const;
/** 10 000 runs of a property: well under the 20 s each is allowed. */
const TIMEOUT = 60_000;

const d = (value: string): Decimal => dec(value);
const total = (values: readonly string[]): Decimal => sum(values.map(d));

const withScope = (catalog: PricingCatalog, scope: 'line' | 'basket'): PricingCatalog => ({
  ...catalog,
  basket_policy: { ...catalog.basket_policy, rounding_scope: scope },
});

/** Every amount string of a result: the field name with its value and the minor units it must carry. */
const amountsOf = (result: BasketPricing): { field: string; value: string; units: number }[] => {
  const units = result.minor_units;
  const out: { field: string; value: string; units: number }[] = [];
  const add = (field: string, value: string, places = units) => out.push({ field, value, units: places });
  for (const line of result.items_priced) {
    const at = `items_priced[${line.line - 1}]`;
    add(`${at}.unit_price`, line.unit_price);
    add(`${at}.base`, line.base);
    add(`${at}.discount`, line.discount);
    add(`${at}.tax`, line.tax);
    add(`${at}.fees`, line.fees);
    add(`${at}.total`, line.total);
    for (const tax of line.taxes) add(`${at}.taxes.${tax.name}`, tax.amount);
    for (const promo of line.applied_promotions) add(`${at}.applied.${promo.promo_id}`, promo.amount);
    for (const share of line.bundle_allocation ?? []) {
      add(`${at}.bundle.${share.sku_id}.amount`, share.amount);
      add(`${at}.bundle.${share.sku_id}.tax`, share.tax);
    }
  }
  add('subtotal', result.subtotal);
  add('discounts', result.discounts);
  add('total', result.total);
  for (const tax of result.taxes) add(`taxes.${tax.name}`, tax.amount);
  for (const fee of result.fees) add(`fees.${fee.kind}`, fee.amount);
  for (const outcome of result.threshold_promotions) {
    add(`threshold.${outcome.promo_id}.threshold`, outcome.threshold);
    add(`threshold.${outcome.promo_id}.basket_total`, outcome.basket_total);
    add(
      `threshold.${outcome.promo_id}.base_currency_equivalent`,
      outcome.base_currency_equivalent.amount,
      minorUnitsOf(outcome.base_currency_equivalent.currency),
    );
  }
  return out;
};

const exactlyMinorUnits = (value: string, units: number): boolean =>
  (units === 0 ? /^-?(0|[1-9]\d*)$/ : new RegExp(`^-?(0|[1-9]\\d*)\\.\\d{${units}}$`)).test(value);

/**
 * The unit floor of each line as step 1 computes it (the engine's own conversion: published rate, markup, 9
 * decimals; net of tax for business buyers under reverse charge on tax-inclusive prices), × quantity.
 */
const floorsOf = ({ catalog, request }: PricingCase): Decimal[] => {
  const { currency, region } = request;
  const fx = new FxTable(catalog.fx);
  const bps = markupBpsFor(catalog.fx_markup_rules ?? [], request.channel, region);
  const display = catalog.display_rules.find((rule) => rule.region === region);
  const minorUnits = minorUnitsOf(currency, display?.minor_units);
  const taxRule = catalog.tax_rules.rules.find((rule) => rule.region === region);
  const net =
    taxRule !== undefined &&
    !chargesTax(taxRule, request.buyer_type) &&
    taxRule.tax_mode.inclusion === 'included';
  return request.items.map((line) => {
    const resolved = resolveItem(
      {
        catalog,
        currency,
        region: request.region,
        minorUnits,
        isCrypto: isCrypto(currency),
        charm: null,
        convert: (amount, from) =>
          from === currency ? amount : step(amount.times(clientRate(fx.rate(from, currency), bps))),
      },
      line.sku_id,
      line.quantity,
    );
    const unit = net
      ? netOf(resolved.minUnitPrice, taxRule?.rates[resolved.item.tax_class] ?? [])
      : resolved.minUnitPrice;
    return step(Decimal.max(ZERO, unit).times(line.quantity));
  });
};

const taxKey = (tax: { name: string; tax_class: string; rate: string; included: boolean }) =>
  `${tax.name}|${tax.tax_class}|${tax.rate}|${tax.included}`;

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('priceBasket properties (10 000 random valid catalogs and baskets each)', () => {
  it(
    'Σ rounded lines = rounded total, in both rounding scopes',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 30 }), ({ catalog, request }) => {
          for (const scope of ['line', 'basket'] as const) {
            const result = priceBasket(withScope(catalog, scope), request);
            expect(result.rounding_scope).toBe(scope);
            expect(total(result.items_priced.map((line) => line.total)).toString()).toBe(
              d(result.total).toString(),
            );
          }
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'subtotal − discounts + Σ excluded taxes + Σ fees = total, and every basket figure is the Σ of its lines',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 20 }), ({ catalog, request }) => {
          const result = priceBasket(catalog, request);
          const lines = result.items_priced;
          const excluded = total(result.taxes.filter((tax) => !tax.included).map((tax) => tax.amount));
          const fees = total(result.fees.map((fee) => fee.amount));
          expect(d(result.subtotal).minus(d(result.discounts)).plus(excluded).plus(fees).toString()).toBe(
            d(result.total).toString(),
          );
          expect(total(lines.map((line) => line.base)).toString()).toBe(d(result.subtotal).toString());
          expect(total(lines.map((line) => line.discount)).toString()).toBe(d(result.discounts).toString());
          expect(total(lines.map((line) => line.fees)).toString()).toBe(fees.toString());
          const perTax = new Map<string, Decimal>();
          for (const line of lines) {
            expect(total(line.taxes.map((tax) => tax.amount)).toString()).toBe(d(line.tax).toString());
            const lineExcluded = total(line.taxes.filter((tax) => !tax.included).map((tax) => tax.amount));
            // Each line reconciles too: base − discount + excluded tax + fees = total.
            expect(
              d(line.base).minus(d(line.discount)).plus(lineExcluded).plus(d(line.fees)).toString(),
            ).toBe(d(line.total).toString());
            for (const tax of line.taxes) {
              perTax.set(taxKey(tax), (perTax.get(taxKey(tax)) ?? ZERO).plus(d(tax.amount)));
            }
          }
          expect(result.taxes.map((tax) => [taxKey(tax), d(tax.amount).toString()])).toEqual(
            [...perTax.entries()].map(([key, amount]) => [key, amount.toString()]),
          );
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'every amount string carries exactly the currency’s minor units (C1)',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 12 }), ({ catalog, request }) => {
          const result = priceBasket(catalog, request);
          expect(result.minor_units).toBe(MINOR_UNITS[request.currency as keyof typeof MINOR_UNITS]);
          for (const { field, value, units } of amountsOf(result)) {
            expect({ field, ok: exactlyMinorUnits(value, units) }).toEqual({ field, ok: true });
          }
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'a discounted line never goes below its min_price × quantity floor, and no line goes below zero',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 20 }), (pricingCase) => {
          const result = priceBasket(pricingCase.catalog, pricingCase.request);
          const floors = floorsOf(pricingCase);
          result.items_priced.forEach((line, index) => {
            const net = d(line.base).minus(d(line.discount));
            expect(net.isNegative()).toBe(false);
            expect(d(line.total).isNegative()).toBe(false);
            if (!d(line.discount).isZero()) {
              const floor = roundCeil(floors[index] as Decimal, result.minor_units);
              expect({ line: line.line, net: net.toString(), floor: floor.toString() }).toEqual({
                line: line.line,
                net: Decimal.max(net, floor).toString(),
                floor: floor.toString(),
              });
            }
          });
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'a bundle’s allocation adds up to the line total and to the line tax',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 12 }), ({ catalog, request }) => {
          const result = priceBasket(catalog, request);
          for (const line of result.items_priced) {
            const item = catalog.pricelist.items.find((candidate) => candidate.sku_id === line.sku_id);
            if (item?.pricing_model !== 'bundle') {
              expect(line.bundle_allocation).toBeUndefined();
              continue;
            }
            const shares = line.bundle_allocation ?? [];
            expect(shares.map((share) => share.sku_id)).toEqual(
              item.bundle?.positions.map((position) => position.sku_id),
            );
            expect(total(shares.map((share) => share.amount)).toString()).toBe(d(line.total).toString());
            expect(total(shares.map((share) => share.tax)).toString()).toBe(d(line.tax).toString());
          }
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'is deterministic: the same input twice, and a JSON deep clone of it, give the same canonical JSON',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 8 }), ({ catalog, request }) => {
          const first = canonicalJson(priceBasket(catalog, request) as unknown as Json);
          const second = canonicalJson(priceBasket(catalog, request) as unknown as Json);
          const cloned = canonicalJson(
            priceBasket(clone<PricingCatalog>(catalog), clone<BasketRequest>(request)) as unknown as Json,
          );
          expect(second).toBe(first);
          expect(cloned).toBe(first);
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'follows the order of calculation: discounts never exceed the base, fees and taxes are never negative',
    () => {
      fc.assert(
        fc.property(pricingCaseArb({ maxLines: 20 }), ({ catalog, request }) => {
          const result = priceBasket(catalog, request);
          expect(d(result.discounts).lessThanOrEqualTo(d(result.subtotal))).toBe(true);
          for (const line of result.items_priced) {
            expect(d(line.discount).isNegative()).toBe(false);
            expect(d(line.discount).lessThanOrEqualTo(d(line.base))).toBe(true);
            expect(d(line.fees).isNegative()).toBe(false);
            expect(d(line.tax).isNegative()).toBe(false);
          }
          // Fees whose exact amount is zero are dropped; one that rounds to zero stays as "0.00" (fees.test.ts).
          for (const fee of result.fees) expect(d(fee.amount).isNegative()).toBe(false);
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );
});
