/**
 * Per-endpoint throughput limits and isolation (C31 `rate_limit`), as pure decisions: the limiter's storage
 * (a DynamoDB item per endpoint, shared by every deliver instance) holds the state these functions read and
 * the adapter writes it back only if it is still the state they read (a conditional write), so the limit holds
 * across concurrent instances.
 *
 * - **Rate** (`per_second`): the generic cell rate algorithm (GCRA, ITU-T I.371) with reservations. The state
 *   is one number, the theoretical arrival time (TAT). A delivery arriving early does not spin: it reserves the
 *   next free start time and comes back then holding a ticket (the message's `not_before`), so a burst of n
 *   waits about n / rate in all, one reservation each, and no attempt is used for waiting.
 * - **In flight** (`max_in_flight`): numbered slots, each held until the attempt ends or its lease runs out
 *   (a consumer killed mid-attempt frees its slot when the lease expires).
 * - **Isolation**: an endpoint whose attempts keep timing out (or stay unanswered past `SLOW_ATTEMPT_MS`) is capped at `DEGRADED_MAX_IN_FLIGHT` attempts in
 *   flight, whatever its own limits, so a hanging partner cannot hold every delivery instance; once it timed out
 *   `SHORT_TIMEOUT_AFTER_TIMEOUTS` times in a row, its attempts wait a shorter time, except in slot 0, which keeps
 *   the full timeout so a slow but working receiver still gets through and clears the state.
 * - **Pause**: a 429 or 503 with `Retry-After` pauses the whole endpoint until then, not only that delivery.
 */

/** An endpoint's limits as set by the operator (C31). At least one is present. */
export interface EndpointRateLimit {
  /** Most attempts started per second (0.1–1 000). */
  readonly per_second?: number;
  /** Most attempts in flight at once (1–1 000). */
  readonly max_in_flight?: number;
}

export const RATE_LIMIT_BOUNDS = {
  perSecond: { min: 0.1, max: 1_000 },
  maxInFlight: { min: 1, max: 1_000 },
} as const;

/** What the deliver function learns about an endpoint's behaviour, kept on its record. */
export interface EndpointDeliveryHealth {
  /** Attempts in a row that timed out or stayed unanswered past `SLOW_ATTEMPT_MS` (reset by any answer). */
  readonly consecutive_timeouts?: number;
  /** A `Retry-After` paused the endpoint until then (ISO 8601). */
  readonly paused_until?: string;
}

/** An endpoint that timed out this many times in a row is capped (isolation). */
export const DEGRADED_AFTER_TIMEOUTS = 3;
/** The in-flight cap of a degraded endpoint (isolation), whatever its own `max_in_flight`. */
export const DEGRADED_MAX_IN_FLIGHT = 2;
/** After this many timeouts in a row, attempts outside slot 0 wait `SHORT_TIMEOUT_FRACTION` of the timeout. */
export const SHORT_TIMEOUT_AFTER_TIMEOUTS = 5;
export const SHORT_TIMEOUT_FRACTION = 0.25;
/**
 * An attempt unanswered for half its timeout (at least this long) counts as a timeout while it still waits:
 * isolation starts after half a timeout (5 s in AWS, 1 s locally), not after the whole of it, and a receiver that
 * answers well inside the timeout (a slow but working one) is never counted.
 */
export const SLOW_ATTEMPT_MS = 1_000;
export const slowAttemptMs = (timeoutMs: number): number => Math.max(SLOW_ATTEMPT_MS, timeoutMs / 2);

/** The shortest timeout an attempt gets, however degraded its endpoint. */
export const MIN_ATTEMPT_TIMEOUT_MS = 1_000;
/**
 * A delivery waiting for an in-flight slot comes back after 1, 2, 4 … seconds (before jitter), at most this many:
 * soon for a cap the operator set (normal operation); for an isolated endpoint's backlog up to four attempt
 * timeouts (a slot frees at least that often), never more than a minute.
 */
export const MAX_SLOT_WAIT_SECONDS = 8;
export const MAX_ISOLATED_SLOT_WAIT_SECONDS = 60;
export const isolatedSlotWaitSeconds = (attemptTimeoutMs: number): number =>
  Math.min(
    MAX_ISOLATED_SLOT_WAIT_SECONDS,
    Math.max(MAX_SLOT_WAIT_SECONDS, Math.ceil((4 * attemptTimeoutMs) / 1000)),
  );

/** The longest pause a `Retry-After` puts on a whole endpoint (a longer one still delays its own delivery). */
export const MAX_PAUSE_SECONDS = 3_600;
/** Deliveries waiting out a pause come back spread over as long again as it lasts, at most this long. */
export const MAX_PAUSE_SPREAD_SECONDS = 60;
/**
 * A rate ticket (a reserved start) is honoured from up to a second before its start to this long after it (an
 * SQS delay is whole seconds, a poll adds latency); later, it is stale and the rate is counted again.
 */
export const TICKET_GRACE_MS = 2_000;
/** The count of waits for a slot grows to this at most (the wait is 2^n seconds, capped anyway). */
export const MAX_DEFERRALS = 16;
export const nextDeferrals = (deferrals: number): number => Math.min(MAX_DEFERRALS, deferrals + 1);

/** The limits that apply to one delivery now: none, one or both. */
export interface EffectiveLimits {
  readonly perSecond?: number;
  readonly maxInFlight?: number;
  /** Attempts outside slot 0 wait this long at most (a degraded endpoint), else the policy's timeout. */
  readonly shortTimeoutMs?: number;
  /** The isolation cap applies (the endpoint keeps timing out). */
  readonly isolated?: boolean;
  /** The longest a delivery waits for a slot before trying again (seconds); default `MAX_SLOT_WAIT_SECONDS`. */
  readonly maxSlotWaitSeconds?: number;
}

export const effectiveLimits = (
  rateLimit: EndpointRateLimit | undefined,
  health: EndpointDeliveryHealth | undefined,
  attemptTimeoutMs: number,
): EffectiveLimits => {
  const timeouts = health?.consecutive_timeouts ?? 0;
  const degraded = timeouts >= DEGRADED_AFTER_TIMEOUTS;
  const caps = [rateLimit?.max_in_flight, degraded ? DEGRADED_MAX_IN_FLIGHT : undefined].filter(
    (cap): cap is number => cap !== undefined,
  );
  const maxInFlight = caps.length > 0 ? Math.min(...caps) : undefined;
  const shortTimeoutMs =
    timeouts >= SHORT_TIMEOUT_AFTER_TIMEOUTS && maxInFlight !== undefined && maxInFlight > 1
      ? Math.min(
          attemptTimeoutMs,
          Math.max(MIN_ATTEMPT_TIMEOUT_MS, attemptTimeoutMs * SHORT_TIMEOUT_FRACTION),
        )
      : undefined;
  return {
    ...(rateLimit?.per_second !== undefined ? { perSecond: rateLimit.per_second } : {}),
    ...(maxInFlight !== undefined ? { maxInFlight } : {}),
    ...(shortTimeoutMs !== undefined ? { shortTimeoutMs } : {}),
    ...(degraded ? { isolated: true, maxSlotWaitSeconds: isolatedSlotWaitSeconds(attemptTimeoutMs) } : {}),
  };
};

export const hasLimits = (limits: EffectiveLimits): boolean =>
  limits.perSecond !== undefined || limits.maxInFlight !== undefined;

/** The limiter's shared state for one endpoint: the TAT (epoch ms) and the held slots' lease ends (epoch ms). */
export interface LimiterState {
  readonly tatMs?: number;
  readonly slots: Readonly<Record<number, number>>;
}

/**
 * What one delivery may do now:
 * - `admit`: start the attempt; write `tatMs` (when the rate applies) and hold `slot` (when a cap applies);
 * - `reserve`: the rate is spent until `startMs`: write `tatMs`, come back at `startMs` with a ticket;
 * - `wait`: every slot is held: come back after `waitSeconds` (nothing written).
 */
export type AdmissionPlan =
  | { readonly kind: 'admit'; readonly tatMs?: number; readonly slot?: number }
  | { readonly kind: 'reserve'; readonly tatMs: number; readonly startMs: number }
  | { readonly kind: 'wait'; readonly waitSeconds: number };

/** GCRA's emission interval: the time one attempt takes of the rate. */
export const emissionIntervalMs = (perSecond: number): number => 1000 / perSecond;

/**
 * Decides one delivery's admission from the state read. `ticket`: the delivery reserved its start time already
 * (the rate is not counted twice); `deferrals`: how often it waited for a slot before (its backoff).
 */
export const planAdmission = (input: {
  readonly state: LimiterState;
  readonly limits: EffectiveLimits;
  readonly nowMs: number;
  readonly ticket: boolean;
  readonly deferrals: number;
  /** Where the search for a free slot starts (racing callers that start apart do not all fight for one slot). */
  readonly firstSlot?: number;
}): AdmissionPlan => {
  const { state, limits, nowMs } = input;
  let tatMs: number | undefined;
  if (limits.perSecond !== undefined && !input.ticket) {
    const interval = emissionIntervalMs(limits.perSecond);
    // Strict GCRA (no burst tolerance): a start is conforming at or after the TAT.
    const startMs = Math.max(nowMs, state.tatMs ?? nowMs);
    tatMs = startMs + interval;
    if (startMs > nowMs) return { kind: 'reserve', tatMs, startMs };
  }
  if (limits.maxInFlight === undefined) return { kind: 'admit', ...(tatMs !== undefined ? { tatMs } : {}) };
  const slot = freeSlot(state.slots, limits.maxInFlight, nowMs, input.firstSlot);
  if (slot === undefined) {
    return {
      kind: 'wait',
      waitSeconds: Math.min(
        limits.maxSlotWaitSeconds ?? MAX_SLOT_WAIT_SECONDS,
        2 ** Math.min(input.deferrals, 16),
      ),
    };
  }
  return { kind: 'admit', slot, ...(tatMs !== undefined ? { tatMs } : {}) };
};

/** The first slot below `cap`, from `first` on (wrapping), that is not held (never taken, or its lease ended). */
export const freeSlot = (
  slots: Readonly<Record<number, number>>,
  cap: number,
  nowMs: number,
  first = 0,
): number | undefined => {
  for (let step = 0; step < cap; step += 1) {
    const slot = (first + step) % cap;
    const leaseUntil = slots[slot];
    if (leaseUntil === undefined || leaseUntil <= nowMs) return slot;
  }
  return undefined;
};

/** How long an attempt waits for an answer: the short timeout outside slot 0 of a degraded endpoint. */
export const attemptTimeoutFor = (limits: EffectiveLimits, slot: number | undefined, full: number): number =>
  limits.shortTimeoutMs !== undefined && slot !== undefined && slot > 0 ? limits.shortTimeoutMs : full;

/** Seconds until `untilMs`, rounded up, at least 1 (an SQS delay is whole seconds). */
export const delaySecondsUntil = (untilMs: number, nowMs: number): number =>
  Math.max(1, Math.ceil((untilMs - nowMs) / 1000));
