import { describe, expect, it } from 'vitest';
import {
  CanonicalizationError,
  canonicalJson,
  type Json,
} from '../../../../functions/domain/money/canonical';

describe('canonicalJson', () => {
  it('writes literals and strings like JSON.stringify', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson('12.30')).toBe('"12.30"');
  });

  it.each([
    'plain',
    '',
    'quote " backslash \\ slash /',
    'controls \u0000\u0001\u001f\b\f\n\r\t',
    'del \u007f, nbsp \u00a0, line sep \u2028\u2029',
    'euro \u20ac, emoji \ud83d\ude00',
  ])('escapes %j exactly as JSON.stringify', (text) => {
    expect(canonicalJson(text)).toBe(JSON.stringify(text));
    expect(JSON.parse(canonicalJson(text))).toBe(text);
  });

  it('writes integers in shortest form, -0 as 0', () => {
    expect(canonicalJson(0)).toBe('0');
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson(42)).toBe('42');
    expect(canonicalJson(-7)).toBe('-7');
    expect(canonicalJson(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(canonicalJson(1e21)).toBe('1e+21');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'refuses the non-finite number %s with CanonicalizationError',
    (value) => {
      expect(() => canonicalJson(value)).toThrow(CanonicalizationError);
      expect(() => canonicalJson({ a: [1, { b: value }] })).toThrow(CanonicalizationError);
    },
  );

  it('names its error class', () => {
    expect(new CanonicalizationError('x').name).toBe('CanonicalizationError');
  });

  it('has no whitespace', () => {
    expect(canonicalJson({ a: [1, 2, { b: null }], c: 'x y' })).toBe('{"a":[1,2,{"b":null}],"c":"x y"}');
  });

  it('sorts keys by UTF-16 code units, not by locale or code point', () => {
    const value: Json = {
      '\ud83d\ude00': 1, // U+1F600, surrogates D83D DE00: below U+FB33 in UTF-16, above it in code points
      '\ufb33': 2,
      '\u20ac': 3,
      a: 4,
      B: 5,
      b: 6,
      A: 7,
      '\u00e9': 8,
      '1': 9,
      '': 10,
    };
    expect(canonicalJson(value)).toBe(
      '{"":10,"1":9,"A":7,"B":5,"a":4,"b":6,"\u00e9":8,"\u20ac":3,"\ud83d\ude00":1,"\ufb33":2}',
    );
  });

  it('is independent of insertion order', () => {
    const forward: Json = { a: 1, b: { c: 2, d: [3, { e: 4, f: 5 }] } };
    const backward: Json = { b: { d: [3, { f: 5, e: 4 }], c: 2 }, a: 1 };
    expect(canonicalJson(forward)).toBe(canonicalJson(backward));
  });

  it('sorts nested objects, including objects inside arrays, and keeps array order', () => {
    const value: Json = {
      price: { currency: 'EUR', amount: '12.30' },
      lines: [
        { sku: 'b', qty: 2 },
        { qty: 1, sku: 'a' },
      ],
      empty: {},
      none: [],
      deep: [[{ z: [], y: {} }]],
    };
    expect(canonicalJson(value)).toBe(
      '{"deep":[[{"y":{},"z":[]}]],"empty":{},"lines":[{"qty":2,"sku":"b"},{"qty":1,"sku":"a"}],' +
        '"none":[],"price":{"amount":"12.30","currency":"EUR"}}',
    );
  });

  it('drops members whose value is undefined, at any depth, and keeps null', () => {
    const value: Json = { a: undefined, b: null, c: { d: undefined, e: 1 } };
    expect(canonicalJson(value)).toBe('{"b":null,"c":{"e":1}}');
    expect(canonicalJson({ only: undefined })).toBe('{}');
  });

  it('escapes keys like JSON.stringify', () => {
    expect(canonicalJson({ 'a"b': 1, 'c\nd': 2, '\\': 3 })).toBe('{"\\\\":3,"a\\"b":1,"c\\nd":2}');
  });

  it('parses back to an equal value', () => {
    const value = { z: [1, 'two', null, true, { y: 'x' }], a: { b: '\u20ac' } };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });

  // RFC 8785 §3.2.3 "Sorting of Object Properties": the example's keys and their canonical order.
  it('orders the RFC 8785 §3.2.3 example keys as the RFC does', () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`) as Json;
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  // RFC 8785 §3.2.4 example, without its "numbers" member (money never travels as a JSON number here, C1).
  it('writes the RFC 8785 §3.2.4 example (literals and string) as the RFC does', () => {
    const input = JSON.parse(String.raw`{
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`) as Json;
    expect(canonicalJson(input)).toBe(
      String.raw`{"literals":[null,true,false],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });
});
