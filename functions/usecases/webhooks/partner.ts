import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../../domain/errors';
import type { Envelope } from '../../domain/webhooks/envelope';
import { isEnvelopeVersion, LATEST_ENVELOPE_VERSION, renderEnvelope } from '../../domain/webhooks/envelope';
import type { CatalogRepository } from '../../ports/catalog';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { EndpointRecord, Page } from '../../ports/webhooks';
import {
  type PartnerDeliveriesQuery,
  type PartnerReplayRequest,
  partnerCatalogSchema,
} from '../../schemas/webhooks';
import { exportCatalog } from '../catalog/export';
import type { CatalogReader } from '../catalog/reader';
import { partVersionNames } from '../catalog/release';
import type { WebhookContext } from './context';
import { partnerKeyHash } from './endpoints';
import { EventNotFoundError, type EventSummary, listEvents, showEvent } from './history';
import {
  type ReplayAccepted,
  type ReplayProgress,
  ReplayRefusedError,
  replayDeliveries,
  replayProgress,
} from './replay';

/** A partner route without a valid partner key: 401, never saying whether the key exists. */
export class PartnerUnauthorizedError extends ServiceError {
  constructor() {
    super('unauthorized', 'a valid partner key is required: Authorization: Bearer <partner key>');
    this.name = 'PartnerUnauthorizedError';
  }
}

const PARTNER_KEY = /^Bearer\s+(pk_[A-Za-z0-9_-]{43})$/;

/** The endpoint whose partner key the request carries (compared as SHA-256 digests, in constant time). */
const sameHash = (stored: string | undefined, hash: string): boolean =>
  stored !== undefined &&
  stored.length === hash.length &&
  timingSafeEqual(Buffer.from(stored, 'hex'), Buffer.from(hash, 'hex'));

/**
 * The endpoint whose partner key the request carries (compared as SHA-256 digests, in constant time): its
 * current key, or the previous one until its overlap ends. A disabled endpoint's keys are revoked (a deleted
 * endpoint has none).
 */
export const authenticatePartner = async (
  ctx: Pick<WebhookContext, 'endpoints' | 'clock'>,
  authorization: string | undefined,
): Promise<EndpointRecord> => {
  const key = authorization?.match(PARTNER_KEY)?.[1];
  if (!key) throw new PartnerUnauthorizedError();
  const hash = partnerKeyHash(key);
  const endpoint = await ctx.endpoints.byPartnerKey(hash);
  if (endpoint?.status !== 'enabled') throw new PartnerUnauthorizedError();
  if (sameHash(endpoint.partner_key_sha256, hash)) return endpoint;
  const until = endpoint.previous_partner_key_valid_until;
  if (
    sameHash(endpoint.previous_partner_key_sha256, hash) &&
    until !== undefined &&
    Date.parse(until) > ctx.clock.now().getTime()
  )
    return endpoint;
  throw new PartnerUnauthorizedError();
};

/**
 * Whether a delivery is the partner's to see: an event its endpoint's filter kept from it was never meant for it,
 * so every partner route treats it as one the endpoint never got.
 */
const meantFor = (delivery: { readonly status: string }): boolean => delivery.status !== 'filtered';

/**
 * `GET /partner/events` (resync, delivery guarantee 4): the events fanned out to the partner's endpoint with
 * `from ≤ ts ≤ to`, oldest first, as the endpoint receives them (its pinned version, `attempt` 1). Events whose
 * bodies expired, and events its filter kept from it, are left out.
 */
export const partnerEvents = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'deliveries'>,
  endpoint: EndpointRecord,
  query: { readonly from?: string; readonly to?: string; readonly limit?: number; readonly cursor?: string },
): Promise<Page<Envelope>> => {
  const to = query.to ?? ctx.clock.now().toISOString();
  const from = query.from ?? new Date(Date.parse(to) - 86_400_000).toISOString();
  const page = await ctx.deliveries.query(
    { endpointId: endpoint.endpoint_id },
    from,
    to,
    query.limit ?? 100,
    query.cursor,
  );
  const version = isEnvelopeVersion(endpoint.version) ? endpoint.version : LATEST_ENVELOPE_VERSION;
  const items: Envelope[] = [];
  for (const delivery of page.items.filter(meantFor)) {
    const item = await ctx.events.get(delivery.event_id);
    if (item) items.push(renderEnvelope(item, version, 1));
  }
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
};

/**
 * `GET /partner/deliveries`: the partner's own deliveries in the window (its endpoint is the key's, never a query
 * parameter), each event with that one delivery.
 */
export const partnerDeliveries = async (
  ctx: Pick<WebhookContext, 'clock' | 'events' | 'deliveries'>,
  endpoint: EndpointRecord,
  query: PartnerDeliveriesQuery,
): Promise<Page<EventSummary>> => {
  const page = await listEvents(ctx, { ...query, endpoint_id: endpoint.endpoint_id });
  // An event its filter kept from the endpoint is not the partner's to see (it never received it).
  return {
    ...page,
    items: page.items.filter((item) => item.deliveries.every(meantFor)),
  };
};

/** Reads of a partner's replay made at once (a replay names at most 1 000 events). */
const OWN_EVENT_READS_AT_ONCE = 25;

/**
 * `POST /partner/replay`: a replay of the partner's own endpoint only. Named events its endpoint did not receive
 * (another endpoint's, filtered out, or none at all) are dropped before the replay looks at them, so no answer says
 * whether another endpoint's event exists; when none is left, the answer is the same 404 for every such request.
 */
export const partnerReplay = async (
  ctx: WebhookContext,
  endpoint: EndpointRecord,
  request: PartnerReplayRequest,
  once?: ExactlyOnce<ReplayAccepted>,
): Promise<ReplayAccepted> => {
  let eventIds: string[] | undefined;
  if (request.event_ids) {
    const named = [...new Set(request.event_ids)];
    eventIds = [];
    for (let start = 0; start < named.length; start += OWN_EVENT_READS_AT_ONCE) {
      const batch = named.slice(start, start + OWN_EVENT_READS_AT_ONCE);
      const deliveries = await Promise.all(batch.map((id) => ctx.deliveries.get(id, endpoint.endpoint_id)));
      batch.forEach((id, index) => {
        const delivery = deliveries[index];
        if (delivery && meantFor(delivery)) eventIds?.push(id);
      });
    }
    if (eventIds.length === 0)
      throw new ReplayRefusedError('not_found', 'none of these events was delivered to your endpoint');
  }
  return replayDeliveries(
    ctx,
    { ...request, ...(eventIds ? { event_ids: eventIds } : {}), endpoint_id: endpoint.endpoint_id },
    once,
  );
};

/**
 * `GET /partner/deliveries/{event_id}`: the event's envelope and the partner's own delivery with its attempts. An
 * event the partner's endpoint never got answers as one that does not exist (404): nothing says whether it does.
 * The operators' side of it (who published or expunged it, to how many endpoints it went) is left out.
 */
export const partnerDelivery = async (
  ctx: Pick<WebhookContext, 'events' | 'deliveries'>,
  endpoint: EndpointRecord,
  eventId: string,
) => {
  const own = await ctx.deliveries.get(eventId, endpoint.endpoint_id);
  // Filtered out: the endpoint never received it, so neither does the partner see it.
  if (!own || !meantFor(own)) throw new EventNotFoundError(eventId);
  const shown = await showEvent(ctx, eventId);
  return {
    event_id: shown.event_id,
    envelope: shown.envelope,
    ...(shown.expunged_at !== undefined ? { expunged_at: shown.expunged_at } : {}),
    deliveries: shown.deliveries.filter((delivery) => delivery.endpoint_id === endpoint.endpoint_id),
  };
};

/** `GET /partner/replays/{replay_id}`: a replay or recovery of the partner's own endpoint only (404 otherwise). */
export const partnerReplayProgress = async (
  ctx: WebhookContext,
  endpoint: EndpointRecord,
  replayId: string,
): Promise<ReplayProgress> => {
  const progress = await replayProgress(ctx, replayId);
  const own =
    progress.request.endpoint_id === endpoint.endpoint_id &&
    progress.deliveries.every((delivery) => delivery.endpoint_id === endpoint.endpoint_id);
  if (!own) throw new ReplayRefusedError('not_found', `no replay ${replayId}`);
  return progress;
};

/** A snapshot asked for a time to come: publications scheduled ahead are not the partner's to see yet. */
export class SnapshotInFutureError extends ServiceError {
  constructor() {
    super('invalid_request', 'as_of must not be later than now: what is scheduled is not in force yet');
    this.name = 'SnapshotInFutureError';
  }
}

/**
 * What a partner of `tenant` sees of a catalog document: its overrides and basket policies only when they name
 * no tenant or this one, then the allow-list schema drops everything else (settlement rates, the rate policy,
 * blocked banks and tokens, player blocks, any field added later).
 */
export const partnerProjection = (document: Record<string, unknown>, tenant: string | undefined) => {
  const ours = (owner: string | undefined) => owner === undefined || owner === tenant;
  const overrides = (document.overrides as { target: Record<string, string> }[] | undefined)?.filter(
    (override) => ours(override.target.tenant),
  );
  const policies = (document.basket_policies as { tenant?: string }[] | undefined)?.filter((policy) =>
    ours(policy.tenant),
  );
  return partnerCatalogSchema.parse({
    ...document,
    ...(overrides ? { overrides } : {}),
    ...(policies ? { basket_policies: policies } : {}),
  });
};

/**
 * `GET /catalog/snapshot?as_of=`: the catalog in force at a time (not later than now), in the import format,
 * with its versions, as the partner's endpoint's tenant sees it.
 */
export const catalogSnapshot = async (
  reader: CatalogReader,
  repository: CatalogRepository,
  asOf: Date,
  viewer: { readonly tenant?: string | undefined; readonly now: Date },
) => {
  if (asOf.getTime() > viewer.now.getTime()) throw new SnapshotInFutureError();
  const publication = await reader.inForceAt(asOf);
  const exported = await exportCatalog(reader, repository, {
    kind: 'revision',
    revision: publication.revision,
  });
  const { effective_from: _effectiveFrom, ...catalog } = exported.document;
  return {
    as_of: asOf.toISOString(),
    revision: publication.revision,
    effective_from: publication.effective_from,
    versions: partVersionNames(publication.versions),
    catalog: partnerProjection(catalog, viewer.tenant),
  };
};
