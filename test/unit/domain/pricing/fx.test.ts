import { describe, expect, it } from 'vitest';
import { dec } from '../../../../functions/domain/money/decimal';
import { PricingError } from '../../../../functions/domain/pricing/errors';
import { clientRate, FxTable, markupBpsFor, parsePair } from '../../../../functions/domain/pricing/fx';
import type { FxRate, FxRateSet } from '../../../../functions/domain/pricing/types';
import { fxRate, refusal } from '../../../support/pricing-fixtures';

const rate = fxRate;

const table = (rates: FxRate[], base = 'EUR'): FxTable =>
  new FxTable({ fx_version: 'fx_9', base_currency: base, rates } satisfies FxRateSet);

describe('parsePair', () => {
  it('reads the arrow form FROM→TO', () => {
    expect(parsePair('EUR→USD')).toEqual(['EUR', 'USD']);
  });

  it('reads the ASCII form FROM->TO and trims spaces', () => {
    expect(parsePair(' EUR -> USD ')).toEqual(['EUR', 'USD']);
  });

  it.each(['EURUSD', 'EUR→', '→USD', 'EUR→USD→JPY', ''])('refuses the invalid pair %j', (pair) => {
    const error = refusal(() => parsePair(pair));
    expect(error.code).toBe('invalid_request');
    expect(error.rule).toBe('fx_pair');
  });

  it('refuses an invalid pair when a snapshot is loaded', () => {
    expect(() => table([rate('EUR/USD', '1.1')])).toThrow(PricingError);
  });
});

describe('FxTable.rate', () => {
  it('is 1 from a currency to itself', () => {
    expect(table([]).rate('USD', 'USD').toString()).toBe('1');
  });

  it('uses the direct pair', () => {
    expect(
      table([rate('EUR→USD', '1.084')])
        .rate('EUR', 'USD')
        .toString(),
    ).toBe('1.084');
  });

  it('accepts the -> form in a snapshot', () => {
    expect(
      table([rate('EUR->USD', '1.084')])
        .rate('EUR', 'USD')
        .toString(),
    ).toBe('1.084');
  });

  it('inverts the opposite pair when the direct one is missing, at 9 decimals', () => {
    expect(
      table([rate('USD→EUR', '0.8')])
        .rate('EUR', 'USD')
        .toString(),
    ).toBe('1.25');
    expect(
      table([rate('USD→EUR', '0.3')])
        .rate('EUR', 'USD')
        .toString(),
    ).toBe('3.333333333');
  });

  it('prefers the direct pair over the inverse of the opposite one', () => {
    const fx = table([rate('USD→EUR', '0.5'), rate('EUR→USD', '1.9')]);
    expect(fx.rate('EUR', 'USD').toString()).toBe('1.9');
  });

  it('does not invert a zero rate', () => {
    const error = refusal(() => table([rate('USD→EUR', '0')]).rate('EUR', 'USD'));
    expect(error.code).toBe('currency_not_available');
  });

  it('crosses through the snapshot base: from → base → to, each leg direct', () => {
    const fx = table([rate('USD→JPY', '150'), rate('USD→EUR', '0.9')], 'USD');
    // EUR → USD is the inverse of 0.9; USD → JPY is direct: 150 / 0.9.
    expect(fx.rate('EUR', 'JPY').toString()).toBe('166.666666667');
  });

  it('crosses through the snapshot base with inverse legs', () => {
    const fx = table([rate('JPY→USD', '0.0064'), rate('EUR→USD', '1.1')], 'USD');
    // EUR → USD direct 1.1; USD → JPY inverse of 0.0064 = 156.25.
    expect(fx.rate('EUR', 'JPY').toString()).toBe('171.875');
  });

  it('crosses from the base itself and to the base itself', () => {
    const fx = table([rate('JPY→USD', '0.0064')], 'USD');
    expect(fx.rate('USD', 'JPY').toString()).toBe('156.25');
    expect(fx.rate('JPY', 'USD').toString()).toBe('0.0064');
  });

  it('refuses a missing rate with currency_not_available naming the fx_version', () => {
    const error = refusal(() => table([rate('EUR→USD', '1.1')]).rate('EUR', 'JPY'));
    expect(error.code).toBe('currency_not_available');
    expect(error.rule).toBe('fx_rate');
    expect(error.message).toContain('fx_9');
  });

  it('refuses a cross rate when the second leg is missing', () => {
    const fx = table([rate('USD→EUR', '0.9')], 'USD');
    expect(refusal(() => fx.rate('EUR', 'JPY')).code).toBe('currency_not_available');
  });

  it('never assumes a stablecoin is 1:1 with its fiat', () => {
    expect(refusal(() => table([]).rate('USDT', 'USD')).code).toBe('currency_not_available');
  });
});

describe('markupBpsFor', () => {
  const rules = [
    { fx_markup_bps: 10 },
    { channel: 'web', fx_markup_bps: 20 },
    { region: 'DE', fx_markup_bps: 30 },
    { channel: 'web', region: 'DE', fx_markup_bps: 40 },
  ];

  it('prefers the rule matching channel and region', () => {
    expect(markupBpsFor(rules, 'web', 'DE')).toBe(40);
  });

  it('then the region rule over the channel rule', () => {
    expect(markupBpsFor(rules, 'app', 'DE')).toBe(30);
    expect(markupBpsFor(rules.slice(0, 3), 'web', 'DE')).toBe(30);
  });

  it('then the channel rule', () => {
    expect(markupBpsFor(rules, 'web', 'FR')).toBe(20);
  });

  it('then the default rule', () => {
    expect(markupBpsFor(rules, 'app', 'FR')).toBe(10);
    expect(markupBpsFor(rules, undefined, undefined)).toBe(10);
  });

  it('is 0 without a matching rule', () => {
    expect(markupBpsFor([], 'web', 'DE')).toBe(0);
    expect(markupBpsFor([{ channel: 'app', fx_markup_bps: 50 }], 'web', 'DE')).toBe(0);
  });

  it('keeps the first of two equally specific rules', () => {
    expect(
      markupBpsFor(
        [
          { region: 'DE', fx_markup_bps: 1 },
          { region: 'DE', fx_markup_bps: 2 },
        ],
        undefined,
        'DE',
      ),
    ).toBe(1);
  });
});

describe('clientRate', () => {
  it('is published × (1 + bps / 10 000)', () => {
    expect(clientRate(dec('1.1'), 150).toString()).toBe('1.1165');
  });

  it('is the published rate without markup', () => {
    expect(clientRate(dec('1.1'), 0).toString()).toBe('1.1');
  });

  it('keeps 9 decimals, BANKERS', () => {
    expect(clientRate(dec('0.123456789'), 1).toString()).toBe('0.123469135');
  });
});

describe('FxTable: chains of published pairs', () => {
  it('chains EUR → USD → USDT when only USD→USDT is published beside EUR→USD (never 1:1)', () => {
    const fx = table([rate('EUR→USD', '1.2'), rate('USD→USDT', '0.9998')]);
    expect(fx.rate('EUR', 'USDT').toString()).toBe('1.19976');
    expect(fx.rate('USDT', 'EUR').toString()).toBe(
      dec('1').dividedBy('1.19976').toDecimalPlaces(9).toString(),
    );
  });

  it('still refuses currencies no chain reaches', () => {
    const fx = table([rate('EUR→USD', '1.2'), rate('GBP→CHF', '1.1')]);
    expect(refusal(() => fx.rate('EUR', 'CHF'))).toMatchObject({
      code: 'currency_not_available',
      rule: 'fx_rate',
    });
  });
});
