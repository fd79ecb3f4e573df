import {
  DEFAULT_WATCHDOG_TIMINGS,
  headAction,
  type WatchdogTimings,
} from '../../domain/webhooks/order-watchdog';
import type { DeliveryMessage } from '../../schemas/envelope';
import { mapAllConcurrently } from '../../shared/concurrency';
import { handTurnOn, type WebhookContext } from './context';

/** Keys' heads read per run at most (open places of ordered endpoints; a larger table is read in part). */
const MAX_PLACES_READ = 20_000;

export interface WatchdogRun {
  readonly heads: number;
  /** Heads whose turn came with nothing on the way: their attempt's message sent again. */
  readonly woken: number;
  /** Heads whose delivery had ended (or was gone, or moved) without handing the turn on: handed on now. */
  readonly handed_on: number;
  /** False when the table held more open places than one run reads. */
  readonly complete: boolean;
}

/** The message of `attempt` for the head's delivery: its turn's message, without a reserved start or a carried event. */
const wakeMessage = (turn: DeliveryMessage, attempt: number): DeliveryMessage => {
  const { not_before: _start, event: _event, ...message } = turn;
  return { ...message, attempt: Math.max(attempt, message.attempt) };
};

/**
 * The ordered keys' watchdog, run by the sweeper (see `domain/webhooks/order-watchdog.ts`): every key's head is
 * noted the first time it is seen there; one still at the head a grace period later whose delivery ended without
 * handing the turn on gets the hand-over, and one whose turn came with no attempt in flight or scheduled gets its
 * attempt's message again. Both are what the lost message would have done, and both are harmless when it was
 * not lost after all (a closed place stays closed; the claim lets one message of an attempt through).
 */
export const watchOrderedKeys = async (
  ctx: Pick<WebhookContext, 'clock' | 'sequencer' | 'deliveries' | 'endpoints' | 'queue' | 'signal'>,
  timings: WatchdogTimings = DEFAULT_WATCHDOG_TIMINGS,
): Promise<WatchdogRun> => {
  const { heads, complete } = await ctx.sequencer.heads(MAX_PLACES_READ);
  const now = ctx.clock.now();
  const at = now.toISOString();
  let woken = 0;
  let handedOn = 0;
  await mapAllConcurrently(heads, 8, async (head) => {
    const seenFor = head.headSeenAt === undefined ? 0 : now.getTime() - Date.parse(head.headSeenAt);
    // Not read while it may well be moving: most heads move on within a run or two.
    const delivery =
      seenFor >= timings.graceMs ? await ctx.deliveries.get(head.eventId, head.endpointId) : undefined;
    const action = headAction(head, delivery, now, timings);
    if (action.kind === 'note') {
      await ctx.sequencer.markHeadSeen(head.endpointId, head.place, head.eventId, at);
    } else if (action.kind === 'hand_on') {
      await handTurnOn(ctx, head.endpointId, head.place, head.eventId);
      handedOn += 1;
      ctx.signal('order_turn_handed_on', {
        endpoint_id: head.endpointId,
        order_key: head.place.key,
        order_seq: head.place.seq,
        event_id: head.eventId,
      });
    } else if (action.kind === 'wake') {
      // An endpoint paused by a Retry-After defers its deliveries without an attempt or a schedule: its head is
      // waiting, not lost. A place closed since it was listed has nothing to wake.
      const endpoint = await ctx.endpoints.get(head.endpointId);
      if (endpoint?.paused_until !== undefined && Date.parse(endpoint.paused_until) > now.getTime()) return;
      const turn = await ctx.sequencer.messageOf(head.endpointId, head.place);
      if (!turn) return;
      // Noted first: a crash between the two sends nothing twice on the next run, only later.
      await ctx.sequencer.markHeadWoken(head.endpointId, head.place, head.eventId, {
        at,
        attempt: action.attempt,
      });
      await ctx.queue.send('delivery', JSON.stringify(wakeMessage(turn, action.attempt)), {
        group: head.endpointId,
      });
      woken += 1;
      ctx.signal('order_head_woken', {
        endpoint_id: head.endpointId,
        order_key: head.place.key,
        order_seq: head.place.seq,
        event_id: head.eventId,
        attempt: action.attempt,
      });
    }
  });
  return { heads: heads.length, woken, handed_on: handedOn, complete };
};
