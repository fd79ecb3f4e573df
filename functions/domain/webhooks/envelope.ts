import { fnv1a } from '../fnv1a';
/**
 * Event envelopes (spec "Webhook event envelope", C11, C24): types, topics, versions and how an endpoint
 * sees an event. Pure.
 */

/** Envelope versions, oldest first (C24). Each endpoint pins one; the default is the latest. */
export const ENVELOPE_VERSIONS = ['2026-11-01'] as const;
export type EnvelopeVersion = (typeof ENVELOPE_VERSIONS)[number];
export const LATEST_ENVELOPE_VERSION: EnvelopeVersion = '2026-11-01';

export const isEnvelopeVersion = (value: string): value is EnvelopeVersion =>
  (ENVELOPE_VERSIONS as readonly string[]).includes(value);

/** Catalog change events (spec "Catalog change events"), produced only by the catalog's own write path. */
export const CATALOG_EVENT_TYPES = [
  'catalog.PriceListUpdated',
  'catalog.FXRatePublished',
  'catalog.TaxRuleChanged',
  'catalog.PromoChanged',
] as const;
export type CatalogEventType = (typeof CATALOG_EVENT_TYPES)[number];

/** Event types with a payload schema of their own; other producers' types are accepted with any object. */
export const PAYOUT_PROCESSED = 'payout.processed';

/** The topic of the service's own signals (C32): endpoints subscribed to it receive them like any event. */
export const OPERATIONS_TOPIC = 'operations';
export const OPERATIONAL_EVENT_TYPES = [
  'operations.endpoint_failing',
  'operations.endpoint_disabled',
  'operations.delivery_dead',
  'operations.replay_completed',
  'operations.fx_breaker_opened',
  'operations.change_request_pending',
] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

/** `<topic>.<Name>` → `topic` (C11): the text before the first dot. */
export const topicOf = (type: string): string => {
  const dot = type.indexOf('.');
  return dot < 0 ? type : type.slice(0, dot);
};

/**
 * Is this one of the service's own signals? None is raised about the delivery of another one (a dead delivery of
 * `operations.delivery_dead` would raise another, without end), and producers cannot publish them.
 */
export const isOperationalEvent = (type: string): boolean => topicOf(type) === OPERATIONS_TOPIC;

/** The envelope as stored in the outbox and sent (with `attempt` set per delivery). */
export interface Envelope {
  readonly event_id: string;
  readonly type: string;
  readonly version: string;
  readonly ts: string;
  readonly attempt: number;
  readonly producer?: string;
  readonly tenant?: string;
  readonly data?: Readonly<Record<string, unknown>>;
  readonly trace_id: string;
  readonly pricelist_version: number | null;
  readonly fx_version: string | null;
  readonly tax_rule_version: number | null;
  /** A test event (`POST /webhooks/endpoints/{id}/test`): an example, sent to one endpoint; nothing happened. */
  readonly test?: true;
  /**
   * The endpoint the delivery is for, on deliveries signed with the service's Ed25519 key (C33): one key signs for
   * every endpoint, so the signed body names its destination, and a receiver refuses one meant for another.
   */
  readonly endpoint_id?: string;
}

/** What decides whether an endpoint receives an event. */
export interface EndpointSubscription {
  readonly status: 'enabled' | 'disabled';
  /** Empty: every topic. */
  readonly topics: readonly string[];
  /** Set and not empty: only these event types (C31). */
  readonly event_types?: readonly string[];
  /** Set: only events of that tenant (and events without a tenant are not sent). */
  readonly tenant?: string;
  /** Events produced before the endpoint was registered are not sent to it (a replay cannot either). */
  readonly created_at: string;
}

export const endpointReceives = (
  endpoint: EndpointSubscription,
  event: Pick<Envelope, 'type' | 'tenant' | 'ts'>,
): boolean => endpoint.status === 'enabled' && endpointSubscribes(endpoint, event);

/** Whether the endpoint subscribes to the event, enabled or not (a disabled one records it `skipped`). */
export const endpointSubscribes = (
  endpoint: EndpointSubscription,
  event: Pick<Envelope, 'type' | 'tenant' | 'ts'>,
): boolean =>
  event.ts >= endpoint.created_at &&
  // No topics: every topic but `operations`, whose signals go only to endpoints that name it.
  (endpoint.topics.length === 0
    ? !isOperationalEvent(event.type)
    : endpoint.topics.includes(topicOf(event.type))) &&
  (endpoint.event_types === undefined ||
    endpoint.event_types.length === 0 ||
    endpoint.event_types.includes(event.type)) &&
  (endpoint.tenant === undefined || endpoint.tenant === event.tenant);

/**
 * The envelope as an endpoint pinned to `version` receives it, for attempt `attempt`. Key order is fixed, so
 * the same inputs always give the same bytes. Only one version exists today; a later version adds its
 * transformation here.
 */
export const renderEnvelope = (
  envelope: Envelope,
  version: EnvelopeVersion,
  attempt: number,
  /** Named in the envelope (deliveries signed with the service's shared Ed25519 key). */
  endpointId?: string,
): Envelope => ({
  event_id: envelope.event_id,
  type: envelope.type,
  version,
  ts: envelope.ts,
  attempt,
  ...(envelope.producer !== undefined ? { producer: envelope.producer } : {}),
  ...(envelope.tenant !== undefined ? { tenant: envelope.tenant } : {}),
  ...(envelope.data !== undefined ? { data: envelope.data } : {}),
  trace_id: envelope.trace_id,
  pricelist_version: envelope.pricelist_version,
  fx_version: envelope.fx_version,
  tax_rule_version: envelope.tax_rule_version,
  ...(envelope.test ? { test: true as const } : {}),
  ...(endpointId !== undefined ? { endpoint_id: endpointId } : {}),
});

/** Sort key shared by the time-ordered indexes: `<ts>#<event_id>`. */
export const timeKey = (ts: string, eventId: string): string => `${ts}#${eventId}`;

/** The UTC day (`YYYY-MM-DD`) of an ISO timestamp. */
export const dayOf = (ts: string): string => ts.slice(0, 10);

/** Marks an outbox item whose fan-out is not recorded yet (the sparse fan-out-pending index). */
export const FANOUT_PENDING = 'yes';

/**
 * The fan-out-pending index is written twice per event (marked, then unmarked): one marker value for every event
 * would be one index partition at 2 writes per event. The marker carries a shard of the event id instead
 * (`yes#0` … `yes#15`), so 16 partitions share the writes; the sweeper reads them all (docs/capacity.md §8a).
 */
export const FANOUT_PENDING_SHARDS = 16;

/** A stable shard of a key in `0 … shards - 1` (FNV-1a over its UTF-16 code units). */
export const shardOf = (key: string, shards: number): number => fnv1a(key) % shards;

/** The pending-fan-out marker of an event: `yes#<shard of its id>`. */
export const fanoutPendingMarker = (eventId: string): string =>
  `${FANOUT_PENDING}#${shardOf(eventId, FANOUT_PENDING_SHARDS)}`;

/** Every marker value the sweeper reads: each shard's, and the single one of events written before the shards. */
export const FANOUT_PENDING_MARKERS: readonly string[] = [
  FANOUT_PENDING,
  ...Array.from({ length: FANOUT_PENDING_SHARDS }, (_, shard) => `${FANOUT_PENDING}#${shard}`),
];

/**
 * The day index gets one write per event: one key per day would be one partition for every event of the day
 * (about 500 events/s). Its key carries a shard of the event id too (`2026-11-26#0` … `#15`); a day's listing reads
 * the 16 and the plain day of events written before, merged by time.
 */
export const DAY_SHARDS = 16;

/** The day index key of an event: its UTC day and the shard of its id. */
export const dayKey = (ts: string, eventId: string): string => `${dayOf(ts)}#${shardOf(eventId, DAY_SHARDS)}`;

/** Every day index key of a day: each shard's, and the plain day of events written before the shards. */
export const dayKeys = (day: string): string[] => [
  day,
  ...Array.from({ length: DAY_SHARDS }, (_, shard) => `${day}#${shard}`),
];

/**
 * The deliveries' endpoint index (`by-endpoint-keys`): one key per endpoint would be one partition for every delivery to it,
 * written at each status change (about 330 deliveries/s). The key carries a shard of the event id
 * (`<endpoint_id>#0` … `#63`), set when the delivery is created and never changed; a listing by endpoint merges the
 * 64 by time (docs/capacity.md §8a).
 */
export const ENDPOINT_SHARDS = 64;

/** The endpoint index key of a delivery: its endpoint and the shard of its event id. */
export const endpointShardKey = (endpointId: string, eventId: string): string =>
  `${endpointId}#${shardOf(eventId, ENDPOINT_SHARDS)}`;

/** Every endpoint index key of an endpoint. */
export const endpointShardKeys = (endpointId: string): string[] =>
  Array.from({ length: ENDPOINT_SHARDS }, (_, shard) => `${endpointId}#${shard}`);

/** The index keys of a new outbox item: its day (sharded), its time order, and the pending-fan-out marker. */
export const outboxKeys = (ts: string, eventId: string) => ({
  day: dayKey(ts, eventId),
  ts_id: timeKey(ts, eventId),
  fanout_pending: fanoutPendingMarker(eventId),
});

/** The UTC days from `from` to `to` inclusive, oldest first (at most `maxDays`, else RangeError). */
export const daysBetween = (from: string, to: string, maxDays = 400): string[] => {
  const days: string[] = [];
  const end = Date.parse(`${dayOf(to)}T00:00:00.000Z`);
  for (let at = Date.parse(`${dayOf(from)}T00:00:00.000Z`); at <= end; at += 86_400_000) {
    days.push(new Date(at).toISOString().slice(0, 10));
    if (days.length > maxDays) throw new RangeError(`a window spans at most ${maxDays} days`);
  }
  return days;
};

/**
 * Delivery states (C16, C20); `filtered` (C31): the endpoint's filter did not match, so nothing is ever sent —
 * recorded so the history shows why an event did not arrive.
 */
export const DELIVERY_STATUSES = [
  'pending',
  'delivered',
  'retrying',
  'stopped',
  'dead',
  'filtered',
  'skipped',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** States a replay may restart (a delivery still pending or retrying has a live chain of attempts). */
export const REPLAYABLE_STATUSES: readonly DeliveryStatus[] = ['dead', 'stopped', 'delivered', 'skipped'];

/** What `recover` re-delivers: what an endpoint missed while it was disabled or failing. */
export const RECOVERABLE_STATUSES: readonly DeliveryStatus[] = ['skipped', 'dead', 'stopped'];
