import { createHash } from 'node:crypto';
import { canonicalJson, type Json } from '../../domain/money/canonical';
import {
  CATALOG_PART_KINDS,
  type CatalogPartKind,
  type CatalogRepository,
  type Publication,
  type StoredPart,
} from '../../ports/catalog';
import type { Clock } from '../../ports/clock';
import type { OutboxItem } from '../../schemas/envelope';
import { newId } from '../../shared/ids';
import { DEFAULT_WEBHOOK_SETTINGS } from '../webhooks/context';
import { catalogEventTypes, outboxItemOf } from '../webhooks/events';
import { type CatalogVersions, partVersionNames, splitDocument } from './release';
import { validateCatalogDocument } from './validate';

export const contentHash = (content: unknown): string =>
  `sha256:${createHash('sha256')
    .update(canonicalJson(content as Json))
    .digest('hex')}`;

export interface ImportResult {
  readonly revision: number;
  readonly versions: CatalogVersions;
  readonly effective_from: string;
  /** Parts that got a new version; the others were unchanged and keep theirs. */
  readonly changed: readonly CatalogPartKind[];
}

export class CatalogConflictError extends Error {
  constructor() {
    super('the catalog changed while this import was being published; retry');
    this.name = 'CatalogConflictError';
  }
}

const MAX_ATTEMPTS = 10;

/** Backoff between attempts after losing a race: 20–60 ms × attempt, jittered so racers spread out. */
const backoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, (20 + Math.floor(Math.random() * 40)) * (attempt + 1)));

/**
 * The one write path of the catalog: validate everything first (every problem with its JSON path), write the
 * changed parts as new immutable versions, then make them current with one conditional pointer write. A
 * concurrent publication makes the pointer write fail; the import then starts over from what is current.
 */
export const importCatalog = async (
  deps: {
    readonly repository: CatalogRepository;
    readonly clock: Clock;
    /** Carried by the catalog events (C11); a fresh one when the change has no request behind it. */
    readonly traceId?: string;
    /** TTL of the events' bodies. */
    readonly bodyTtlDays?: number;
  },
  input: unknown,
): Promise<ImportResult> => {
  const document = validateCatalogDocument(input);
  const parts = splitDocument(document);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    if (attempt > 0) await backoff(attempt);
    const current = await deps.repository.current();
    const now = deps.clock.now().toISOString();
    const effectiveFrom = document.effective_from ?? now;
    const newParts: StoredPart[] = [];
    const versions = { commercial: 0, fx: 0, tax: 0 } as Record<CatalogPartKind, number>;
    const previous: Partial<Record<CatalogPartKind, unknown>> = {};
    for (const kind of CATALOG_PART_KINDS) {
      const content = parts[kind];
      const hash = contentHash(content);
      const currentVersion = current?.versions[kind];
      const currentPart = currentVersion ? await deps.repository.part(kind, currentVersion) : undefined;
      if (currentPart && currentPart.content_sha256 === hash) {
        versions[kind] = currentPart.version;
        continue;
      }
      if (currentPart) previous[kind] = currentPart.content;
      const version = (await deps.repository.latestPartVersion(kind)) + 1;
      versions[kind] = version;
      newParts.push({ kind, version, effective_from: effectiveFrom, content_sha256: hash, content });
    }
    if (current && newParts.length === 0 && document.effective_from === undefined) {
      // Nothing changed: the import is a no-op and reports what is in force.
      return {
        revision: current.revision,
        versions: partVersionNames(current.versions),
        effective_from: current.effective_from,
        changed: [],
      };
    }
    const publication: Publication = {
      revision: (current?.revision ?? 0) + 1,
      versions,
      effective_from: effectiveFrom,
      published_at: now,
    };
    const outcome = await deps.repository.publish({
      expectedRevision: current?.revision ?? 0,
      newParts,
      publication,
      events: catalogEvents(publication, newParts, previous, {
        traceId: deps.traceId ?? newId('trc'),
        at: deps.clock.now(),
        bodyTtlDays: deps.bodyTtlDays ?? DEFAULT_WEBHOOK_SETTINGS.bodyTtlDays,
      }),
    });
    if (outcome === 'published') {
      return {
        revision: publication.revision,
        versions: partVersionNames(versions),
        effective_from: effectiveFrom,
        changed: newParts.map((part) => part.kind),
      };
    }
  }
  throw new CatalogConflictError();
};

const promotionsOf = (commercial: unknown): unknown =>
  (commercial as { promotions?: unknown } | undefined)?.promotions ?? [];

const withoutPromotions = (commercial: unknown): unknown => {
  const { promotions: _promotions, ...rest } = (commercial ?? {}) as Record<string, unknown>;
  return rest;
};

/**
 * The catalog events of a publication (C11): `PriceListUpdated` when the commercial part changed other than its
 * promotions, `PromoChanged` when its promotions changed, `FXRatePublished` and `TaxRuleChanged` for new rate and
 * tax versions. Each carries the part's `version`, `effective_from`, the publication's revision and the three
 * versions it puts in force.
 */
export const catalogEvents = (
  publication: Publication,
  newParts: readonly StoredPart[],
  previous: Partial<Record<CatalogPartKind, unknown>>,
  context: { readonly traceId: string; readonly at: Date; readonly bodyTtlDays: number },
): OutboxItem[] => {
  const changed = new Map(newParts.map((part) => [part.kind, part]));
  const commercial = changed.get('commercial');
  const types = catalogEventTypes({
    pricelist:
      commercial !== undefined &&
      (previous.commercial === undefined ||
        contentHash(withoutPromotions(previous.commercial)) !==
          contentHash(withoutPromotions(commercial.content))),
    promotions:
      commercial !== undefined &&
      contentHash(promotionsOf(previous.commercial)) !== contentHash(promotionsOf(commercial.content)),
    fx: changed.has('fx'),
    tax: changed.has('tax'),
  });
  const versions = partVersionNames(publication.versions);
  const partVersion = (type: string): number | string =>
    type === 'catalog.FXRatePublished'
      ? versions.fx_version
      : type === 'catalog.TaxRuleChanged'
        ? versions.tax_rule_version
        : versions.pricelist_version;
  return types.map((type) =>
    outboxItemOf(
      {
        type,
        producer: 'catalog',
        trace_id: context.traceId,
        versions,
        data: {
          version: partVersion(type),
          effective_from: publication.effective_from,
          revision: publication.revision,
          trace_id: context.traceId,
          ...versions,
        },
      },
      context.at,
      context.bodyTtlDays,
    ),
  );
};
