/**
 * C28: a request without a price is refused with every reason that applies — each reason alone, then several at
 * once — and the HTTP answer is 422 `price_not_available` with `reasons`.
 */
import { describe, expect, it } from 'vitest';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import {
  PriceNotAvailableError,
  PricingError,
  type UnpriceableReason,
} from '../../../../functions/domain/pricing/errors';
import { unpriceableReasons } from '../../../../functions/domain/pricing/reasons';
import type { BasketRequest, PricingCatalog } from '../../../../functions/domain/pricing/types';
import { toHttpError } from '../../../../functions/handlers/middleware/domain-errors';
import { errorBody } from '../../../../functions/handlers/middleware/errors';
import { errorResponseSchema } from '../../../../functions/schemas/responses';
import { basketRequest, fxRate, item, simpleCatalog } from '../../../support/pricing-fixtures';

/** USD list; EUR by a published rate; US offers USD, EUR and GBP (GBP has no rate). */
const catalog = (overrides: Partial<PricingCatalog> = {}): PricingCatalog =>
  simpleCatalog({
    pricelist: {
      ...simpleCatalog().pricelist,
      items: [item('sku_a', '10.00'), item('sku_b', '5.00')],
    },
    products: [
      { sku_id: 'sku_a', title: 'A' },
      { sku_id: 'sku_b', title: 'B', region_policies: [{ region: 'US', sellable: false }] },
    ],
    fx: { fx_version: 'fx_9', base_currency: 'USD', rates: [fxRate('USD→EUR', '0.9')] },
    display_rules: [{ region: 'US', currency_whitelist: ['USD', 'EUR', 'GBP', 'ABCD'] }],
    ...overrides,
  });

const reasonsOf = (pricingCatalog: PricingCatalog, overrides: Partial<BasketRequest>, at?: string) => {
  try {
    priceBasket(pricingCatalog, basketRequest(overrides), at ? { at } : {});
  } catch (error) {
    if (error instanceof PriceNotAvailableError) return error.reasons;
    throw error;
  }
  throw new Error('expected a refusal');
};

const codes = (reasons: readonly UnpriceableReason[]) => reasons.map((reason) => reason.code);

describe('reasons, each alone', () => {
  it.each<[string, Partial<PricingCatalog>, Partial<BasketRequest>, UnpriceableReason]>([
    [
      'region_not_served',
      {},
      { region: 'FR' },
      { code: 'region_not_served', detail: 'region FR is not served' },
    ],
    [
      'currency_not_offered',
      { fx: { fx_version: 'fx_9', base_currency: 'USD', rates: [fxRate('USD→JPY', '150')] } },
      { currency: 'JPY' },
      { code: 'currency_not_offered', detail: 'JPY is not offered in US' },
    ],
    [
      'unknown_currency',
      {},
      { currency: 'ABCD' },
      { code: 'unknown_currency', detail: 'unknown currency ABCD' },
    ],
    [
      'currency_blocked',
      { availability: { blocked_currencies: [{ currency: 'EUR', regions: ['US'] }] } },
      { currency: 'EUR' },
      { code: 'currency_blocked', detail: 'EUR is blocked in US' },
    ],
    [
      'conversion_blocked',
      { availability: { blocked_conversions: [{ from: 'USD', to: 'EUR' }] } },
      { currency: 'EUR' },
      { code: 'conversion_blocked', detail: 'conversion USD→EUR is not allowed' },
    ],
    [
      'provider_blocked',
      { availability: { blocked_providers: [{ provider: 'shady' }] } },
      { payment: { provider: 'shady' } },
      { code: 'provider_blocked', detail: 'provider shady is blocked for USD' },
    ],
    [
      'bank_blocked',
      { availability: { blocked_banks: ['BANKX'] } },
      { payment: { bank: 'BANKX' } },
      { code: 'bank_blocked', detail: 'bank BANKX is blocked' },
    ],
    [
      'token_blocked',
      { availability: { blocked_tokens: ['TOK'] } },
      { payment: { token: 'TOK' } },
      { code: 'token_blocked', detail: 'token TOK is blocked' },
    ],
    [
      'player_blocked',
      { availability: { player_blocks: [{ player_id: 'p1', currencies: ['USD'] }] } },
      { player_id: 'p1' },
      { code: 'player_blocked', detail: 'USD is not available to this player' },
    ],
    [
      'no_rate',
      {},
      { currency: 'GBP' },
      { code: 'no_rate', detail: 'no rate from USD to GBP in fx_9 (needed for sku_a)' },
    ],
    [
      'unknown_sku',
      {},
      { items: [{ sku_id: 'sku_x', quantity: 1 }] },
      { code: 'unknown_sku', detail: 'unknown SKU sku_x', sku_id: 'sku_x' },
    ],
    [
      'not_sellable',
      {},
      { items: [{ sku_id: 'sku_b', quantity: 1 }] },
      { code: 'not_sellable', detail: 'sku_b is not sold in US', sku_id: 'sku_b' },
    ],
  ])('%s', (_name, catalogOverrides, request, expected) => {
    expect(reasonsOf(catalog(catalogOverrides), request)).toEqual([expected]);
  });

  it('no_price: strategy price_lists without a list, or without the SKU on it', () => {
    const strict = catalog({ strategy: { kind: 'price_lists' } });
    expect(reasonsOf(strict, { currency: 'EUR' })).toEqual([
      { code: 'no_price', detail: 'no price list in EUR' },
    ]);
    const partial = catalog({
      strategy: { kind: 'price_lists' },
      currency_pricelists: [
        {
          pricelist_id: 'pl_eur',
          base_currency: 'EUR',
          effective_from: '2026-01-01T00:00:00.000Z',
          version: 1,
          items: [item('sku_b', '4.00', { base_currency: 'EUR' })],
        },
      ],
    });
    expect(reasonsOf(partial, { currency: 'EUR' })).toEqual([
      { code: 'no_price', detail: 'no EUR price for sku_a', sku_id: 'sku_a' },
    ]);
  });

  it('no_price: a bundle naming an unpriced position, or none', () => {
    const bundles = catalog({
      pricelist: {
        ...simpleCatalog().pricelist,
        items: [
          item('sku_a', '10.00'),
          item('bundle', '9.00', {
            pricing_model: 'bundle',
            bundle: { positions: [{ sku_id: 'ghost', quantity: 1 }] },
          }),
          item('empty', '9.00', { pricing_model: 'bundle', bundle: { positions: [] } }),
        ],
      },
      products: [],
    });
    expect(reasonsOf(bundles, { items: [{ sku_id: 'bundle', quantity: 1 }] })).toEqual([
      { code: 'no_price', detail: 'bundle bundle names an unpriced position ghost', sku_id: 'bundle' },
    ]);
    expect(reasonsOf(bundles, { items: [{ sku_id: 'empty', quantity: 1 }] })).toEqual([
      { code: 'no_price', detail: 'bundle empty has no positions', sku_id: 'empty' },
    ]);
  });

  it('no_price_list_in_force: the primary list before its effective_from or from its effective_to on', () => {
    const dated = catalog({
      pricelist: {
        ...simpleCatalog().pricelist,
        effective_to: '2026-12-01T00:00:00.000Z',
        items: [item('sku_a', '10.00')],
      },
    });
    expect(reasonsOf(dated, {}, '2025-06-01T00:00:00.000Z')).toEqual([
      {
        code: 'no_price_list_in_force',
        detail:
          'price list pl_main is in force from 2026-01-01T00:00:00.000Z to 2026-12-01T00:00:00.000Z, not at ' +
          '2025-06-01T00:00:00.000Z',
      },
    ]);
    expect(codes(reasonsOf(dated, {}, '2026-12-01T00:00:00.000Z'))).toEqual(['no_price_list_in_force']);
    expect(priceBasket(dated, basketRequest(), { at: '2026-11-30T23:59:59.999Z' }).total).toBe('10.00');
  });

  it('no_price_list_in_force: the currency list of strategy price_lists out of force', () => {
    const strict = catalog({
      strategy: { kind: 'price_lists' },
      currency_pricelists: [
        {
          pricelist_id: 'pl_eur',
          base_currency: 'EUR',
          effective_from: '2027-01-01T00:00:00.000Z',
          version: 1,
          items: [item('sku_a', '4.00', { base_currency: 'EUR' })],
        },
      ],
    });
    expect(reasonsOf(strict, { currency: 'EUR' }, '2026-11-22T12:00:00.000Z')).toEqual([
      {
        code: 'no_price_list_in_force',
        detail:
          'price list pl_eur is in force from 2027-01-01T00:00:00.000Z, not at 2026-11-22T12:00:00.000Z',
      },
    ]);
  });

  it('a currency list out of force under mixed falls back to converting the base list', () => {
    const mixed = catalog({
      strategy: { kind: 'mixed', top_currencies: ['EUR'] },
      currency_pricelists: [
        {
          pricelist_id: 'pl_eur',
          base_currency: 'EUR',
          effective_from: '2027-01-01T00:00:00.000Z',
          version: 1,
          items: [item('sku_a', '4.00', { base_currency: 'EUR' })],
        },
      ],
    });
    const at = { at: '2026-11-22T12:00:00.000Z' };
    expect(priceBasket(mixed, basketRequest({ currency: 'EUR' }), at).total).toBe('9.00');
    expect(
      priceBasket(mixed, basketRequest({ currency: 'EUR' }), { at: '2027-01-01T00:00:00.000Z' }).total,
    ).toBe('4.00');
  });

  it('a rate only a promotion cap needs is a reason too (the engine met it)', () => {
    const capped = catalog({
      promotions: [
        {
          promo_id: 'p',
          condition: {},
          percent: '10',
          cap: { amount: '1.00', currency: 'GBP' },
          stackable: true,
          priority: 1,
        },
      ],
    });
    expect(reasonsOf(capped, {})).toEqual([{ code: 'no_rate', detail: 'no rate from GBP to USD in fx_9' }]);
  });
});

describe('reasons, several at once', () => {
  it('names every reason, not only the first: region, currency, availability, SKUs, rates', () => {
    const blocked = catalog({
      availability: {
        blocked_currencies: [{ currency: 'GBP' }],
        blocked_providers: [{ provider: 'shady', currencies: ['GBP'] }],
        blocked_banks: ['BANKX'],
      },
    });
    const reasons = reasonsOf(blocked, {
      currency: 'GBP',
      payment: { provider: 'shady', bank: 'BANKX' },
      items: [
        { sku_id: 'sku_a', quantity: 1 },
        { sku_id: 'sku_b', quantity: 1 },
        { sku_id: 'sku_x', quantity: 2 },
        { sku_id: 'sku_x', quantity: 1 },
      ],
    });
    expect(reasons).toEqual([
      { code: 'currency_blocked', detail: 'GBP is blocked' },
      { code: 'bank_blocked', detail: 'bank BANKX is blocked' },
      { code: 'provider_blocked', detail: 'provider shady is blocked for GBP' },
      { code: 'no_rate', detail: 'no rate from USD to GBP in fx_9 (needed for sku_a)' },
      { code: 'not_sellable', detail: 'sku_b is not sold in US', sku_id: 'sku_b' },
      { code: 'unknown_sku', detail: 'unknown SKU sku_x', sku_id: 'sku_x' },
    ]);
  });

  it('a region not served, a currency not offered there and an unknown SKU', () => {
    expect(codes(reasonsOf(catalog(), { region: 'FR', items: [{ sku_id: 'sku_x', quantity: 1 }] }))).toEqual([
      'region_not_served',
      'unknown_sku',
    ]);
    expect(
      codes(
        reasonsOf(
          catalog(),
          { currency: 'JPY', items: [{ sku_id: 'sku_b', quantity: 1 }] },
          '2020-01-01T00:00:00.000Z',
        ),
      ),
    ).toEqual(['currency_not_offered', 'no_price_list_in_force', 'not_sellable', 'no_rate']);
  });

  it('explainBasket refuses with the same reasons', () => {
    const request = basketRequest({ region: 'FR', items: [{ sku_id: 'sku_x', quantity: 1 }] });
    const plain = (() => {
      try {
        priceBasket(catalog(), request);
      } catch (error) {
        return error;
      }
    })();
    expect(() => explainBasket(catalog(), request)).toThrow(plain as Error);
  });

  it('names a reason once, and a bundle without positions', () => {
    const bundles = catalog({
      pricelist: {
        ...simpleCatalog().pricelist,
        items: [
          item('twice', '9.00', {
            pricing_model: 'bundle',
            bundle: {
              positions: [
                { sku_id: 'ghost', quantity: 1 },
                { sku_id: 'ghost', quantity: 2 },
              ],
            },
          }),
          item('bare', '9.00', { pricing_model: 'bundle' }),
        ],
      },
      products: [],
    });
    expect(
      reasonsOf(bundles, {
        items: [
          { sku_id: 'twice', quantity: 1 },
          { sku_id: 'bare', quantity: 1 },
        ],
      }),
    ).toEqual([
      { code: 'no_price', detail: 'bundle twice names an unpriced position ghost', sku_id: 'twice' },
      { code: 'no_price', detail: 'bundle bare has no positions', sku_id: 'bare' },
    ]);
    expect(new PriceNotAvailableError([]).rule).toBe('unknown');
  });

  it('lists the reasons without a cause too', () => {
    expect(unpriceableReasons(catalog(), basketRequest({ currency: 'GBP' }), undefined)).toEqual([
      { code: 'no_rate', detail: 'no rate from USD to GBP in fx_9 (needed for sku_a)' },
    ]);
  });

  it('passes on a malformed catalog as it is (invalid_request), not as a missing price', () => {
    const malformed = catalog({
      fx: {
        fx_version: 'fx_9',
        base_currency: 'USD',
        rates: [{ ...fxRate('USD→EUR', '0.9'), pair: 'USDEUR' }],
      },
    });
    expect(() => priceBasket(malformed, basketRequest({ currency: 'EUR' }))).toThrow(
      expect.objectContaining({ code: 'invalid_request', rule: 'fx_pair' }),
    );
  });

  it('unpriceableReasons adds the cause only when no reason of its kind was found', () => {
    const cause = new PricingError('currency_not_available', 'region', 'region FR is not served');
    expect(unpriceableReasons(catalog(), basketRequest({ region: 'FR' }), undefined, cause)).toEqual([
      { code: 'region_not_served', detail: 'region FR is not served' },
    ]);
    const odd = new PricingError('no_price', 'something_new', 'a rule not known yet');
    expect(unpriceableReasons(catalog(), basketRequest(), undefined, odd)).toEqual([
      { code: 'no_price', detail: 'a rule not known yet' },
    ]);
  });

  it('keeps malformed requests invalid_request, not a missing price', () => {
    expect(() => priceBasket(catalog(), basketRequest({ items: [] }))).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });
});

describe('the HTTP answer (C6 + C28)', () => {
  it('is 422 price_not_available with every reason', () => {
    let error: unknown;
    try {
      priceBasket(catalog(), basketRequest({ currency: 'JPY', items: [{ sku_id: 'sku_x', quantity: 1 }] }));
    } catch (caught) {
      error = caught;
    }
    const http = toHttpError(error);
    expect(http).toMatchObject({ statusCode: 422, code: 'price_not_available' });
    const body = errorBody(http as NonNullable<typeof http>, 'trc_1');
    expect(body).toEqual({
      error: 'price_not_available',
      error_description: 'no price: JPY is not offered in US; unknown SKU sku_x',
      trace_id: 'trc_1',
      reasons: [
        { code: 'currency_not_offered', detail: 'JPY is not offered in US' },
        { code: 'unknown_sku', detail: 'unknown SKU sku_x', sku_id: 'sku_x' },
      ],
    });
    expect(errorResponseSchema.safeParse(body).success).toBe(true);
  });

  it('keeps a stale rate 422 currency_not_available with reason stale_rate (documented), plus its reasons', () => {
    const http = toHttpError(
      new PricingError('currency_not_available', 'stale_rate', 'the EUR→BTC rate is 1000 s old'),
    );
    const body = errorBody(http as NonNullable<typeof http>, 'trc_2');
    expect(body).toEqual({
      error: 'currency_not_available',
      error_description: 'the EUR→BTC rate is 1000 s old',
      trace_id: 'trc_2',
      rule: 'stale_rate',
      reason: 'stale_rate',
      reasons: [{ code: 'stale_rate', detail: 'the EUR→BTC rate is 1000 s old' }],
    });
    expect(errorResponseSchema.safeParse(body).success).toBe(true);
  });

  it('keeps invalid_request a 400', () => {
    expect(
      toHttpError(new PricingError('invalid_request', 'items', 'the basket has no items')),
    ).toMatchObject({
      statusCode: 400,
    });
  });
});
