/**
 * FX transparency and manual rate overrides in the engine: `fx_conversions` names, per currency converted from,
 * the reference rate, the markup, the client rate, the rate's timestamp and source; an override in force at the
 * pricing instant replaces its pair's published rate (in either direction, and as a leg of cross and chain
 * rates), the markup still on top; an expired one is ignored.
 */
import { describe, expect, it } from 'vitest';
import { explainBasket, priceBasket } from '../../../../functions/domain/pricing/basket';
import { FxTable, fxTableOf, OVERRIDE_SOURCE } from '../../../../functions/domain/pricing/fx';
import type { FxOverride, FxRateSet, PricingCatalog } from '../../../../functions/domain/pricing/types';
import { basketRequest, fxRate, item, simpleCatalog } from '../../../support/pricing-fixtures';

const AT = '2026-06-01T12:00:00.000Z';
const EXPIRES = '2026-06-01T13:00:00.000Z';

const override = (pair: string, rate: string, overrides: Partial<FxOverride> = {}): FxOverride => ({
  pair,
  rate,
  expires_at: EXPIRES,
  reason: 'provider outage',
  effective_from: '2026-06-01T09:00:00.000Z',
  ...overrides,
});

/** USD is the base; USD→EUR published by the ECB, USD→GBP (a day younger) by the BoE. */
const rateSet = (overrides?: readonly FxOverride[]): FxRateSet => ({
  fx_version: 'fx-7',
  base_currency: 'USD',
  rates: [
    fxRate('USD→EUR', '0.9'),
    { ...fxRate('USD→GBP', '0.8'), source: 'boe', effective_from: '2026-01-02T00:00:00.000Z' },
    { ...fxRate('GBP→USDT', '1.25'), source: 'kraken', effective_from: '2026-01-03T00:00:00.000Z' },
  ],
  ...(overrides ? { overrides } : {}),
});

/** sku_a costs 100.00 USD, sku_b 50.00 EUR; EUR buyers in DE, GBP buyers in GB; a 150 bps default markup. */
const catalog = (overrides?: readonly FxOverride[]): PricingCatalog =>
  simpleCatalog({
    pricelist: {
      pricelist_id: 'pl_main',
      base_currency: 'USD',
      effective_from: '2026-01-01T00:00:00.000Z',
      version: 3,
      items: [item('sku_a', '100.00'), item('sku_b', '50.00', { base_currency: 'EUR' })],
    },
    products: [
      { sku_id: 'sku_a', title: 'A' },
      { sku_id: 'sku_b', title: 'B' },
    ],
    fx: rateSet(overrides),
    fx_markup_rules: [{ fx_markup_bps: 150 }],
    display_rules: [
      { region: 'US', currency_whitelist: ['USD'] },
      { region: 'DE', currency_whitelist: ['EUR'] },
      { region: 'GB', currency_whitelist: ['GBP'] },
    ],
  });

const inEur = basketRequest({ region: 'DE', currency: 'EUR', items: [{ sku_id: 'sku_a', quantity: 2 }] });

describe('fx_conversions', () => {
  it('is absent when nothing was converted', () => {
    const priced = priceBasket(catalog(), basketRequest({ items: [{ sku_id: 'sku_a', quantity: 1 }] }));
    expect(priced.fx_conversions).toBeUndefined();
    expect(priced.fx_rate).toBeUndefined();
  });

  it('names the published reference rate, the markup, the client rate, timestamp, source and fx_version', () => {
    const priced = priceBasket(catalog(), inEur, { at: AT });
    expect(priced.fx_conversions).toEqual([
      {
        pair: 'USD→EUR',
        from: 'USD',
        to: 'EUR',
        reference_rate: '0.9',
        fx_markup_bps: 150,
        // 0.9 × 1.015
        client_rate: '0.9135',
        rate_timestamp: '2026-01-01T00:00:00.000Z',
        fx_version: 'fx-7',
        source: 'ecb',
      },
    ]);
    // The existing field is unchanged: the client rate from the base currency.
    expect(priced.fx_rate).toBe('0.9135');
    expect(priced.items_priced[0]?.base).toBe('182.70');
  });

  it('lists one entry per currency converted from, in code order, each with its own rate', () => {
    const priced = priceBasket(
      catalog(),
      basketRequest({
        region: 'GB',
        currency: 'GBP',
        items: [
          { sku_id: 'sku_a', quantity: 1 },
          { sku_id: 'sku_b', quantity: 1 },
        ],
      }),
      { at: AT },
    );
    expect(priced.fx_conversions?.map((entry) => entry.pair)).toEqual(['EUR→GBP', 'USD→GBP']);
    // EUR → GBP crosses the base: (1 / 0.9) × 0.8; the oldest leg's timestamp, both sources.
    expect(priced.fx_conversions?.[0]).toMatchObject({
      reference_rate: '0.888888889',
      client_rate: '0.902222222',
      rate_timestamp: '2026-01-01T00:00:00.000Z',
      source: 'ecb+boe',
    });
    expect(priced.fx_conversions?.[1]).toMatchObject({
      reference_rate: '0.8',
      client_rate: '0.812',
      rate_timestamp: '2026-01-02T00:00:00.000Z',
      source: 'boe',
    });
  });
});

describe('a manual rate override', () => {
  it('in force, is the reference rate, with the markup on top, and is flagged', () => {
    const priced = priceBasket(catalog([override('USD→EUR', '0.95')]), inEur, { at: AT });
    expect(priced.fx_conversions).toEqual([
      {
        pair: 'USD→EUR',
        from: 'USD',
        to: 'EUR',
        reference_rate: '0.95',
        fx_markup_bps: 150,
        // 0.95 × 1.015
        client_rate: '0.96425',
        rate_timestamp: '2026-06-01T09:00:00.000Z',
        fx_version: 'fx-7',
        source: OVERRIDE_SOURCE,
        override: { pair: 'USD→EUR', rate: '0.95', expires_at: EXPIRES, reason: 'provider outage' },
      },
    ]);
    expect(priced.fx_rate).toBe('0.96425');
    // 2 × 100.00 × 0.96425
    expect(priced.items_priced[0]?.base).toBe('192.85');
  });

  it('expired (the pricing instant at or after expires_at), is ignored: the published rate is back', () => {
    const expired = catalog([override('USD→EUR', '0.95')]);
    const plain = priceBasket(catalog(), inEur, { at: EXPIRES });
    const priced = priceBasket(expired, inEur, { at: EXPIRES });
    expect(priced).toEqual(plain);
    expect(priced.fx_conversions?.[0]?.override).toBeUndefined();
    // A millisecond earlier it was still in force.
    expect(
      priceBasket(expired, inEur, { at: '2026-06-01T12:59:59.999Z' }).fx_conversions?.[0]?.override,
    ).toBeDefined();
  });

  it('without a pricing instant counts as in force', () => {
    const priced = priceBasket(catalog([override('USD→EUR', '0.95')]), inEur);
    expect(priced.fx_conversions?.[0]?.reference_rate).toBe('0.95');
  });

  it('asked in the opposite direction, is inverted', () => {
    // EUR→USD 1.25 overrides the published USD→EUR 0.9: USD → EUR is 1 / 1.25.
    const priced = priceBasket(catalog([override('EUR→USD', '1.25')]), inEur, { at: AT });
    expect(priced.fx_conversions?.[0]).toMatchObject({
      pair: 'USD→EUR',
      reference_rate: '0.8',
      client_rate: '0.812',
      override: { pair: 'EUR→USD', rate: '1.25' },
    });
  });

  it('is a leg of a cross rate: the other leg stays published, the timestamp is the oldest leg', () => {
    const priced = priceBasket(
      catalog([override('USD→EUR', '0.8')]),
      basketRequest({ region: 'GB', currency: 'GBP', items: [{ sku_id: 'sku_b', quantity: 1 }] }),
      { at: AT },
    );
    // EUR → USD = 1 / 0.8 (the override inverted), USD → GBP = 0.8 (published): 1.0.
    expect(priced.fx_conversions).toEqual([
      {
        pair: 'EUR→GBP',
        from: 'EUR',
        to: 'GBP',
        reference_rate: '1',
        fx_markup_bps: 150,
        client_rate: '1.015',
        rate_timestamp: '2026-01-02T00:00:00.000Z',
        fx_version: 'fx-7',
        source: `${OVERRIDE_SOURCE}+boe`,
        override: { pair: 'USD→EUR', rate: '0.8', expires_at: EXPIRES, reason: 'provider outage' },
      },
    ]);
    expect(priced.items_priced[0]?.base).toBe('50.75');
  });

  it('is a leg of a chain: with several overridden legs, the one expiring first is named', () => {
    const early = '2026-06-01T12:30:00.000Z';
    const fx = new FxTable(
      rateSet([override('USD→GBP', '0.5'), override('GBP→USDT', '2', { expires_at: early, reason: 'feed' })]),
    );
    // USD → GBP → USDT (no cross through the base: USD is the base and USD→USDT is not published).
    const conversion = fx.conversion('USD', 'USDT', 0);
    expect(conversion).toMatchObject({
      reference_rate: '1',
      source: OVERRIDE_SOURCE,
      override: { pair: 'GBP→USDT', expires_at: early, reason: 'feed' },
    });
  });

  it('shows in the explained fx_conversion step', () => {
    const { explain } = explainBasket(catalog([override('USD→EUR', '0.95')]), inEur, { at: AT });
    const step = explain.steps.find((candidate) => candidate.rule === 'fx_conversion');
    expect(step?.output).toMatchObject({
      published_rate: '0.95',
      client_rate: '0.96425',
      override: { pair: 'USD→EUR', rate: '0.95', expires_at: EXPIRES, reason: 'provider outage' },
    });
    const expired = explainBasket(catalog([override('USD→EUR', '0.95')]), inEur, { at: EXPIRES });
    const plain = expired.explain.steps.find((candidate) => candidate.rule === 'fx_conversion');
    expect(plain?.output).not.toHaveProperty('override');
  });
});

describe('fxTableOf', () => {
  it('keeps one table per set of overrides in force, so a snapshot is indexed once per expiry', () => {
    const set = rateSet([override('USD→EUR', '0.95'), override('USD→GBP', '0.7', { expires_at: EXPIRES })]);
    const before = fxTableOf(set, AT);
    expect(fxTableOf(set, '2026-06-01T12:10:00.000Z')).toBe(before);
    expect(fxTableOf(set, AT)).toBe(before);
    const after = fxTableOf(set, EXPIRES);
    expect(after).not.toBe(before);
    expect(after.rate('USD', 'EUR').toString()).toBe('0.9');
    expect(before.rate('USD', 'EUR').toString()).toBe('0.95');
  });

  it('gives the published table itself for a snapshot without overrides', () => {
    const set = rateSet();
    expect(fxTableOf(set, AT)).toBe(fxTableOf(set));
  });
});
