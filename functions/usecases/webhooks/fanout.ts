import { endpointSubscribes, timeKey } from '../../domain/webhooks/envelope';
import { type FilterSubject, matchesFilter } from '../../domain/webhooks/filter';
import { orderingKeyOf } from '../../domain/webhooks/ordering';
import type { DeliveryRecord, EndpointRecord } from '../../ports/webhooks';
import type { DeliveryMessage, OutboxItem } from '../../schemas/envelope';
import { KeyedTurns, mapAllConcurrently, type Turn } from '../../shared/concurrency';
import { epochSeconds, type WebhookContext } from './context';

/** Endpoints of one event fanned out at once (each is a conditional put and a queue send). */
const ENDPOINT_CONCURRENCY = 16;

/**
 * Largest event (as JSON) a first attempt's message carries: ten of them fit one 256 KiB `SendMessageBatch`
 * with room to spare; a larger one is read by the attempt.
 */
const MAX_CARRIED_EVENT_CHARS = 16 * 1024;

/**
 * This instance's fan-outs to ordered endpoints number their deliveries per key in the order the events reached
 * it (stream order within a batch), although the events of a batch are fanned out concurrently.
 */
const ORDER_TURNS = new KeyedTurns();

/** The round a fan-out numbers ordered deliveries in (a replay numbers them in its own). */
export const FANOUT_ROUND = 'fanout';

/** An ordered delivery's open place outlives its event's body by a day (after it, every attempt stops anyway). */
export const orderPlaceExpiry = (item: Pick<OutboxItem, 'expires_at'>): number => item.expires_at + 86_400;

/** What filters and ordering keys read of an event. */
export const subjectOf = (item: OutboxItem): FilterSubject => ({
  type: item.type,
  ...(item.tenant !== undefined ? { tenant: item.tenant } : {}),
  ...(item.producer !== undefined ? { producer: item.producer } : {}),
  data: item.data ?? {},
});

/**
 * Fans one event out: a delivery record per matching endpoint (created once, whatever happens after) and the
 * first attempt's message, then the fan-out is recorded on the event. Safe to run again for the same event (a
 * redelivered stream batch, the sweeper): no record is created twice, and a first attempt already claimed is
 * never sent again; a delivery still waiting for its first attempt gets a second message, which its claim
 * turns into a no-op (at most one POST per attempt).
 */
export const fanOutEvent = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'deliveries' | 'queue' | 'settings' | 'sequencer'>,
  item: OutboxItem,
  endpoints: readonly EndpointRecord[],
): Promise<number> => {
  // A test event goes to the one endpoint it was sent to, whatever it subscribes to; any other to every
  // endpoint that receives it.
  // Disabled endpoints that subscribe get the event recorded `skipped` (never dropped: `recover` sends it later).
  const targets =
    item.test_endpoint_id !== undefined
      ? endpoints.filter(
          (endpoint) => endpoint.endpoint_id === item.test_endpoint_id && endpoint.status === 'enabled',
        )
      : endpoints.filter((endpoint) => endpointSubscribes(endpoint, item));
  // An endpoint's filter (C31) that does not match: recorded `filtered`, never sent (a test event passes it).
  const subject = subjectOf(item);
  const filteredOut = (endpoint: EndpointRecord): boolean =>
    item.test_endpoint_id === undefined &&
    endpoint.filter !== undefined &&
    !matchesFilter(endpoint.filter, subject);
  // The body is kept as long as the shortest retention of the endpoints it goes to (privacy first; one that
  // filtered it out never gets it), brought forward in the same write that records the fan-out.
  const retention = Math.min(
    ...targets
      .filter((endpoint) => !filteredOut(endpoint))
      .map((endpoint) => endpoint.retention_days ?? Number.POSITIVE_INFINITY),
  );
  const retained = Number.isFinite(retention) ? epochSeconds(new Date(item.ts), retention) : undefined;
  const shortened = retained !== undefined && retained < item.expires_at ? retained : undefined;
  // An ordered endpoint's delivery (C31) takes its key's turn now, before anything is awaited, so this instance
  // numbers each key's deliveries in the order the events reached it. A test event is not ordered.
  const orderKeys = new Map<string, string>();
  for (const endpoint of targets) {
    if (!endpoint.ordering || item.test_endpoint_id !== undefined) continue;
    if (endpoint.status !== 'enabled' || filteredOut(endpoint)) continue;
    orderKeys.set(endpoint.endpoint_id, orderingKeyOf(endpoint.ordering, subject));
  }
  const turns = new Map<string, Turn>();
  for (const [endpointId, key] of orderKeys) turns.set(endpointId, ORDER_TURNS.take(`${endpointId}#${key}`));
  try {
    // 1. The records (created once), concurrently: an event subscribed by hundreds of endpoints fans out in a few
    // round trips' time rather than one per endpoint.
    const toSend = (
      await mapAllConcurrently(targets, ENDPOINT_CONCURRENCY, (endpoint) =>
        deliveryRecordFor(ctx, item, endpoint, filteredOut(endpoint)),
      )
    ).filter((stored): stored is DeliveryRecord => stored !== undefined);
    // A key whose delivery sends nothing now (its first attempt was claimed before a re-run) is free at once.
    const sending = new Set(toSend.map((stored) => stored.endpoint_id));
    for (const [endpointId, turn] of turns) if (!sending.has(endpointId)) turn.done();
    // 2. First attempts carry the event when it is small, read once all the records exist: an expunction either
    // came first (nothing is carried) or finds every record and marks it, so the claim stops the copy.
    const carries = toSend.some((stored) => carriesEvent(stored, orderKeys.get(stored.endpoint_id)));
    const fresh =
      carries && JSON.stringify(item).length <= MAX_CARRIED_EVENT_CHARS
        ? await ctx.events.get(item.event_id)
        : undefined;
    const carried: OutboxItem | undefined =
      fresh && !fresh.expunged_at
        ? {
            ...fresh,
            ...(shortened !== undefined && shortened < fresh.expires_at ? { expires_at: shortened } : {}),
          }
        : undefined;
    // 3. The first attempts' messages; an ordered delivery's numbered in its key's turn first.
    await mapAllConcurrently(toSend, ENDPOINT_CONCURRENCY, async (stored) => {
      const turn = turns.get(stored.endpoint_id);
      try {
        if (turn) await turn.ready;
        await sendFirstAttempt(ctx, item, stored, orderKeys.get(stored.endpoint_id), carried);
      } finally {
        turn?.done();
      }
    });
  } finally {
    // Every turn taken ends, also those of deliveries a failed fan-out never reached (the event is fanned out
    // again by the stream's retry or the sweeper): a turn left open would hold its key in this instance.
    for (const turn of turns.values()) turn.done();
  }
  await ctx.events.markFannedOut(item.event_id, ctx.clock.now().toISOString(), targets.length, shortened);
  return targets.length;
};

/**
 * The delivery record of one event for one endpoint, created once: the stored record when its first attempt's
 * message is (still) to be sent, else undefined (filtered, skipped, or its first attempt claimed already).
 */
const deliveryRecordFor = async (
  ctx: Pick<WebhookContext, 'clock' | 'deliveries' | 'settings'>,
  item: OutboxItem,
  endpoint: EndpointRecord,
  filtered: boolean,
): Promise<DeliveryRecord | undefined> => {
  const now = ctx.clock.now();
  const skipped = endpoint.status !== 'enabled';
  const record: DeliveryRecord = {
    event_id: item.event_id,
    endpoint_id: endpoint.endpoint_id,
    event_type: item.type,
    ts_id: timeKey(item.ts, item.event_id),
    status: filtered ? 'filtered' : skipped ? 'skipped' : 'pending',
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    last_attempt: 0,
    completed_attempt: 0,
    attempts: [],
    expires_at: epochSeconds(now, ctx.settings.historyTtlDays),
  };
  const stored = await ctx.deliveries.createIfAbsent(record);
  if (stored.status === 'filtered' || stored.status === 'skipped') return undefined;
  // Once the first attempt was claimed, its message was sent and handled: nothing to send again. A delivery
  // still waiting for its first attempt gets the message (again, if an earlier run sent it and died before
  // the fan-out was recorded); the claim on attempt 1 makes a second message a no-op.
  if (stored !== record && (stored.last_attempt > 0 || stored.status !== 'pending')) return undefined;
  return stored;
};

/** The place a delivery was numbered at in its key by an earlier fan-out round, if it was. */
const numberedPlace = (stored: DeliveryRecord): { key: string; seq: number } | undefined =>
  stored.ordered_by === FANOUT_ROUND && stored.order_key !== undefined && stored.order_seq !== undefined
    ? { key: stored.order_key, seq: stored.order_seq }
    : undefined;

/** Whether a delivery's first attempt carries its event: an unordered one (ordered ones wait for their turn). */
const carriesEvent = (stored: DeliveryRecord, orderKey: string | undefined): boolean =>
  orderKey === undefined && numberedPlace(stored) === undefined;

/**
 * The first attempt's message of a delivery. One the fan-out numbered already (an earlier run) keeps its place,
 * whatever its endpoint says now; one of an ordered endpoint is numbered in its key (its message waits in the key's
 * queue without the event); any other carries the event when given.
 */
const sendFirstAttempt = async (
  ctx: Pick<WebhookContext, 'queue' | 'sequencer'>,
  item: OutboxItem,
  stored: DeliveryRecord,
  orderKey: string | undefined,
  carried: OutboxItem | undefined,
): Promise<void> => {
  const first: DeliveryMessage = {
    event_id: item.event_id,
    endpoint_id: stored.endpoint_id,
    attempt: 1,
    round_start: 1,
  };
  const numbered = numberedPlace(stored);
  const message: DeliveryMessage = numbered
    ? { ...first, order: numbered }
    : orderKey === undefined // not numbered and no key: `carriesEvent`
      ? { ...first, ...(carried ? { event: carried } : {}) }
      : {
          ...first,
          order: {
            key: orderKey,
            seq: await ctx.sequencer.enqueue({
              endpointId: stored.endpoint_id,
              key: orderKey,
              eventId: item.event_id,
              round: FANOUT_ROUND,
              message: first,
              expiresAt: orderPlaceExpiry(item),
            }),
          },
        };
  await ctx.queue.send('delivery', JSON.stringify(message), { group: stored.endpoint_id });
};

/**
 * The outbox sweeper: fans out every event whose fan-out is still not recorded `sweepAfterSeconds` after it
 * was written (a stream record dropped after the mapping's retries, a fan-out that kept failing).
 */
export const sweepOutbox = async (
  ctx: Pick<
    WebhookContext,
    'clock' | 'events' | 'deliveries' | 'queue' | 'settings' | 'endpoints' | 'signal' | 'sequencer'
  >,
  options: { readonly batch?: number; readonly maxEvents?: number } = {},
): Promise<{ swept: number }> => {
  const batch = options.batch ?? 100;
  const maxEvents = options.maxEvents ?? 1000;
  let swept = 0;
  let endpoints: EndpointRecord[] | undefined;
  while (swept < maxEvents) {
    const before = new Date(ctx.clock.now().getTime() - ctx.settings.sweepAfterSeconds * 1000).toISOString();
    const pending = await ctx.events.pendingFanout(before, batch);
    if (pending.length === 0) break;
    endpoints ??= await ctx.endpoints.subscribers();
    for (const item of pending) {
      await fanOutEvent(ctx, item, endpoints);
      swept += 1;
    }
    if (pending.length < batch) break;
  }
  if (swept > 0) ctx.signal('fanout_swept', { swept });
  return { swept };
};
