import { timingSafeEqual } from 'node:crypto';
import type { Envelope } from '../../domain/webhooks/envelope';
import { isEnvelopeVersion, LATEST_ENVELOPE_VERSION, renderEnvelope } from '../../domain/webhooks/envelope';
import type { CatalogRepository } from '../../ports/catalog';
import type { EndpointRecord, Page } from '../../ports/webhooks';
import { exportCatalog } from '../catalog/export';
import type { CatalogReader } from '../catalog/reader';
import { partVersionNames } from '../catalog/release';
import type { WebhookContext } from './context';
import { partnerKeyHash } from './endpoints';

/** A partner route without a valid partner key: 401, never saying whether the key exists. */
export class PartnerUnauthorizedError extends Error {
  constructor() {
    super('a valid partner key is required: Authorization: Bearer <partner key>');
    this.name = 'PartnerUnauthorizedError';
  }
}

const PARTNER_KEY = /^Bearer\s+(pk_[A-Za-z0-9_-]{43})$/;

/** The endpoint whose partner key the request carries (compared as SHA-256 digests, in constant time). */
export const authenticatePartner = async (
  ctx: Pick<WebhookContext, 'endpoints'>,
  authorization: string | undefined,
): Promise<EndpointRecord> => {
  const key = authorization?.match(PARTNER_KEY)?.[1];
  if (!key) throw new PartnerUnauthorizedError();
  const hash = partnerKeyHash(key);
  const endpoint = await ctx.endpoints.byPartnerKey(hash);
  if (
    !endpoint?.partner_key_sha256 ||
    !timingSafeEqual(Buffer.from(endpoint.partner_key_sha256, 'hex'), Buffer.from(hash, 'hex'))
  )
    throw new PartnerUnauthorizedError();
  return endpoint;
};

/**
 * `GET /partner/events` (resync, delivery guarantee 4): the events fanned out to the partner's endpoint with
 * `from ≤ ts ≤ to`, oldest first, as the endpoint receives them (its pinned version, `attempt` 1). Events whose
 * bodies expired are left out.
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
  for (const delivery of page.items) {
    const item = await ctx.events.get(delivery.event_id);
    if (item) items.push(renderEnvelope(item, version, 1));
  }
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
};

/** `GET /catalog/snapshot?as_of=`: the catalog in force at a time, in the import format, with its versions. */
export const catalogSnapshot = async (reader: CatalogReader, repository: CatalogRepository, asOf: Date) => {
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
    catalog,
  };
};
