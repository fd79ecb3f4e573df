import { describe, expect, it } from 'vitest';
import { dec } from '../../../../functions/domain/money/decimal';
import type { RoundingMode } from '../../../../functions/domain/money/rounding';
import {
  chargesTax,
  componentRates,
  computeTaxes,
  type LineTax,
  netOf,
  type TaxableLine,
} from '../../../../functions/domain/pricing/tax';
import type { TaxRoundingLevel, TaxRule } from '../../../../functions/domain/pricing/types';
import { taxRule } from '../../../support/pricing-fixtures';

const taxable = (amount: string, quantity = 1, taxClass = 'standard'): TaxableLine => ({
  tax_class: taxClass,
  quantity,
  amount: dec(amount),
});

const rule = (rate: string, mode: RoundingMode, level: TaxRoundingLevel, overrides: Partial<TaxRule> = {}) =>
  taxRule({ rates: { standard: [{ name: 'vat', rate }] }, rounding: { mode, level }, ...overrides });

const amounts = (result: LineTax[][]) => result.map((taxes) => taxes.map((tax) => tax.amount.toFixed(2)));

describe('computeTaxes: inclusion', () => {
  it('adds excluded tax on the net amount', () => {
    const [taxes] = computeTaxes([taxable('10.00')], taxRule(), 'consumer', 2, undefined);
    expect(taxes).toEqual([
      { name: 'sales_tax', tax_class: 'standard', rate: '0.19', amount: dec('1.9'), included: false },
    ]);
  });

  it('extracts included tax from the gross amount: gross × r / (1 + r)', () => {
    const included = taxRule({ tax_mode: { type: 'VAT', inclusion: 'included' } });
    const [taxes] = computeTaxes([taxable('11.90')], included, 'consumer', 2, undefined);
    expect(taxes?.map((tax) => [tax.amount.toString(), tax.included])).toEqual([['1.9', true]]);
  });

  it('levies a compound component on the net amount plus the components before it', () => {
    const compound = taxRule({
      rates: {
        standard: [
          { name: 'federal', rate: '0.05' },
          { name: 'state', rate: '0.10', compound: true },
        ],
      },
    });
    const [taxes] = computeTaxes([taxable('100.00')], compound, 'consumer', 2, undefined);
    expect(taxes?.map((tax) => [tax.name, tax.rate, tax.amount.toString()])).toEqual([
      ['federal', '0.05', '5'],
      ['state', '0.10', '10.5'],
    ]);
  });

  it('levies two simple components each on the net amount', () => {
    const simple = taxRule({
      rates: {
        standard: [
          { name: 'federal', rate: '0.05' },
          { name: 'state', rate: '0.10' },
        ],
      },
    });
    expect(amounts(computeTaxes([taxable('100.00')], simple, 'consumer', 2, undefined))).toEqual([
      ['5.00', '10.00'],
    ]);
  });

  it('extracts compound included taxes from the gross amount', () => {
    const compound = taxRule({
      tax_mode: { type: 'GST', inclusion: 'included' },
      rates: {
        standard: [
          { name: 'federal', rate: '0.05' },
          { name: 'state', rate: '0.10', compound: true },
        ],
      },
    });
    expect(amounts(computeTaxes([taxable('115.50')], compound, 'consumer', 2, undefined))).toEqual([
      ['5.00', '10.50'],
    ]);
  });

  it('does not tax a class the rule does not list', () => {
    expect(computeTaxes([taxable('10.00', 1, 'exempt')], taxRule(), 'consumer', 2, undefined)).toEqual([[]]);
  });

  it('does not tax without a rule', () => {
    expect(computeTaxes([taxable('10.00'), taxable('1.00')], undefined, 'consumer', 2, undefined)).toEqual([
      [],
      [],
    ]);
  });
});

describe('computeTaxes: rounding level and mode', () => {
  it.each<[RoundingMode, string]>([
    ['HALF_UP', '0.26'],
    ['BANKERS', '0.24'],
    ['FLOOR', '0.24'],
    ['CEIL', '0.26'],
  ])('per_unit %s rounds the tax of one unit, then multiplies: 2 × 1.25 at 10%% → %s', (mode, expected) => {
    const result = computeTaxes(
      [taxable('2.50', 2)],
      rule('0.10', mode, 'per_unit'),
      'consumer',
      2,
      undefined,
    );
    expect(amounts(result)).toEqual([[expected]]);
  });

  it.each<[RoundingMode, string]>([
    ['HALF_UP', '0.13'],
    ['BANKERS', '0.12'],
    ['FLOOR', '0.12'],
    ['CEIL', '0.13'],
  ])('per_line %s rounds each line: 1.25 at 10%% → %s', (mode, expected) => {
    const result = computeTaxes([taxable('1.25')], rule('0.10', mode, 'per_line'), 'consumer', 2, undefined);
    expect(amounts(result)).toEqual([[expected]]);
  });

  it.each<[RoundingMode, string[]]>([
    ['HALF_UP', ['0.01', '0.01', '0.00']],
    ['BANKERS', ['0.01', '0.01', '0.00']],
    ['FLOOR', ['0.01', '0.00', '0.00']],
    ['CEIL', ['0.01', '0.01', '0.00']],
  ])(
    'per_basket %s rounds the basket tax once and spreads it by line order: 3 × 0.05 at 10%%',
    (mode, expected) => {
      const lines = [taxable('0.05'), taxable('0.05'), taxable('0.05')];
      const result = computeTaxes(lines, rule('0.10', mode, 'per_basket'), 'consumer', 2, undefined);
      expect(amounts(result)).toEqual(expected.map((value) => [value]));
    },
  );

  it('per_basket differs from per_line on the same lines', () => {
    const lines = [taxable('0.05'), taxable('0.05'), taxable('0.05')];
    const perLine = computeTaxes(lines, rule('0.10', 'HALF_UP', 'per_line'), 'consumer', 2, undefined);
    expect(amounts(perLine)).toEqual([['0.01'], ['0.01'], ['0.01']]);
  });

  it('per_basket rounds each tax class on its own', () => {
    const twoClasses = rule('0.10', 'HALF_UP', 'per_basket', {
      rates: { standard: [{ name: 'vat', rate: '0.10' }], reduced: [{ name: 'vat', rate: '0.05' }] },
    });
    const lines = [
      taxable('0.05'),
      taxable('0.10', 1, 'reduced'),
      taxable('0.05'),
      taxable('0.10', 1, 'reduced'),
    ];
    // standard: 0.005 + 0.005 = 0.01; reduced: 0.005 + 0.005 = 0.01.
    expect(amounts(computeTaxes(lines, twoClasses, 'consumer', 2, undefined))).toEqual([
      ['0.01'],
      ['0.01'],
      ['0.00'],
      ['0.00'],
    ]);
  });

  it('per_basket gives zero to every line of a zero basket', () => {
    const result = computeTaxes(
      [taxable('0'), taxable('0')],
      rule('0.10', 'CEIL', 'per_basket'),
      'consumer',
      2,
      undefined,
    );
    expect(amounts(result)).toEqual([['0.00'], ['0.00']]);
  });

  it('rounds to the currency minor units: 0 for JPY, 3 for KWD', () => {
    const line = [taxable('105')];
    expect(
      computeTaxes(
        line,
        rule('0.10', 'HALF_UP', 'per_line'),
        'consumer',
        0,
        undefined,
      )[0]?.[0]?.amount.toString(),
    ).toBe('11');
    const kwd = [taxable('1.255')];
    expect(
      computeTaxes(
        kwd,
        rule('0.10', 'BANKERS', 'per_line'),
        'consumer',
        3,
        undefined,
      )[0]?.[0]?.amount.toString(),
    ).toBe('0.126');
  });
});

describe('computeTaxes: threshold and buyers', () => {
  it('charges no tax below the threshold', () => {
    expect(computeTaxes([taxable('9.99')], taxRule(), 'consumer', 2, dec('10'))).toEqual([[]]);
  });

  it('charges tax at and above the threshold, on the whole basket', () => {
    expect(
      amounts(computeTaxes([taxable('5.00'), taxable('5.00')], taxRule(), 'consumer', 2, dec('10'))),
    ).toEqual([['0.95'], ['0.95']]);
  });

  it('charges business buyers nothing under reverse charge', () => {
    const reverse = taxRule({ business_buyers: 'reverse_charge' });
    expect(computeTaxes([taxable('10')], reverse, 'business', 2, undefined)).toEqual([[]]);
    expect(amounts(computeTaxes([taxable('10')], reverse, 'consumer', 2, undefined))).toEqual([['1.90']]);
  });

  it('charges business buyers like consumers under `same` or by default', () => {
    expect(
      amounts(computeTaxes([taxable('10')], taxRule({ business_buyers: 'same' }), 'business', 2, undefined)),
    ).toEqual([['1.90']]);
    expect(amounts(computeTaxes([taxable('10')], taxRule(), 'business', 2, undefined))).toEqual([['1.90']]);
  });

  it('chargesTax: no rule, reverse charge for business, otherwise yes', () => {
    expect(chargesTax(undefined, 'consumer')).toBe(false);
    expect(chargesTax(taxRule({ business_buyers: 'reverse_charge' }), 'business')).toBe(false);
    expect(chargesTax(taxRule({ business_buyers: 'reverse_charge' }), 'consumer')).toBe(true);
    expect(chargesTax(taxRule(), 'business')).toBe(true);
  });
});

describe('componentRates and netOf', () => {
  it('gives the effective rates and the gross / net factor', () => {
    const { rates, factor } = componentRates([
      { name: 'a', rate: '0.05' },
      { name: 'b', rate: '0.10', compound: true },
      { name: 'c', rate: '0.01' },
    ]);
    expect(rates.map((value) => value.toString())).toEqual(['0.05', '0.105', '0.01']);
    expect(factor.toString()).toBe('1.165');
  });

  it('has factor 1 without components', () => {
    expect(componentRates([]).factor.toString()).toBe('1');
    expect(netOf(dec('9.99'), []).toString()).toBe('9.99');
  });

  it('takes the net of a gross amount at 9 decimals', () => {
    expect(netOf(dec('11.90'), [{ name: 'vat', rate: '0.19' }]).toString()).toBe('10');
    expect(netOf(dec('10'), [{ name: 'vat', rate: '0.19' }]).toString()).toBe('8.403361345');
  });
});
