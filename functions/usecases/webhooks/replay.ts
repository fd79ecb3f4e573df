import { ServiceError } from '../../domain/errors';
import {
  type DeliveryStatus,
  daysBetween,
  RECOVERABLE_STATUSES,
  REPLAYABLE_STATUSES,
} from '../../domain/webhooks/envelope';
import { type EndpointOrdering, orderingKeyOf } from '../../domain/webhooks/ordering';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { DeliveryRecord, ReplayTally } from '../../ports/webhooks';
import type { DeliveryMessage, OutboxItem } from '../../schemas/envelope';
import type { ReplayRequest } from '../../schemas/webhooks';
import { newId } from '../../shared/ids';
import { epochSeconds, handTurnOn, type WebhookContext } from './context';
import { orderPlaceExpiry, subjectOf } from './fanout';

/** Most deliveries one replay restarts; a larger window is split by the caller. */
export const MAX_REPLAY_DELIVERIES = 5000;

export class ReplayRefusedError extends ServiceError {
  declare readonly code: 'invalid_request' | 'invalid_state' | 'not_found';

  constructor(
    code: 'invalid_request' | 'invalid_state' | 'not_found',
    message: string,
    details?: Readonly<Record<string, unknown>>,
  ) {
    super(code, message, { details });
    this.name = 'ReplayRefusedError';
  }
}

export interface ReplayAccepted {
  readonly replay_id: string;
  /** Deliveries the request selected. */
  readonly matched: number;
  /** Deliveries restarted (a message sent). */
  readonly enqueued: number;
  /** Selected but not restarted: still pending or retrying, or changed meanwhile. */
  readonly skipped: number;
}

/** An event that can be sent again: its body neither expunged nor expired. */
const replayable = (item: OutboxItem | undefined): item is OutboxItem =>
  item !== undefined && item.expunged_at === undefined;

/**
 * Pages gathered `into` one list until none is left, refused as soon as the list passes the replay's bound (across
 * every call that gathers into the same list).
 */
const gathered = async <T>(
  pages: (cursor: string | undefined) => Promise<{ items: readonly T[]; cursor?: string }>,
  what: string,
  into: T[] = [],
): Promise<T[]> => {
  let cursor: string | undefined;
  do {
    const page = await pages(cursor);
    into.push(...page.items);
    cursor = page.cursor;
    if (into.length > MAX_REPLAY_DELIVERIES)
      throw new ReplayRefusedError(
        'invalid_request',
        `the window holds more than ${MAX_REPLAY_DELIVERIES} ${what}: replay a shorter window`,
      );
  } while (cursor);
  return into;
};

const eventsInWindow = async (ctx: Pick<WebhookContext, 'events'>, from: string, to: string) => {
  const items: OutboxItem[] = [];
  for (const day of daysBetween(from, to))
    await gathered(
      async (cursor) => {
        const page = await ctx.events.byDay(day, from, to, 500, cursor);
        return { items: page.items.filter(replayable), ...(page.cursor ? { cursor: page.cursor } : {}) };
      },
      'events',
      items,
    );
  return items;
};

/**
 * One endpoint's deliveries in the window, with their events, through the deliveries' endpoint index: a replay or
 * a recovery of one endpoint reads its own deliveries, not every event of the window. Only the deliveries `kept`
 * count against the replay's bound and have their event read: recovering the few deliveries an endpoint missed
 * in a window of thousands it received reads, and is bounded by, those few. The deliveries are the selection
 * itself (read back consistently), not read again through their events.
 */
const endpointDeliveriesInWindow = (
  ctx: Pick<WebhookContext, 'events' | 'deliveries'>,
  endpointId: string,
  from: string,
  to: string,
  kept: (delivery: DeliveryRecord) => boolean,
) =>
  gathered(async (cursor) => {
    const page = await ctx.deliveries.query({ endpointId }, from, to, 200, cursor);
    const pairs = await Promise.all(
      page.items
        .filter(kept)
        .map(async (delivery) => ({ delivery, item: await ctx.events.get(delivery.event_id) })),
    );
    return {
      items: pairs.filter((pair): pair is { delivery: DeliveryRecord; item: OutboxItem } =>
        replayable(pair.item),
      ),
      ...(page.cursor ? { cursor: page.cursor } : {}),
    };
  }, 'deliveries');

/**
 * Replays deliveries (C15): by `event_ids` or by a `from`/`to` window, optionally one endpoint and one status.
 * Each selected delivery in a final state (dead, stopped, delivered) is sent again with the same `event_id` and
 * the next `attempt`, on a fresh round of the backoff schedule; with `force`, pending and retrying ones too.
 * Events older than the replay horizon need `force` (the receiver kit's dedup memory would not recognise
 * them); events whose body expired are refused.
 */
export const replayDeliveries = async (
  ctx: WebhookContext,
  request: ReplayRequest,
  once?: ExactlyOnce<ReplayAccepted>,
  /** Deliveries in any of these statuses (`recover`), instead of the request's one `status`. */
  statuses?: readonly DeliveryStatus[],
): Promise<ReplayAccepted> => {
  const wanted = statuses ?? (request.status !== undefined ? [request.status] : undefined);
  const now = ctx.clock.now();
  // Reserved for the request: a retry after a crash restarts under the same replay and resumes it.
  const replayId = once ? once.reservedId('rpl') : newId('rpl', now);
  const items: OutboxItem[] = [];
  /** One endpoint's deliveries in a window, already selected by its index. */
  let windowed: DeliveryRecord[] | undefined;
  if (request.event_ids) {
    const missing: string[] = [];
    for (const eventId of [...new Set(request.event_ids)]) {
      const item = await ctx.events.get(eventId);
      if (item && !item.expunged_at) items.push(item);
      else missing.push(eventId);
    }
    if (missing.length > 0)
      throw new ReplayRefusedError(
        'not_found',
        'some events are unknown, or their bodies expired or were expunged',
        {
          missing_event_ids: missing,
        },
      );
  } else if (request.from && request.to && request.endpoint_id) {
    const pairs = await endpointDeliveriesInWindow(
      ctx,
      request.endpoint_id,
      request.from,
      request.to,
      // The statuses wanted, and what this very request restarted before it crashed (no longer of them).
      (delivery) =>
        wanted === undefined || wanted.includes(delivery.status) || delivery.replay_id === replayId,
    );
    items.push(...pairs.map((pair) => pair.item));
    windowed = pairs.map((pair) => pair.delivery);
  } else if (request.from && request.to) {
    items.push(...(await eventsInWindow(ctx, request.from, request.to)));
  }

  const selected: DeliveryRecord[] = windowed ?? [];
  for (const item of windowed ? [] : items) {
    const deliveries = await ctx.deliveries.forEvent(item.event_id);
    selected.push(
      ...deliveries.filter(
        (delivery) =>
          (request.endpoint_id === undefined || delivery.endpoint_id === request.endpoint_id) &&
          // A delivery this replay restarted before a crash no longer has the status the filter names.
          (wanted === undefined || wanted.includes(delivery.status) || delivery.replay_id === replayId),
      ),
    );
    if (selected.length > MAX_REPLAY_DELIVERIES)
      throw new ReplayRefusedError(
        'invalid_request',
        `more than ${MAX_REPLAY_DELIVERIES} deliveries match: narrow the request`,
      );
  }

  const itemsById = new Map(items.map((item) => [item.event_id, item]));
  // Only the events the replay would send again (as the loop below decides): old events it would not resend
  // refuse nothing.
  const horizon = now.getTime() - ctx.settings.replayHorizonDays * 86_400_000;
  /**
   * Whether the loop below sends a selected delivery again: one this very request restarted (resumed after a
   * crash), else one in a final state (with `force`, any); a filtered delivery was never meant for its endpoint:
   * not even `force` sends it.
   */
  const resends = (delivery: DeliveryRecord): boolean =>
    delivery.replay_id === replayId ||
    (delivery.status !== 'filtered' && (request.force || REPLAYABLE_STATUSES.includes(delivery.status)));
  const resent = selected.filter(resends);
  const tooOld = [...new Set(resent.map((delivery) => delivery.event_id))].filter((eventId) => {
    const item = itemsById.get(eventId);
    return item !== undefined && Date.parse(item.ts) < horizon;
  });
  if (tooOld.length > 0 && !request.force)
    throw new ReplayRefusedError(
      'invalid_state',
      `events older than ${ctx.settings.replayHorizonDays} days need "force": true (receivers may no longer recognise them as duplicates)`,
      { event_ids: tooOld.slice(0, 100) },
    );

  const restarted: { event_id: string; endpoint_id: string }[] = [];
  const orderings = new Map<string, Promise<EndpointOrdering | undefined>>();
  const orderingOf = (endpointId: string) => {
    let ordering = orderings.get(endpointId);
    if (!ordering) {
      ordering = ctx.endpoints.get(endpointId).then((endpoint) => endpoint?.ordering);
      orderings.set(endpointId, ordering);
    }
    return ordering;
  };
  /**
   * The place a restarted delivery held before this replay is left, whatever its status: a forced one still open
   * hands its key on, and one that ended but whose consumer died before handing on does it now (closing a closed
   * place only wakes the next one again, which its claim absorbs).
   */
  const leaveEarlierPlace = async (delivery: DeliveryRecord) => {
    if (delivery.order_key === undefined || delivery.order_seq === undefined) return;
    if (delivery.ordered_by === replayId) return;
    await handTurnOn(
      ctx,
      delivery.endpoint_id,
      { key: delivery.order_key, seq: delivery.order_seq },
      delivery.event_id,
    );
  };
  const send = async (delivery: DeliveryRecord, attempt: number, previous: DeliveryStatus) => {
    const first: DeliveryMessage = {
      event_id: delivery.event_id,
      endpoint_id: delivery.endpoint_id,
      attempt,
      round_start: attempt,
      replay_id: replayId,
    };
    let message = first;
    try {
      // An ordered endpoint's replayed delivery joins the end of its key (C31): the replay selects oldest first,
      // so the replayed ones arrive in their events' order, each after the one before it ended.
      const ordering = await orderingOf(delivery.endpoint_id);
      const item = itemsById.get(delivery.event_id);
      if (ordering && item) {
        const key = orderingKeyOf(ordering, subjectOf(item));
        message = {
          ...first,
          order: {
            key,
            seq: await ctx.sequencer.enqueue({
              endpointId: delivery.endpoint_id,
              key,
              eventId: delivery.event_id,
              round: replayId,
              message: first,
              expiresAt: orderPlaceExpiry(item),
            }),
          },
        };
      }
      await ctx.queue.send('delivery', JSON.stringify(message), { group: message.endpoint_id });
    } catch (error) {
      // Without its message the delivery would stay `retrying` for good (and its place would hold its key): give
      // it its state back, and the next one of its key its turn.
      try {
        if (message.order) await handTurnOn(ctx, delivery.endpoint_id, message.order, delivery.event_id);
      } finally {
        await ctx.deliveries.revertReplay(delivery.event_id, delivery.endpoint_id, replayId, previous);
      }
      throw error;
    }
    restarted.push({ event_id: delivery.event_id, endpoint_id: delivery.endpoint_id });
  };
  for (const delivery of selected) {
    if (delivery.replay_id === replayId) {
      await leaveEarlierPlace(delivery);
      // Restarted by this very request before it crashed: its message may not have gone out. Send it again
      // unless an attempt of this replay was claimed or recorded since (a duplicate message of the same
      // attempt number is dropped by the claim, so this never makes a second attempt).
      const attempt = Math.max(delivery.last_attempt, delivery.completed_attempt) + 1;
      const progressed =
        delivery.status !== 'retrying' ||
        delivery.last_attempt !== delivery.completed_attempt ||
        delivery.attempts.some((recorded) => recorded.replay_id === replayId);
      if (progressed) restarted.push({ event_id: delivery.event_id, endpoint_id: delivery.endpoint_id });
      else await send(delivery, attempt, delivery.replay_from_status ?? 'dead');
      continue;
    }
    // `force` also restarts a delivery still pending or retrying (say its message was dead-lettered by the
    // queue after repeated consumer failures): the replay's attempt claims first, and the older chain's next
    // message, carrying the same or a lower attempt number, is dropped by the claim.
    if (!resends(delivery)) continue;
    const attempt = await ctx.deliveries.startReplay(
      delivery.event_id,
      delivery.endpoint_id,
      replayId,
      delivery.status as DeliveryStatus,
      ctx.clock.now().toISOString(),
    );
    if (attempt === undefined) continue;
    once?.checkpoint('after-restart');
    await leaveEarlierPlace(delivery);
    await send(delivery, attempt, delivery.status);
  }
  const accepted: ReplayAccepted = {
    replay_id: replayId,
    matched: selected.length,
    enqueued: restarted.length,
    skipped: selected.length - restarted.length,
  };
  // The replay's record and the request's answer are one write; deliveries that ended before it are counted in
  // it already, so if they were all, the replay is complete now (nothing else would announce it).
  await ctx.replays.put(
    {
      ...accepted,
      requested_at: now.toISOString(),
      request: { ...request },
      deliveries: restarted,
      expires_at: epochSeconds(now, ctx.settings.historyTtlDays),
    },
    await once?.completion(accepted),
  );
  await announceIfCompleted(ctx, replayId, await ctx.replays.tally(replayId));
  return accepted;
};

/**
 * Announces a replay whose every restarted delivery has ended (`operations.replay_completed`, once: its key is the
 * replay). Called by the delivery that ends last, and by the replay itself once its record is written.
 */
export const announceIfCompleted = async (
  ctx: Pick<WebhookContext, 'operations'>,
  replayId: string,
  tally: ReplayTally | undefined,
): Promise<void> => {
  if (!tally || tally.delivered + tally.dead + tally.stopped < tally.enqueued) return;
  await ctx.operations.emit({
    type: 'operations.replay_completed',
    key: `replay_completed:${replayId}`,
    data: { replay_id: replayId, ...tally },
    traceId: replayId,
  });
};

export interface ReplayProgress extends ReplayAccepted {
  readonly requested_at: string;
  readonly request: Readonly<Record<string, unknown>>;
  /** The restarted deliveries by their status now. */
  readonly progress: Readonly<Record<DeliveryStatus, number>>;
  readonly done: boolean;
  readonly deliveries: readonly {
    event_id: string;
    endpoint_id: string;
    status: DeliveryStatus | 'expired';
  }[];
}

/** `GET /webhooks/replays/{replay_id}`: what the replay restarted and where each delivery is now. */
export const replayProgress = async (ctx: WebhookContext, replayId: string): Promise<ReplayProgress> => {
  const record = await ctx.replays.get(replayId);
  if (!record) throw new ReplayRefusedError('not_found', `no replay ${replayId}`);
  const progress: Record<DeliveryStatus, number> = {
    pending: 0,
    delivered: 0,
    retrying: 0,
    stopped: 0,
    dead: 0,
    filtered: 0,
    skipped: 0,
  };
  const deliveries: ReplayProgress['deliveries'][number][] = [];
  for (const entry of record.deliveries) {
    const delivery = await ctx.deliveries.get(entry.event_id, entry.endpoint_id);
    const status = delivery ? delivery.status : 'expired';
    if (status !== 'expired') progress[status] += 1;
    deliveries.push({ ...entry, status });
  }
  return {
    replay_id: record.replay_id,
    matched: record.matched,
    enqueued: record.enqueued,
    skipped: record.skipped,
    requested_at: record.requested_at,
    request: record.request,
    progress,
    done: progress.pending + progress.retrying === 0,
    deliveries,
  };
};

/** What `POST /webhooks/endpoints/{id}/recover` started: a replay of what the endpoint missed, with its progress. */
export interface RecoveryAccepted extends ReplayAccepted {
  readonly recovery_id: string;
}

/**
 * `POST /webhooks/endpoints/{id}/recover {"since","until"}` (C32): re-delivers what the endpoint missed in the
 * window — deliveries `skipped` while it was disabled, and those that ended `dead` or `stopped` — as a replay of its
 * own: each attempt is in the delivery's history with the recovery's id, and `GET /webhooks/replays/{id}` shows the
 * progress. The endpoint must be enabled again first (re-delivering to a disabled one would skip them again).
 */
export const recoverEndpoint = async (
  ctx: WebhookContext,
  endpointId: string,
  window: { readonly since: string; readonly until: string },
  once?: ExactlyOnce<RecoveryAccepted>,
): Promise<RecoveryAccepted> => {
  const endpoint = await ctx.endpoints.get(endpointId);
  if (!endpoint) throw new ReplayRefusedError('not_found', `no endpoint ${endpointId}`);
  if (endpoint.status !== 'enabled')
    throw new ReplayRefusedError(
      'invalid_state',
      'the endpoint is disabled: enable it first (PATCH {"status":"enabled"}), then recover what it missed',
    );
  const recovery = (accepted: ReplayAccepted): RecoveryAccepted => ({
    recovery_id: accepted.replay_id,
    ...accepted,
  });
  const accepted = await replayDeliveries(
    ctx,
    { from: window.since, to: window.until, endpoint_id: endpointId, force: false },
    // The stored answer is the recovery's, so a retried request gets the same answer.
    once && {
      completion: (answer: ReplayAccepted) => once.completion(recovery(answer)),
      reservedId: (prefix, n) => once.reservedId(prefix, n),
      checkpoint: (point) => once.checkpoint(point),
    },
    RECOVERABLE_STATUSES,
  );
  return recovery(accepted);
};
