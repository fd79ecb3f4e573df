import { ServiceError } from '../../domain/errors';
import {
  daysBetween,
  type Envelope,
  LATEST_ENVELOPE_VERSION,
  renderEnvelope,
} from '../../domain/webhooks/envelope';
import type { DeliveryRecord, Page } from '../../ports/webhooks';
import type { OutboxItem } from '../../schemas/envelope';
import type { ListEventsQuery } from '../../schemas/webhooks';
import { cursorCodec } from '../../shared/cursor';
import type { WebhookContext } from './context';

export class EventNotFoundError extends ServiceError {
  constructor(eventId: string) {
    super('not_found', `no event ${eventId} (unknown, or its history expired)`);
    this.name = 'EventNotFoundError';
  }
}

/** A delivery as the history shows it (C16). */
export const deliveryView = (delivery: DeliveryRecord) => ({
  endpoint_id: delivery.endpoint_id,
  status: delivery.status,
  ...(delivery.stop_reason ? { stop_reason: delivery.stop_reason } : {}),
  ...(delivery.next_attempt_at ? { next_attempt_at: delivery.next_attempt_at } : {}),
  ...(delivery.replay_id ? { replay_id: delivery.replay_id } : {}),
  attempts: [...delivery.attempts].sort((a, b) => a.attempt - b.attempt),
  // The partner's confirmation (POST /partner/confirmations), without the hash of its Idempotency-Key.
  ...(delivery.confirmation
    ? {
        confirmation: {
          outcome: delivery.confirmation.outcome,
          reference: delivery.confirmation.reference,
          confirmed_at: delivery.confirmation.confirmed_at,
        },
      }
    : {}),
});

const envelopeOf = (item: OutboxItem): Envelope => renderEnvelope(item, LATEST_ENVELOPE_VERSION, 1);

/**
 * `GET /webhooks/events/{event_id}`: the envelope as first sent (attempt 1), its fan-out, and per endpoint the
 * status and every attempt in order. After the body's TTL the history stays, without the body.
 */
export const showEvent = async (ctx: Pick<WebhookContext, 'events' | 'deliveries'>, eventId: string) => {
  const [item, deliveries] = await Promise.all([ctx.events.get(eventId), ctx.deliveries.forEvent(eventId)]);
  if (!item && deliveries.length === 0) throw new EventNotFoundError(eventId);
  return {
    event_id: eventId,
    envelope: item ? envelopeOf(item) : null,
    ...(item?.fanned_out_at
      ? { fanned_out_at: item.fanned_out_at, fanned_out_to: item.fanned_out_to ?? 0 }
      : {}),
    ...(item?.published_by ? { published_by: item.published_by } : {}),
    ...(item?.expunged_at
      ? { expunged_at: item.expunged_at, ...(item.expunged_by ? { expunged_by: item.expunged_by } : {}) }
      : {}),
    deliveries: deliveries.map(deliveryView),
  };
};

/** What `POST /webhooks/events/{id}/expunge` did: removed the body now or before, or found it expired already. */
export interface EventExpunged {
  readonly event_id: string;
  readonly body: 'expunged' | 'expired';
  readonly expunged_at?: string;
  readonly expunged_by?: string;
}

/**
 * `POST /webhooks/events/{event_id}/expunge`: removes the event's body for good — the envelope's identifiers, the
 * fan-out and every delivery's attempts stay, with when and by whom it was expunged. Deliveries still to be made
 * stop (`event_expunged`) and no replay can send it again. Expunging again answers the first record; an event
 * whose body expired already answers `expired`.
 */
export const expungeEvent = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'deliveries'>,
  eventId: string,
  by: string,
): Promise<EventExpunged> => {
  const item = await ctx.events.expunge(eventId, ctx.clock.now().toISOString(), by);
  if (item?.expunged_at) {
    // A first attempt's message may carry a copy of the event: its deliveries still to be made are told, so the
    // attempt that claims one stops instead of sending the copy.
    for (const delivery of await ctx.deliveries.forEvent(eventId))
      if (delivery.status === 'pending' || delivery.status === 'retrying')
        await ctx.deliveries.markEventExpunged(eventId, delivery.endpoint_id, item.expunged_at);
    return {
      event_id: eventId,
      body: 'expunged',
      expunged_at: item.expunged_at,
      ...(item.expunged_by ? { expunged_by: item.expunged_by } : {}),
    };
  }
  if ((await ctx.deliveries.forEvent(eventId)).length === 0) throw new EventNotFoundError(eventId);
  return { event_id: eventId, body: 'expired' };
};

/** One row of `GET /webhooks/events`. */
export interface EventSummary {
  readonly event_id: string;
  readonly type: string;
  readonly ts: string;
  readonly deliveries: readonly { endpoint_id: string; status: string; attempts: number }[];
}

const summaryOf = (eventId: string, type: string, ts: string, deliveries: readonly DeliveryRecord[]) => ({
  event_id: eventId,
  type,
  ts,
  deliveries: deliveries.map((delivery) => ({
    endpoint_id: delivery.endpoint_id,
    status: delivery.status,
    attempts: delivery.attempts.length,
  })),
});

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Cursor of a listing over days: the day reached and the store's cursor within it. */
const dayCursor = cursorCodec('events-by-days', (position): { day: string; inner?: string } | undefined => {
  if (typeof position !== 'object' || position === null || Array.isArray(position)) return undefined;
  const { day, inner, ...rest } = position as { day?: unknown; inner?: unknown };
  if (Object.keys(rest).length > 0 || typeof day !== 'string' || !DAY.test(day)) return undefined;
  if (inner !== undefined && typeof inner !== 'string') return undefined;
  return { day, ...(inner === undefined ? {} : { inner }) };
});

export class InvalidListingError extends ServiceError {
  constructor(message: string, options?: ErrorOptions) {
    super('invalid_request', message, options ?? {});
    this.name = 'InvalidListingError';
  }
}

/**
 * `GET /webhooks/events?status=&endpoint_id=&from=&to=`: time-ordered, paginated. With `endpoint_id` or
 * `status` it walks the deliveries' indexes (one row per matching delivery's event); otherwise the events by
 * day. The window defaults to the last 24 hours.
 */
export const listEvents = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'deliveries'>,
  query: ListEventsQuery,
): Promise<Page<EventSummary>> => {
  const now = ctx.clock.now();
  const to = query.to ?? now.toISOString();
  const from = query.from ?? new Date(Date.parse(to) - 86_400_000).toISOString();
  const limit = query.limit ?? 50;
  if (query.endpoint_id || query.status) {
    const index = query.endpoint_id
      ? { endpointId: query.endpoint_id }
      : { status: query.status ?? 'pending' };
    const page = await ctx.deliveries.query(index, from, to, limit, query.cursor);
    const rows = page.items.filter(
      (delivery) => query.status === undefined || delivery.status === query.status,
    );
    return {
      items: rows.map((delivery) =>
        summaryOf(delivery.event_id, delivery.event_type, delivery.ts_id.split('#')[0] ?? '', [delivery]),
      ),
      ...(page.cursor ? { cursor: page.cursor } : {}),
    };
  }
  let days: string[];
  try {
    days = daysBetween(from, to);
  } catch (error) {
    throw new InvalidListingError('a listing window spans at most 400 days', { cause: error });
  }
  let start = 0;
  let inner: string | undefined;
  if (query.cursor) {
    const decoded = dayCursor.decode(query.cursor);
    start = Math.max(0, days.indexOf(decoded.day));
    inner = decoded.inner;
  }
  const items: EventSummary[] = [];
  for (let index = start; index < days.length; index += 1) {
    const day = days[index] as string;
    // A page may come back short with more of the day behind it (events past their expiry, not yet deleted, are
    // left out): the day is read on until the page is full or the day has no more.
    do {
      const page = await ctx.events.byDay(day, from, to, limit - items.length, inner);
      inner = page.cursor;
      for (const item of page.items)
        items.push(
          summaryOf(item.event_id, item.type, item.ts, await ctx.deliveries.forEvent(item.event_id)),
        );
    } while (inner !== undefined && items.length < limit);
    if (items.length >= limit) {
      const next = inner
        ? dayCursor.encode({ day, inner })
        : index + 1 < days.length
          ? dayCursor.encode({ day: days[index + 1] as string })
          : undefined;
      return { items, ...(next ? { cursor: next } : {}) };
    }
  }
  return { items };
};
