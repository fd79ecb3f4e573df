import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isNewer } from '../../../functions/receiver';

const T0 = '2026-11-01T12:00:00.000Z';
const T1 = '2026-11-01T12:00:01.000Z';

describe('isNewer', () => {
  it('applies anything when nothing is stored', () => {
    expect(isNewer({ ts: T0 }, undefined)).toBe(true);
    expect(isNewer({ ts: T0, data: { seq: 1 } }, undefined, { field: 'seq' })).toBe(true);
  });

  describe('by seq', () => {
    it('applies a newer seq, ignores an older one and an equal one', () => {
      const stored = { ts: T1, seq: 5 };
      expect(isNewer({ ts: T0, data: { seq: 6 } }, stored)).toBe(true);
      expect(isNewer({ ts: T1, data: { seq: 4 } }, stored)).toBe(false);
      expect(isNewer({ ts: T1, data: { seq: 5 } }, stored)).toBe(false);
    });

    it('decides by seq alone, even against ts', () => {
      // An older seq with a later ts is still older data.
      expect(isNewer({ ts: '2027-01-01T00:00:00.000Z', data: { seq: 4 } }, { ts: T0, seq: 5 })).toBe(false);
      expect(isNewer({ ts: T0, data: { seq: 6 } }, { ts: '2027-01-01T00:00:00.000Z', seq: 5 })).toBe(true);
    });

    it('reads numeric strings, integers beyond 2^53 exactly', () => {
      expect(isNewer({ ts: T0, data: { seq: '10' } }, { ts: T0, seq: 9 })).toBe(true);
      expect(
        isNewer({ ts: T0, data: { seq: '9007199254740993' } }, { ts: T0, seq: '9007199254740992' }),
      ).toBe(true);
      expect(
        isNewer({ ts: T0, data: { seq: '9007199254740992' } }, { ts: T0, seq: '9007199254740993' }),
      ).toBe(false);
      expect(isNewer({ ts: T0, data: { seq: '1.5' } }, { ts: T0, seq: 1 })).toBe(true);
      expect(isNewer({ ts: T0, data: { seq: 2 } }, { ts: T0, seq: '2.0' })).toBe(false);
    });
  });

  describe('by version', () => {
    it('uses data.version when there is no seq (catalog events carry version)', () => {
      const stored = { ts: T1, version: 42 };
      expect(isNewer({ ts: T0, data: { version: 43 } }, stored)).toBe(true);
      expect(isNewer({ ts: T1, data: { version: 41 } }, stored)).toBe(false);
      expect(isNewer({ ts: T1, data: { version: 42 } }, stored)).toBe(false);
    });

    it('uses the field asked for', () => {
      const incoming = { ts: T0, data: { seq: 1, version: 43 } };
      expect(isNewer(incoming, { ts: T0, seq: 2, version: 42 }, { field: 'version' })).toBe(true);
      expect(isNewer(incoming, { ts: T0, seq: 2, version: 42 }, { field: 'seq' })).toBe(false);
      // Without the option, seq wins when the incoming data has one.
      expect(isNewer(incoming, { ts: T0, seq: 2, version: 42 })).toBe(false);
    });
  });

  describe('ts fallback', () => {
    it('compares ts when the field is missing or not numeric on either side', () => {
      expect(isNewer({ ts: T1 }, { ts: T0 })).toBe(true);
      expect(isNewer({ ts: T0 }, { ts: T1 })).toBe(false);
      expect(isNewer({ ts: T0 }, { ts: T0 })).toBe(false);
      expect(isNewer({ ts: T1, data: { seq: 3 } }, { ts: T0 })).toBe(true);
      expect(isNewer({ ts: T0, data: { seq: 3 } }, { ts: T1 })).toBe(false);
      expect(isNewer({ ts: T1, data: { version: 'v3' } }, { ts: T0, version: 2 })).toBe(true);
      expect(isNewer({ ts: T1 }, { ts: T0, version: 9 })).toBe(true);
    });

    it('throws RangeError when a ts it needs is not a timestamp', () => {
      expect(() => isNewer({ ts: 'yesterday' }, { ts: T0 })).toThrow(RangeError);
      expect(() => isNewer({ ts: T0 }, { ts: '' })).toThrow(RangeError);
    });
  });

  it('is a strict order: of two different sequence values exactly one is newer; equal is never newer', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        // Near neighbours (where a float comparison would go wrong) as well as far apart values.
        fc.oneof(fc.bigInt({ min: -2n, max: 2n }), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n })),
        fc.boolean(),
        (a, delta, asText) => {
          const b = a + delta;
          const safe = (n: bigint) =>
            n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER);
          const value = (n: bigint) => (asText || !safe(n) ? String(n) : Number(n));
          const forward = isNewer({ ts: T0, data: { seq: value(a) } }, { ts: T0, seq: value(b) });
          const backward = isNewer({ ts: T0, data: { seq: value(b) } }, { ts: T0, seq: value(a) });
          expect(forward).toBe(a > b);
          expect(backward).toBe(b > a);
        },
      ),
      { numRuns: 10_000 },
    );
  });
});
