import { describe, expect, it } from 'vitest';
import { backoffMs, CONFLICT, type RetryPolicy, retryOnConflict } from '../../../functions/shared/retry';

const policy = (waits: number[], random = () => 0.999): RetryPolicy => ({
  attempts: 5,
  baseMs: 10,
  capMs: 50,
  random,
  sleep: async (ms) => {
    waits.push(ms);
  },
});

describe('retryOnConflict', () => {
  it('answers the first attempt that does not conflict, without waiting before it', async () => {
    const waits: number[] = [];
    const seen: number[] = [];
    const value = await retryOnConflict(
      policy(waits),
      async (attempt) => {
        seen.push(attempt);
        return attempt < 2 ? CONFLICT : `won at ${attempt}`;
      },
      () => new Error('exhausted'),
    );
    expect(value).toBe('won at 2');
    expect(seen).toEqual([0, 1, 2]);
    expect(waits).toHaveLength(2);
  });

  it('gives up after its attempts with the caller’s error, waiting only between attempts', async () => {
    const waits: number[] = [];
    let calls = 0;
    await expect(
      retryOnConflict(
        policy(waits),
        async () => {
          calls += 1;
          return CONFLICT;
        },
        () => new RangeError('kept losing'),
      ),
    ).rejects.toThrow(RangeError);
    expect(calls).toBe(5);
    expect(waits).toHaveLength(4);
  });

  it('waits a full-jitter exponential backoff, capped', async () => {
    const waits: number[] = [];
    await retryOnConflict(
      policy(waits),
      async () => CONFLICT,
      () => new Error('x'),
    ).catch(() => undefined);
    expect(waits.map((ms) => Math.round(ms))).toEqual([10, 20, 40, 50]);
    expect(backoffMs({ attempts: 3, baseMs: 10, capMs: 50 }, 3, () => 0)).toBe(0);
    expect(backoffMs({ attempts: 3, baseMs: 10, capMs: 50 }, 1, () => 0.5)).toBe(10);
  });

  it('passes an attempt’s own error through at once', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(
        policy([]),
        async () => {
          calls += 1;
          throw new TypeError('not a race');
        },
        () => new Error('exhausted'),
      ),
    ).rejects.toThrow(TypeError);
    expect(calls).toBe(1);
  });
});
