import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  baseDelaySeconds,
  DAILY_RETRY_INTERVAL_SECONDS,
  DEFAULT_RETRY_POLICY,
  decideRetry,
  InvalidRetryPolicyError,
  maxAttempts,
  type NetworkErrorKind,
  parseRetryAfterSeconds,
  type RetryDecision,
  type RetryPolicy,
  validateRetryPolicy,
} from '../../../../functions/domain/webhooks/retry-policy';

const NOW = new Date('2026-11-01T12:00:00.000Z');
const SECONDS_PER_DAY = 86_400;
/** The receiver kit's default dedup memory (C14, C15). */
const DEDUP_MEMORY_SECONDS = 7 * SECONDS_PER_DAY;

const response = (status: number, retryAfter?: string): AttemptOutcome =>
  retryAfter === undefined ? { kind: 'response', status } : { kind: 'response', status, retryAfter };
const networkError = (error: NetworkErrorKind): AttemptOutcome => ({ kind: 'network_error', error });

const decide = (
  outcome: AttemptOutcome,
  attempt = 1,
  random: () => number = () => 0.5,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): RetryDecision => decideRetry({ policy, attempt, outcome, random, now: NOW });

/** A shortened policy as tests of the delivery path use it. */
const SHORT: RetryPolicy = {
  backoffSeconds: [0.01, 0.02, 0.05],
  dailyRetryDays: 0,
  jitter: { min: 0.8, max: 1.2 },
  attemptTimeoutMs: 200,
};

describe('the production schedule (defaults, C14)', () => {
  it('is exactly 5s,15s,30s,1m,2m,5m,10m,30m,1h,3h,6h,12h,24h, then daily for 3 days, ×U(0.8,1.2), 10 s per attempt', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      backoffSeconds: [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 10_800, 21_600, 43_200, 86_400],
      dailyRetryDays: 3,
      jitter: { min: 0.8, max: 1.2 },
      attemptTimeoutMs: 10_000,
    });
    expect(DAILY_RETRY_INTERVAL_SECONDS).toBe(SECONDS_PER_DAY);
    expect(validateRetryPolicy(DEFAULT_RETRY_POLICY)).toBe(DEFAULT_RETRY_POLICY);
  });

  it('is frozen, so no caller can change the production values', () => {
    expect(Object.isFrozen(DEFAULT_RETRY_POLICY)).toBe(true);
    expect(Object.isFrozen(DEFAULT_RETRY_POLICY.backoffSeconds)).toBe(true);
    expect(Object.isFrozen(DEFAULT_RETRY_POLICY.jitter)).toBe(true);
  });

  it('allows 17 attempts: the first, 13 backoff retries and 3 daily ones', () => {
    expect(maxAttempts(DEFAULT_RETRY_POLICY)).toBe(17);
    const waits = Array.from({ length: 17 }, (_, index) => baseDelaySeconds(DEFAULT_RETRY_POLICY, index + 1));
    expect(waits).toEqual([
      5,
      15,
      30,
      60,
      120,
      300,
      600,
      1800,
      3600,
      10_800,
      21_600,
      43_200,
      86_400,
      86_400,
      86_400,
      86_400,
      undefined,
    ]);
    expect(baseDelaySeconds(DEFAULT_RETRY_POLICY, 18)).toBeUndefined();
  });

  it('has its longest horizon (every wait at max jitter) at about 5.9 days, below the 7-day dedup memory', () => {
    const waits: number[] = [];
    for (let attempt = 1; ; attempt += 1) {
      const decision = decide(response(503), attempt, () => 1 - Number.EPSILON);
      if (decision.kind !== 'retry') {
        expect(decision).toEqual({ kind: 'dead', reason: 'retries_exhausted_after_http_503' });
        expect(attempt).toBe(17);
        break;
      }
      waits.push(decision.delaySeconds);
    }
    const timeouts = (maxAttempts(DEFAULT_RETRY_POLICY) * DEFAULT_RETRY_POLICY.attemptTimeoutMs) / 1000;
    const horizon = waits.reduce((total, wait) => total + wait, 0) + timeouts;
    expect(horizon / SECONDS_PER_DAY).toBeCloseTo(5.94, 2);
    expect(horizon).toBeLessThan(DEDUP_MEMORY_SECONDS);
    // Unjittered: 168 530 s of backoff + 3 daily retries = 427 730 s (4.95 days); × 1.2 = 513 276 s.
    const bases = Array.from(
      { length: 16 },
      (_, index) => baseDelaySeconds(DEFAULT_RETRY_POLICY, index + 1)!,
    );
    expect(bases.reduce((total, wait) => total + wait, 0)).toBe(427_730);
    expect(waits).toHaveLength(16);
    expect(waits.reduce((total, wait) => total + wait, 0)).toBeCloseTo(513_276, 0);
  });
});

describe('decideRetry: status classes', () => {
  it.each([200, 201, 202, 204, 299])('%i is delivered', (status) => {
    expect(decide(response(status))).toEqual({ kind: 'delivered' });
  });

  it('2xx is delivered even on the last attempt and ignores Retry-After', () => {
    expect(decide(response(200, '60'), 17)).toEqual({ kind: 'delivered' });
  });

  it.each([500, 502, 503, 504, 599])('%i retries on the next backoff step with jitter', (status) => {
    expect(decide(response(status), 1, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 5,
      reason: `http_${status}`,
    });
  });

  it('5xx ignores Retry-After (only 429 honours it)', () => {
    expect(decide(response(503, '120'), 2, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 15,
      reason: 'http_503',
    });
  });

  it.each([301, 302, 303, 307, 308, 300, 304])('%i is never followed and retried by backoff', (status) => {
    expect(decide(response(status), 3, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 30,
      reason: `redirect_not_followed_${status}`,
    });
  });

  it.each([408, 409, 425])('%i is transient and retried by backoff', (status) => {
    expect(decide(response(status), 4, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 60,
      reason: `http_${status}`,
    });
  });

  it.each([400, 401, 403, 404, 422, 405, 411, 413, 415, 418, 431, 451, 499])(
    '%i stops delivery as a client error (endpoint stays enabled)',
    (status) => {
      expect(decide(response(status))).toEqual({
        kind: 'stopped',
        reason: `client_error_${status}`,
        disableEndpoint: false,
      });
    },
  );

  it('410 stops delivery and disables the endpoint', () => {
    expect(decide(response(410))).toEqual({ kind: 'stopped', reason: 'gone', disableEndpoint: true });
    expect(decide(response(410), 17)).toEqual({ kind: 'stopped', reason: 'gone', disableEndpoint: true });
  });

  it('a client error on the last attempt is still "stopped", not "dead"', () => {
    expect(decide(response(404), 17)).toEqual({
      kind: 'stopped',
      reason: 'client_error_404',
      disableEndpoint: false,
    });
  });

  it.each([100, 101, 103, 199, 600, 999, 0, -1])(
    '%i (never a sound final answer) is retried like 5xx',
    (status) => {
      expect(decide(response(status))).toEqual({ kind: 'retry', delaySeconds: 5, reason: `http_${status}` });
    },
  );

  it('a non-integer status is retried as http_invalid_status', () => {
    expect(decide(response(Number.NaN))).toEqual({
      kind: 'retry',
      delaySeconds: 5,
      reason: 'http_invalid_status',
    });
    expect(decide(response(200.5))).toEqual({
      kind: 'retry',
      delaySeconds: 5,
      reason: 'http_invalid_status',
    });
  });
});

describe('decideRetry: network errors', () => {
  it.each([
    'timeout',
    'connection_reset',
    'connection_refused',
    'dns_failure',
    'tls_error',
    'other',
  ] as const)('%s is retried by backoff, the reason naming it', (error) => {
    expect(decide(networkError(error), 5, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 120,
      reason: error,
    });
  });

  it.each(['address_not_allowed', 'scheme_not_allowed'] as const)(
    '%s is a configuration problem: stopped at once',
    (error) => {
      expect(decide(networkError(error))).toEqual({ kind: 'stopped', reason: error, disableEndpoint: false });
    },
  );

  it('a retryable network error after the last attempt is dead', () => {
    expect(decide(networkError('timeout'), 17)).toEqual({
      kind: 'dead',
      reason: 'retries_exhausted_after_timeout',
    });
  });
});

describe('decideRetry: 429 and Retry-After', () => {
  it('waits the Retry-After seconds, unjittered', () => {
    for (const draw of [0, 0.5, 0.999]) {
      expect(decide(response(429, '120'), 1, () => draw)).toEqual({
        kind: 'retry',
        delaySeconds: 120,
        reason: 'http_429_retry_after',
      });
    }
  });

  it('waits until a Retry-After HTTP-date', () => {
    expect(decide(response(429, 'Sun, 01 Nov 2026 12:05:00 GMT'))).toEqual({
      kind: 'retry',
      delaySeconds: 300,
      reason: 'http_429_retry_after',
    });
  });

  it('clamps Retry-After to 1 s – 24 h', () => {
    expect(decide(response(429, '0'))).toMatchObject({ delaySeconds: 1 });
    expect(decide(response(429, '999999'))).toMatchObject({ delaySeconds: 86_400 });
    expect(decide(response(429, 'Sat, 31 Oct 2026 12:00:00 GMT'))).toMatchObject({ delaySeconds: 1 });
    expect(decide(response(429, 'Tue, 01 Dec 2026 12:00:00 GMT'))).toMatchObject({ delaySeconds: 86_400 });
  });

  it('falls back to the backoff step when Retry-After is absent or unparseable', () => {
    expect(decide(response(429), 2, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 15,
      reason: 'http_429',
    });
    expect(decide(response(429, 'soon'), 2, () => 0.5)).toEqual({
      kind: 'retry',
      delaySeconds: 15,
      reason: 'http_429',
    });
  });

  it('a 429 on the last attempt is dead, whatever Retry-After says', () => {
    expect(decide(response(429, '5'), 17)).toEqual({
      kind: 'dead',
      reason: 'retries_exhausted_after_http_429',
    });
  });
});

describe('decideRetry: jitter and exhaustion', () => {
  it('multiplies the base step by min + random() × (max − min), rounded to milliseconds', () => {
    expect(decide(response(500), 1, () => 0)).toMatchObject({ delaySeconds: 4 });
    expect(decide(response(500), 1, () => 0.25)).toMatchObject({ delaySeconds: 4.5 });
    expect(decide(response(500), 13, () => 0.75)).toMatchObject({ delaySeconds: 95_040 });
    expect(decide(response(500), 16, () => 0)).toMatchObject({ delaySeconds: 69_120 });
    expect(decide(response(500), 1, () => 0.123456789)).toMatchObject({ delaySeconds: 4.247 });
  });

  it('keeps fractional waits of a shortened policy, rounded to milliseconds', () => {
    expect(decide(response(500), 1, () => 0.5, SHORT)).toEqual({
      kind: 'retry',
      delaySeconds: 0.01,
      reason: 'http_500',
    });
    expect(decide(response(500), 3, () => 0.999, SHORT)).toMatchObject({ delaySeconds: 0.06 });
  });

  it('is dead after the last attempt of a shortened policy', () => {
    expect(maxAttempts(SHORT)).toBe(4);
    expect(decide(response(500), 4, () => 0.5, SHORT)).toEqual({
      kind: 'dead',
      reason: 'retries_exhausted_after_http_500',
    });
    expect(decide(response(302), 4, () => 0.5, SHORT)).toEqual({
      kind: 'dead',
      reason: 'retries_exhausted_after_redirect_not_followed_302',
    });
  });

  it('counts attempts past the limit (a replay keeps counting) as exhausted', () => {
    expect(decide(response(503), 40)).toEqual({ kind: 'dead', reason: 'retries_exhausted_after_http_503' });
    expect(decide(response(200), 40)).toEqual({ kind: 'delivered' });
  });

  it('a policy with only daily retries waits a day between attempts', () => {
    const dailyOnly: RetryPolicy = { ...SHORT, backoffSeconds: [], dailyRetryDays: 2 };
    expect(maxAttempts(dailyOnly)).toBe(3);
    expect(decide(response(500), 1, () => 0.5, dailyOnly)).toMatchObject({ delaySeconds: 86_400 });
    expect(decide(response(500), 3, () => 0.5, dailyOnly)).toMatchObject({ kind: 'dead' });
  });

  it('does not draw randomness when no jitter is needed', () => {
    const random = () => {
      throw new Error('random() must not be called');
    };
    expect(decide(response(200), 1, random)).toEqual({ kind: 'delivered' });
    expect(decide(response(404), 1, random)).toMatchObject({ kind: 'stopped' });
    expect(decide(response(429, '30'), 1, random)).toMatchObject({ delaySeconds: 30 });
    expect(decide(response(503), 17, random)).toMatchObject({ kind: 'dead' });
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses attempt %d', (attempt) => {
    expect(() => decide(response(503), attempt)).toThrow(RangeError);
    expect(() => baseDelaySeconds(DEFAULT_RETRY_POLICY, attempt)).toThrow(RangeError);
  });

  it.each([1, -0.1, 1.5, Number.NaN])('refuses random() returning %d', (draw) => {
    expect(() => decide(response(503), 1, () => draw)).toThrow(RangeError);
  });
});

describe('parseRetryAfterSeconds', () => {
  it.each([
    ['120', 120],
    ['1', 1],
    ['0', 1],
    ['86400', 86_400],
    ['86401', 86_400],
    ['99999999999999999999999', 86_400],
    [' 30 ', 30],
    ['007', 7],
  ])('delay-seconds %j → %d', (value, seconds) => {
    expect(parseRetryAfterSeconds(value, NOW)).toBe(seconds);
  });

  it.each([
    ['IMF-fixdate', 'Sun, 01 Nov 2026 12:01:30 GMT', 90],
    ['RFC 850 (obsolete)', 'Sunday, 01-Nov-26 12:01:30 GMT', 90],
    ['asctime (obsolete, one-digit day)', 'Sun Nov  1 12:01:30 2026', 90],
    ['sub-second rounds up', 'Sun, 01 Nov 2026 12:00:00 GMT', 1],
    ['a leap second', 'Sun, 01 Nov 2026 12:00:60 GMT', 60],
    ['the past', 'Thu, 01 Jan 1970 00:00:00 GMT', 1],
    ['far future', 'Fri, 31 Dec 9999 23:59:59 GMT', 86_400],
  ])('HTTP-date, %s', (_name, value, seconds) => {
    expect(parseRetryAfterSeconds(value, NOW)).toBe(seconds);
  });

  it('rounds an HTTP-date up to whole seconds from now', () => {
    const now = new Date('2026-11-01T12:00:00.400Z');
    expect(parseRetryAfterSeconds('Sun, 01 Nov 2026 12:00:10 GMT', now)).toBe(10);
  });

  it('reads a two-digit RFC 850 year within 50 years of now', () => {
    // 2026 + 50 = 2076: "76" is 2076, "77" is 1977 (in the past, so 1 s).
    expect(parseRetryAfterSeconds('Thursday, 01-Jan-76 00:00:00 GMT', NOW)).toBe(86_400);
    expect(parseRetryAfterSeconds('Saturday, 01-Jan-77 00:00:00 GMT', NOW)).toBe(1);
  });

  it.each([
    '',
    '   ',
    '-5',
    '1.5',
    '1e3',
    '+10',
    '0x10',
    'soon',
    'Sun, 01 Nov 2026 12:01:30 UTC',
    'Sun, 01 Nov 2026 12:01:30',
    'sun, 01 nov 2026 12:01:30 GMT',
    'Sun, 1 Nov 2026 12:01:30 GMT',
    'Sun, 31 Feb 2026 12:00:00 GMT',
    'Sun, 01 Nov 2026 24:00:00 GMT',
    'Sun, 01 Nov 2026 12:60:00 GMT',
    'Sun, 01 Foo 2026 12:00:00 GMT',
    '2026-11-01T12:05:00Z',
    'Sun, 01 Nov 0026 12:00:00 GMT',
  ])('%j is unparseable', (value) => {
    expect(parseRetryAfterSeconds(value, NOW)).toBeUndefined();
  });

  it('is undefined for an HTTP-date when now is an invalid date', () => {
    expect(parseRetryAfterSeconds('Sun, 01 Nov 2026 12:01:30 GMT', new Date(Number.NaN))).toBeUndefined();
  });

  it('always lands in [1, 86400] for any digits or any date (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), (value) => {
        const seconds = parseRetryAfterSeconds(value.toString(), NOW);
        expect(seconds).toBe(Math.min(86_400, Math.max(1, Number(value))));
      }),
    );
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }),
        (date) => {
          const seconds = parseRetryAfterSeconds(date.toUTCString(), NOW);
          expect(seconds).toBeGreaterThanOrEqual(1);
          expect(seconds).toBeLessThanOrEqual(86_400);
          const exact = Math.ceil((Math.floor(date.getTime() / 1000) * 1000 - NOW.getTime()) / 1000);
          expect(seconds).toBe(Math.min(86_400, Math.max(1, exact)));
        },
      ),
    );
  });
});

describe('validateRetryPolicy', () => {
  it('returns a valid policy as it is', () => {
    expect(validateRetryPolicy(SHORT)).toBe(SHORT);
    expect(validateRetryPolicy({ ...SHORT, backoffSeconds: [], dailyRetryDays: 0 })).toBeDefined();
    expect(validateRetryPolicy({ ...SHORT, jitter: { min: 1, max: 1 } })).toBeDefined();
  });

  it.each([
    ['a zero backoff step', { backoffSeconds: [5, 0] }, 'backoffSeconds'],
    ['a negative backoff step', { backoffSeconds: [-1] }, 'backoffSeconds'],
    ['an infinite backoff step', { backoffSeconds: [Number.POSITIVE_INFINITY] }, 'backoffSeconds'],
    ['a NaN backoff step', { backoffSeconds: [Number.NaN] }, 'backoffSeconds'],
    ['negative daily days', { dailyRetryDays: -1 }, 'dailyRetryDays'],
    ['fractional daily days', { dailyRetryDays: 1.5 }, 'dailyRetryDays'],
    ['min > max', { jitter: { min: 1.2, max: 0.8 } }, 'jitter'],
    ['zero jitter min', { jitter: { min: 0, max: 1.2 } }, 'jitter'],
    ['infinite jitter max', { jitter: { min: 0.8, max: Number.POSITIVE_INFINITY } }, 'jitter'],
    ['zero timeout', { attemptTimeoutMs: 0 }, 'attemptTimeoutMs'],
    ['NaN timeout', { attemptTimeoutMs: Number.NaN }, 'attemptTimeoutMs'],
  ] as const)('refuses %s', (_name, change, field) => {
    const policy = { ...SHORT, ...change } as RetryPolicy;
    expect(() => validateRetryPolicy(policy)).toThrow(InvalidRetryPolicyError);
    try {
      validateRetryPolicy(policy);
    } catch (error) {
      expect((error as InvalidRetryPolicyError).field).toBe(field);
      expect((error as Error).name).toBe('InvalidRetryPolicyError');
    }
  });
});

describe('decideRetry properties', () => {
  const policyArb: fc.Arbitrary<RetryPolicy> = fc
    .record({
      backoffSeconds: fc.array(fc.double({ min: 0.001, max: 100_000, noNaN: true }), { maxLength: 20 }),
      dailyRetryDays: fc.nat({ max: 10 }),
      min: fc.double({ min: 0.01, max: 2, noNaN: true }),
      spread: fc.double({ min: 0, max: 2, noNaN: true }),
      attemptTimeoutMs: fc.integer({ min: 1, max: 60_000 }),
    })
    .map(({ backoffSeconds, dailyRetryDays, min, spread, attemptTimeoutMs }) => ({
      backoffSeconds,
      dailyRetryDays,
      jitter: { min, max: min + spread },
      attemptTimeoutMs,
    }));
  const drawArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('a jittered wait is always within [min, max] × base (to the millisecond)', () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 1, max: 40 }), drawArb, (policy, attempt, draw) => {
        validateRetryPolicy(policy);
        const decision = decideRetry({
          policy,
          attempt,
          outcome: response(503),
          random: () => draw,
          now: NOW,
        });
        const base = baseDelaySeconds(policy, attempt);
        if (base === undefined) {
          expect(attempt).toBeGreaterThanOrEqual(maxAttempts(policy));
          expect(decision).toEqual({ kind: 'dead', reason: 'retries_exhausted_after_http_503' });
          return;
        }
        expect(decision.kind).toBe('retry');
        if (decision.kind !== 'retry') return;
        expect(decision.delaySeconds).toBeGreaterThanOrEqual(0);
        expect(decision.delaySeconds).toBeGreaterThanOrEqual(base * policy.jitter.min - 0.0005);
        expect(decision.delaySeconds).toBeLessThanOrEqual(base * policy.jitter.max + 0.0005);
        expect(Math.round(decision.delaySeconds * 1000)).toBeCloseTo(decision.delaySeconds * 1000, 6);
      }),
      { numRuns: 2000 },
    );
  });

  it('the production schedule waits within [0.8, 1.2] × the step on every attempt', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), drawArb, (attempt, draw) => {
        const decision = decide(response(500), attempt, () => draw);
        const base = baseDelaySeconds(DEFAULT_RETRY_POLICY, attempt)!;
        expect(decision.kind).toBe('retry');
        if (decision.kind !== 'retry') return;
        expect(decision.delaySeconds).toBeGreaterThanOrEqual(base * 0.8);
        expect(decision.delaySeconds).toBeLessThanOrEqual(base * 1.2);
      }),
    );
  });

  it('is total for every status 100–599 on every attempt, and classifies it by its class', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 599 }),
        fc.integer({ min: 1, max: 20 }),
        drawArb,
        fc.option(fc.oneof(fc.nat().map(String), fc.string()), { nil: undefined }),
        (status, attempt, draw, retryAfter) => {
          const decision = decide(response(status, retryAfter), attempt, () => draw);
          const last = attempt >= maxAttempts(DEFAULT_RETRY_POLICY);
          if (status >= 200 && status < 300) expect(decision).toEqual({ kind: 'delivered' });
          else if (status === 410)
            expect(decision).toEqual({ kind: 'stopped', reason: 'gone', disableEndpoint: true });
          else if (status >= 400 && status < 500 && ![408, 409, 425, 429].includes(status)) {
            expect(decision).toEqual({
              kind: 'stopped',
              reason: `client_error_${status}`,
              disableEndpoint: false,
            });
          } else if (last) {
            expect(decision.kind).toBe('dead');
          } else {
            expect(decision.kind).toBe('retry');
            if (decision.kind === 'retry') {
              expect(Number.isFinite(decision.delaySeconds)).toBe(true);
              expect(decision.delaySeconds).toBeGreaterThanOrEqual(0);
              expect(decision.delaySeconds).toBeLessThanOrEqual(86_400 * 1.2);
            }
          }
          if ('reason' in decision) expect(decision.reason).toMatch(/^[a-z0-9_]+$/);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('is total for every network error kind on every attempt', () => {
    const kinds: NetworkErrorKind[] = [
      'timeout',
      'connection_reset',
      'connection_refused',
      'dns_failure',
      'address_not_allowed',
      'scheme_not_allowed',
      'tls_error',
      'other',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 20 }),
        drawArb,
        (error, attempt, draw) => {
          const decision = decide(networkError(error), attempt, () => draw);
          expect(['retry', 'stopped', 'dead']).toContain(decision.kind);
          if ('reason' in decision) expect(decision.reason).toContain(error);
        },
      ),
    );
  });
});
