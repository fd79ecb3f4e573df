import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { priceBasket } from '../../../functions/domain/pricing/basket';
import { PricingError } from '../../../functions/domain/pricing/errors';
import type { BasketPricing, BasketRequest, PricingCatalog } from '../../../functions/domain/pricing/types';
import { type CatalogDocument, catalogDocumentSchema } from '../../../functions/schemas/catalog-document';
import {
  type CatalogRelease,
  splitDocument,
  toPricingCatalog,
} from '../../../functions/usecases/catalog/release';

const AT = new Date('2026-11-22T12:00:00.000Z');
const EXPECTED_MINOR_UNITS: Readonly<Record<string, number>> = {
  EUR: 2,
  USD: 2,
  GBP: 2,
  CHF: 2,
  JPY: 0,
  KWD: 3,
  BTC: 8,
  USDT: 6,
};
/** The one whitelisted combination that availability refuses (USDT is not MiCA-authorised in the EU). */
const BLOCKED = { region: 'DE', currency: 'USDT' } as const;

const loadDocument = (): CatalogDocument => {
  const raw: unknown = JSON.parse(
    readFileSync(new URL('../../../catalog/demo-catalog.json', import.meta.url), 'utf8'),
  );
  const parsed = catalogDocumentSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`demo catalog does not conform to catalogDocumentSchema:\n${issues.join('\n')}`);
  }
  return parsed.data;
};

const document = loadDocument();
const parts = splitDocument(document);
const release: CatalogRelease = {
  commercial: { version: 1, effective_from: '2026-11-20T00:00:00.000Z', content: parts.commercial },
  fx: { version: 1, effective_from: '2026-11-22T11:55:00.000Z', content: parts.fx },
  tax: { version: 1, effective_from: '2026-07-01T00:00:00.000Z', content: parts.tax },
};
const catalog: PricingCatalog = toPricingCatalog(release, { at: AT });
const skus = document.products.map((product) => product.sku_id);

/** Every SKU, quantities cycling 1, 2, 3. */
const everything = skus.map((sku_id, index) => ({ sku_id, quantity: (index % 3) + 1 }));

/** Every SKU the region sells (a product's `region_policies` may exclude a region). */
const sellableIn = (region: string) =>
  everything.filter(({ sku_id }) => {
    const policy = document.products
      .find((product) => product.sku_id === sku_id)
      ?.region_policies?.find((candidate) => candidate.region === region);
    return policy?.sellable !== false;
  });

const quote = (overrides: Partial<BasketRequest> & Pick<BasketRequest, 'region' | 'currency'>) =>
  priceBasket(catalog, { items: sellableIn(overrides.region), buyer_type: 'consumer', ...overrides });

const decimalsOf = (amount: string): number => amount.split('.')[1]?.length ?? 0;

/** An amount in smallest units, exactly (no floating point). */
const units = (amount: string, minorUnits: number): bigint => {
  const negative = amount.startsWith('-');
  const [whole = '0', fraction = ''] = amount.replace('-', '').split('.');
  const value = BigInt(whole + fraction.padEnd(minorUnits, '0'));
  return negative ? -value : value;
};

const lineOf = (pricing: BasketPricing, sku: string) => {
  const line = pricing.items_priced.find((candidate) => candidate.sku_id === sku);
  if (!line) throw new Error(`no line for ${sku}`);
  return line;
};

const reverseChargeRegions = new Set(
  document.tax_rules.filter((rule) => rule.business_buyers === 'reverse_charge').map((rule) => rule.region),
);

const cases = document.display_rules.flatMap((rule) =>
  rule.currency_whitelist
    .filter((currency) => !(rule.region === BLOCKED.region && currency === BLOCKED.currency))
    .flatMap((currency) => [
      { region: rule.region, currency, buyer_type: 'consumer' as const },
      ...(reverseChargeRegions.has(rule.region)
        ? [{ region: rule.region, currency, buyer_type: 'business' as const }]
        : []),
    ]),
);

describe('demo catalog (catalog/demo-catalog.json)', () => {
  it('conforms to catalogDocumentSchema and has the shape of a demo shop', () => {
    expect(document.products.length).toBeGreaterThanOrEqual(20);
    expect(document.products.length).toBeLessThanOrEqual(30);
    const categories = new Set(document.products.map((product) => product.category));
    expect(categories.size).toBeGreaterThanOrEqual(3);
    expect(categories.size).toBeLessThanOrEqual(5);
    expect(document.pricelists[0]?.base_currency).toBe('EUR');
    const displayable = new Set(document.display_rules.flatMap((rule) => rule.currency_whitelist));
    expect([...displayable].sort()).toEqual(Object.keys(EXPECTED_MINOR_UNITS).sort());
  });

  it('covers every whitelisted currency of every region', () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases)(
    'prices a basket of every SKU sold there: $region $currency $buyer_type',
    ({ region, currency, buyer_type }) => {
      const pricing = quote({ region, currency, buyer_type });
      const minorUnits = EXPECTED_MINOR_UNITS[currency];
      expect(pricing.minor_units).toBe(minorUnits);
      expect(pricing.items_priced).toHaveLength(sellableIn(region).length);
      const amounts = [
        pricing.subtotal,
        pricing.discounts,
        pricing.total,
        ...pricing.taxes.map((tax) => tax.amount),
        ...pricing.fees.map((fee) => fee.amount),
        ...pricing.items_priced.flatMap((line) => [
          line.unit_price,
          line.base,
          line.discount,
          line.tax,
          line.fees,
          line.total,
        ]),
      ];
      for (const amount of amounts) expect(decimalsOf(amount), amount).toBe(minorUnits);
      const lineSum = pricing.items_priced.reduce(
        (acc, line) => acc + units(line.total, minorUnits ?? 0),
        0n,
      );
      expect(lineSum).toBe(units(pricing.total, minorUnits ?? 0));
      expect(units(pricing.total, minorUnits ?? 0) > 0n).toBe(true);
      expect(pricing.versions).toEqual({ pricelist_version: 1, fx_version: 'fx-1', tax_rule_version: 1 });
      if (buyer_type === 'business') expect(pricing.taxes).toEqual([]);
    },
  );

  it('refuses USDT in DE by the blocked_currency rule', () => {
    let caught: unknown;
    try {
      quote({ region: BLOCKED.region, currency: BLOCKED.currency });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PricingError);
    expect(caught).toMatchObject({
      code: 'price_not_available',
      reasons: [{ code: 'currency_blocked', detail: 'USDT is blocked in DE' }],
    });
  });

  it('splits the bundle over its positions, adding up to the line total', () => {
    for (const { region, currency } of [
      { region: 'DE', currency: 'EUR' },
      { region: 'US', currency: 'USD' },
      { region: 'JP', currency: 'JPY' },
      { region: 'US', currency: 'BTC' },
    ]) {
      const pricing = quote({ region, currency });
      const line = lineOf(pricing, 'BNDL-STARFALL-FAN');
      const allocation = line.bundle_allocation ?? [];
      expect(allocation.map((share) => share.sku_id)).toEqual([
        'GAME-STARFALL-PS5',
        'DIG-STARFALL-SEASON',
        'MERCH-TEE-STARFALL-M',
        'BOOK-ART-STARFALL',
      ]);
      const sum = allocation.reduce((acc, share) => acc + units(share.amount, pricing.minor_units), 0n);
      expect(sum).toBe(units(line.total, pricing.minor_units));
    }
  });

  it('charm-prices converted prices: CHF ends in .90 in CH, the converted USD bundle ends in .99 in US', () => {
    const ch = quote({ region: 'CH', currency: 'CHF' });
    expect(ch.fx_rate).toBeDefined();
    // The CHF list derives from the EUR list (+4 %, then charm); the gift card keeps its converted face value.
    for (const line of ch.items_priced) {
      if (line.sku_id === 'GIFT-CARD-25') expect(line.unit_price).not.toMatch(/\.90$/);
      else expect(line.unit_price, line.sku_id).toMatch(/\.90$/);
    }
    const us = quote({ region: 'US', currency: 'USD' });
    // The USD list is precomputed (no charm); the bundle is not on it, so it is converted and charm-priced.
    expect(lineOf(us, 'BNDL-STARFALL-FAN').unit_price).toMatch(/\.99$/);
    expect(lineOf(us, 'GAME-STARFALL-PS5').unit_price).toBe('69.99');
  });

  it('shows included VAT in DE, FR, GB, CH and JP and excluded sales tax in US', () => {
    for (const region of ['DE', 'FR', 'GB', 'CH', 'JP']) {
      const currency = document.display_rules.find((rule) => rule.region === region)?.currency_whitelist[0];
      const pricing = quote({ region, currency: currency ?? '' });
      expect(pricing.taxes.length, region).toBeGreaterThan(0);
      for (const tax of pricing.taxes) expect(tax.included, `${region} ${tax.name}`).toBe(true);
    }
    const us = quote({ region: 'US', currency: 'USD' });
    expect(us.taxes.map((tax) => tax.name)).toEqual(
      expect.arrayContaining(['US_STATE_SALES_TAX', 'US_LOCAL_SALES_TAX']),
    );
    for (const tax of us.taxes) expect(tax.included).toBe(false);
    expect(quote({ region: 'KW', currency: 'KWD' }).taxes).toEqual([]);
  });

  it('applies the CH VAT threshold only from CHF 62', () => {
    const small = priceBasket(catalog, {
      items: [{ sku_id: 'MERCH-MUG-PIXELKART', quantity: 1 }],
      region: 'CH',
      currency: 'CHF',
      buyer_type: 'consumer',
    });
    expect(small.taxes).toEqual([]);
    expect(quote({ region: 'CH', currency: 'CHF' }).taxes.length).toBeGreaterThan(0);
  });

  it('triggers threshold promotions (free shipping, bonus) for a large basket only', () => {
    const large = quote({ region: 'DE', currency: 'EUR' });
    const ids = large.threshold_promotions.map((outcome) => outcome.promo_id);
    expect(ids).toEqual(expect.arrayContaining(['PROMO-FREESHIP-EU-50', 'PROMO-BONUS-GEMS-150']));
    expect(large.fees.map((fee) => fee.kind)).not.toContain('shipping');
    const bonus = large.threshold_promotions.find((outcome) => outcome.kind === 'bonus');
    expect(bonus?.fx_version).toBe('fx-1');
    expect(bonus?.base_currency_equivalent.currency).toBe('EUR');

    const small = priceBasket(catalog, {
      items: [{ sku_id: 'MERCH-STICKERS-STARFALL', quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    });
    expect(small.threshold_promotions).toEqual([]);
    expect(small.fees.map((fee) => fee.kind)).toContain('shipping');
  });

  it('uses the current fee schedule (crypto network fee, cross-border outside DE)', () => {
    const usdt = quote({ region: 'US', currency: 'USDT' });
    expect(usdt.fees.find((fee) => fee.kind === 'network')?.amount).toBe('1.200000');
    expect(usdt.fees.map((fee) => fee.kind)).toContain('cross_border');
    const btc = quote({ region: 'DE', currency: 'BTC' });
    expect(btc.fees.find((fee) => fee.kind === 'network')?.amount).toBe('0.00001500');
    expect(btc.fees.map((fee) => fee.kind)).not.toContain('cross_border');
  });

  it('prices the partner tenant with basket rounding and the single best promotion', () => {
    const partner = toPricingCatalog(release, { tenant: 'retail-partner-nordic', at: AT });
    expect(partner.basket_policy).toMatchObject({
      rounding_scope: 'basket',
      promo_stack_mode: 'best_single',
    });
    for (const currency of ['EUR', 'BTC']) {
      const pricing = priceBasket(partner, {
        items: everything,
        region: 'DE',
        currency,
        buyer_type: 'consumer',
        tenant: 'retail-partner-nordic',
      });
      const promotions = new Set(
        pricing.items_priced.flatMap((line) => line.applied_promotions.map((applied) => applied.promo_id)),
      );
      expect(promotions.size).toBe(1);
      const lineSum = pricing.items_priced.reduce(
        (acc, line) => acc + units(line.total, pricing.minor_units),
        0n,
      );
      expect(lineSum).toBe(units(pricing.total, pricing.minor_units));
    }
  });

  it('uses the JPY price override and keeps the CE pre-order discount above min_price', () => {
    const jp = quote({ region: 'JP', currency: 'JPY' });
    expect(lineOf(jp, 'MERCH-STATUE-KAEL').unit_price).toBe('29800');
    const de = priceBasket(catalog, {
      items: [{ sku_id: 'GAME-IRONVALE-CE', quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    });
    const line = lineOf(de, 'GAME-IRONVALE-CE');
    expect(units(line.base, 2) - units(line.discount, 2)).toBeGreaterThanOrEqual(11999n);
  });
});

describe('region policies', () => {
  it('refuses a SKU its product does not sell in the region (the Steam key in JP)', () => {
    const unsold = document.products.find((product) =>
      product.region_policies?.some((policy) => policy.region === 'JP' && !policy.sellable),
    );
    expect(unsold).toBeDefined();
    expect(() =>
      priceBasket(catalog, {
        items: [{ sku_id: unsold?.sku_id ?? '', quantity: 1 }],
        region: 'JP',
        currency: 'JPY',
        buyer_type: 'consumer',
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'price_not_available',
        reasons: [
          { code: 'not_sellable', detail: `${unsold?.sku_id} is not sold in JP`, sku_id: unsold?.sku_id },
        ],
      }),
    );
  });
});
