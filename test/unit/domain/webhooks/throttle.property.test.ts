/**
 * Per-endpoint limits (C31 `rate_limit`) as pure decisions, driven by random arrival sequences the way the
 * limiter's storage applies them: starts granted by the rate (admitted now or reserved) are never closer than one
 * emission interval, so any window of W seconds holds at most ⌈W × rate⌉ + 1 of them; slots held at any moment
 * never exceed the cap; a delivery holding a ticket is never counted against the rate again; an isolated endpoint
 * gets the degraded cap and, after five timeouts in a row, short timeouts everywhere but slot 0.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  attemptTimeoutFor,
  DEGRADED_MAX_IN_FLIGHT,
  effectiveLimits,
  emissionIntervalMs,
  isolatedSlotWaitSeconds,
  type LimiterState,
  MAX_ISOLATED_SLOT_WAIT_SECONDS,
  MAX_SLOT_WAIT_SECONDS,
  MIN_ATTEMPT_TIMEOUT_MS,
  planAdmission,
} from '../../../../functions/domain/webhooks/throttle';

/** Applies a plan to the state as the storage does (TAT written, slot held until its lease ends). */
const apply = (
  state: LimiterState,
  plan: ReturnType<typeof planAdmission>,
  leaseUntilMs: number,
): LimiterState => {
  if (plan.kind === 'wait') return state;
  const slots = { ...state.slots };
  if (plan.kind === 'admit' && plan.slot !== undefined) slots[plan.slot] = leaseUntilMs;
  return { ...(plan.tatMs !== undefined ? { tatMs: plan.tatMs } : state), slots };
};

const arrivals = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 400 }), durationMs: fc.integer({ min: 1, max: 3_000 }) }),
  { minLength: 1, maxLength: 120 },
);

describe('planAdmission (GCRA with reservations)', () => {
  it('grants starts at least one interval apart: any window of W s holds at most ⌈W × rate⌉ + 1', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.5, max: 50, noNaN: true }), arrivals, (perSecond, sequence) => {
        let state: LimiterState = { slots: {} };
        let now = 0;
        const starts: number[] = [];
        for (const { gapMs } of sequence) {
          now += gapMs;
          const plan = planAdmission({
            state,
            limits: { perSecond },
            nowMs: now,
            ticket: false,
            deferrals: 0,
          });
          expect(plan.kind).not.toBe('wait');
          if (plan.kind === 'admit') starts.push(now);
          if (plan.kind === 'reserve') {
            expect(plan.startMs).toBeGreaterThan(now);
            starts.push(plan.startMs);
          }
          state = apply(state, plan, now);
        }
        const interval = emissionIntervalMs(perSecond);
        const sorted = [...starts].sort((a, b) => a - b);
        for (let index = 1; index < sorted.length; index += 1)
          expect((sorted[index] ?? 0) - (sorted[index - 1] ?? 0)).toBeGreaterThanOrEqual(interval - 1e-6);
        for (const first of sorted) {
          const inWindow = sorted.filter((start) => start >= first && start < first + 1000).length;
          expect(inWindow).toBeLessThanOrEqual(Math.ceil(perSecond) + 1);
        }
      }),
    );
  });

  it('never holds more slots than the cap; a delivery waiting for one backs off 1, 2, 4 … ≤ 8 s (isolated: ≤ 60 s)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), arrivals, (cap, sequence) => {
        let state: LimiterState = { slots: {} };
        let now = 0;
        for (const [index, { gapMs, durationMs }] of sequence.entries()) {
          now += gapMs;
          const deferrals = index % 9;
          const plan = planAdmission({
            state,
            limits: { maxInFlight: cap },
            nowMs: now,
            ticket: false,
            deferrals,
            // Searches start anywhere (racing callers start at random slots).
            firstSlot: (index * 7) % cap,
          });
          if (plan.kind === 'wait')
            expect(plan.waitSeconds).toBe(Math.min(MAX_SLOT_WAIT_SECONDS, 2 ** deferrals));
          const isolated = planAdmission({
            state,
            limits: { maxInFlight: cap, isolated: true, maxSlotWaitSeconds: MAX_ISOLATED_SLOT_WAIT_SECONDS },
            nowMs: now,
            ticket: false,
            deferrals,
          });
          if (isolated.kind === 'wait')
            expect(isolated.waitSeconds).toBe(Math.min(MAX_ISOLATED_SLOT_WAIT_SECONDS, 2 ** deferrals));
          state = apply(state, plan, now + durationMs);
          const held = Object.values(state.slots).filter((leaseUntil) => leaseUntil > now).length;
          expect(held).toBeLessThanOrEqual(cap);
          if (plan.kind === 'wait') expect(held).toBe(cap);
        }
      }),
    );
  });

  it('a ticket is admitted without touching the rate, even when the rate is spent', () => {
    const state: LimiterState = { tatMs: 10_000, slots: {} };
    expect(
      planAdmission({ state, limits: { perSecond: 1 }, nowMs: 5_000, ticket: true, deferrals: 0 }),
    ).toEqual({ kind: 'admit' });
    expect(
      planAdmission({ state, limits: { perSecond: 1 }, nowMs: 5_000, ticket: false, deferrals: 0 }),
    ).toEqual({ kind: 'reserve', startMs: 10_000, tatMs: 11_000 });
  });
});

describe('effectiveLimits (isolation)', () => {
  it('an isolated backlog waits up to four attempt timeouts for a slot, between 8 s and a minute', () => {
    expect(isolatedSlotWaitSeconds(500)).toBe(8);
    expect(isolatedSlotWaitSeconds(10_000)).toBe(40);
    expect(isolatedSlotWaitSeconds(30_000)).toBe(60);
  });

  it('no limits for a healthy endpoint without rate_limit, nor for one with a timeout or two in a row', () => {
    expect(effectiveLimits(undefined, {}, 10_000)).toEqual({});
    expect(effectiveLimits(undefined, { consecutive_timeouts: 2 }, 10_000)).toEqual({});
  });

  it('caps an endpoint that timed out at the degraded cap, below its own max_in_flight', () => {
    expect(effectiveLimits({ max_in_flight: 50 }, { consecutive_timeouts: 3 }, 10_000)).toEqual({
      maxInFlight: DEGRADED_MAX_IN_FLIGHT,
      isolated: true,
      maxSlotWaitSeconds: 40,
    });
    expect(effectiveLimits({ max_in_flight: 1, per_second: 5 }, { consecutive_timeouts: 3 }, 10_000)).toEqual(
      {
        maxInFlight: 1,
        perSecond: 5,
        isolated: true,
        maxSlotWaitSeconds: 40,
      },
    );
  });

  it('after five timeouts in a row, short timeouts everywhere but slot 0 (a slow but working receiver gets through)', () => {
    const limits = effectiveLimits(undefined, { consecutive_timeouts: 5 }, 10_000);
    expect(limits.shortTimeoutMs).toBe(2_500);
    expect(attemptTimeoutFor(limits, 0, 10_000)).toBe(10_000);
    expect(attemptTimeoutFor(limits, 3, 10_000)).toBe(2_500);
    expect(effectiveLimits(undefined, { consecutive_timeouts: 7 }, 2_000).shortTimeoutMs).toBe(
      MIN_ATTEMPT_TIMEOUT_MS,
    );
    // A cap of one leaves only slot 0: its attempts keep the full timeout.
    expect(
      effectiveLimits({ max_in_flight: 1 }, { consecutive_timeouts: 9 }, 10_000).shortTimeoutMs,
    ).toBeUndefined();
  });
});
