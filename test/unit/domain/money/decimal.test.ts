import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DECIMAL_STRING,
  Decimal,
  dec,
  InvalidAmountError,
  ONE,
  sum,
  ZERO,
} from '../../../../functions/domain/money/decimal';

describe('dec', () => {
  it.each(['0', '-1.50', '12', '-0', '0.001', '1200', '123456789012345678901234567890.123456789'])(
    'accepts %j',
    (text) => {
      const value = dec(text);
      expect(value).toBeInstanceOf(Decimal);
      expect(value.eq(new Decimal(text))).toBe(true);
    },
  );

  it('keeps every digit it was given', () => {
    expect(dec('-1.50').toFixed(2)).toBe('-1.50');
    expect(dec('123456789012345678901234567890.123456789').toString()).toBe(
      '123456789012345678901234567890.123456789',
    );
  });

  it.each([
    '1e5',
    '1E5',
    ' 1',
    '1 ',
    '01',
    '-01',
    '.5',
    '-.5',
    '1.',
    '',
    '-',
    '+1',
    '--1',
    '1,5',
    '1_000',
    '0x10',
    'NaN',
    'Infinity',
    '-Infinity',
  ])('refuses %j with InvalidAmountError', (text) => {
    expect(DECIMAL_STRING.test(text)).toBe(false);
    expect(() => dec(text)).toThrow(InvalidAmountError);
    expect(() => dec(text)).toThrow(`not a decimal amount: ${JSON.stringify(text)}`);
  });

  it('names its error class', () => {
    expect(new InvalidAmountError('x').name).toBe('InvalidAmountError');
  });

  it('passes a Decimal through and reads a bigint exactly', () => {
    const value = dec('2.5');
    expect(dec(value)).toBe(value);
    expect(dec(12345678901234567890123n).toString()).toBe('12345678901234567890123');
    expect(dec(-5n).toString()).toBe('-5');
  });

  it('takes no JS numbers (binary floating point has no place on an amount path)', () => {
    expectTypeOf<number>().not.toExtend<Parameters<typeof dec>[0]>();
  });

  it('never uses binary floats: 0.1 + 0.2 equals 0.3 exactly', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    const total = dec('0.1').plus(dec('0.2'));
    expect(total.eq(dec('0.3'))).toBe(true);
    expect(total.toString()).toBe('0.3');
    expect(dec('1.1').times(dec('1.1')).toString()).toBe('1.21');
    expect(dec('0.3').minus(dec('0.1')).toString()).toBe('0.2');
  });

  it('never writes exponent notation for small or large amounts', () => {
    expect(dec(`0.${'0'.repeat(40)}1`).toString()).toBe(`0.${'0'.repeat(40)}1`);
    expect(dec(`1${'0'.repeat(40)}`).toString()).toBe(`1${'0'.repeat(40)}`);
  });

  it('keeps 50 significant digits in a division', () => {
    expect(dec('1').dividedBy(dec('3')).toString()).toBe(`0.${'3'.repeat(50)}`);
  });
});

describe('sum', () => {
  it('is zero for no values', () => {
    expect(sum([]).eq(ZERO)).toBe(true);
    expect(sum([]).toString()).toBe('0');
  });

  it('adds exactly', () => {
    expect(sum([dec('0.1'), dec('0.2'), dec('0.3')]).toString()).toBe('0.6');
    expect(sum(Array.from({ length: 100 }, () => dec('0.01'))).eq(ONE)).toBe(true);
    expect(sum([dec('12.30'), dec('-2.30'), dec('0.125')]).toString()).toBe('10.125');
    expect(sum([dec('99999999999999999999.99'), dec('0.01')]).toString()).toBe('100000000000000000000');
  });

  it('does not change its inputs', () => {
    const values = [dec('1.5'), dec('2.5')];
    sum(values);
    expect(values.map((value) => value.toString())).toEqual(['1.5', '2.5']);
  });
});
