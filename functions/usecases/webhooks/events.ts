import {
  CATALOG_EVENT_TYPES,
  type CatalogEventType,
  type Envelope,
  LATEST_ENVELOPE_VERSION,
  outboxKeys,
  PAYOUT_PROCESSED,
} from '../../domain/webhooks/envelope';
import { findPersonalData } from '../../domain/webhooks/personal-data';
import type { OutboxItem } from '../../schemas/envelope';
import { payoutProcessedSchema } from '../../schemas/webhooks';
import { newId } from '../../shared/ids';
import { epochSeconds, type WebhookContext } from './context';

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
export class EventRefusedError extends Error {
  constructor(
    readonly code: 'personal_data_not_allowed' | 'invalid_request',
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
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
  },
  at: Date,
  bodyTtlDays: number,
): OutboxItem => {
  const ts = at.toISOString();
  const eventId = newId('evt', at);
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
export const publishEvent = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'settings'>,
  request: { type: string; data: Record<string, unknown>; tenant?: string; producer?: string },
  traceId: string,
  versions: VersionsInForce,
): Promise<OutboxItem> => {
  if (
    (CATALOG_EVENT_TYPES as readonly string[]).includes(request.type) ||
    request.type.startsWith('catalog.')
  )
    throw new EventRefusedError(
      'invalid_request',
      'catalog events are produced by the catalog itself when a change is published',
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
  const item = outboxItemOf(
    {
      type: request.type,
      data: request.data,
      ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
      producer: request.producer ?? 'api',
      trace_id: traceId,
      versions,
    },
    ctx.clock.now(),
    ctx.settings.bodyTtlDays,
  );
  if (!(await ctx.events.put(item))) throw new Error(`event id ${item.event_id} already exists`);
  return item;
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
