import {
  type BreakerGate,
  type BreakerPolicy,
  type BreakerState,
  type BreakerTransition,
  breakerGate,
  breakerRecord,
  checkTickCap,
} from './protection';
import { olderThan } from './time';

/**
 * What one ingestion run does with one FX pair (spec rules 9 and 10, C23), decided without I/O: from the
 * pair's state before the run, this run's aggregated observation, the pair's rules and the instant of the
 * run, whether the tick is due, what the breaker does, whether the rate publishes or is held for people to
 * decide (and whether that needs a new change request), and the pair's state after the tick.
 *
 * Order of the checks: the slot (a pair ticks once per `interval_seconds`, aligned to the epoch), the breaker
 * gate (nothing is fetched while it is open; when its time is up the tick is the half-open probe), then the
 * observation: no usable rate is a breaker failure; a rate beyond the per-tick cap against the rate in force
 * is held and is a breaker anomaly; any other rate publishes (from the run's instant + the publication delay)
 * and is a breaker success.
 *
 * Held episodes: a held tick opens a change request, unless an earlier held tick against the same rate in
 * force already has one that is younger than `max_age_seconds`; then it joins that one (the held tick of the
 * state stays the episode's first). A tick that publishes ends the episode; a failure leaves it as it is.
 */

export type RateMethod = 'provider' | 'median' | 'twap';

/** A tick beyond the per-tick cap, waiting for people to decide in a change request. */
export interface HeldTick {
  readonly rate: string;
  /** The published rate it was compared with. */
  readonly last_rate: string;
  readonly move_bps: string;
  readonly source: string;
  readonly observed_at: string;
  /** The slot (epoch seconds) in which it was held. */
  readonly slot: number;
  /** Set once the change request is open. */
  readonly cr_id?: string;
}

/** What the decision reads of a pair's state before the run. */
export interface PairRateState {
  /** The last slot (epoch seconds) a run handled. */
  readonly last_slot?: number;
  readonly breaker: BreakerState;
  /** The last valid rate: the rate in force a tick is compared with (none before the pair's first rate). */
  readonly last_rate?: string;
  /** The held tick of the ongoing episode, if any. */
  readonly held?: HeldTick;
}

/** The rules of one pair: its rate policy entry (interval possibly overridden) and the policy's breaker. */
export interface PairRules {
  readonly pair: string;
  readonly method: RateMethod;
  readonly precision: number;
  readonly interval_seconds: number;
  readonly publication_delay_seconds: number;
  readonly max_tick_move_bps: number;
  readonly max_age_seconds: number;
  readonly breaker: BreakerPolicy;
}

/** This run's aggregated observation of the pair: a rate, or why there is none. */
export type Observation =
  | { readonly rate: string; readonly source: string; readonly observed_at: string }
  | { readonly failure: string };

/** A rate to publish: in force from `effective_from`. */
export interface RatePublication {
  readonly pair: string;
  readonly rate: string;
  readonly source: string;
  readonly method: RateMethod;
  readonly precision: number;
  readonly effective_from: string;
  readonly observed_at: string;
}

/** Whether the pair ticks now: not before its next slot, not while its breaker is open. */
export type Admission =
  | { readonly due: true; readonly slot: number }
  | { readonly due: false; readonly outcome: 'not_due' }
  | { readonly due: false; readonly outcome: 'breaker_open'; readonly retry_at?: string };

/** What a held tick does about change requests. */
export type ChangeRequestAction =
  | { readonly action: 'open' }
  | { readonly action: 'join'; readonly cr_id: string };

interface Ticked {
  readonly slot: number;
  /** The pair's state after the tick (the rest of what is stored is not the decision's). */
  readonly next: {
    readonly last_slot: number;
    readonly breaker: BreakerState;
    readonly held?: HeldTick;
  };
  /** The breaker's transitions, in order (the gate's, then the tick's): events to journal. */
  readonly transitions: readonly BreakerTransition[];
  /** The rate the tick was compared with (`last_rate`). */
  readonly previous_rate?: string;
}

export type PairDecision =
  | Exclude<Admission, { readonly due: true }>
  | (Ticked & { readonly outcome: 'unavailable'; readonly reason: string })
  | (Ticked & {
      readonly outcome: 'published';
      readonly publication: RatePublication;
      /** The move against `previous_rate` (absent for the pair's first rate). */
      readonly move_bps?: string;
    })
  | (Ticked & {
      readonly outcome: 'held';
      /** This run's held tick. */
      readonly proposal: HeldTick;
      readonly move_bps: string;
      readonly change_request: ChangeRequestAction;
    });

/** The slot of `now` for a pair ticking every `intervalSeconds` (epoch seconds, aligned to the epoch). */
export const slotOf = (now: Date, intervalSeconds: number): number =>
  Math.floor(now.getTime() / 1000 / intervalSeconds) * intervalSeconds;

const gateTick = (
  state: PairRateState,
  rules: PairRules,
  now: Date,
): Exclude<Admission, { readonly due: true }> | { readonly due: true; slot: number; gate: BreakerGate } => {
  const slot = slotOf(now, rules.interval_seconds);
  if (state.last_slot !== undefined && state.last_slot >= slot) return { due: false, outcome: 'not_due' };
  const gate = breakerGate(state.breaker, rules.breaker, now);
  if (!gate.allowed)
    return { due: false, outcome: 'breaker_open', ...(gate.retry_at ? { retry_at: gate.retry_at } : {}) };
  return { due: true, slot, gate };
};

/** Asked before fetching: whether the pair ticks in this run (nothing is fetched for a pair that does not). */
export const admitTick = (state: PairRateState, rules: PairRules, now: Date): Admission => {
  const admission = gateTick(state, rules, now);
  return admission.due ? { due: true, slot: admission.slot } : admission;
};

/** Whether a held tick joins the episode's change request: same rate in force, request open and young enough. */
const joinedRequest = (
  held: HeldTick | undefined,
  lastRate: string,
  rules: PairRules,
  now: Date,
): string | undefined =>
  held?.cr_id !== undefined &&
  held.last_rate === lastRate &&
  !olderThan(held.observed_at, rules.max_age_seconds, now)
    ? held.cr_id
    : undefined;

/** The decision for one pair in one run (see the module comment). Pure: `now` is the run's instant. */
export const decidePair = (
  state: PairRateState,
  observation: Observation,
  rules: PairRules,
  now: Date,
): PairDecision => {
  const admission = gateTick(state, rules, now);
  if (!admission.due) return admission;
  const { slot, gate } = admission;
  const lastRate = state.last_rate;
  const ticked = (outcome: 'success' | 'failure' | 'anomaly', held: HeldTick | undefined): Ticked => {
    const step = breakerRecord(gate.state, rules.breaker, outcome, now);
    return {
      slot,
      next: { last_slot: slot, breaker: step.state, ...(held ? { held } : {}) },
      transitions: [...gate.transitions, ...step.transitions],
      ...(lastRate !== undefined ? { previous_rate: lastRate } : {}),
    };
  };

  if ('failure' in observation)
    return { ...ticked('failure', state.held), outcome: 'unavailable', reason: observation.failure };

  const cap = checkTickCap(lastRate, observation.rate, rules.max_tick_move_bps);
  if (cap.decision === 'pass')
    return {
      ...ticked('success', undefined),
      outcome: 'published',
      publication: {
        pair: rules.pair,
        rate: observation.rate,
        source: observation.source,
        method: rules.method,
        precision: rules.precision,
        effective_from: new Date(now.getTime() + rules.publication_delay_seconds * 1000).toISOString(),
        observed_at: observation.observed_at,
      },
      ...(cap.move_bps !== undefined ? { move_bps: cap.move_bps } : {}),
    };

  // Held: only a pair with a rate in force can move beyond the cap, so both are known here.
  const last = lastRate as string;
  const move = cap.move_bps as string;
  const proposal: HeldTick = {
    rate: observation.rate,
    last_rate: last,
    move_bps: move,
    source: observation.source,
    observed_at: observation.observed_at,
    slot,
  };
  const joined = joinedRequest(state.held, last, rules, now);
  return {
    ...ticked('anomaly', joined !== undefined ? state.held : proposal),
    outcome: 'held',
    proposal,
    move_bps: move,
    change_request: joined !== undefined ? { action: 'join', cr_id: joined } : { action: 'open' },
  };
};
