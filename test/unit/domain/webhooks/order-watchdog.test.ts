import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WATCHDOG_TIMINGS,
  headAction,
  type WatchedDelivery,
  type WatchedHead,
} from '../../../../functions/domain/webhooks/order-watchdog';

const NOW = new Date('2026-11-26T12:00:00.000Z');
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const place = { key: 'data.account="a"', seq: 4 };
const seen: WatchedHead = { place, headSeenAt: ago(6) };
const pending: WatchedDelivery = {
  status: 'pending',
  last_attempt: 0,
  completed_attempt: 0,
  order_key: place.key,
  order_seq: place.seq,
};

describe('the ordered keys’ watchdog (C31 ordering)', () => {
  it('notes a head the first time, and leaves it alone while it is within the grace', () => {
    expect(headAction({ place }, pending, NOW)).toEqual({ kind: 'note' });
    expect(headAction({ place, headSeenAt: ago(4) }, pending, NOW)).toEqual({ kind: 'wait' });
    expect(DEFAULT_WATCHDOG_TIMINGS.graceMs).toBe(5 * 60_000);
  });

  it('wakes the first attempt of a head that never started, past the grace', () => {
    expect(headAction(seen, pending, NOW)).toEqual({ kind: 'wake', attempt: 1 });
  });

  it.each([
    ['delivered', { ...pending, status: 'delivered' as const, last_attempt: 1, completed_attempt: 1 }],
    ['stopped', { ...pending, status: 'stopped' as const }],
    ['dead', { ...pending, status: 'dead' as const, last_attempt: 9, completed_attempt: 9 }],
    ['gone (its record expired)', undefined],
    ['moved to another place by a replay', { ...pending, order_seq: 9 }],
    ['moved to another key', { ...pending, order_key: 'data.account="b"' }],
  ])('hands the turn on when the head’s delivery is %s', (_name, delivery) => {
    expect(headAction(seen, delivery, NOW)).toEqual({ kind: 'hand_on' });
  });

  it('waits for an attempt in flight (its lease held) and for a next attempt not overdue by the grace', () => {
    const claimed = {
      ...pending,
      last_attempt: 1,
      lease_until: new Date(NOW.getTime() + 1000).toISOString(),
    };
    expect(headAction(seen, claimed, NOW)).toEqual({ kind: 'wait' });
    const retrying = { ...pending, status: 'retrying' as const, last_attempt: 2, completed_attempt: 2 };
    expect(headAction(seen, { ...retrying, next_attempt_at: ago(4) }, NOW)).toEqual({ kind: 'wait' });
    expect(headAction(seen, { ...retrying, next_attempt_at: ago(6) }, NOW)).toEqual({
      kind: 'wake',
      attempt: 3,
    });
  });

  it('takes a claimed attempt again when its lease ran out (the consumer died mid-attempt)', () => {
    const died = { ...pending, last_attempt: 3, completed_attempt: 2, lease_until: ago(10) };
    expect(headAction(seen, died, NOW)).toEqual({ kind: 'wake', attempt: 3 });
  });

  it('wakes an attempt once an hour at most (its message may be waiting out a deferral); another attempt at once', () => {
    expect(headAction({ ...seen, woken: { at: ago(59), attempt: 1 } }, pending, NOW)).toEqual({
      kind: 'wait',
    });
    expect(headAction({ ...seen, woken: { at: ago(61), attempt: 1 } }, pending, NOW)).toEqual({
      kind: 'wake',
      attempt: 1,
    });
    const retrying = { ...pending, status: 'retrying' as const, last_attempt: 1, completed_attempt: 1 };
    expect(
      headAction(
        { ...seen, woken: { at: ago(1), attempt: 1 } },
        { ...retrying, next_attempt_at: ago(20) },
        NOW,
      ),
    ).toEqual({ kind: 'wake', attempt: 2 });
  });
});
