import { describe, expect, it } from 'vitest';
import { newId, ulid } from '../../../functions/shared/ids';

const CROCKFORD_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

describe('ids', () => {
  it('makes prefixed ULIDs (C4)', () => {
    expect(newId('q')).toMatch(/^q_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(ulid()).toMatch(CROCKFORD_ULID);
  });

  it('encodes the time in the first 10 characters, so ids sort by time', () => {
    const earlier = ulid(1_700_000_000_000);
    const later = ulid(1_700_000_000_001);
    expect(earlier < later).toBe(true);
    expect(ulid(0).slice(0, 10)).toBe('0000000000');
  });

  it('stays monotonic within one millisecond', () => {
    const at = 1_800_000_000_000;
    const ids = Array.from({ length: 1000 }, () => ulid(at));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
