import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DECIMAL_STRING, dec, pow10 } from '../../../functions/domain/money/decimal';
import { toHttpError } from '../../../functions/handlers/middleware/domain-errors';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import { parseWith } from '../../../functions/handlers/middleware/validation';
import { catalogDocumentSchema } from '../../../functions/schemas/catalog-document';
import { quoteRequestSchema, refundRequestSchema } from '../../../functions/schemas/checkout';
import {
  AMOUNT_LIMITS,
  boundedDecimalPattern,
  type DecimalLimits,
  decimalString,
  describeLimits,
  maxDecimalLength,
  PERCENT_LIMITS,
  RATE_LIMITS,
  TAX_RATE_LIMITS,
} from '../../../functions/schemas/decimal';
import { OPERATION_SCHEMAS } from '../../../functions/schemas/operations';
import { validateCatalogDocument } from '../../../functions/usecases/catalog/validate';

const demo: unknown = JSON.parse(
  readFileSync(new URL('../../../catalog/demo-catalog.json', import.meta.url), 'utf8'),
);

/** A JSON schema pattern of a decimal: `DECIMAL_STRING` or a bounded one, signed or not. */
const DECIMAL_PATTERN = /^\^(-\?)?\(0\|\[1-9\]/;

const ONE_MB_OF_DIGITS = '9'.repeat(1024 * 1024);

/** The reference model: what a field within `limits` accepts, from the parts of the string. */
const withinLimits = (value: string, limits: DecimalLimits): boolean => {
  if (!DECIMAL_STRING.test(value)) return false;
  const negative = value.startsWith('-');
  const [integer = '', fraction = ''] = (negative ? value.slice(1) : value).split('.');
  if (integer.length > limits.integerDigits || fraction.length > limits.fractionDigits) return false;
  const sign = limits.sign ?? 'non-negative';
  if (sign === 'signed') return true;
  if (negative) return false;
  return sign === 'non-negative' || /[1-9]/.test(`${integer}${fraction}`);
};

const limitsArb: fc.Arbitrary<DecimalLimits> = fc.record({
  integerDigits: fc.integer({ min: 1, max: 24 }),
  fractionDigits: fc.integer({ min: 0, max: 24 }),
  sign: fc.constantFrom('non-negative' as const, 'positive' as const, 'signed' as const),
});

const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });

/** Well-formed decimals of any size (sign, integer part, optional fraction), around and beyond the limits. */
const decimalArb: fc.Arbitrary<string> = fc
  .record({
    negative: fc.boolean(),
    integer: fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, 30)).map(([head, tail]) => `${head}${tail}`),
    ),
    fraction: fc.option(digits(1, 30), { nil: undefined }),
  })
  .map(
    ({ negative, integer, fraction }) =>
      `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`,
  );

/** Anything else a client may send as a decimal: exponents, spaces, leading zeros, words, other scripts. */
const junkArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'0123456789.-+eE _,'), maxLength: 40 }),
  fc.constantFrom('', '-', '.', '1.', '.5', '01', '-01', '00.1', '1e5', ' 1', '1 ', '+1', 'NaN', '١٢٣'),
);

describe('decimalString(limits)', () => {
  it('accepts exactly the decimals within its limits (property, against a reference model)', () => {
    fc.assert(
      fc.property(limitsArb, fc.oneof(decimalArb, decimalArb, junkArb), (limits, value) => {
        expect(decimalString(limits).safeParse(value).success).toBe(withinLimits(value, limits));
      }),
      { numRuns: 5_000 },
    );
  });

  it('anything it accepts is a decimal dec() parses, within the length, digits and magnitude of its limits', () => {
    fc.assert(
      fc.property(limitsArb, decimalArb, (limits, value) => {
        fc.pre(decimalString(limits).safeParse(value).success);
        expect(DECIMAL_STRING.test(value)).toBe(true);
        expect(value.length).toBeLessThanOrEqual(maxDecimalLength(limits));
        const parsed = dec(value);
        expect(parsed.abs().lessThan(pow10(limits.integerDigits))).toBe(true);
        expect(parsed.decimalPlaces()).toBeLessThanOrEqual(limits.fractionDigits);
        if (limits.sign !== 'signed') expect(parsed.isNegative()).toBe(false);
        if (limits.sign === 'positive') expect(parsed.isZero()).toBe(false);
      }),
      { numRuns: 5_000 },
    );
  });

  it('refuses any decimal beyond its limits, naming them (property)', () => {
    fc.assert(
      fc.property(
        limitsArb,
        fc.integer({ min: 1, max: 2_000 }),
        fc.constantFrom('integer', 'fraction'),
        (limits, extra, where) => {
          const integer = where === 'integer' ? `1${'2'.repeat(limits.integerDigits + extra - 1)}` : '1';
          const fraction = where === 'fraction' ? `.${'3'.repeat(limits.fractionDigits + extra)}` : '';
          const result = decimalString(limits).safeParse(`${integer}${fraction}`);
          expect(result.success).toBe(false);
          const messages = result.error?.issues.map((issue) => issue.message) ?? [];
          // One issue: the first failed check ends the others.
          expect(messages).toHaveLength(1);
          expect(messages[0]).toContain(describeLimits(limits));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('refuses a megabyte of digits with one issue, without looking past its limits', () => {
    for (const limits of [AMOUNT_LIMITS, RATE_LIMITS, TAX_RATE_LIMITS, PERCENT_LIMITS]) {
      for (const value of [ONE_MB_OF_DIGITS, `0.${ONE_MB_OF_DIGITS}`, `-${ONE_MB_OF_DIGITS}`]) {
        const result = decimalString(limits).safeParse(value);
        expect(result.success).toBe(false);
        expect(result.error?.issues).toHaveLength(1);
      }
    }
    // The pattern alone refuses it too, and has only bounded repetitions: it never runs over the whole string.
    for (const limits of [AMOUNT_LIMITS, RATE_LIMITS, TAX_RATE_LIMITS, PERCENT_LIMITS]) {
      const pattern = boundedDecimalPattern(limits);
      expect(pattern.test(ONE_MB_OF_DIGITS)).toBe(false);
      expect(pattern.source).not.toMatch(/[*+]/);
    }
  });

  it('keeps the sign rules and their messages', () => {
    const amount = decimalString(AMOUNT_LIMITS);
    expect(amount.safeParse('0').success).toBe(true);
    expect(amount.safeParse('-1').error?.issues[0]?.message).toBe('must not be negative');
    expect(amount.safeParse('-0').error?.issues[0]?.message).toBe('must not be negative');
    const rate = decimalString(RATE_LIMITS);
    for (const zero of ['0', '0.0', '0.000000000000000000'])
      expect(rate.safeParse(zero).error?.issues[0]?.message).toBe('must be positive');
    expect(rate.safeParse('-1.5').error?.issues[0]?.message).toBe('must be positive');
    expect(rate.safeParse(`0.${'0'.repeat(17)}1`).success).toBe(true);
    const markup = decimalString({ ...PERCENT_LIMITS, sign: 'signed' });
    expect(markup.safeParse('-9999.999999999').success).toBe(true);
    expect(markup.safeParse('-10000').success).toBe(false);
  });

  it('describes its limits in the JSON schema (maxLength and a bounded pattern)', () => {
    expect(z.toJSONSchema(decimalString(AMOUNT_LIMITS))).toMatchObject({
      type: 'string',
      maxLength: 28,
      pattern: '^(0|[1-9]\\d{0,17})(\\.\\d{1,9})?$',
    });
    expect(
      z.toJSONSchema(decimalString({ integerDigits: 1, fractionDigits: 0, sign: 'signed' })),
    ).toMatchObject({
      maxLength: 2,
      pattern: '^-?(0|[1-9])$',
    });
  });

  it('refuses limits it cannot mean', () => {
    expect(() => decimalString({ integerDigits: 0, fractionDigits: 2 })).toThrow(RangeError);
    expect(() => decimalString({ integerDigits: 3, fractionDigits: -1 })).toThrow(RangeError);
    expect(() => decimalString({ integerDigits: 1.5, fractionDigits: 2 })).toThrow(RangeError);
    expect(() => decimalString({ integerDigits: 41, fractionDigits: 2 })).toThrow(RangeError);
  });

  it('has limits per field kind that fit what the fields mean', () => {
    const fits = (limits: DecimalLimits, value: string) => decimalString(limits).safeParse(value).success;
    // Amounts: BTC's 8 minor units, and the 9 decimals kept at step boundaries; no more.
    expect(fits(AMOUNT_LIMITS, '0.00002000')).toBe(true);
    expect(fits(AMOUNT_LIMITS, '999999999999999999.999999999')).toBe(true);
    expect(fits(AMOUNT_LIMITS, '0.0000000001')).toBe(false);
    // Rates: BTC in a weak currency, and a weak currency in BTC with significant digits left.
    expect(fits(RATE_LIMITS, '125000000000.5')).toBe(true);
    expect(fits(RATE_LIMITS, '0.000000000008123456')).toBe(true);
    // Tax rates are fractions; percentages stay below 10 000 %.
    expect(fits(TAX_RATE_LIMITS, '0.19')).toBe(true);
    expect(fits(TAX_RATE_LIMITS, '19000')).toBe(false);
    expect(fits(PERCENT_LIMITS, '2.49')).toBe(true);
    expect(fits(PERCENT_LIMITS, '10000')).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Every decimal field of every request
// ---------------------------------------------------------------------------------------------------------

type Path = readonly (string | number)[];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Paths of the decimal strings of a JSON tree (product attributes are free text, not decimals). */
const decimalPaths = (value: unknown, prefix: Path = []): Path[] => {
  if (typeof value === 'string') return DECIMAL_STRING.test(value) ? [prefix] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => decimalPaths(item, [...prefix, index]));
  if (isObject(value))
    return Object.entries(value).flatMap(([key, item]) =>
      key === 'attributes' ? [] : decimalPaths(item, [...prefix, key]),
    );
  return [];
};

const replaced = (root: unknown, at: Path, value: unknown): unknown => {
  const copy = structuredClone(root);
  let parent: unknown = copy;
  for (const segment of at.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[segment];
  (parent as Record<string | number, unknown>)[at[at.length - 1] as string | number] = value;
  return copy;
};

/** `$.pricelists[0].items[3].base_price`, as the error mapping renders a path. */
const rendered = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : `${text}.${String(segment)}`),
    '$',
  );

const thrownBy = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

const OVERSIZED: readonly (readonly [string, string])[] = [
  ['a huge integer part', `1${'0'.repeat(40)}`],
  ['a huge fraction', `0.${'1'.repeat(40)}`],
  ['a megabyte of digits', ONE_MB_OF_DIGITS],
];

/** A failed union (an override's `price_or_markup`) names its own path, not the field inside. */
const UNION_PATHS = new Set(['price_or_markup']);

const expectedPath = (path: Path): Path => {
  const union = path.findIndex((segment) => typeof segment === 'string' && UNION_PATHS.has(segment));
  return union >= 0 ? path.slice(0, union + 1) : path;
};

describe('every decimal field of a request is bounded', () => {
  const paths = decimalPaths(demo);

  it('the demo catalog has decimals in every section that carries them', () => {
    const sections = new Set(paths.map((path) => path[0]));
    for (const section of [
      'pricelists',
      'fx_rates',
      'tax_rules',
      'overrides',
      'promotions',
      'fees',
      'limits',
    ])
      expect(sections, section).toContain(section);
    expect(catalogDocumentSchema.safeParse(demo).success).toBe(true);
  });

  it.each(OVERSIZED)('catalog import: %s in any decimal field is a 400 naming the field', (_label, value) => {
    for (const path of paths) {
      const http = toHttpError(thrownBy(() => validateCatalogDocument(replaced(demo, path, value))));
      expect(http, rendered(path)).toBeInstanceOf(HttpError);
      expect(http?.statusCode).toBe(400);
      expect(http?.code).toBe('invalid_request');
      expect(http?.description).toContain(`${rendered(expectedPath(path))}: `);
      // The description quotes no part of the value.
      expect(http?.description.length).toBeLessThan(1_000);
    }
  });

  it.each(OVERSIZED)('quote: %s as a checkout fee is a 400 naming the field', (_label, value) => {
    const body = {
      items: [{ sku_id: 'GAME-1', quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
      checkout_fees: [
        { kind: 'gift_wrap', amount: '1.50' },
        { kind: 'service', amount: value },
      ],
    };
    const http = toHttpError(thrownBy(() => parseWith(quoteRequestSchema, body)));
    expect(http).toBeInstanceOf(HttpError);
    expect(http?.statusCode).toBe(400);
    expect(http?.code).toBe('invalid_request');
    expect(http?.description).toMatch(/^\$\.checkout_fees\[1\]\.amount: /);
    expect(http?.description).toContain(describeLimits(AMOUNT_LIMITS));
    expect(http?.details).toEqual({
      problems: [
        { path: '$.checkout_fees[1].amount', message: expect.stringContaining('at most 18 digits') },
      ],
    });
  });

  it('quantities are JSON integers: a huge one is refused whatever its digits', () => {
    for (const quantity of [JSON.parse(ONE_MB_OF_DIGITS), 1e21, 10_001, 1.5]) {
      const result = refundRequestSchema.safeParse({
        receipt_id: `rcpt_${'0'.repeat(26)}`,
        kind: 'return',
        lines: [{ sku_id: 'GAME-1', quantity }],
      });
      expect(new Set(result.error?.issues.map((issue) => rendered(issue.path)))).toEqual(
        new Set(['$.lines[0].quantity']),
      );
    }
  });

  it('no request schema has an unbounded decimal pattern (each one carries maxLength)', () => {
    const patterns: { where: string; pattern: string; maxLength: unknown }[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        for (const [index, item] of node.entries()) walk(item, `${where}[${index}]`);
      } else if (isObject(node)) {
        if (typeof node.pattern === 'string' && DECIMAL_PATTERN.test(node.pattern))
          patterns.push({ where, pattern: node.pattern, maxLength: node.maxLength });
        for (const [key, item] of Object.entries(node)) walk(item, `${where}.${key}`);
      }
    };
    for (const [operation, schemas] of Object.entries(OPERATION_SCHEMAS)) {
      for (const part of ['body', 'query', 'path'] as const) {
        const schema = schemas[part];
        if (schema)
          walk(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }), `${operation}.${part}`);
      }
    }
    expect(patterns.length).toBeGreaterThan(10);
    for (const { where, pattern, maxLength } of patterns) {
      expect(typeof maxLength, where).toBe('number');
      expect(pattern, where).not.toMatch(/\\d[*+]/);
    }
  });
});
