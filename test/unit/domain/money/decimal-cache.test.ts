import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Decimal,
  dec,
  InvalidAmountError,
  PARSE_CACHE_LIMITS,
  parseCacheUsage,
} from '../../../../functions/domain/money/decimal';

/** A distinct decimal string of exactly `length` characters (`length` ≥ 3) for each `index`. */
const distinct = (index: number, length: number): string => {
  const fraction = String(index).padStart(length - 2, '0');
  return `1.${fraction.slice(-(length - 2))}`;
};

describe('the parse cache of dec()', () => {
  it('stays within its character and entry bounds after many distinct long strings', () => {
    const { chars, entries, keyLength } = PARSE_CACHE_LIMITS;
    // Enough strings of the longest cached length to cross the character bound several times.
    const count = Math.ceil((4 * chars) / keyLength);
    let peakChars = 0;
    let peakEntries = 0;
    for (let index = 0; index < count; index += 1) {
      const text = distinct(index, keyLength);
      expect(dec(text).toString()).toBe(new Decimal(text).toString());
      const usage = parseCacheUsage();
      peakChars = Math.max(peakChars, usage.chars);
      peakEntries = Math.max(peakEntries, usage.entries);
    }
    expect(peakChars).toBeLessThanOrEqual(chars);
    expect(peakChars).toBeGreaterThan(chars - keyLength);
    expect(peakEntries).toBeLessThanOrEqual(entries);
  });

  it('stays within its entry bound after many distinct short strings', () => {
    let peakEntries = 0;
    for (let index = 0; index < 2.5 * PARSE_CACHE_LIMITS.entries; index += 1) {
      dec(`${index}.5`);
      peakEntries = Math.max(peakEntries, parseCacheUsage().entries);
    }
    expect(peakEntries).toBe(PARSE_CACHE_LIMITS.entries);
    expect(parseCacheUsage().chars).toBeLessThanOrEqual(PARSE_CACHE_LIMITS.chars);
  });

  it('never caches a string longer than its key length, and still parses it exactly', () => {
    const before = parseCacheUsage();
    for (const length of [PARSE_CACHE_LIMITS.keyLength + 1, 1_000, 1024 * 1024]) {
      const text = `7.${'3'.repeat(length - 2)}`;
      const value = dec(text);
      expect(value.toFixed(length - 2)).toBe(text);
      expect(dec(text)).not.toBe(value);
    }
    expect(parseCacheUsage()).toEqual(before);
  });

  it('serves a cached string from the cache, the same value each time', () => {
    const text = '12345.678901';
    expect(dec(text)).toBe(dec(text));
  });

  it('keeps the tally equal to what it holds (property: any sequence of strings)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.bigInt({ min: 0n, max: 10n ** 60n }).map(String),
            fc
              .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 40n }))
              .map(([integer, fraction]) => `-${integer}.${fraction}`),
          ),
          { maxLength: 200 },
        ),
        (texts) => {
          for (const text of texts) {
            expect(dec(text).eq(new Decimal(text))).toBe(true);
            const usage = parseCacheUsage();
            expect(usage.chars).toBeLessThanOrEqual(PARSE_CACHE_LIMITS.chars);
            expect(usage.entries).toBeLessThanOrEqual(PARSE_CACHE_LIMITS.entries);
          }
        },
      ),
    );
  });

  it('quotes only the start of a long refused value in its error', () => {
    const text = `1e${'9'.repeat(1024 * 1024)}`;
    const error = (() => {
      try {
        dec(text);
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidAmountError);
    const message = error instanceof Error ? error.message : '';
    expect(message.length).toBeLessThan(120);
    expect(message).toContain(`(${text.length + 2} characters)`);
    expect(message.startsWith('not a decimal amount: "1e999')).toBe(true);
    expect(new InvalidAmountError(undefined).message).toBe('not a decimal amount: undefined');
  });
});
