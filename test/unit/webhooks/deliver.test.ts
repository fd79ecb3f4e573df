/**
 * One delivery attempt against in-memory twins of the ports: which way the next attempt goes (SQS delay up to
 * 15 minutes, a one-time schedule beyond), dead-lettering, the order "enqueue next, then record", and the claim
 * rules that keep a duplicate message from attempting twice.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { LocalDataCipher } from '../../../functions/adapters/local/local-signing';
import type { QueueId } from '../../../functions/definitions';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../../functions/domain/webhooks/retry-policy';
import { secretBytes } from '../../../functions/domain/webhooks/secret';
import { signatureHeader } from '../../../functions/domain/webhooks/signature';
import {
  type LimiterState,
  MAX_DEFERRALS,
  nextDeferrals,
  planAdmission,
} from '../../../functions/domain/webhooks/throttle';
import type { OneTimeSchedule } from '../../../functions/ports/scheduler';
import type { CloudDeliveryRequest } from '../../../functions/ports/webhook-destinations';
import type { WebhookRequest, WebhookResponse } from '../../../functions/ports/webhook-http';
import type {
  AttemptRecord,
  DeliveryRecord,
  EndpointRecord,
  StoredSenderKey,
} from '../../../functions/ports/webhooks';
import type { DeliveryMessage, OutboxItem } from '../../../functions/schemas/envelope';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookContext } from '../../../functions/usecases/webhooks/context';
import {
  DeliveryBusyError,
  deliverAttempt,
  retryScheduleName,
} from '../../../functions/usecases/webhooks/deliver';
import {
  createEndpoint,
  signingSecrets,
  updateEndpoint,
} from '../../../functions/usecases/webhooks/endpoints';
import { NO_VERSIONS, outboxItemOf } from '../../../functions/usecases/webhooks/events';
import { fanOutEvent } from '../../../functions/usecases/webhooks/fanout';
import { expungeEvent } from '../../../functions/usecases/webhooks/history';
import { operationalSignals } from '../../../functions/usecases/webhooks/operational-events';
import { watchOrderedKeys } from '../../../functions/usecases/webhooks/order-watchdog';
import { OAuthTokenCache } from '../../../functions/usecases/webhooks/outbound-auth';
import {
  MAX_REPLAY_DELIVERIES,
  recoverEndpoint,
  replayDeliveries,
} from '../../../functions/usecases/webhooks/replay';
import { type SenderKeySigner, senderKeySigner } from '../../../functions/usecases/webhooks/sender-keys';

interface World {
  ctx: WebhookContext;
  now: { value: Date };
  sent: { queue: QueueId; body: DeliveryMessage & Record<string, unknown>; delaySeconds?: number }[];
  schedules: OneTimeSchedule[];
  posts: WebhookRequest[];
  answers: WebhookResponse[];
  /** What cloud destinations (SQS, EventBridge) were sent; they answer from `answers` too. */
  cloudSends: CloudDeliveryRequest[];
  deliveries: Map<string, DeliveryRecord>;
  endpoints: Map<string, EndpointRecord>;
  events: Map<string, OutboxItem>;
  /** The endpoints' limiter state (the DynamoDB item's twin). */
  limits: Map<string, LimiterState>;
  /** What the use case waited in process (the fake clock moves on by as much). */
  slept: number[];
  /** Operations in order, to check what happens before what. */
  log: string[];
  /** Reads of a stored event. */
  eventReads: number;
  /** The service's Ed25519 signing keys, and the signer the context keeps. */
  senderKeys: StoredSenderKey[];
  signer?: SenderKeySigner;
  /** The ordered endpoints' open places by `<endpoint>#<key>`, their counters, and closes to fail (a crash). */
  orders: {
    open: Map<
      string,
      Map<
        number,
        {
          eventId: string;
          message: DeliveryMessage;
          headSeenAt?: string;
          woken?: { at: string; attempt: number };
        }
      >
    >;
    counters: Map<string, number>;
    failClose: number;
    failEnqueue: number;
  };
}

const response = (status: number, headers: Record<string, string> = {}): WebhookResponse => ({
  kind: 'response',
  status,
  headers,
  excerpt: '',
  durationMs: 3,
});

const world = (policy: RetryPolicy = DEFAULT_RETRY_POLICY): World => {
  const w = {
    now: { value: new Date('2026-11-22T12:00:00.000Z') },
    sent: [],
    schedules: [],
    posts: [],
    answers: [],
    cloudSends: [],
    deliveries: new Map(),
    endpoints: new Map(),
    events: new Map(),
    limits: new Map(),
    slept: [],
    log: [],
    eventReads: 0,
    senderKeys: [],
    orders: { open: new Map(), counters: new Map(), failClose: 0, failEnqueue: 0 },
  } as unknown as World;
  const key = (eventId: string, endpointId: string) => `${eventId}|${endpointId}`;
  w.ctx = {
    clock: { now: () => w.now.value },
    events: {
      put: async (item) => {
        if (w.events.has(item.event_id)) return false;
        w.events.set(item.event_id, item);
        return true;
      },
      get: async (id) => {
        w.eventReads += 1;
        return w.events.get(id);
      },
      expunge: async (id, at, by) => {
        const item = w.events.get(id);
        if (!item || item.expunged_at) return item;
        const { data: _data, ...rest } = item;
        const expunged = { ...rest, expunged_at: at, expunged_by: by };
        w.events.set(id, expunged);
        return expunged;
      },
      markFannedOut: async (id, _at, _deliveries, expiresAt) => {
        const item = w.events.get(id);
        if (item && expiresAt !== undefined) w.events.set(id, { ...item, expires_at: expiresAt });
      },
      pendingFanout: async () => [],
      byDay: async () => ({ items: [] }),
    },
    endpoints: {
      create: async (record) => {
        w.endpoints.set(record.endpoint_id, record);
      },
      get: async (id) => w.endpoints.get(id),
      list: async () => ({ items: [...w.endpoints.values()] }),
      byPartnerKey: async (hash) =>
        [...w.endpoints.values()].find((endpoint) => endpoint.partner_key_sha256 === hash),
      subscribers: async () => [...w.endpoints.values()],
      update: async (id, changes) => {
        const current = w.endpoints.get(id);
        if (!current) return undefined;
        const next = { ...current, ...changes } as EndpointRecord;
        w.endpoints.set(id, next);
        return next;
      },
      delete: async (id) => w.endpoints.delete(id),
      noteTimeout: async (id) => {
        const current = w.endpoints.get(id);
        if (current)
          w.endpoints.set(id, { ...current, consecutive_timeouts: (current.consecutive_timeouts ?? 0) + 1 });
      },
      clearTimeouts: async (id) => {
        const current = w.endpoints.get(id);
        if (current) {
          const { consecutive_timeouts: _timeouts, ...rest } = current;
          w.endpoints.set(id, rest);
        }
      },
      noteFailing: async (id, at) => {
        const current = w.endpoints.get(id);
        if (current && !current.failing_since) w.endpoints.set(id, { ...current, failing_since: at });
      },
      clearFailing: async (id) => {
        const current = w.endpoints.get(id);
        if (current) {
          const { failing_since: _since, failing_warned: _warned, ...rest } = current;
          w.endpoints.set(id, rest);
        }
      },
      noteWarned: async (id, since, percent) => {
        const current = w.endpoints.get(id);
        if (!current || current.failing_since !== since || (current.failing_warned ?? 0) >= percent)
          return false;
        w.endpoints.set(id, { ...current, failing_warned: percent });
        return true;
      },
      pauseUntil: async (id, until) => {
        const current = w.endpoints.get(id);
        if (current && (!current.paused_until || current.paused_until < until))
          w.endpoints.set(id, { ...current, paused_until: until });
      },
    },
    stats: { add: async () => undefined, read: async () => [] },
    // The twin of the per-key queues (the DynamoDB adapter's semantics are proven in
    // test/integration/delivery-sequencer.test.ts).
    sequencer: {
      enqueue: async ({ endpointId, key: orderKey, eventId, round, message }) => {
        if (w.orders.failEnqueue > 0) {
          w.orders.failEnqueue -= 1;
          throw new Error('the sequencer is unavailable');
        }
        const d = w.deliveries.get(key(eventId, endpointId));
        if (!d) throw new Error('no delivery to number');
        if (d.ordered_by === round && d.order_seq !== undefined) return d.order_seq;
        const partition = `${endpointId}#${orderKey}`;
        const seq = w.orders.counters.get(partition) ?? 1;
        w.orders.counters.set(partition, seq + 1);
        const open = w.orders.open.get(partition) ?? new Map();
        open.set(seq, { eventId, message: { ...message, order: { key: orderKey, seq } } });
        w.orders.open.set(partition, open);
        w.deliveries.set(key(eventId, endpointId), {
          ...d,
          order_key: orderKey,
          order_seq: seq,
          ordered_by: round,
        });
        return seq;
      },
      isTurn: async (endpointId, place) =>
        [...(w.orders.open.get(`${endpointId}#${place.key}`)?.keys() ?? [])].every((seq) => seq >= place.seq),
      close: async (endpointId, place, eventId) => {
        w.log.push(`close ${place.seq}`);
        if (w.orders.failClose > 0) {
          w.orders.failClose -= 1;
          throw new Error('the consumer died before closing its place');
        }
        const open = w.orders.open.get(`${endpointId}#${place.key}`);
        const own = open?.get(place.seq);
        if (own && own.eventId !== eventId) return undefined;
        open?.delete(place.seq);
        const next = [...(open?.entries() ?? [])]
          .filter(([seq]) => seq > place.seq)
          .sort(([a], [b]) => a - b)[0];
        return next?.[1].message;
      },
      heads: async () => ({
        heads: [...w.orders.open.entries()].flatMap(([partition, places]) => {
          const [seq, place] = [...places.entries()].sort(([a], [b]) => a - b)[0] ?? [];
          if (seq === undefined || !place) return [];
          const [endpointId, orderKey] = partition.split(/#(.*)/s) as [string, string];
          return [
            {
              endpointId,
              place: { key: orderKey, seq },
              eventId: place.eventId,
              ...(place.headSeenAt ? { headSeenAt: place.headSeenAt } : {}),
              ...(place.woken ? { woken: place.woken } : {}),
            },
          ];
        }),
        complete: true,
      }),
      messageOf: async (endpointId, place) =>
        w.orders.open.get(`${endpointId}#${place.key}`)?.get(place.seq)?.message,
      markHeadSeen: async (endpointId, place, eventId, at) => {
        const own = w.orders.open.get(`${endpointId}#${place.key}`)?.get(place.seq);
        if (own?.eventId === eventId) own.headSeenAt ??= at;
      },
      markHeadWoken: async (endpointId, place, eventId, wake) => {
        const own = w.orders.open.get(`${endpointId}#${place.key}`)?.get(place.seq);
        if (own?.eventId === eventId) own.woken = { ...wake };
      },
    },
    limiter: {
      admit: async (endpointId, request) => {
        const state = w.limits.get(endpointId) ?? { slots: {} };
        const plan = planAdmission({ state, ...request });
        if (plan.kind === 'wait') return plan;
        const slots = { ...state.slots };
        const leaseUntilMs = request.nowMs + request.leaseMs;
        if (plan.kind === 'admit' && plan.slot !== undefined) slots[plan.slot] = leaseUntilMs;
        w.limits.set(endpointId, { ...(plan.tatMs !== undefined ? { tatMs: plan.tatMs } : state), slots });
        if (plan.kind === 'reserve') return { kind: 'reserved', startMs: plan.startMs };
        return { kind: 'admitted', ...(plan.slot !== undefined ? { slot: plan.slot, leaseUntilMs } : {}) };
      },
      release: async (endpointId, slot, leaseUntilMs) => {
        const state = w.limits.get(endpointId);
        if (state?.slots[slot] !== leaseUntilMs) return;
        const { [slot]: _released, ...slots } = state.slots;
        w.limits.set(endpointId, { ...state, slots });
      },
    },
    deliveries: {
      createIfAbsent: async (record) => {
        const existing = w.deliveries.get(key(record.event_id, record.endpoint_id));
        if (existing) return existing;
        w.deliveries.set(key(record.event_id, record.endpoint_id), record);
        return record;
      },
      get: async (eventId, endpointId) => w.deliveries.get(key(eventId, endpointId)),
      confirm: async (eventId, endpointId, confirmation) => {
        const d = w.deliveries.get(key(eventId, endpointId));
        if (!d) return { status: 'missing' };
        if (d.confirmation) return { status: 'exists', confirmation: d.confirmation };
        w.deliveries.set(key(eventId, endpointId), { ...d, confirmation });
        return { status: 'confirmed', confirmation };
      },
      forEvent: async (eventId) => [...w.deliveries.values()].filter((d) => d.event_id === eventId),
      claim: async (eventId, endpointId, attempt, now, leaseUntil, orderSeq) => {
        const d = w.deliveries.get(key(eventId, endpointId));
        if (!d) return 'missing';
        if (orderSeq !== undefined && d.order_seq !== undefined && d.order_seq !== orderSeq) return 'done';
        const free =
          d.last_attempt < attempt ||
          (d.last_attempt === attempt &&
            d.completed_attempt < attempt &&
            (!d.lease_until || d.lease_until < now));
        if (free) {
          w.deliveries.set(key(eventId, endpointId), {
            ...d,
            last_attempt: attempt,
            lease_until: leaseUntil,
          });
          return d.event_expunged ? 'expunged' : 'claimed';
        }
        return d.completed_attempt >= attempt || d.last_attempt > attempt ? 'done' : 'busy';
      },
      recordAttempt: async (eventId, endpointId, attempt: AttemptRecord, next) => {
        w.log.push(`record ${attempt.attempt} ${next.status}`);
        const d = w.deliveries.get(key(eventId, endpointId));
        if (!d || d.completed_attempt >= attempt.attempt) return;
        const { lease_until: _lease, next_attempt_at: _next, ...rest } = d;
        w.deliveries.set(key(eventId, endpointId), {
          ...rest,
          completed_attempt: attempt.attempt,
          attempts: [...d.attempts, attempt],
          status: next.status,
          ...(next.next_attempt_at ? { next_attempt_at: next.next_attempt_at } : {}),
          ...(next.stop_reason ? { stop_reason: next.stop_reason } : {}),
        });
      },
      markEventExpunged: async (eventId, endpointId, at) => {
        const d = w.deliveries.get(key(eventId, endpointId));
        if (d && !d.event_expunged) w.deliveries.set(key(eventId, endpointId), { ...d, event_expunged: at });
      },
      startReplay: async () => undefined,
      revertReplay: async () => undefined,
      query: async () => ({ items: [] }),
    },
    replays: {
      put: async () => undefined,
      get: async () => undefined,
      noteFinished: async () => undefined,
      tally: async () => undefined,
    },
    queue: {
      send: async (queue, body, options) => {
        w.log.push(`send ${queue}`);
        w.sent.push({
          queue,
          body: JSON.parse(body),
          ...(options?.delaySeconds !== undefined ? { delaySeconds: options.delaySeconds } : {}),
        });
        return { messageId: String(w.sent.length) };
      },
    },
    scheduler: {
      scheduleOnce: async (schedule) => {
        w.log.push('schedule');
        w.schedules.push(schedule);
        return 'created';
      },
      cancel: async () => undefined,
    },
    cipher: new LocalDataCipher(randomBytes(32)),
    http: {
      post: async (request) => {
        w.posts.push(request);
        return w.answers.shift() ?? response(200);
      },
    },
    trustPrincipal: 'arn:aws:iam::000000000000:root',
    destinations: {
      send: async (request) => {
        w.cloudSends.push(request);
        return w.answers.shift() ?? response(200);
      },
    },
    policy,
    settings: DEFAULT_WEBHOOK_SETTINGS,
    sleep: async (ms) => {
      w.slept.push(ms);
      w.now.value = new Date(w.now.value.getTime() + ms);
    },
    random: () => 0.5,
    randomBytes: (size) => randomBytes(size),
    signal: () => undefined,
    get operations() {
      return operationalSignals({
        clock: w.ctx.clock,
        events: w.ctx.events,
        settings: DEFAULT_WEBHOOK_SETTINGS,
      });
    },
    // The service's Ed25519 keys in memory (the DynamoDB store: test/integration/sender-keys.test.ts).
    senderKeys: {
      list: async () => [...w.senderKeys].sort((a, b) => a.generation - b.generation),
      add: async (key) => {
        if (w.senderKeys.some((stored) => stored.generation === key.generation)) return false;
        w.senderKeys.push(key);
        return true;
      },
    },
    tokens: new OAuthTokenCache(),
    get senderSigner() {
      w.signer ??= senderKeySigner(w.ctx);
      return w.signer;
    },
  };
  return w;
};

/** An endpoint and one event fanned out to it: the first message is on the queue. */
const prepared = async (w: World) => {
  const endpoint = await createEndpoint(w.ctx, { url: 'https://partner.example/webhooks/v1' });
  w.now.value = new Date(w.now.value.getTime() + 1000);
  const item = outboxItemOf(
    { type: 'payout.processed', data: { payout_id: 'po_1' }, trace_id: 'trc_test', versions: NO_VERSIONS },
    w.now.value,
    30,
  );
  await w.ctx.events.put(item);
  await fanOutEvent(w.ctx, item, [...w.endpoints.values()]);
  // As the fan-out sent it (carrying the event), and as a message that reads the stored event.
  const carrying = w.sent.shift()?.body as DeliveryMessage;
  const { event: _event, ...first } = carrying;
  w.log.length = 0;
  w.eventReads = 0;
  return { endpoint, item, first: first as DeliveryMessage, carrying };
};

describe('deliverAttempt', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });

  it('sends the next attempt with an SQS delay while the wait is at most 15 minutes, and enqueues before recording', async () => {
    const { first } = await prepared(w);
    w.answers.push(response(503));
    const result = await deliverAttempt(w.ctx, first);
    expect(result).toMatchObject({ kind: 'attempted', decision: { kind: 'retry', delaySeconds: 5 } });
    expect(w.sent).toEqual([{ queue: 'delivery', body: { ...first, attempt: 2 }, delaySeconds: 5 }]);
    expect(w.log).toEqual(['send delivery', 'record 1 retrying']);
    expect(w.posts[0]?.url).toBe('https://partner.example/webhooks/v1/payout');
    expect(w.posts[0]?.headers['X-Attempt']).toBe('1');
  });

  it('schedules the next attempt with the one-time scheduler beyond 15 minutes (attempt 8 waits 30 minutes)', async () => {
    const { first } = await prepared(w);
    w.answers.push(response(500));
    const message = { ...first, attempt: 8 };
    const result = await deliverAttempt(w.ctx, message);
    expect(result).toMatchObject({ decision: { kind: 'retry', delaySeconds: 1800 } });
    expect(w.sent).toEqual([]);
    expect(w.schedules).toEqual([
      {
        name: retryScheduleName(message, 9),
        at: new Date(w.now.value.getTime() + 1_800_000),
        queue: 'delivery',
        body: JSON.stringify({ ...message, attempt: 9 }),
      },
    ]);
    expect(retryScheduleName(message, 9).length).toBeLessThanOrEqual(64);
    expect(w.log).toEqual(['schedule', 'record 8 retrying']);
  });

  it('dead-letters after the last attempt: the message goes to the DLQ first, then the delivery is dead', async () => {
    const { first } = await prepared(w);
    w.answers.push(response(502));
    const last = {
      ...first,
      attempt: 1 + DEFAULT_RETRY_POLICY.backoffSeconds.length + DEFAULT_RETRY_POLICY.dailyRetryDays,
    };
    const result = await deliverAttempt(w.ctx, last);
    expect(result).toMatchObject({ decision: { kind: 'dead', reason: 'retries_exhausted_after_http_502' } });
    expect(w.sent).toEqual([
      {
        queue: 'deliveryDlq',
        body: expect.objectContaining({ ...last, dead_reason: 'retries_exhausted_after_http_502' }),
      },
    ]);
    expect(w.log).toEqual(['send deliveryDlq', 'record 17 dead']);
  });

  it('counts the backoff of a replay from its first attempt', async () => {
    const { first } = await prepared(w);
    w.answers.push(response(500));
    const result = await deliverAttempt(w.ctx, {
      ...first,
      attempt: 20,
      round_start: 20,
      replay_id: 'rpl_x',
    });
    expect(result).toMatchObject({ decision: { kind: 'retry', delaySeconds: 5 } });
    expect(w.sent[0]?.body).toMatchObject({ attempt: 21, round_start: 20, replay_id: 'rpl_x' });
  });

  it('skips a duplicate of an attempt already recorded, and refuses (busy) one whose lease is still held', async () => {
    const { first } = await prepared(w);
    await deliverAttempt(w.ctx, first);
    expect(await deliverAttempt(w.ctx, first)).toEqual({ kind: 'skipped', reason: 'duplicate' });
    expect(w.posts).toHaveLength(1);

    // A claim whose consumer is still within its lease: the duplicate comes back later.
    const second = { ...first, event_id: first.event_id };
    const key = [...w.deliveries.keys()][0] as string;
    const record = w.deliveries.get(key) as DeliveryRecord;
    w.deliveries.set(key, {
      ...record,
      last_attempt: 2,
      lease_until: new Date(w.now.value.getTime() + 60_000).toISOString(),
    });
    await expect(deliverAttempt(w.ctx, { ...second, attempt: 2 })).rejects.toBeInstanceOf(DeliveryBusyError);
    // Once the lease ran out (the consumer died mid-attempt), the attempt is made again.
    w.now.value = new Date(w.now.value.getTime() + 120_000);
    expect(await deliverAttempt(w.ctx, { ...second, attempt: 2 })).toMatchObject({ kind: 'attempted' });
  });

  it('stops with a reason when the endpoint was deleted or disabled, or the body expired', async () => {
    const { first, endpoint, item } = await prepared(w);
    w.endpoints.set(endpoint.endpoint_id, {
      ...(w.endpoints.get(endpoint.endpoint_id) as EndpointRecord),
      status: 'disabled',
    });
    expect(await deliverAttempt(w.ctx, first)).toMatchObject({
      decision: { kind: 'stopped', reason: 'endpoint_disabled' },
    });
    w.endpoints.delete(endpoint.endpoint_id);
    expect(await deliverAttempt(w.ctx, { ...first, attempt: 2 })).toMatchObject({
      decision: { reason: 'endpoint_deleted' },
    });
    w.events.delete(item.event_id);
    expect(await deliverAttempt(w.ctx, { ...first, attempt: 3 })).toMatchObject({
      decision: { reason: 'event_expired' },
    });
    expect(w.posts).toHaveLength(0);
  });

  it('stops a delivery of an expunged event without sending it (event_expunged)', async () => {
    const { first, item } = await prepared(w);
    await w.ctx.events.expunge(item.event_id, w.now.value.toISOString(), 'operator:test');
    expect(await deliverAttempt(w.ctx, first)).toMatchObject({
      decision: { kind: 'stopped', reason: 'event_expunged' },
    });
    expect(w.posts).toHaveLength(0);
  });

  it('a first attempt from the fan-out carries the event: it reads no event, and the next attempt carries none', async () => {
    const { carrying, item } = await prepared(w);
    expect(carrying.event).toEqual(item);
    w.answers.push(response(500));
    expect(await deliverAttempt(w.ctx, carrying)).toMatchObject({ decision: { kind: 'retry' } });
    expect(w.eventReads).toBe(0);
    expect(w.posts[0]?.body).toBeDefined();
    const next = w.sent.at(-1)?.body as DeliveryMessage;
    expect(next.attempt).toBe(2);
    expect(next.event).toBeUndefined();
    w.answers.push(response(200));
    await deliverAttempt(w.ctx, next);
    expect(w.eventReads).toBe(1);
  });

  it('a carried event expunged since is not sent: the claim says so and the delivery stops', async () => {
    const { carrying, item } = await prepared(w);
    await expungeEvent(w.ctx, item.event_id, 'operator:test');
    expect(await deliverAttempt(w.ctx, carrying)).toMatchObject({
      decision: { kind: 'stopped', reason: 'event_expunged' },
      sent: false,
    });
    expect(w.posts).toHaveLength(0);
  });

  it('an event expunged before its fan-out (the stream still holds its body) is never carried', async () => {
    await createEndpoint(w.ctx, { url: 'https://partner.example/webhooks/v1' });
    const item = outboxItemOf(
      { type: 'payout.processed', data: { payout_id: 'po_x' }, trace_id: 'trc_test', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    await w.ctx.events.put(item);
    await expungeEvent(w.ctx, item.event_id, 'operator:test');
    // The stream's image of the insert still has the data.
    await fanOutEvent(w.ctx, item, [...w.endpoints.values()]);
    const message = w.sent.at(-1)?.body as DeliveryMessage;
    expect(message.event).toBeUndefined();
    expect(await deliverAttempt(w.ctx, message)).toMatchObject({
      decision: { kind: 'stopped', reason: 'event_expunged' },
    });
    expect(w.posts).toHaveLength(0);
  });

  it('a carried event past its expiry is gone, as the stored one would be', async () => {
    const { carrying } = await prepared(w);
    w.now.value = new Date(((carrying.event?.expires_at ?? 0) + 1) * 1000);
    expect(await deliverAttempt(w.ctx, carrying)).toMatchObject({
      decision: { kind: 'stopped', reason: 'event_expired' },
    });
    expect(w.posts).toHaveLength(0);
  });

  it('disables the endpoint on 410, announcing it once however many attempts get the 410', async () => {
    const { first, endpoint } = await prepared(w);
    const enabledAt = (w.endpoints.get(endpoint.endpoint_id) as EndpointRecord).updated_at;
    w.answers.push(response(410));
    await deliverAttempt(w.ctx, first);
    expect(w.endpoints.get(endpoint.endpoint_id)?.status).toBe('disabled');
    const signals = () =>
      [...w.events.values()].filter((item) => item.type === 'operations.endpoint_disabled');
    expect(signals()).toEqual([
      expect.objectContaining({
        event_id: `ops:endpoint_disabled:${endpoint.endpoint_id}:${enabledAt}:gone:-`,
        producer: 'operations',
        data: { endpoint_id: endpoint.endpoint_id, reason: 'gone', event_id: first.event_id },
      }),
    ]);
  });

  it('does not disable an endpoint an operator re-enabled after the attempt read it', async () => {
    const { first, endpoint } = await prepared(w);
    const seen = w.endpoints.get(endpoint.endpoint_id) as EndpointRecord;
    // The attempt reads the endpoint failing; meanwhile an operator re-enabled it (which ends the run).
    w.endpoints.set(endpoint.endpoint_id, { ...seen, failing_since: '2026-11-01T00:00:00.000Z' });
    const get = w.ctx.endpoints.get;
    let reads = 0;
    (w.ctx.endpoints as { get: typeof get }).get = async (id, options) => {
      reads += 1;
      // The attempt's own (eventually consistent) read sees the run; the check before disabling sees it ended.
      if (reads > 1)
        w.endpoints.set(endpoint.endpoint_id, { ...seen, updated_at: '2026-11-22T12:00:05.000Z' });
      return get(id, options);
    };
    w.answers.push(response(500));
    await deliverAttempt(w.ctx, first);
    expect(w.endpoints.get(endpoint.endpoint_id)?.status).toBe('enabled');
    expect([...w.events.values()].filter((item) => item.type === 'operations.endpoint_disabled')).toEqual([]);
  });
});

describe('operational events (C32)', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });
  const lastAttempt = 1 + DEFAULT_RETRY_POLICY.backoffSeconds.length + DEFAULT_RETRY_POLICY.dailyRetryDays;

  it('a dead delivery publishes operations.delivery_dead once, however often the attempt is made again', async () => {
    const { first, endpoint } = await prepared(w);
    const last = { ...first, attempt: lastAttempt };
    w.answers.push(response(500));
    await deliverAttempt(w.ctx, last);
    const signals = () => [...w.events.values()].filter((item) => item.type === 'operations.delivery_dead');
    expect(signals()).toEqual([
      expect.objectContaining({
        event_id: `ops:delivery_dead:${first.event_id}:${endpoint.endpoint_id}:${lastAttempt}`,
        data: {
          event_id: first.event_id,
          endpoint_id: endpoint.endpoint_id,
          event_type: 'payout.processed',
          attempts: lastAttempt,
          reason: 'retries_exhausted_after_http_500',
        },
      }),
    ]);
    // The consumer died after the signal, before recording: the attempt is made again, dead again, one signal.
    const key = [...w.deliveries.keys()][0] as string;
    const record = w.deliveries.get(key) as DeliveryRecord;
    w.deliveries.set(key, { ...record, completed_attempt: lastAttempt - 1, lease_until: undefined });
    w.answers.push(response(500));
    await deliverAttempt(w.ctx, last);
    expect(signals()).toHaveLength(1);
  });

  it('goes only to endpoints that name the operations topic, never to one subscribed to every topic', async () => {
    const { endpoint } = await prepared(w);
    expect(w.endpoints.get(endpoint.endpoint_id)?.topics).toEqual([]);
    const signal = outboxItemOf(
      { type: 'operations.replay_completed', data: {}, trace_id: 'trc_ops', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    expect(await fanOutEvent(w.ctx, signal, [...w.endpoints.values()])).toBe(0);
  });

  it('raises no signal about the delivery of a signal (no loop)', async () => {
    const { endpoint } = await prepared(w);
    const signal = outboxItemOf(
      { type: 'operations.delivery_dead', data: {}, trace_id: 'trc_ops', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    await w.ctx.events.put(signal);
    w.endpoints.set(endpoint.endpoint_id, {
      ...(w.endpoints.get(endpoint.endpoint_id) as EndpointRecord),
      topics: ['operations'],
    });
    await fanOutEvent(w.ctx, signal, [...w.endpoints.values()]);
    const message = w.sent.find((sent) => sent.body.event_id === signal.event_id)?.body as DeliveryMessage;
    expect(message).toBeDefined();
    w.answers.push(response(500));
    expect(await deliverAttempt(w.ctx, { ...message, attempt: lastAttempt })).toMatchObject({
      decision: { kind: 'dead' },
    });
    expect([...w.events.values()].filter((item) => item.type === 'operations.delivery_dead')).toEqual([
      signal,
    ]);
  });
});

describe('deliverAttempt: a failing run (C32)', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });
  const signals = (type: string) => [...w.events.values()].filter((item) => item.type === type);

  it('starts the run at the first failure, warns once per step, disables at N and ends on a success', async () => {
    const { first, endpoint } = await prepared(w);
    const id = endpoint.endpoint_id;
    const fail = async (attempt: number) => {
      w.answers.push(response(503));
      await deliverAttempt(w.ctx, { ...first, attempt });
    };
    await fail(1);
    const since = w.endpoints.get(id)?.failing_since as string;
    expect(since).toBe(w.now.value.toISOString());
    // 2.6 days of a 5-day N: the 50 % warning, once however many attempts fail past it.
    w.now.value = new Date(Date.parse(since) + 2.6 * 86_400_000);
    await fail(2);
    await fail(3);
    expect(signals('operations.endpoint_failing').map((item) => item.data)).toEqual([
      { endpoint_id: id, failing_since: since, disable_after_days: 5, share: 50 },
    ]);
    expect(w.endpoints.get(id)?.failing_warned).toBe(50);
    // Past N: disabled, announced once.
    w.now.value = new Date(Date.parse(since) + 5.1 * 86_400_000);
    await fail(4);
    expect(w.endpoints.get(id)).toMatchObject({
      status: 'disabled',
      disabled_reason: `failing since ${since} (5 days)`,
    });
    expect(signals('operations.endpoint_disabled')).toHaveLength(1);
  });

  it('a success ends the run', async () => {
    const { first, endpoint } = await prepared(w);
    w.answers.push(response(503));
    await deliverAttempt(w.ctx, first);
    expect(w.endpoints.get(endpoint.endpoint_id)?.failing_since).toBeDefined();
    await deliverAttempt(w.ctx, { ...first, attempt: 2 });
    expect(w.endpoints.get(endpoint.endpoint_id)?.failing_since).toBeUndefined();
  });
});

describe('deliverAttempt: endpoint limits and isolation (C31)', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });
  const setEndpoint = (endpointId: string, changes: Partial<EndpointRecord>) =>
    w.endpoints.set(endpointId, { ...(w.endpoints.get(endpointId) as EndpointRecord), ...changes });

  it('a delivery over the rate waits with a ticket and no attempt used, then goes through on it', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { rate_limit: { per_second: 0.4 } });
    expect((await deliverAttempt(w.ctx, first)).kind).toBe('attempted');
    // A second delivery of the same endpoint within the interval (the same record, made fresh for the test).
    const key = [...w.deliveries.keys()][0] as string;
    w.deliveries.set(key, {
      ...(w.deliveries.get(key) as DeliveryRecord),
      last_attempt: 0,
      completed_attempt: 0,
    });
    w.sent.length = 0;
    const second = { ...first };
    // Its start is 2.5 s away: back through the queue 2 s later (never after it), holding the start as a ticket.
    expect(await deliverAttempt(w.ctx, second)).toEqual({
      kind: 'deferred',
      reason: 'rate',
      delaySeconds: 2,
    });
    const notBefore = new Date(w.now.value.getTime() + 2_500).toISOString();
    expect(w.sent[0]?.body).toEqual({ ...second, not_before: notBefore });
    expect(w.posts).toHaveLength(1);
    expect(w.deliveries.get(key)?.last_attempt).toBe(0);
    // Back 2 s later: it waits out the last half second in process, then attempt 1 goes (on the ticket).
    w.now.value = new Date(w.now.value.getTime() + 2_000);
    expect(await deliverAttempt(w.ctx, w.sent[0]?.body as DeliveryMessage)).toMatchObject({
      kind: 'attempted',
      attempt: { attempt: 1, at: notBefore },
    });
    expect(w.slept).toEqual([500]);
  });

  it('a start less than a second away is waited for in process, not through the queue', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { rate_limit: { per_second: 4 } });
    w.limits.set(endpoint.endpoint_id, { tatMs: w.now.value.getTime() + 700, slots: {} });
    expect(await deliverAttempt(w.ctx, first)).toMatchObject({ kind: 'attempted' });
    expect(w.slept).toEqual([700]);
    expect(w.sent.filter((sent) => sent.queue === 'delivery')).toEqual([]);
  });

  it('a delivery back before its ticket waits again, keeping the ticket', async () => {
    const { first } = await prepared(w);
    const notBefore = new Date(w.now.value.getTime() + 3_200).toISOString();
    expect(await deliverAttempt(w.ctx, { ...first, not_before: notBefore })).toEqual({
      kind: 'deferred',
      reason: 'rate',
      delaySeconds: 3,
    });
    expect(w.sent[0]?.body).toEqual({ ...first, not_before: notBefore });
    expect(w.posts).toHaveLength(0);
  });

  it('a full in-flight cap defers with a doubling wait; the slot is released after the attempt', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { rate_limit: { max_in_flight: 1 } });
    w.limits.set(endpoint.endpoint_id, { slots: { 0: w.now.value.getTime() + 10_000 } });
    expect(await deliverAttempt(w.ctx, { ...first, deferrals: 2 })).toEqual({
      kind: 'deferred',
      reason: 'in_flight',
      delaySeconds: 4,
    });
    expect(w.sent[0]?.body).toEqual({ ...first, deferrals: 3 });
    w.limits.set(endpoint.endpoint_id, { slots: {} });
    expect((await deliverAttempt(w.ctx, { ...first, deferrals: 3 })).kind).toBe('attempted');
    expect(w.limits.get(endpoint.endpoint_id)?.slots).toEqual({});
  });

  it('timeouts are counted on the endpoint; after three in a row it is capped and an answer ends the run', async () => {
    const { first, endpoint } = await prepared(w);
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      w.answers.push({ kind: 'network_error', error: 'timeout', message: 'timed out', durationMs: 10_000 });
      expect((await deliverAttempt(w.ctx, { ...first, attempt })).kind).toBe('attempted');
    }
    expect(w.endpoints.get(endpoint.endpoint_id)?.consecutive_timeouts).toBe(3);
    // Capped at 2 now: with slots 0 and 1 held the retry waits without an attempt; with slot 1 free it goes.
    const heldUntil = w.now.value.getTime() + 60_000;
    w.limits.set(endpoint.endpoint_id, { slots: { 0: heldUntil, 1: heldUntil } });
    const retry = { ...first, attempt: 4 };
    expect((await deliverAttempt(w.ctx, retry)).kind).toBe('deferred');
    w.limits.set(endpoint.endpoint_id, { slots: { 0: heldUntil } });
    expect((await deliverAttempt(w.ctx, retry)).kind).toBe('attempted');
    // Its slot was freed: only the other holder's is left.
    expect(w.limits.get(endpoint.endpoint_id)?.slots).toEqual({ 0: heldUntil });
    expect(w.endpoints.get(endpoint.endpoint_id)?.consecutive_timeouts).toBeUndefined();
  });

  it('after five timeouts in a row, attempts outside slot 0 wait a quarter of the timeout', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { consecutive_timeouts: 5 });
    w.limits.set(endpoint.endpoint_id, { slots: { 0: w.now.value.getTime() + 60_000 } });
    await deliverAttempt(w.ctx, first);
    expect(w.posts[0]?.timeoutMs).toBe(DEFAULT_RETRY_POLICY.attemptTimeoutMs / 4);
    // Slot 0 keeps the full timeout (a slow but working receiver still gets through there).
    w.limits.set(endpoint.endpoint_id, { slots: {} });
    await deliverAttempt(w.ctx, { ...first, attempt: 2 });
    expect(w.posts[1]?.timeoutMs).toBe(DEFAULT_RETRY_POLICY.attemptTimeoutMs);
  });

  it('the next attempt carries no rate ticket and no count of waits; the count is capped', async () => {
    const { first } = await prepared(w);
    const stale = { ...first, not_before: w.now.value.toISOString(), deferrals: 5 };
    w.answers.push(response(500));
    await deliverAttempt(w.ctx, stale);
    expect(w.sent.find((sent) => sent.queue === 'delivery')?.body).toEqual({ ...first, attempt: 2 });
    expect(nextDeferrals(3)).toBe(4);
    expect(nextDeferrals(MAX_DEFERRALS)).toBe(MAX_DEFERRALS);
  });

  it('a ticket long past its start is stale: the rate is counted again', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { rate_limit: { per_second: 1 } });
    // The rate is spent for the next 5 s; a ticket issued 10 s ago does not skip it.
    w.limits.set(endpoint.endpoint_id, { tatMs: w.now.value.getTime() + 5_000, slots: {} });
    const late = { ...first, not_before: new Date(w.now.value.getTime() - 10_000).toISOString() };
    expect(await deliverAttempt(w.ctx, late)).toMatchObject({ kind: 'deferred', reason: 'rate' });
    expect(w.posts).toHaveLength(0);
  });

  it('frees the slot when the attempt fails after admission (the claim throws), not at the lease', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { rate_limit: { max_in_flight: 1 } });
    w.ctx.deliveries.claim = async () => {
      throw new Error('throttled');
    };
    await expect(deliverAttempt(w.ctx, first)).rejects.toThrow('throttled');
    expect(w.limits.get(endpoint.endpoint_id)?.slots).toEqual({});
  });

  it('frees the slot as soon as the POST settled, before the outcome is recorded', async () => {
    const { first, endpoint } = await prepared(w);
    setEndpoint(endpoint.endpoint_id, { rate_limit: { max_in_flight: 1 } });
    const record = w.ctx.deliveries.recordAttempt;
    let slotsWhenRecorded: unknown;
    w.ctx.deliveries.recordAttempt = async (...args) => {
      slotsWhenRecorded = w.limits.get(endpoint.endpoint_id)?.slots;
      return record(...args);
    };
    await deliverAttempt(w.ctx, first);
    expect(slotsWhenRecorded).toEqual({});
  });

  it('a 429 with Retry-After pauses the whole endpoint: its other deliveries wait, no attempt used', async () => {
    const { first, endpoint } = await prepared(w);
    w.answers.push(response(429, { 'retry-after': '30' }));
    await deliverAttempt(w.ctx, first);
    const pausedUntil = new Date(w.now.value.getTime() + 30_000).toISOString();
    expect(w.endpoints.get(endpoint.endpoint_id)?.paused_until).toBe(pausedUntil);
    w.sent.length = 0;
    const other = { ...first, attempt: 2, not_before: pausedUntil };
    const result = await deliverAttempt(w.ctx, other);
    // random() = 0.5: spread over as long again as the pause, so its deliveries do not all arrive at its end.
    expect(result).toEqual({ kind: 'deferred', reason: 'paused', delaySeconds: 45 });
    // The ticket is given up: the rate is counted again after the pause.
    expect(w.sent[0]?.body).toEqual({ ...first, attempt: 2 });
    expect(w.posts).toHaveLength(1);
  });
});

describe('deliverAttempt: ordered endpoints (C31 ordering)', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });

  /** An endpoint ordered by `data.account` and `count` events fanned out to it: their first messages, in order. */
  const ordered = async (count: number, account: (index: number) => string = () => 'a') => {
    const endpoint = await createEndpoint(w.ctx, {
      url: 'https://partner.example/webhooks/v1',
      ordering: { key: 'data.account' },
    });
    const messages: DeliveryMessage[] = [];
    for (let index = 0; index < count; index += 1) {
      w.now.value = new Date(w.now.value.getTime() + 1000);
      const item = outboxItemOf(
        {
          type: 'payout.processed',
          data: { payout_id: `po_${index}`, account: account(index) },
          trace_id: 'trc_test',
          versions: NO_VERSIONS,
        },
        w.now.value,
        30,
      );
      await w.ctx.events.put(item);
      await fanOutEvent(w.ctx, item, [...w.endpoints.values()]);
      messages.push(w.sent.shift()?.body as DeliveryMessage);
    }
    w.log.length = 0;
    return { endpoint, messages };
  };

  it('numbers each key in fan-out order; a later delivery waits (no POST, no attempt) until the one before ends', async () => {
    const { messages } = await ordered(3, (index) => (index === 1 ? 'b' : 'a'));
    const [first, other, second] = messages as [DeliveryMessage, DeliveryMessage, DeliveryMessage];
    expect(first.order).toEqual({ key: 'data.account="a"', seq: 1 });
    expect(other.order).toEqual({ key: 'data.account="b"', seq: 1 });
    expect(second.order).toEqual({ key: 'data.account="a"', seq: 2 });
    expect(await deliverAttempt(w.ctx, second)).toEqual({ kind: 'skipped', reason: 'not_its_turn' });
    expect(w.posts).toHaveLength(0);
    expect(w.deliveries.get(`${second.event_id}|${second.endpoint_id}`)?.last_attempt).toBe(0);
    // Another key is not held back.
    expect(await deliverAttempt(w.ctx, other)).toMatchObject({ decision: { kind: 'delivered' } });
    // The head delivered: its place closes after its end is recorded, and the next one's message is sent.
    expect(await deliverAttempt(w.ctx, first)).toMatchObject({ decision: { kind: 'delivered' } });
    expect(w.log.slice(-3)).toEqual(['record 1 delivered', 'close 1', 'send delivery']);
    expect(w.sent.at(-1)?.body).toEqual(second);
    expect(await deliverAttempt(w.ctx, second)).toMatchObject({ decision: { kind: 'delivered' } });
  });

  it('a failing head holds its key through its retries, and hands the turn on once dead', async () => {
    const { messages } = await ordered(2);
    const [head, next] = messages as [DeliveryMessage, DeliveryMessage];
    w.answers.push(response(500));
    expect(await deliverAttempt(w.ctx, head)).toMatchObject({ decision: { kind: 'retry' } });
    const retry = w.sent.pop()?.body as DeliveryMessage;
    expect(retry.order).toEqual(head.order);
    expect(await deliverAttempt(w.ctx, next)).toEqual({ kind: 'skipped', reason: 'not_its_turn' });
    w.answers.push(response(500));
    const last = {
      ...retry,
      attempt: 1 + DEFAULT_RETRY_POLICY.backoffSeconds.length + DEFAULT_RETRY_POLICY.dailyRetryDays,
    };
    expect(await deliverAttempt(w.ctx, last)).toMatchObject({ decision: { kind: 'dead' } });
    expect(w.sent.map((sent) => sent.queue)).toContain('deliveryDlq');
    expect(w.sent.at(-1)?.body).toEqual(next);
    expect(await deliverAttempt(w.ctx, next)).toMatchObject({ decision: { kind: 'delivered' } });
  });

  it('a consumer that died after recording the end: the redelivered message closes the place, no second POST', async () => {
    const { messages } = await ordered(2);
    const [head, next] = messages as [DeliveryMessage, DeliveryMessage];
    w.orders.failClose = 1;
    await expect(deliverAttempt(w.ctx, head)).rejects.toThrow(/died before closing/);
    expect(w.sent).toHaveLength(0);
    expect(await deliverAttempt(w.ctx, head)).toEqual({ kind: 'skipped', reason: 'duplicate' });
    expect(w.posts).toHaveLength(1);
    expect(w.sent.at(-1)?.body).toEqual(next);
  });

  it('a stale copy of a message whose delivery is still retrying hands nothing on', async () => {
    const { messages } = await ordered(2);
    const [head] = messages as [DeliveryMessage, DeliveryMessage];
    w.answers.push(response(500));
    await deliverAttempt(w.ctx, head);
    w.sent.length = 0;
    expect(await deliverAttempt(w.ctx, head)).toEqual({ kind: 'skipped', reason: 'duplicate' });
    expect(w.sent).toHaveLength(0);
    expect(w.log).not.toContain('close 1');
  });

  it('a head stopped without an attempt (endpoint disabled, record gone) still hands the turn on', async () => {
    const { endpoint, messages } = await ordered(3);
    const [head, second, third] = messages as [DeliveryMessage, DeliveryMessage, DeliveryMessage];
    await w.ctx.endpoints.update(endpoint.endpoint_id, { status: 'disabled' }, w.now.value.toISOString());
    expect(await deliverAttempt(w.ctx, head)).toMatchObject({ decision: { kind: 'stopped' }, sent: false });
    expect(w.sent.at(-1)?.body).toEqual(second);
    w.deliveries.delete(`${second.event_id}|${second.endpoint_id}`);
    expect(await deliverAttempt(w.ctx, second)).toEqual({ kind: 'skipped', reason: 'no_delivery' });
    expect(w.sent.at(-1)?.body).toEqual(third);
  });

  it('a fan-out that failed to number its delivery holds its key back in no later fan-out', async () => {
    await ordered(0);
    const event = (n: number) =>
      outboxItemOf(
        { type: 'payout.processed', data: { account: 'a', n }, trace_id: 'trc_test', versions: NO_VERSIONS },
        w.now.value,
        30,
      );
    const [failing, next] = [event(1), event(2)];
    for (const item of [failing, next]) await w.ctx.events.put(item);
    w.orders.failEnqueue = 1;
    await expect(fanOutEvent(w.ctx, failing, [...w.endpoints.values()])).rejects.toThrow(/unavailable/);
    await fanOutEvent(w.ctx, next, [...w.endpoints.values()]);
    expect(w.sent.at(-1)?.body).toMatchObject({ event_id: next.event_id, order: { seq: 1 } });
    // The failed one is numbered when it is fanned out again (the stream's retry, the sweeper).
    await fanOutEvent(w.ctx, failing, [...w.endpoints.values()]);
    expect(w.sent.at(-1)?.body).toMatchObject({ event_id: failing.event_id, order: { seq: 2 } });
  });

  /** The watchdog's run now, then again with the clock moved on by `minutes`. */
  const watchdogAfter = async (minutes: number) => {
    w.now.value = new Date(w.now.value.getTime() + minutes * 60_000);
    return watchOrderedKeys(w.ctx);
  };

  it('watchdog: a hand-over message that was lost is sent again once the head has waited past the grace', async () => {
    const { messages } = await ordered(3);
    const [head, second, third] = messages as [DeliveryMessage, DeliveryMessage, DeliveryMessage];
    expect(await deliverAttempt(w.ctx, head)).toMatchObject({ decision: { kind: 'delivered' } });
    expect(w.sent.pop()?.body).toEqual(second); // lost on its way
    expect(await watchdogAfter(0)).toEqual({ heads: 1, woken: 0, handed_on: 0, complete: true });
    // Within the grace the head may simply be on its way.
    expect(await watchdogAfter(4)).toMatchObject({ woken: 0 });
    expect(w.sent).toHaveLength(0);
    expect(await watchdogAfter(1)).toMatchObject({ woken: 1, handed_on: 0 });
    expect(w.sent.pop()?.body).toEqual(second);
    // Woken once for that attempt: the next runs wait for it (it may be deferred) for an hour.
    expect(await watchdogAfter(10)).toMatchObject({ woken: 0 });
    expect(await deliverAttempt(w.ctx, second)).toMatchObject({ decision: { kind: 'delivered' } });
    expect(w.sent.pop()?.body).toEqual(third);
    expect(await deliverAttempt(w.ctx, third)).toMatchObject({ decision: { kind: 'delivered' } });
    expect(await watchdogAfter(10)).toEqual({ heads: 0, woken: 0, handed_on: 0, complete: true });
    expect(w.posts).toHaveLength(3);
  });

  it('watchdog: a head of an endpoint paused by a Retry-After is waiting, not lost: it is not woken', async () => {
    const { endpoint, messages } = await ordered(2);
    const [head] = messages as [DeliveryMessage, DeliveryMessage];
    w.sent.length = 0; // the head's message is lost…
    await watchdogAfter(0);
    // …but the endpoint is paused for an hour: its deliveries wait without attempts or schedules.
    const until = new Date(w.now.value.getTime() + 3_600_000).toISOString();
    await w.ctx.endpoints.pauseUntil(endpoint.endpoint_id, until);
    expect(await watchdogAfter(10)).toMatchObject({ woken: 0, handed_on: 0 });
    expect(w.sent).toHaveLength(0);
    // Once the pause is over, the lost turn is woken.
    expect(await watchdogAfter(60)).toMatchObject({ woken: 1 });
    expect(w.sent.pop()?.body).toMatchObject({ event_id: head.event_id, attempt: 1, order: head.order });
  });

  it('watchdog: a delivery that ended without closing its place (its message lost after the crash) hands the turn on', async () => {
    const { messages } = await ordered(2);
    const [head, next] = messages as [DeliveryMessage, DeliveryMessage];
    w.orders.failClose = 1;
    await expect(deliverAttempt(w.ctx, head)).rejects.toThrow(/died before closing/);
    // The message that would have closed it on redelivery never comes back (dead-lettered, lost).
    await watchdogAfter(0);
    expect(await watchdogAfter(5)).toMatchObject({ woken: 0, handed_on: 1 });
    expect(w.sent.pop()?.body).toEqual(next);
    expect(await deliverAttempt(w.ctx, next)).toMatchObject({ decision: { kind: 'delivered' } });
    expect(w.posts).toHaveLength(2);
  });

  it('watchdog: a retrying head is left alone until its next attempt is overdue, then that attempt is woken', async () => {
    const { messages } = await ordered(2);
    const [head] = messages as [DeliveryMessage, DeliveryMessage];
    w.answers.push(response(500));
    expect(await deliverAttempt(w.ctx, head)).toMatchObject({ decision: { kind: 'retry' } });
    w.sent.length = 0; // the retry's message is lost
    await watchdogAfter(0);
    // Its next attempt is due within the first backoff (5 s): not overdue by the grace yet at 5 min.
    expect(await watchdogAfter(5)).toMatchObject({ woken: 0 });
    expect(await watchdogAfter(1)).toMatchObject({ woken: 1 });
    const woken = w.sent.pop()?.body as DeliveryMessage;
    expect(woken).toMatchObject({ event_id: head.event_id, attempt: 2, order: head.order });
    expect(await deliverAttempt(w.ctx, woken)).toMatchObject({ decision: { kind: 'delivered' } });
    // A duplicate wake-up (the original message turning up after all) is dropped by the claim.
    expect(await deliverAttempt(w.ctx, woken)).toEqual({ kind: 'skipped', reason: 'duplicate' });
    expect(w.posts).toHaveLength(2);
  });

  it('a test event is not ordered', async () => {
    const { endpoint } = await ordered(1);
    const item = outboxItemOf(
      { type: 'payout.processed', data: { account: 'a' }, trace_id: 'trc_test', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    await w.ctx.events.put({ ...item, test_endpoint_id: endpoint.endpoint_id });
    await fanOutEvent(w.ctx, { ...item, test_endpoint_id: endpoint.endpoint_id }, [...w.endpoints.values()]);
    expect(w.sent.at(-1)?.body.order).toBeUndefined();
  });
});

describe('replayDeliveries', () => {
  it('gives a delivery its state back when the replay message cannot be sent, so a later replay can restart it', async () => {
    const w = world();
    const { first } = await prepared(w);
    w.answers.push(response(404));
    await deliverAttempt(w.ctx, first);
    const key = `${first.event_id}|${first.endpoint_id}`;
    expect(w.deliveries.get(key)?.status).toBe('stopped');
    const reverted: string[] = [];
    w.ctx = {
      ...w.ctx,
      deliveries: {
        ...w.ctx.deliveries,
        startReplay: async () => {
          const record = w.deliveries.get(key) as DeliveryRecord;
          w.deliveries.set(key, { ...record, status: 'retrying' });
          return 2;
        },
        revertReplay: async (_eventId, _endpointId, _replayId, previous) => {
          reverted.push(previous);
          const record = w.deliveries.get(key) as DeliveryRecord;
          w.deliveries.set(key, { ...record, status: previous });
        },
      },
      queue: {
        send: async () => {
          throw new Error('queue unavailable');
        },
      },
    };
    await expect(replayDeliveries(w.ctx, { event_ids: [first.event_id] })).rejects.toThrow(
      'queue unavailable',
    );
    expect(reverted).toEqual(['stopped']);
    expect(w.deliveries.get(key)?.status).toBe('stopped');
  });
});

describe('recoverEndpoint: what the endpoint missed, among what it received', () => {
  it('reads and bounds only the missed deliveries: 2 skipped among more than the bound delivered, some past the horizon', async () => {
    const w = world();
    const endpoint = await createEndpoint(w.ctx, { url: 'https://partner.example/webhooks/v1' });
    const endpointId = endpoint.endpoint_id;
    const now = w.now.value.getTime();
    // One delivery every 3 minutes going back 10 days (past the 7-day replay horizon): all delivered but two
    // recent ones.
    const count = MAX_REPLAY_DELIVERIES + 1;
    const missed = new Set([3, 7]);
    for (let index = 0; index < count; index += 1) {
      const ts = new Date(now - (index + 1) * 60_000 * 3).toISOString();
      const eventId = `evt_${String(index).padStart(6, '0')}`;
      const item = outboxItemOf(
        {
          type: 'payout.processed',
          data: { payout_id: `po_${index}` },
          trace_id: 'trc_test',
          versions: NO_VERSIONS,
        },
        new Date(ts),
        30,
      );
      w.events.set(eventId, { ...item, event_id: eventId });
      w.deliveries.set(`${eventId}|${endpointId}`, {
        event_id: eventId,
        endpoint_id: endpointId,
        event_type: 'payout.processed',
        ts_id: `${ts}#${eventId}`,
        status: missed.has(index) ? 'skipped' : 'delivered',
        // Delivered by an earlier replay: what it restarted once is no part of this one.
        ...(missed.has(index) ? {} : { replay_id: 'rpl_earlier' }),
        created_at: ts,
        updated_at: ts,
        last_attempt: missed.has(index) ? 0 : 1,
        completed_attempt: missed.has(index) ? 0 : 1,
        attempts: [],
        expires_at: Math.floor(now / 1000) + 86_400,
      });
    }
    const listed = [...w.deliveries.values()].sort((a, b) => a.ts_id.localeCompare(b.ts_id));
    let pages = 0;
    const indexes = new Set<string>();
    w.ctx = {
      ...w.ctx,
      deliveries: {
        ...w.ctx.deliveries,
        // The endpoint index, 200 a page, as the store pages it.
        query: async (index, from, to, limit, cursor) => {
          pages += 1;
          indexes.add(JSON.stringify(index));
          const inWindow = listed.filter((d) => d.ts_id >= `${from}#` && d.ts_id <= `${to}#~`);
          const start = cursor === undefined ? 0 : Number(cursor);
          const items = inWindow.slice(start, start + limit);
          return {
            items,
            ...(start + limit < inWindow.length ? { cursor: String(start + limit) } : {}),
          };
        },
        startReplay: async (eventId, endpointId, replayId) => {
          const key = `${eventId}|${endpointId}`;
          const record = w.deliveries.get(key) as DeliveryRecord;
          w.deliveries.set(key, { ...record, status: 'retrying', replay_id: replayId });
          return record.last_attempt + 1;
        },
      },
    };
    w.eventReads = 0;
    const accepted = await recoverEndpoint(w.ctx, endpointId, {
      since: new Date(now - 11 * 86_400_000).toISOString(),
      until: new Date(now).toISOString(),
    });
    expect(accepted).toMatchObject({ matched: 2, enqueued: 2, skipped: 0 });
    expect(pages).toBe(Math.ceil(count / 200));
    // Through the endpoint's own index, never a status listing of every endpoint.
    expect([...indexes]).toEqual([JSON.stringify({ endpointId })]);
    // The two missed events only, not one read per delivery of the window.
    expect(w.eventReads).toBe(2);
    expect(w.sent.map((sent) => (sent.body as DeliveryMessage).event_id).sort()).toEqual(
      [...missed].map((index) => `evt_${String(index).padStart(6, '0')}`).sort(),
    );
  });

  it('still refuses a missed event past the horizon without force', async () => {
    const w = world();
    const endpoint = await createEndpoint(w.ctx, { url: 'https://partner.example/webhooks/v1' });
    const ts = new Date(w.now.value.getTime() - 8 * 86_400_000).toISOString();
    const item = outboxItemOf(
      {
        type: 'payout.processed',
        data: { payout_id: 'po_old' },
        trace_id: 'trc_test',
        versions: NO_VERSIONS,
      },
      new Date(ts),
      30,
    );
    w.events.set(item.event_id, item);
    const delivery: DeliveryRecord = {
      event_id: item.event_id,
      endpoint_id: endpoint.endpoint_id,
      event_type: 'payout.processed',
      ts_id: `${ts}#${item.event_id}`,
      status: 'skipped',
      created_at: ts,
      updated_at: ts,
      last_attempt: 0,
      completed_attempt: 0,
      attempts: [],
      expires_at: 0,
    };
    w.deliveries.set(`${item.event_id}|${endpoint.endpoint_id}`, delivery);
    w.ctx = { ...w.ctx, deliveries: { ...w.ctx.deliveries, query: async () => ({ items: [delivery] }) } };
    await expect(
      recoverEndpoint(w.ctx, endpoint.endpoint_id, {
        since: new Date(w.now.value.getTime() - 9 * 86_400_000).toISOString(),
        until: w.now.value.toISOString(),
      }),
    ).rejects.toThrow('need "force": true');
    expect(w.sent).toEqual([]);
    // Selected but not resent (still pending, without force): its age refuses nothing.
    w.deliveries.set(`${item.event_id}|${endpoint.endpoint_id}`, { ...delivery, status: 'pending' });
    w.ctx = {
      ...w.ctx,
      deliveries: {
        ...w.ctx.deliveries,
        query: async () => ({ items: [{ ...delivery, status: 'pending' }] }),
      },
    };
    expect(
      await replayDeliveries(w.ctx, {
        from: new Date(w.now.value.getTime() - 9 * 86_400_000).toISOString(),
        to: w.now.value.toISOString(),
        endpoint_id: endpoint.endpoint_id,
        status: 'pending',
      }),
    ).toMatchObject({ matched: 1, enqueued: 0, skipped: 1 });
    expect(w.sent).toEqual([]);
  });
});

describe('replayDeliveries: ordered endpoints', () => {
  it('a replay that could not send its message leaves its place and wakes the next one of the key', async () => {
    const w = world();
    const endpoint = await createEndpoint(w.ctx, {
      url: 'https://partner.example/webhooks/v1',
      ordering: { key: 'endpoint' },
    });
    const event = (n: number) =>
      outboxItemOf(
        { type: 'payout.processed', data: { n }, trace_id: 'trc_test', versions: NO_VERSIONS },
        w.now.value,
        30,
      );
    const [replayed, later] = [event(1), event(2)];
    for (const item of [replayed, later]) await w.ctx.events.put(item);
    await fanOutEvent(w.ctx, replayed, [...w.endpoints.values()]);
    const first = w.sent.pop()?.body as DeliveryMessage;
    w.answers.push(response(404));
    await deliverAttempt(w.ctx, first);
    const key = `${replayed.event_id}|${endpoint.endpoint_id}`;
    expect(w.deliveries.get(key)?.status).toBe('stopped');
    // The replay numbers its delivery (place 2); a fan-out numbers the next event right after (place 3), whose
    // message waits; then the replay's own send fails.
    const base = w.ctx;
    w.ctx = {
      ...base,
      deliveries: {
        ...base.deliveries,
        startReplay: async () => {
          const record = w.deliveries.get(key) as DeliveryRecord;
          w.deliveries.set(key, { ...record, status: 'retrying', replay_id: 'rpl' });
          return 2;
        },
        revertReplay: async (_eventId, _endpointId, _replayId, previous) => {
          const record = w.deliveries.get(key) as DeliveryRecord;
          w.deliveries.set(key, { ...record, status: previous });
        },
      },
      sequencer: {
        ...base.sequencer,
        enqueue: async (input) => {
          const seq = await base.sequencer.enqueue(input);
          if (input.round !== 'fanout') await fanOutEvent(base, later, [...w.endpoints.values()]);
          return seq;
        },
      },
      queue: {
        send: async (queue, body, options) => {
          if ((JSON.parse(body) as DeliveryMessage).replay_id) throw new Error('queue unavailable');
          return base.queue.send(queue, body, options);
        },
      },
    };
    await expect(replayDeliveries(w.ctx, { event_ids: [replayed.event_id] })).rejects.toThrow(
      'queue unavailable',
    );
    expect(w.deliveries.get(key)?.status).toBe('stopped');
    const laterMessages = w.sent.filter((sent) => sent.body.event_id === later.event_id);
    // Its first message (parked: not its turn) and the wake-up the failed replay handed on.
    expect(laterMessages.map((sent) => sent.body.order)).toEqual([
      { key: 'endpoint', seq: 3 },
      { key: 'endpoint', seq: 3 },
    ]);
    expect(await deliverAttempt(base, laterMessages[1]?.body as DeliveryMessage)).toMatchObject({
      decision: { kind: 'delivered' },
    });
  });
});

describe('signing secrets', () => {
  it('decrypts an endpoint secret once per ciphertext, not once per attempt', async () => {
    const w = world();
    const { first } = await prepared(w);
    let decrypts = 0;
    const cipher = w.ctx.cipher;
    w.ctx = {
      ...w.ctx,
      cipher: {
        encrypt: (plaintext, context) => cipher.encrypt(plaintext, context),
        decrypt: async (ciphertext, context) => {
          decrypts += 1;
          return cipher.decrypt(ciphertext, context);
        },
      },
    };
    w.answers.push(response(500), response(500), response(200));
    await deliverAttempt(w.ctx, first);
    await deliverAttempt(w.ctx, { ...first, attempt: 2 });
    await deliverAttempt(w.ctx, { ...first, attempt: 3 });
    expect(w.posts).toHaveLength(3);
    expect(decrypts).toBe(1);
  });
});

describe('fanOutEvent', () => {
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('fans an event out to many endpoints concurrently, a bounded number at a time, once each', async () => {
    const w = world();
    for (let index = 0; index < 40; index += 1) {
      await createEndpoint(w.ctx, { url: `https://partner-${index}.example/webhooks/v1` });
    }
    const item = outboxItemOf(
      { type: 'payout.processed', data: { payout_id: 'po_1' }, trace_id: 'trc_test', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    let inFlight = 0;
    let most = 0;
    const send = w.ctx.queue.send;
    const marked: number[] = [];
    const ctx: WebhookContext = {
      ...w.ctx,
      queue: {
        send: async (queue, body, options) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await tick();
          inFlight -= 1;
          return send(queue, body, options);
        },
      },
      events: {
        ...w.ctx.events,
        markFannedOut: async (_id, _at, count) => {
          marked.push(count);
        },
      },
    };
    expect(await fanOutEvent(ctx, item, [...w.endpoints.values()])).toBe(40);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(16);
    expect(new Set(w.sent.map((message) => message.body.endpoint_id)).size).toBe(40);
    expect(w.deliveries.size).toBe(40);
    expect(marked).toEqual([40]);
    // Again (a redelivered stream batch): the first attempts still wait, so each gets one more message its
    // claim will absorb; no delivery record is created twice.
    await fanOutEvent(ctx, item, [...w.endpoints.values()]);
    expect(w.deliveries.size).toBe(40);
  });

  it('keeps the body only as long as the shortest retention of the endpoints it goes to', async () => {
    const w = world();
    const short = await createEndpoint(w.ctx, { url: 'https://short.example/hooks', retention_days: 7 });
    await createEndpoint(w.ctx, { url: 'https://long.example/hooks' });
    w.now.value = new Date(w.now.value.getTime() + 1000);
    const item = outboxItemOf(
      { type: 'payout.processed', data: { payout_id: 'po_r' }, trace_id: 'trc_r', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    await w.ctx.events.put(item);
    await fanOutEvent(w.ctx, item, [...w.endpoints.values()]);
    expect(short.retention_days).toBe(7);
    expect(w.events.get(item.event_id)?.expires_at).toBe(Math.floor(Date.parse(item.ts) / 1000) + 7 * 86_400);
  });

  it('an endpoint that cannot be fanned out leaves the event unrecorded, so it is fanned out again', async () => {
    const w = world();
    for (let index = 0; index < 5; index += 1) {
      await createEndpoint(w.ctx, { url: `https://partner-${index}.example/webhooks/v1` });
    }
    const endpoints = [...w.endpoints.values()];
    const item = outboxItemOf(
      { type: 'payout.processed', data: { payout_id: 'po_2' }, trace_id: 'trc_test', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    const marked: string[] = [];
    const failing = endpoints[2]?.endpoint_id;
    const ctx: WebhookContext = {
      ...w.ctx,
      deliveries: {
        ...w.ctx.deliveries,
        createIfAbsent: async (record) => {
          if (record.endpoint_id === failing) throw new Error('throttled');
          return w.ctx.deliveries.createIfAbsent(record);
        },
      },
      events: {
        ...w.ctx.events,
        markFannedOut: async (id) => {
          marked.push(id);
        },
      },
    };
    await expect(fanOutEvent(ctx, item, endpoints)).rejects.toThrow('throttled');
    expect(marked).toEqual([]);
    await fanOutEvent({ ...ctx, deliveries: w.ctx.deliveries }, item, endpoints);
    expect(marked).toEqual([item.event_id]);
    expect(w.deliveries.size).toBe(5);
  });
});

describe('SQS and EventBridge destinations (C34)', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });
  const role = 'arn:aws:iam::111122223333:role/pricing-deliveries';
  const queueUrl = 'https://sqs.eu-west-1.amazonaws.com/111122223333/orders.fifo';

  /** A payout event fanned out to the endpoints: the event and its first delivery message. */
  const fannedOut = async (data: Record<string, unknown>) => {
    const item = outboxItemOf(
      { type: 'payout.processed', data, trace_id: 'trc_t', versions: NO_VERSIONS },
      w.now.value,
      30,
    );
    await w.ctx.events.put(item);
    await fanOutEvent(w.ctx, item, [...w.endpoints.values()]);
    return { item, message: w.sent.shift()?.body as DeliveryMessage };
  };

  const cloudEndpoint = () =>
    createEndpoint(w.ctx, {
      destination: { type: 'sqs', queue_url: queueUrl, role_arn: role },
      ordering: { key: 'data.account' },
    });

  it('registers without a url: the service makes the external id and names the principal to trust', async () => {
    const endpoint = await cloudEndpoint();
    expect(endpoint.url).toBeUndefined();
    expect(endpoint.destination).toEqual({
      type: 'sqs',
      queue_url: queueUrl,
      role_arn: role,
      external_id: expect.stringMatching(/^pricing-ext-[A-Za-z0-9_-]{32}$/),
      principal: 'arn:aws:iam::000000000000:root',
    });
    const other = await cloudEndpoint();
    expect(other.destination?.external_id).not.toBe(endpoint.destination?.external_id);
  });

  it('keeps the external id when the destination moves, drops it for http, and refuses a url without the move', async () => {
    const endpoint = await cloudEndpoint();
    const externalId = endpoint.destination?.external_id;
    const bus = 'arn:aws:events:eu-west-1:111122223333:event-bus/partner';
    const moved = await updateEndpoint(w.ctx, endpoint.endpoint_id, {
      destination: { type: 'eventbridge', event_bus_arn: bus, role_arn: role },
    });
    expect(moved.destination).toMatchObject({
      type: 'eventbridge',
      event_bus_arn: bus,
      external_id: externalId,
    });
    await expect(
      updateEndpoint(w.ctx, endpoint.endpoint_id, { url: 'https://partner.example/hooks' }),
    ).rejects.toMatchObject({ code: 'invalid_request', details: { problems: [{ path: '$.url' }] } });
    await expect(
      updateEndpoint(w.ctx, endpoint.endpoint_id, { auth: { headers: { 'X-Api-Key': 'k' } } }),
    ).rejects.toMatchObject({ code: 'invalid_request', details: { problems: [{ path: '$.auth' }] } });
    const http = await updateEndpoint(w.ctx, endpoint.endpoint_id, {
      destination: { type: 'http' },
      url: 'https://partner.example/hooks',
    });
    expect(http.destination).toBeUndefined();
    expect(http.url).toBe('https://partner.example/hooks');
    // And back: an http endpoint moved to a queue loses its url, auth and certificate.
    const withAuth = await updateEndpoint(w.ctx, endpoint.endpoint_id, {
      auth: { headers: { 'X-Api-Key': 'k' } },
    });
    expect(withAuth.auth).toEqual({ headers: ['X-Api-Key'] });
    const queued = await updateEndpoint(w.ctx, endpoint.endpoint_id, {
      destination: { type: 'sqs', queue_url: queueUrl, role_arn: role },
    });
    expect(queued).not.toHaveProperty('url');
    expect(queued).not.toHaveProperty('auth');
    expect(w.endpoints.get(endpoint.endpoint_id)?.auth_ciphertext).toBeUndefined();
    // Back from http: the id the partner's trust policy names, not a new one.
    expect(queued.destination?.external_id).toBe(externalId);
  });

  it("refuses an emulator's queue unless the deployment has one (the local stack), naming the field", async () => {
    const local = {
      type: 'sqs' as const,
      queue_url: 'http://127.0.0.1:4566/000000000000/orders',
      role_arn: role,
    };
    await expect(createEndpoint(w.ctx, { destination: local })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { problems: [{ path: '$.destination.queue_url' }] },
    });
    const endpoint = await cloudEndpoint();
    await expect(updateEndpoint(w.ctx, endpoint.endpoint_id, { destination: local })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    const withEmulator = { ...w.ctx, settings: { ...DEFAULT_WEBHOOK_SETTINGS, emulatorQueues: true } };
    expect((await createEndpoint(withEmulator, { destination: local })).destination).toMatchObject(local);
  });

  it('a change read against a stale endpoint is made against the new one (no url and queue at once)', async () => {
    const endpoint = await cloudEndpoint();
    // Another PATCH lands between this one's read and its write: the write is refused, the endpoint read again.
    const update = w.ctx.endpoints.update;
    let raced = false;
    w.ctx = {
      ...w.ctx,
      endpoints: {
        ...w.ctx.endpoints,
        update: async (id, changes, at, options) => {
          if (!raced && options?.expected) {
            raced = true;
            await update(id, { description: 'changed meanwhile' }, at);
            return undefined;
          }
          const current = w.endpoints.get(id);
          if (options?.expected && current?.updated_at !== options.expected.updated_at) return undefined;
          return update(id, { ...changes }, at);
        },
      },
    };
    const moved = await updateEndpoint(w.ctx, endpoint.endpoint_id, {
      destination: { type: 'http' },
      url: 'https://partner.example/hooks',
    });
    expect(raced).toBe(true);
    expect(moved).toMatchObject({ url: 'https://partner.example/hooks', description: 'changed meanwhile' });
    expect(moved.destination).toBeUndefined();
  });

  it('sends the signed envelope with its headers, the ordering key and `/<topic>` as the signed path', async () => {
    const endpoint = await cloudEndpoint();
    const { item, message } = await fannedOut({ payout_id: 'po_1', account: 'acct-9' });
    const result = await deliverAttempt(w.ctx, message);
    expect(result).toMatchObject({ kind: 'attempted', decision: { kind: 'delivered' }, sent: true });
    expect(w.posts).toEqual([]);
    const [sent] = w.cloudSends;
    expect(sent).toMatchObject({
      endpointId: endpoint.endpoint_id,
      eventId: item.event_id,
      eventType: 'payout.processed',
      attempt: 1,
      orderingKey: 'data.account="acct-9"',
      destination: { type: 'sqs', queue_url: queueUrl, role_arn: role },
    });
    const secret =
      (
        await signingSecrets(w.ctx, w.endpoints.get(endpoint.endpoint_id) as EndpointRecord, w.now.value)
      )[0] ?? '';
    const headers = sent?.headers ?? {};
    const expected = signatureHeader({
      secrets: [secretBytes(secret)],
      timestamp: headers['X-Timestamp'] ?? '',
      method: 'POST',
      path: '/payout',
      body: sent?.body ?? new Uint8Array(),
    });
    expect(headers['X-Signature']).toBe(expected);
    expect(JSON.parse(new TextDecoder().decode(sent?.body))).toMatchObject({ event_id: item.event_id });
  });

  it('retries a refused send on the same schedule as an HTTP failure, and records what AWS said', async () => {
    await cloudEndpoint();
    const { message } = await fannedOut({ payout_id: 'po_2', account: 'a' });
    w.answers.push({
      kind: 'network_error',
      error: 'other',
      message: 'sts:AssumeRole: AccessDenied (HTTP 403)',
      durationMs: 4,
    });
    const result = await deliverAttempt(w.ctx, message);
    expect(result).toMatchObject({
      kind: 'attempted',
      decision: { kind: 'retry', delaySeconds: 5, reason: 'other' },
      attempt: { error: 'other', error_detail: 'sts:AssumeRole: AccessDenied (HTTP 403)' },
    });
    const { event: _event, ...next } = { ...message, attempt: 2 };
    expect(w.sent).toEqual([{ queue: 'delivery', body: next, delaySeconds: 5 }]);
  });
});
