import { Decimal } from '../money/decimal';
import { parseRate } from './aggregate';
import { instantOf } from './time';

/**
 * Rate protection (spec rule 10, C23): a cap on the move of one tick against the last published rate, and a
 * circuit breaker per pair. Both are pure: time comes in as an argument and the breaker's state goes in and
 * comes out, with the transitions the caller journals.
 */

export const BPS_PER_UNIT = 10_000;

/** The move from `last` to `next` in basis points, (next − last) / last × 10 000, to 50 digits. */
export const moveBps = (last: string, next: string): Decimal => {
  const previous = parseRate(last);
  return parseRate(next).minus(previous).times(BPS_PER_UNIT).dividedBy(previous);
};

/** A move in basis points as shown in journals and change requests: 2 decimals, half-even. */
export const formatBps = (bps: Decimal): string => bps.toFixed(2, Decimal.ROUND_HALF_EVEN);

export interface CapCheck {
  readonly decision: 'pass' | 'held';
  /** The move against the last published rate (2 decimals); absent for a pair's first rate. */
  readonly move_bps?: string;
}

/**
 * The per-tick cap: a tick moving more than `maxMoveBps` away from the last published rate, up or down, is
 * held. Exactly at the cap passes. The comparison is exact, without division:
 * |next − last| × 10 000 > maxMoveBps × last. A pair's first rate (nothing published yet) passes.
 */
export const checkTickCap = (last: string | undefined, next: string, maxMoveBps: number): CapCheck => {
  if (!Number.isInteger(maxMoveBps) || maxMoveBps <= 0)
    throw new RangeError(`max_tick_move_bps must be a positive integer: ${maxMoveBps}`);
  const proposed = parseRate(next);
  if (last === undefined) return { decision: 'pass' };
  const previous = parseRate(last);
  const held = proposed.minus(previous).abs().times(BPS_PER_UNIT).gt(previous.times(maxMoveBps));
  return { decision: held ? 'held' : 'pass', move_bps: formatBps(moveBps(last, next)) };
};

export interface BreakerPolicy {
  /** Anomalies or source failures within `window_seconds` that open the breaker (≥ 1). */
  readonly failure_threshold: number;
  readonly window_seconds: number;
  /** How long the breaker stays open before one probe tick is let through. */
  readonly open_seconds: number;
}

export type BreakerStatus = 'closed' | 'open' | 'half_open';

/**
 * - `closed`: ticks flow; `failures` are the times (ISO) of anomalies and source failures still inside the
 *   window.
 * - `open`: nothing publishes automatically until `opened_at` + `open_seconds`.
 * - `half_open`: one probe tick decides: a success closes the breaker, a failure or anomaly opens it again.
 */
export type BreakerState =
  | { readonly status: 'closed'; readonly failures: readonly string[] }
  | { readonly status: 'open'; readonly opened_at: string }
  | { readonly status: 'half_open'; readonly since: string };

export const INITIAL_BREAKER: BreakerState = { status: 'closed', failures: [] };

/** `success`: a tick was fetched and passed the cap. `failure`: no usable rate. `anomaly`: a held tick. */
export type BreakerOutcome = 'success' | 'failure' | 'anomaly';

export interface BreakerTransition {
  readonly from: BreakerStatus;
  readonly to: BreakerStatus;
  readonly at: string;
  readonly reason: string;
}

export interface BreakerGate {
  readonly state: BreakerState;
  /** Whether a tick may be fetched and published now. */
  readonly allowed: boolean;
  /** The tick let through is the half-open probe. */
  readonly probe: boolean;
  /** When an open breaker lets a probe through. */
  readonly retry_at?: string;
  readonly transitions: readonly BreakerTransition[];
}

export interface BreakerStep {
  readonly state: BreakerState;
  readonly transitions: readonly BreakerTransition[];
}

const checkPolicy = (policy: BreakerPolicy): void => {
  for (const [name, value] of Object.entries(policy))
    if (!Number.isInteger(value) || value < 1)
      throw new RangeError(`breaker ${name} must be a positive integer: ${value}`);
};

/** Asked before a tick: an open breaker whose time is up becomes half-open and lets one probe through. */
export const breakerGate = (state: BreakerState, policy: BreakerPolicy, now: Date): BreakerGate => {
  checkPolicy(policy);
  if (state.status === 'closed') return { state, allowed: true, probe: false, transitions: [] };
  if (state.status === 'half_open') return { state, allowed: true, probe: true, transitions: [] };
  const reopensAt = instantOf(state.opened_at) + policy.open_seconds * 1000;
  if (now.getTime() < reopensAt)
    return {
      state,
      allowed: false,
      probe: false,
      retry_at: new Date(reopensAt).toISOString(),
      transitions: [],
    };
  const at = now.toISOString();
  return {
    state: { status: 'half_open', since: at },
    allowed: true,
    probe: true,
    transitions: [{ from: 'open', to: 'half_open', at, reason: `open for ${policy.open_seconds} s` }],
  };
};

/**
 * Records a tick's outcome. Closed: a failure or anomaly is counted; `failure_threshold` of them within
 * `window_seconds` open the breaker (a success does not reset the count: the window does). Half-open: the
 * probe's success closes it, its failure or anomaly opens it again. Open: outcomes change nothing (an open
 * breaker let no tick through).
 */
export const breakerRecord = (
  state: BreakerState,
  policy: BreakerPolicy,
  outcome: BreakerOutcome,
  now: Date,
): BreakerStep => {
  checkPolicy(policy);
  const at = now.toISOString();
  if (state.status === 'open') return { state, transitions: [] };
  if (state.status === 'half_open') {
    if (outcome === 'success')
      return {
        state: { status: 'closed', failures: [] },
        transitions: [{ from: 'half_open', to: 'closed', at, reason: 'probe succeeded' }],
      };
    return {
      state: { status: 'open', opened_at: at },
      transitions: [{ from: 'half_open', to: 'open', at, reason: `probe ${outcome}` }],
    };
  }
  const since = now.getTime() - policy.window_seconds * 1000;
  const recent = state.failures.filter((time) => instantOf(time) > since);
  if (outcome === 'success') return { state: { status: 'closed', failures: recent }, transitions: [] };
  const failures = [...recent, at];
  if (failures.length < policy.failure_threshold)
    return { state: { status: 'closed', failures }, transitions: [] };
  return {
    state: { status: 'open', opened_at: at },
    transitions: [
      {
        from: 'closed',
        to: 'open',
        at,
        reason: `${failures.length} failures or anomalies within ${policy.window_seconds} s (last: ${outcome})`,
      },
    ],
  };
};
