/**
 * The one retry-on-conflict helper for optimistic concurrency: an attempt reads, decides and writes
 * conditionally; when another writer got there first it answers `CONFLICT` and is tried again, after a
 * full-jitter exponential backoff (a random wait up to `min(capMs, baseMs × 2^retry)`), at most `attempts`
 * times in all. Sleep and randomness are injectable for tests.
 */

/** What an attempt answers when it lost a race and should be tried again. */
export const CONFLICT: unique symbol = Symbol('conflict');

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** Upper bound of the wait before the first retry; it doubles per retry up to `capMs`. */
  readonly baseMs: number;
  readonly capMs: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the jitter. */
  readonly random?: () => number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The wait before retry number `retry` (0 for the first retry). */
export const backoffMs = (policy: RetryPolicy, retry: number, random: () => number = Math.random): number =>
  random() * Math.min(policy.capMs, policy.baseMs * 2 ** retry);

/**
 * Runs `attempt` (given its number, from 0) until it answers something other than `CONFLICT`; after the last
 * attempt lost, throws `exhausted()`.
 */
export const retryOnConflict = async <T>(
  policy: RetryPolicy,
  attempt: (attempt: number) => Promise<T | typeof CONFLICT>,
  exhausted: () => Error,
): Promise<T> => {
  const sleep = policy.sleep ?? defaultSleep;
  for (let number = 0; number < policy.attempts; number += 1) {
    if (number > 0) await sleep(backoffMs(policy, number - 1, policy.random));
    const outcome = await attempt(number);
    if (outcome !== CONFLICT) return outcome;
  }
  throw exhausted();
};
