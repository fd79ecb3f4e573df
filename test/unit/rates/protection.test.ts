import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../../functions/domain/money/decimal';
import {
  type BreakerOutcome,
  type BreakerPolicy,
  type BreakerState,
  breakerGate,
  breakerRecord,
  checkTickCap,
  formatBps,
  INITIAL_BREAKER,
  moveBps,
} from '../../../functions/domain/rates/protection';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const t = (seconds: number) => new Date(T0 + seconds * 1000);
const POLICY: BreakerPolicy = { failure_threshold: 3, window_seconds: 300, open_seconds: 600 };

describe('moveBps', () => {
  it('is (next − last) / last × 10 000, exactly', () => {
    expect(moveBps('1.0000', '1.0100').toString()).toBe('100');
    expect(moveBps('1.0845', '1.0845').toString()).toBe('0');
    expect(moveBps('2', '1').toString()).toBe('-5000');
    expect(formatBps(moveBps('3', '4'))).toBe('3333.33');
    expect(formatBps(moveBps('1.0845', '1.0901'))).toBe('51.64');
    expect(formatBps(moveBps('8', '8.00001'))).toBe('0.01');
  });
});

describe('checkTickCap', () => {
  it('passes a move up to the cap and holds one beyond it, both ways', () => {
    expect(checkTickCap('1.0000', '1.0050', 50)).toEqual({ decision: 'pass', move_bps: '50.00' });
    expect(checkTickCap('1.0000', '0.9950', 50)).toEqual({ decision: 'pass', move_bps: '-50.00' });
    expect(checkTickCap('1.0000', '1.00501', 50)).toEqual({ decision: 'held', move_bps: '50.10' });
    expect(checkTickCap('1.0000', '0.99499', 50)).toEqual({ decision: 'held', move_bps: '-50.10' });
  });

  it('is exact where a division would not be: 1/3 of a bp above the cap is held', () => {
    // last = 3, cap 1 bp: the limit is 3.0003; 3.0003 + 1e-12 is above it by far less than a displayed bp.
    expect(checkTickCap('3', '3.0003', 1).decision).toBe('pass');
    expect(checkTickCap('3', '3.000300000001', 1)).toEqual({ decision: 'held', move_bps: '1.00' });
  });

  it("passes a pair's first rate", () => {
    expect(checkTickCap(undefined, '1.0845', 50)).toEqual({ decision: 'pass' });
  });

  it('refuses an invalid cap or rate', () => {
    expect(() => checkTickCap('1', '1', 0)).toThrow(RangeError);
    expect(() => checkTickCap('1', '1', 1.5)).toThrow(RangeError);
    expect(() => checkTickCap('1', '-1', 10)).toThrow(RangeError);
    expect(() => checkTickCap('0', '1', 10)).toThrow(RangeError);
  });

  const rate = fc
    .tuple(fc.integer({ min: 1, max: 9_999_999 }), fc.integer({ min: 0, max: 6 }))
    .map(([digits, scale]) => dec(String(digits)).dividedBy(10 ** scale));

  it('is symmetric and exact: a move of k bps either way is held exactly when k > cap (property)', () => {
    fc.assert(
      fc.property(
        rate,
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        (last, k, cap) => {
          const up = last.times(10_000 + k).dividedBy(10_000);
          const down = last.times(10_000 - k).dividedBy(10_000);
          fc.pre(down.gt(0));
          const expected = k > cap ? 'held' : 'pass';
          expect(checkTickCap(last.toString(), up.toString(), cap).decision).toBe(expected);
          expect(checkTickCap(last.toString(), down.toString(), cap).decision).toBe(expected);
          expect(dec(checkTickCap(last.toString(), up.toString(), cap).move_bps as string).toNumber()).toBe(
            k,
          );
        },
      ),
    );
  });

  it('agrees with the move in bps computed by division (property)', () => {
    fc.assert(
      fc.property(rate, rate, fc.integer({ min: 1, max: 10_000 }), (last, next, cap) => {
        const held = checkTickCap(last.toString(), next.toString(), cap).decision === 'held';
        expect(held).toBe(moveBps(last.toString(), next.toString()).abs().gt(cap));
      }),
    );
  });
});

describe('circuit breaker', () => {
  it('starts closed and lets ticks through', () => {
    expect(breakerGate(INITIAL_BREAKER, POLICY, t(0))).toEqual({
      state: INITIAL_BREAKER,
      allowed: true,
      probe: false,
      transitions: [],
    });
  });

  it('opens after failure_threshold failures or anomalies within the window', () => {
    let state: BreakerState = INITIAL_BREAKER;
    state = breakerRecord(state, POLICY, 'failure', t(0)).state;
    state = breakerRecord(state, POLICY, 'success', t(60)).state;
    state = breakerRecord(state, POLICY, 'anomaly', t(120)).state;
    expect(state).toEqual({ status: 'closed', failures: [t(0).toISOString(), t(120).toISOString()] });
    const step = breakerRecord(state, POLICY, 'failure', t(180));
    expect(step.state).toEqual({ status: 'open', opened_at: t(180).toISOString() });
    expect(step.transitions).toEqual([
      {
        from: 'closed',
        to: 'open',
        at: t(180).toISOString(),
        reason: '3 failures or anomalies within 300 s (last: failure)',
      },
    ]);
  });

  it('forgets failures that left the window', () => {
    let state: BreakerState = INITIAL_BREAKER;
    state = breakerRecord(state, POLICY, 'failure', t(0)).state;
    state = breakerRecord(state, POLICY, 'failure', t(100)).state;
    state = breakerRecord(state, POLICY, 'failure', t(301)).state;
    expect(state).toEqual({ status: 'closed', failures: [t(100).toISOString(), t(301).toISOString()] });
    expect(breakerRecord(state, POLICY, 'success', t(500)).state).toEqual({
      status: 'closed',
      failures: [t(301).toISOString()],
    });
  });

  it('stays open for open_seconds, then lets one probe through (half-open)', () => {
    const open: BreakerState = { status: 'open', opened_at: t(0).toISOString() };
    expect(breakerGate(open, POLICY, t(599))).toEqual({
      state: open,
      allowed: false,
      probe: false,
      retry_at: t(600).toISOString(),
      transitions: [],
    });
    const gate = breakerGate(open, POLICY, t(600));
    expect(gate).toMatchObject({ allowed: true, probe: true, state: { status: 'half_open' } });
    expect(gate.transitions).toEqual([
      { from: 'open', to: 'half_open', at: t(600).toISOString(), reason: 'open for 600 s' },
    ]);
    // Half-open without an outcome yet (a probe that never reported): the next tick is the probe.
    expect(breakerGate(gate.state, POLICY, t(660))).toMatchObject({
      allowed: true,
      probe: true,
      transitions: [],
    });
  });

  it('closes on a successful probe and opens again on a failed one', () => {
    const halfOpen: BreakerState = { status: 'half_open', since: t(600).toISOString() };
    const closed = breakerRecord(halfOpen, POLICY, 'success', t(600));
    expect(closed.state).toEqual({ status: 'closed', failures: [] });
    expect(closed.transitions).toEqual([
      { from: 'half_open', to: 'closed', at: t(600).toISOString(), reason: 'probe succeeded' },
    ]);
    for (const outcome of ['failure', 'anomaly'] as const) {
      const reopened = breakerRecord(halfOpen, POLICY, outcome, t(600));
      expect(reopened.state).toEqual({ status: 'open', opened_at: t(600).toISOString() });
      expect(reopened.transitions[0]).toMatchObject({
        from: 'half_open',
        to: 'open',
        reason: `probe ${outcome}`,
      });
    }
  });

  it('ignores outcomes recorded while open', () => {
    const open: BreakerState = { status: 'open', opened_at: t(0).toISOString() };
    expect(breakerRecord(open, POLICY, 'success', t(10))).toEqual({ state: open, transitions: [] });
  });

  it('opens on the first failure with a threshold of 1', () => {
    const step = breakerRecord(INITIAL_BREAKER, { ...POLICY, failure_threshold: 1 }, 'anomaly', t(0));
    expect(step.state.status).toBe('open');
  });

  it('refuses an invalid policy or state', () => {
    expect(() => breakerGate(INITIAL_BREAKER, { ...POLICY, failure_threshold: 0 }, t(0))).toThrow(RangeError);
    expect(() => breakerRecord(INITIAL_BREAKER, { ...POLICY, open_seconds: 1.5 }, 'success', t(0))).toThrow(
      RangeError,
    );
    expect(() => breakerGate({ status: 'open', opened_at: 'soon' }, POLICY, t(0))).toThrow(RangeError);
  });

  it('never publishes while open, and every opening is reported (property)', () => {
    const outcome = fc.constantFrom<BreakerOutcome>('success', 'failure', 'anomaly');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 400 }), outcome), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 1, max: 5 }),
        (steps, threshold) => {
          const policy = { failure_threshold: threshold, window_seconds: 300, open_seconds: 600 };
          let state: BreakerState = INITIAL_BREAKER;
          let clock = 0;
          let openedAt: number | undefined;
          for (const [gap, result] of steps) {
            clock += gap;
            const gate = breakerGate(state, policy, t(clock));
            if (openedAt !== undefined && clock < openedAt + 600) expect(gate.allowed).toBe(false);
            if (!gate.allowed) {
              expect(state.status).toBe('open');
              continue;
            }
            const step = breakerRecord(gate.state, policy, result, t(clock));
            const transitions = [...gate.transitions, ...step.transitions];
            if (step.state.status === 'open') {
              expect(transitions.at(-1)?.to).toBe('open');
              openedAt = clock;
            } else openedAt = undefined;
            if (result === 'success' && gate.probe)
              expect(step.state).toEqual({ status: 'closed', failures: [] });
            if (step.state.status === 'closed') expect(step.state.failures.length).toBeLessThan(threshold);
            state = step.state;
          }
        },
      ),
    );
  });
});
