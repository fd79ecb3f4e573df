import type { DeliveryStatus } from './envelope';

/**
 * The ordered keys' watchdog (C31 `ordering`). A key moves on only when its head's delivery ends and hands the
 * turn to the next open place by sending that place's message. Were that message lost — or the head's own next
 * attempt — the key would wait forever while every later delivery of it stays `pending`. The sweeper therefore
 * looks at each key's head every run and decides here what it needs: nothing, a hand-over its delivery never
 * made, or a wake-up (its next attempt's message sent again). A wake-up is only ever a duplicate message at
 * worst: the attempt's claim lets one message through.
 */

/** What the watchdog knows of a head: when it first saw it there, and its own last wake-up of it. */
export interface WatchedHead {
  readonly place: { readonly key: string; readonly seq: number };
  readonly headSeenAt?: string;
  readonly woken?: { readonly at: string; readonly attempt: number };
}

/** The head's delivery record, as far as the decision needs it (absent: the record is gone). */
export interface WatchedDelivery {
  readonly status: DeliveryStatus;
  readonly last_attempt: number;
  readonly completed_attempt: number;
  readonly lease_until?: string;
  readonly next_attempt_at?: string;
  readonly order_key?: string;
  readonly order_seq?: number;
}

export interface WatchdogTimings {
  /** How long a head must have been the head, and a missed attempt overdue, before the watchdog acts. */
  readonly graceMs: number;
  /** How long after a wake-up for the same attempt (its message may still be waiting out a deferral) to wake again. */
  readonly rewakeMs: number;
}

export const DEFAULT_WATCHDOG_TIMINGS: WatchdogTimings = { graceMs: 5 * 60_000, rewakeMs: 60 * 60_000 };

export type HeadAction =
  /** First seen at the head: noted, judged on a later run. */
  | { readonly kind: 'note' }
  /** In its turn and moving (in flight, scheduled, recently the head, or woken for this attempt recently). */
  | { readonly kind: 'wait' }
  /** Its delivery ended, is gone, or moved to another place: close this place, hand the turn on. */
  | { readonly kind: 'hand_on' }
  /** Its turn came but nothing is on the way: send the message of `attempt` again. */
  | { readonly kind: 'wake'; readonly attempt: number };

const ENDED: ReadonlySet<DeliveryStatus> = new Set(['delivered', 'stopped', 'dead', 'filtered', 'skipped']);

const ms = (iso: string | undefined): number => (iso === undefined ? Number.NaN : Date.parse(iso));

export const headAction = (
  head: WatchedHead,
  delivery: WatchedDelivery | undefined,
  now: Date,
  timings: WatchdogTimings = DEFAULT_WATCHDOG_TIMINGS,
): HeadAction => {
  const at = now.getTime();
  if (head.headSeenAt === undefined) return { kind: 'note' };
  if (at - ms(head.headSeenAt) < timings.graceMs) return { kind: 'wait' };
  if (
    delivery === undefined ||
    ENDED.has(delivery.status) ||
    delivery.order_key !== head.place.key ||
    delivery.order_seq !== head.place.seq
  )
    return { kind: 'hand_on' };
  if (ms(delivery.lease_until) > at) return { kind: 'wait' };
  if (ms(delivery.next_attempt_at) > at - timings.graceMs) return { kind: 'wait' };
  // A claimed attempt whose consumer died (its lease ran out) is taken again; otherwise the next one.
  const attempt =
    delivery.last_attempt > delivery.completed_attempt
      ? delivery.last_attempt
      : delivery.completed_attempt + 1;
  if (head.woken && head.woken.attempt === attempt && at - ms(head.woken.at) < timings.rewakeMs)
    return { kind: 'wait' };
  return { kind: 'wake', attempt };
};
