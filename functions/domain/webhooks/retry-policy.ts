/**
 * The retry policy of one event's delivery (C14, spec "Delivery of one event"). Pure: the caller injects the
 * attempt outcome, the random source for jitter and the current time (for `Retry-After` HTTP-dates).
 *
 * `attempt` is 1-based and counts the attempts of this delivery; an attempt number at or past
 * {@link maxAttempts} has no further wait, so a retryable outcome there is `dead`.
 */

export interface RetryPolicy {
  /** Waits before attempt 2, 3, ... in seconds (C14 default: 5,15,30,60,120,300,600,1800,3600,10800,21600,43200,86400). */
  readonly backoffSeconds: readonly number[];
  /** After the schedule, one retry a day for this many days (default 3). */
  readonly dailyRetryDays: number;
  /** Jitter factor range, default { min: 0.8, max: 1.2 }. */
  readonly jitter: { readonly min: number; readonly max: number };
  /** Per-attempt timeout, default 10 000. */
  readonly attemptTimeoutMs: number;
}

/** The wait between two daily retries once the backoff schedule is used up. */
export const DAILY_RETRY_INTERVAL_SECONDS = 86_400;

/** Bounds a `Retry-After` value is clamped to (1 s – 24 h). */
export const RETRY_AFTER_MIN_SECONDS = 1;
export const RETRY_AFTER_MAX_SECONDS = 86_400;

/** The production schedule (C14); tests shorten it through configuration. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  backoffSeconds: Object.freeze([5, 15, 30, 60, 120, 300, 600, 1800, 3600, 10_800, 21_600, 43_200, 86_400]),
  dailyRetryDays: 3,
  jitter: Object.freeze({ min: 0.8, max: 1.2 }),
  attemptTimeoutMs: 10_000,
});

export class InvalidRetryPolicyError extends Error {
  constructor(
    readonly field: 'backoffSeconds' | 'dailyRetryDays' | 'jitter' | 'attemptTimeoutMs',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'InvalidRetryPolicyError';
  }
}

const positiveFinite = (value: number): boolean => Number.isFinite(value) && value > 0;

/**
 * Validates a policy: every backoff step a positive finite number of seconds, `dailyRetryDays` a non-negative
 * integer, jitter bounds positive and finite with min ≤ max, `attemptTimeoutMs` positive and finite. Returns
 * the policy; throws InvalidRetryPolicyError naming the field.
 */
export const validateRetryPolicy = (policy: RetryPolicy): RetryPolicy => {
  if (!Array.isArray(policy.backoffSeconds) || !policy.backoffSeconds.every(positiveFinite)) {
    throw new InvalidRetryPolicyError(
      'backoffSeconds',
      'every backoff step must be a positive finite number',
    );
  }
  if (!Number.isSafeInteger(policy.dailyRetryDays) || policy.dailyRetryDays < 0) {
    throw new InvalidRetryPolicyError('dailyRetryDays', 'dailyRetryDays must be a non-negative integer');
  }
  const { min, max } = policy.jitter;
  if (!positiveFinite(min) || !positiveFinite(max) || min > max) {
    throw new InvalidRetryPolicyError(
      'jitter',
      'jitter bounds must be positive finite numbers with min <= max',
    );
  }
  if (!positiveFinite(policy.attemptTimeoutMs)) {
    throw new InvalidRetryPolicyError(
      'attemptTimeoutMs',
      'attemptTimeoutMs must be a positive finite number',
    );
  }
  return policy;
};

/** Total attempts allowed: 1 + backoffSeconds.length + dailyRetryDays. */
export const maxAttempts = (policy: RetryPolicy): number =>
  1 + policy.backoffSeconds.length + policy.dailyRetryDays;

const assertAttempt = (attempt: number): void => {
  if (!Number.isSafeInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  }
};

/**
 * Unjittered wait before attempt `attempt + 1` (seconds), or undefined when `attempt` was the last one.
 * Throws RangeError when `attempt` is not a positive integer.
 */
export const baseDelaySeconds = (policy: RetryPolicy, attempt: number): number | undefined => {
  assertAttempt(attempt);
  if (attempt <= policy.backoffSeconds.length) return policy.backoffSeconds[attempt - 1];
  return attempt < maxAttempts(policy) ? DAILY_RETRY_INTERVAL_SECONDS : undefined;
};

export type NetworkErrorKind =
  | 'timeout'
  | 'connection_reset'
  | 'connection_refused'
  | 'dns_failure'
  | 'address_not_allowed'
  | 'scheme_not_allowed'
  | 'tls_error'
  | 'other';

export type AttemptOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter?: string }
  | { readonly kind: 'network_error'; readonly error: NetworkErrorKind };

export type RetryDecision =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly reason: string }
  | { readonly kind: 'stopped'; readonly reason: string; readonly disableEndpoint: boolean }
  | { readonly kind: 'dead'; readonly reason: string };

/** Network errors that a later attempt cannot fix: the endpoint's address or scheme is not allowed. */
const CONFIGURATION_ERRORS: ReadonlySet<NetworkErrorKind> = new Set([
  'address_not_allowed',
  'scheme_not_allowed',
]);

/** 4xx codes that are transient (C14): retried on the backoff schedule. */
const RETRYABLE_CLIENT_STATUSES: ReadonlySet<number> = new Set([408, 409, 425]);

/** What an outcome calls for before the attempt budget is looked at. */
type Classification =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'stopped'; readonly reason: string; readonly disableEndpoint: boolean }
  | { readonly kind: 'retryable'; readonly reason: string; readonly retryAfterSeconds?: number };

const classify = (outcome: AttemptOutcome, now: Date): Classification => {
  if (outcome.kind === 'network_error') {
    return CONFIGURATION_ERRORS.has(outcome.error)
      ? { kind: 'stopped', reason: outcome.error, disableEndpoint: false }
      : { kind: 'retryable', reason: outcome.error };
  }
  const { status } = outcome;
  // A status HTTP cannot carry is the receiver misbehaving: treat it like a server error.
  if (!Number.isSafeInteger(status)) return { kind: 'retryable', reason: 'http_invalid_status' };
  if (status >= 200 && status <= 299) return { kind: 'delivered' };
  if (status === 429) {
    const retryAfterSeconds =
      outcome.retryAfter === undefined ? undefined : parseRetryAfterSeconds(outcome.retryAfter, now);
    return retryAfterSeconds === undefined
      ? { kind: 'retryable', reason: 'http_429' }
      : { kind: 'retryable', reason: 'http_429', retryAfterSeconds };
  }
  if (status === 410) return { kind: 'stopped', reason: 'gone', disableEndpoint: true };
  if (status >= 300 && status <= 399) return { kind: 'retryable', reason: `redirect_not_followed_${status}` };
  if (status >= 400 && status <= 499) {
    return RETRYABLE_CLIENT_STATUSES.has(status)
      ? { kind: 'retryable', reason: `http_${status}` }
      : { kind: 'stopped', reason: `client_error_${status}`, disableEndpoint: false };
  }
  // 5xx, and 1xx or out-of-range codes (never a final answer from a sound receiver): retry.
  return { kind: 'retryable', reason: `http_${status}` };
};

const roundToMilliseconds = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/**
 * C14 policy for the attempt just made (1-based `attempt`):
 * - 2xx: delivered.
 * - 429: after `Retry-After` (seconds or HTTP-date relative to `now`, clamped 1 s–24 h, not jittered; reason
 *   `http_429_retry_after`), else the next backoff step (`http_429`).
 * - 5xx, 3xx (never followed; `redirect_not_followed_302`), 408, 409, 425 and the network errors `timeout`,
 *   `connection_reset`, `connection_refused`, `dns_failure`, `tls_error`, `other`: the next backoff step with
 *   jitter ×U(min, max) drawn from `random()` in [0, 1); reason `http_503`, `timeout`, ….
 * - 410: stopped with `disableEndpoint` true (reason `gone`).
 * - 400, 401, 403, 404, 422 and every other 4xx: stopped (reason `client_error_404`, …).
 * - network error `address_not_allowed` or `scheme_not_allowed`: stopped, reason the error kind (a
 *   configuration problem; retrying cannot help).
 * - a retryable outcome after the last allowed attempt: dead (`retries_exhausted_after_http_503`, …).
 *
 * `delaySeconds` is a number of seconds ≥ 0, rounded to milliseconds (fractional when the policy is shortened
 * for tests).
 *
 * 1xx and statuses outside 100–599 are retried like 5xx (`http_<status>`, or `http_invalid_status` for a
 * non-integer). Throws RangeError when `attempt` is not a positive integer or `random()` leaves [0, 1).
 */
export const decideRetry = (input: {
  policy: RetryPolicy;
  attempt: number;
  outcome: AttemptOutcome;
  random: () => number;
  now: Date;
}): RetryDecision => {
  const { policy, attempt } = input;
  assertAttempt(attempt);
  const classification = classify(input.outcome, input.now);
  if (classification.kind !== 'retryable') return classification;
  const base = baseDelaySeconds(policy, attempt);
  if (base === undefined) return { kind: 'dead', reason: `retries_exhausted_after_${classification.reason}` };
  if (classification.retryAfterSeconds !== undefined) {
    return {
      kind: 'retry',
      delaySeconds: classification.retryAfterSeconds,
      reason: `${classification.reason}_retry_after`,
    };
  }
  const draw = input.random();
  if (!(draw >= 0 && draw < 1)) throw new RangeError(`random() must return a number in [0, 1), got ${draw}`);
  const factor = policy.jitter.min + draw * (policy.jitter.max - policy.jitter.min);
  return { kind: 'retry', delaySeconds: roundToMilliseconds(base * factor), reason: classification.reason };
};

const clampRetryAfter = (seconds: number): number =>
  Math.min(RETRY_AFTER_MAX_SECONDS, Math.max(RETRY_AFTER_MIN_SECONDS, seconds));

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const LONG_DAY_NAMES = [
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const DAY = DAY_NAMES.join('|');
const MONTH = MONTHS.join('|');
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms a recipient must also accept. */
const IMF_FIXDATE = new RegExp(`^(?:${DAY}), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^(?:${LONG_DAY_NAMES.join('|')}), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^(?:${DAY}) (${MONTH}) ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** Milliseconds since the epoch of a valid UTC calendar time, else undefined (e.g. 31 Feb, hour 24). */
const utcMillis = (
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined => {
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(Date.UTC(year, month, day, hour, minute, Math.min(second, 59)));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month || date.getUTCDate() !== day) {
    return undefined;
  }
  // A leap second (":60") names the second after :59.
  return date.getTime() + (second === 60 ? 1000 : 0);
};

const monthIndex = (name: string): number => MONTHS.indexOf(name as (typeof MONTHS)[number]);

/** An HTTP-date (any of the three RFC 9110 forms) as epoch milliseconds, or undefined. */
const parseHttpDate = (value: string, now: Date): number | undefined => {
  const imf = IMF_FIXDATE.exec(value);
  if (imf) {
    const [, day, , year, hour, minute, second] = imf.map(Number);
    return utcMillis(year!, monthIndex(imf[2]!), day!, hour!, minute!, second!);
  }
  const rfc850 = RFC850_DATE.exec(value);
  if (rfc850) {
    const [, day, , shortYear, hour, minute, second] = rfc850.map(Number);
    // RFC 9110: a two-digit year more than 50 years in the future is the most recent past year with those digits.
    const nowYear = now.getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + shortYear!;
    if (year > nowYear + 50) year -= 100;
    return utcMillis(year, monthIndex(rfc850[2]!), day!, hour!, minute!, second!);
  }
  const asctime = ASCTIME_DATE.exec(value);
  if (asctime) {
    const [, , day, hour, minute, second, year] = asctime.map(Number);
    return utcMillis(year!, monthIndex(asctime[1]!), day!, hour!, minute!, second!);
  }
  return undefined;
};

/**
 * Retry-After header → seconds (integer seconds or HTTP-date), clamped to [1, 86400]; undefined when
 * unparseable. Delay-seconds is a run of ASCII digits (`0` becomes 1); an HTTP-date gives the whole seconds
 * from `now` until it, rounded up (a date in the past becomes 1). Surrounding whitespace is ignored.
 */
export const parseRetryAfterSeconds = (value: string, now: Date): number | undefined => {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return clampRetryAfter(Number(trimmed));
  const at = parseHttpDate(trimmed, now);
  const seconds = at === undefined ? Number.NaN : Math.ceil((at - now.getTime()) / 1000);
  return Number.isNaN(seconds) ? undefined : clampRetryAfter(seconds);
};
