import { createHash } from 'node:crypto';
import { historyChanges } from '../../domain/change-control/history';
import { ServiceError } from '../../domain/errors';
import { canonicalJson, type Json } from '../../domain/money/canonical';
import {
  CATALOG_PART_KINDS,
  type CatalogPartKind,
  type CatalogRepository,
  type HistoryRecord,
  type Publication,
  type StoredPart,
} from '../../ports/catalog';
import type { Clock } from '../../ports/clock';
import type { OutboxItem } from '../../schemas/envelope';
import { newId } from '../../shared/ids';
import { CONFLICT, type RetryPolicy, retryOnConflict } from '../../shared/retry';
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

export class CatalogConflictError extends ServiceError {
  constructor() {
    super('request_in_progress', 'the catalog changed while this import was being published; retry', {
      retryAfterSeconds: 1,
    });
    this.name = 'CatalogConflictError';
  }
}

/** A publication that lost the race for the pointer is planned again: 10 attempts, 40 ms doubling to 640 ms. */
const PUBLISH_RETRY: RetryPolicy = { attempts: 10, baseMs: 40, capMs: 640 };

/** The publication in force at the pointer and its parts, as a change is planned against it. */
export interface CurrentCatalog {
  readonly publication: Publication;
  readonly parts: Readonly<Record<CatalogPartKind, StoredPart>>;
}

/**
 * What a change puts in force, planned against what is current (re-planned after losing a race): new content
 * per part; parts left out keep the version in force. Throwing stops the publication.
 */
export type ChangePlan = (current: CurrentCatalog | undefined) => Partial<Record<CatalogPartKind, unknown>>;

export interface PublishDependencies {
  readonly repository: CatalogRepository;
  readonly clock: Clock;
  /** Carried by the catalog events (C11); a fresh one when the change has no request behind it. */
  readonly traceId?: string;
  /** TTL of the events' bodies. */
  readonly bodyTtlDays?: number;
}

/**
 * The one write path of the catalog: write the changed parts as new immutable versions, then make them current
 * with one conditional pointer write (with the catalog events in the same transaction). A concurrent publication
 * makes the pointer write fail; the change is then planned again against what is current.
 */
export const publishCatalogChange = async (
  deps: PublishDependencies,
  request: {
    readonly plan: ChangePlan;
    /** In force from; absent: now. Given, a publication happens even when no part changes. */
    readonly effectiveFrom?: string;
    /** The change request behind the publication, recorded on it. */
    readonly changeRequestId?: string;
    /** Publish nothing when no part changes, even with `effectiveFrom` (automatic rate ticks). */
    readonly skipUnchanged?: boolean;
  },
): Promise<ImportResult> => {
  return retryOnConflict(
    PUBLISH_RETRY,
    async (attempt) => {
      // A change request is published once: after a conflict, a concurrent completion of the same one may have won.
      const won =
        attempt > 0 && request.changeRequestId
          ? await deps.repository.publicationOfChange(request.changeRequestId)
          : undefined;
      if (won) {
        return {
          revision: won.revision,
          versions: partVersionNames(won.versions),
          effective_from: won.effective_from,
          changed: [],
        };
      }
      const current = await currentCatalog(deps.repository);
      const planned = request.plan(current);
      const now = deps.clock.now().toISOString();
      const effectiveFrom = request.effectiveFrom ?? now;
      const newParts: StoredPart[] = [];
      const versions = { commercial: 0, fx: 0, tax: 0 } as Record<CatalogPartKind, number>;
      const previous: Partial<Record<CatalogPartKind, unknown>> = {};
      for (const kind of CATALOG_PART_KINDS) {
        const currentPart = current?.parts[kind];
        const content = kind in planned ? planned[kind] : undefined;
        if (content === undefined) {
          if (!currentPart) throw new Error(`the first publication needs every part (${kind} is missing)`);
          versions[kind] = currentPart.version;
          continue;
        }
        const hash = contentHash(content);
        if (currentPart && currentPart.content_sha256 === hash) {
          versions[kind] = currentPart.version;
          continue;
        }
        if (currentPart) previous[kind] = currentPart.content;
        const version = (await deps.repository.latestPartVersion(kind)) + 1;
        versions[kind] = version;
        newParts.push({ kind, version, effective_from: effectiveFrom, content_sha256: hash, content });
      }
      if (
        current &&
        newParts.length === 0 &&
        (request.effectiveFrom === undefined || request.skipUnchanged)
      ) {
        // Nothing changed: the change is a no-op and reports what is in force.
        return {
          revision: current.publication.revision,
          versions: partVersionNames(current.publication.versions),
          effective_from: current.publication.effective_from,
          changed: [],
        };
      }
      const publication: Publication = {
        revision: (current?.publication.revision ?? 0) + 1,
        versions,
        effective_from: effectiveFrom,
        published_at: now,
        ...(request.changeRequestId ? { change_request_id: request.changeRequestId } : {}),
      };
      const outcome = await deps.repository.publish({
        expectedRevision: current?.publication.revision ?? 0,
        newParts,
        publication,
        history: historyOf(newParts, previous, publication.revision),
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
      return CONFLICT;
    },
    () => new CatalogConflictError(),
  );
};

/**
 * The publication at the pointer with its parts, or `undefined` before the first one: what changes are made
 * against, so the pointer itself, never a replica.
 */
export const currentCatalog = async (repository: CatalogRepository): Promise<CurrentCatalog | undefined> => {
  const publication = await repository.current({ primary: true });
  if (!publication) return undefined;
  const parts = await Promise.all(
    CATALOG_PART_KINDS.map(async (kind) => {
      const part = await repository.part(kind, publication.versions[kind]);
      if (!part)
        throw new Error(
          `part ${kind} v${publication.versions[kind]} of revision ${publication.revision} is missing`,
        );
      return [kind, part] as const;
    }),
  );
  return { publication, parts: Object.fromEntries(parts) as Record<CatalogPartKind, StoredPart> };
};

/**
 * A whole catalog document, validated first (every problem with its JSON path), published as new versions of
 * the parts that changed. Only change requests call this (C23): no route writes catalog data directly.
 */
export const importCatalog = async (deps: PublishDependencies, input: unknown): Promise<ImportResult> => {
  const document = validateCatalogDocument(input);
  const parts = splitDocument(document);
  return publishCatalogChange(deps, {
    plan: () => parts,
    ...(document.effective_from === undefined ? {} : { effectiveFrom: document.effective_from }),
  });
};

/**
 * The history index of new part versions (C30): the price items and rates each changed against the version it
 * replaces (the one at the pointer). Tax parts hold no history subject.
 */
const historyOf = (
  newParts: readonly StoredPart[],
  previous: Partial<Record<CatalogPartKind, unknown>>,
  revision: number,
): HistoryRecord[] =>
  newParts.flatMap((part) =>
    part.kind === 'tax'
      ? []
      : historyChanges(part.kind, previous[part.kind], part.content).map((change) => ({
          ...change,
          kind: part.kind,
          version: part.version,
          revision,
        })),
  );

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
