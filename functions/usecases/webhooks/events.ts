import { ServiceError } from '../../domain/errors';
import { canonicalJson, type Json } from '../../domain/money/canonical';
import {
  CATALOG_EVENT_TYPES,
  type CatalogEventType,
  type Envelope,
  isOperationalEvent,
  LATEST_ENVELOPE_VERSION,
  outboxKeys,
  PAYOUT_PROCESSED,
} from '../../domain/webhooks/envelope';
import { findPersonalData } from '../../domain/webhooks/personal-data';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { OutboxItem } from '../../schemas/envelope';
import { EVENT_EXAMPLES, type ExampleEventType } from '../../schemas/event-examples';
import { type PublishEventRequest, payoutProcessedSchema } from '../../schemas/webhooks';
import { newId } from '../../shared/ids';
import { epochSeconds, retentionDaysFor, type WebhookContext } from './context';
import { EndpointNotFoundError } from './endpoints';

/** The catalog versions in force when an event is produced (C11: on every envelope). */
export interface VersionsInForce {
  readonly pricelist_version: number | null;
  readonly fx_version: string | null;
  readonly tax_rule_version: number | null;
}

export const NO_VERSIONS: VersionsInForce = {
  pricelist_version: null,
  fx_version: null,
  tax_rule_version: null,
};

/** Refusals of `POST /webhooks/events` that the caller can fix. */
export class EventRefusedError extends ServiceError {
  declare readonly code: 'personal_data_not_allowed' | 'invalid_request' | 'conflict';

  constructor(
    code: 'personal_data_not_allowed' | 'invalid_request' | 'conflict',
    message: string,
    details?: Readonly<Record<string, unknown>>,
  ) {
    super(code, message, { details });
    this.name = 'EventRefusedError';
  }
}

/** A new outbox item: the envelope (attempt 1) with its TTL and index keys. */
export const outboxItemOf = (
  input: {
    readonly type: string;
    readonly data?: Readonly<Record<string, unknown>>;
    readonly tenant?: string;
    readonly producer?: string;
    readonly trace_id: string;
    readonly versions: VersionsInForce;
    /** The producer's own id (C25); absent: a new `evt_` ULID. */
    readonly event_id?: string;
  },
  at: Date,
  bodyTtlDays: number,
): OutboxItem => {
  const ts = at.toISOString();
  const eventId = input.event_id ?? newId('evt', at);
  const envelope: Envelope = {
    event_id: eventId,
    type: input.type,
    version: LATEST_ENVELOPE_VERSION,
    ts,
    attempt: 1,
    ...(input.producer !== undefined ? { producer: input.producer } : {}),
    ...(input.tenant !== undefined ? { tenant: input.tenant } : {}),
    ...(input.data !== undefined ? { data: input.data } : {}),
    trace_id: input.trace_id,
    ...input.versions,
  };
  return {
    ...(envelope as OutboxItem),
    expires_at: epochSeconds(at, bodyTtlDays),
    ...outboxKeys(ts, eventId),
  };
};

/**
 * `POST /webhooks/events`: an event of another producer. Catalog events are the catalog's own (its write path
 * produces them in the same transaction as the change); a `payout.processed` payload is checked against its
 * schema; no payload may carry a card number or an e-mail address (spec: identifiers only).
 */
/** A published event: `created` false when the producer's `event_id` named an event published before. */
export interface PublishedEvent {
  readonly item: OutboxItem;
  readonly created: boolean;
}

/** What makes two publications with one producer `event_id` the same event. */
const contentOf = (event: {
  readonly type: string;
  readonly data?: unknown;
  readonly tenant?: string;
  readonly producer?: string;
}): string =>
  canonicalJson({
    type: event.type,
    data: (event.data ?? null) as Json,
    tenant: event.tenant ?? null,
    producer: event.producer ?? 'api',
  });

/**
 * The answer to a producer's `event_id` that names a stored event: that event when it is the same one, else a
 * conflict (another event has the id; its content is not shown).
 */
const repeatOf = (existing: OutboxItem, request: PublishEventRequest): PublishedEvent => {
  if (contentOf(existing) !== contentOf(request)) {
    throw new EventRefusedError(
      'conflict',
      `event_id ${existing.event_id} already names another event: give each event its own id`,
    );
  }
  return { item: existing, created: false };
};

export const publishEvent = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'deliveries' | 'settings'>,
  request: PublishEventRequest,
  traceId: string,
  versions: VersionsInForce,
  once?: ExactlyOnce<PublishedEvent>,
  /** The authenticated operator who publishes (recorded on the outbox item as `published_by`). */
  publishedBy?: string,
): Promise<PublishedEvent> => {
  if (
    (CATALOG_EVENT_TYPES as readonly string[]).includes(request.type) ||
    request.type.startsWith('catalog.')
  )
    throw new EventRefusedError(
      'invalid_request',
      'catalog events are produced by the catalog itself when a change is published',
    );
  if (isOperationalEvent(request.type))
    throw new EventRefusedError(
      'invalid_request',
      'operations events are the service’s own signals: producers cannot publish them',
    );
  const found = findPersonalData(request.data, '$.data');
  if (found.length > 0)
    throw new EventRefusedError(
      'personal_data_not_allowed',
      'payloads carry identifiers only: card numbers and e-mail addresses are refused',
      // Paths and kinds only: never the values.
      { problems: found.map((entry) => ({ path: entry.path, kind: entry.kind })) },
    );
  if (request.type === PAYOUT_PROCESSED) {
    const parsed = payoutProcessedSchema.safeParse(request.data);
    if (!parsed.success)
      throw new EventRefusedError('invalid_request', 'a payout.processed payload is not valid', {
        problems: parsed.error.issues.map((issue) => ({
          path: `$.data${issue.path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`)).join('')}`,
          message: issue.message,
        })),
      });
  }
  if (request.event_id !== undefined) {
    // Producers dedupe on their own id (C25): a repeat finds the event it published.
    const existing = await ctx.events.get(request.event_id);
    if (existing) return repeatOf(existing, request);
    // The body expired, but its deliveries' history is kept longer: the id still names that event.
    if ((await ctx.deliveries.forEvent(request.event_id)).length > 0) {
      throw new EventRefusedError(
        'conflict',
        `event_id ${request.event_id} named an event whose delivery history is still kept: give a new id`,
      );
    }
  }
  const item = outboxItemOf(
    {
      type: request.type,
      data: request.data,
      ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
      producer: request.producer ?? 'api',
      trace_id: traceId,
      versions,
      ...(request.event_id !== undefined ? { event_id: request.event_id } : {}),
    },
    ctx.clock.now(),
    retentionDaysFor(ctx.settings, request.tenant),
  );
  const recorded: OutboxItem = publishedBy ? { ...item, published_by: publishedBy } : item;
  const published: PublishedEvent = { item: recorded, created: true };
  // The event and the request's answer are one write: a retry after a crash gets this event's id and never
  // publishes a second event (which partners would apply as another one).
  if (await ctx.events.put(recorded, await once?.completion(published))) return published;
  const raced = request.event_id !== undefined ? await ctx.events.get(request.event_id) : undefined;
  if (raced) return repeatOf(raced, request);
  throw new Error(`event id ${item.event_id} already exists`);
};

/** Which catalog events a publication produces, given the parts that changed. */
export const catalogEventTypes = (changed: {
  readonly pricelist: boolean;
  readonly promotions: boolean;
  readonly fx: boolean;
  readonly tax: boolean;
}): CatalogEventType[] => [
  ...(changed.pricelist ? (['catalog.PriceListUpdated'] as const) : []),
  ...(changed.promotions ? (['catalog.PromoChanged'] as const) : []),
  ...(changed.fx ? (['catalog.FXRatePublished'] as const) : []),
  ...(changed.tax ? (['catalog.TaxRuleChanged'] as const) : []),
];

/** A test event as its endpoint's history records it: the event sent, to which endpoint, of which type. */
export interface TestEventSent {
  readonly event_id: string;
  readonly endpoint_id: string;
  readonly type: ExampleEventType;
  readonly test: true;
}

/**
 * `POST /webhooks/endpoints/{id}/test {"type"}`: the example of `type` as a new event marked `test: true`, sent to
 * that endpoint only (whatever it subscribes to or filters), through the same pipeline as any event: signed,
 * retried, in the history as a delivery of that endpoint. The example's data is what a real event of the type
 * carries, so a partner's receiver can be tried without anything happening.
 */
export const sendTestEvent = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'endpoints' | 'settings'>,
  endpointId: string,
  type: ExampleEventType,
  traceId: string,
  once?: ExactlyOnce<TestEventSent>,
  publishedBy?: string,
): Promise<TestEventSent> => {
  const endpoint = await ctx.endpoints.get(endpointId);
  if (!endpoint) throw new EndpointNotFoundError(endpointId);
  const example = EVENT_EXAMPLES[type];
  const item: OutboxItem = {
    ...outboxItemOf(
      {
        type,
        data: example.data,
        producer: example.producer,
        ...(endpoint.tenant !== undefined ? { tenant: endpoint.tenant } : {}),
        trace_id: traceId,
        versions: NO_VERSIONS,
      },
      ctx.clock.now(),
      retentionDaysFor(ctx.settings, endpoint.tenant),
    ),
    test: true,
    test_endpoint_id: endpointId,
    ...(publishedBy ? { published_by: publishedBy } : {}),
  };
  const sent: TestEventSent = { event_id: item.event_id, endpoint_id: endpointId, type, test: true };
  if (!(await ctx.events.put(item, await once?.completion(sent))))
    throw new Error(`event id ${item.event_id} already exists`);
  return sent;
};
