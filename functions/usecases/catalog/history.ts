/**
 * Price and rate history (C30, `GET /catalog/history`): each part version in which a SKU's price item (or a
 * pair's rate) changed, newest first, with the publication that put it in force, its change request and release.
 *
 * Versions written since the history index exists are read from it: one query of the subject's records (a few
 * small items each) and one read of the publication each names, so the cost follows `limit`, not the size of the
 * catalog nor the number of versions. Older versions (written before the index) are found by comparing stored
 * part versions: at most `limit` versions are examined per page (`limit + 1` parts read), and a page may then
 * hold fewer entries than `limit` with a `cursor` to go on.
 */
import {
  type HistoryChange,
  type HistoryChangeType,
  historyChanges,
  pairSubject,
  partKindOfSubject,
  skuSubject,
} from '../../domain/change-control/history';
import { canonicalPairOf } from '../../domain/change-control/patch';
import type { CatalogRepository, HistoryPosition, Publication } from '../../ports/catalog';
import type { ChangeRequestRecord, ChangeRequestStore } from '../../ports/change-requests';
import { cursorCodec } from '../../shared/cursor';
import { contentHash } from './import';
import { fxVersionName } from './release';
import { CatalogValidationError } from './validate';

export interface HistoryQuery {
  /** Exactly one of `sku` and `pair`. */
  readonly sku?: string;
  readonly pair?: string;
  /** Price items only: only this price list, only lists in this currency. */
  readonly pricelist?: string;
  readonly currency?: string;
  readonly limit: number;
  readonly cursor?: string;
}

export interface HistoryItem {
  readonly sku_id?: string;
  readonly pair?: string;
  readonly pricelist_id?: string;
  readonly currency?: string;
  /** Rates: `display` (fx_rates) or `settlement`. */
  readonly rate_set?: string;
  readonly change: HistoryChangeType;
  /** The entry in that version; null when it was removed. */
  readonly value: unknown;
  readonly pricelist_version?: number;
  readonly fx_version?: string;
  readonly revision: number;
  readonly effective_from: string;
  readonly published_at: string;
  readonly change_request?: {
    readonly cr_id: string;
    readonly kind: string;
    readonly status: string;
    readonly author: string;
    readonly note?: string;
    readonly approvers: readonly { readonly by: string; readonly at: string }[];
  };
  readonly release?: {
    readonly journal_entry_id: string;
    readonly journal_index?: number;
    readonly cr_id?: string;
    /** The admin route serving the DSSE envelope. */
    readonly url?: string;
    /** SHA-256 of the envelope's RFC 8785 bytes, as its journal entry records it. */
    readonly release_sha256?: string;
  };
}

export interface HistoryPage {
  readonly items: readonly HistoryItem[];
  readonly cursor?: string;
}

export interface HistoryDependencies {
  readonly repository: CatalogRepository;
  readonly changeRequests: Pick<ChangeRequestStore, 'get'>;
}

/** Records read from the index per query call. */
const INDEX_PAGE = 50;

const SCOPE = /^[A-Za-z0-9_.:-]{0,128}$/;

/** The history's cursor: the position (version and scope) the next page starts before. */
const historyCursor = cursorCodec('catalog-history', (position): HistoryPosition | undefined => {
  if (typeof position !== 'object' || position === null || Array.isArray(position)) return undefined;
  const { version, scope, ...rest } = position as { version?: unknown; scope?: unknown };
  if (Object.keys(rest).length > 0 || typeof version !== 'number' || !Number.isSafeInteger(version)) {
    return undefined;
  }
  return version >= 1 && typeof scope === 'string' && SCOPE.test(scope) ? { version, scope } : undefined;
});

/** Whether `position` comes before (is older than) `bound` in newest-first order. */
const olderThan = (position: HistoryPosition, bound: HistoryPosition | undefined): boolean =>
  bound === undefined ||
  position.version < bound.version ||
  (position.version === bound.version && bound.scope !== '' && position.scope < bound.scope);

interface Found {
  readonly change: HistoryChange;
  readonly version: number;
  readonly publication: Publication;
}

/** The history of a SKU's price items or a pair's rates, newest first, `limit` at most per page. */
export const catalogHistory = async (
  deps: HistoryDependencies,
  query: HistoryQuery,
): Promise<HistoryPage> => {
  const subject = query.sku !== undefined ? skuSubject(query.sku) : pairSubject(query.pair ?? '');
  if (subject === undefined) {
    throw new CatalogValidationError([{ path: '$.pair', message: 'a pair such as EUR-USD' }]);
  }
  const kind = partKindOfSubject(subject);
  const wanted = (change: HistoryChange): boolean =>
    (query.pricelist === undefined || change.scope === query.pricelist) &&
    (query.currency === undefined || change.currency === query.currency);
  let before = query.cursor === undefined ? undefined : historyCursor.decode(query.cursor);
  const found: Found[] = [];
  const page = (next: HistoryPosition | undefined) => finish(deps, query, kind, found, next);

  // Versions since the index exists: the subject's records, newest first.
  const start = await deps.repository.historyStart(kind);
  if (start !== undefined && (before === undefined || before.version >= start)) {
    for (let more = true; more; ) {
      const read = await deps.repository.history(subject, {
        limit: INDEX_PAGE,
        ...(before ? { before } : {}),
      });
      const records = read.records.filter((record) => record.version >= start);
      more = read.more && records.length === read.records.length;
      const kept = records.filter(wanted);
      const publications = await Promise.all(
        kept.map((record) => deps.repository.publication(record.revision)),
      );
      const byRecord = new Map(kept.map((record, index) => [record, publications[index]]));
      for (const record of records) {
        before = { version: record.version, scope: record.scope };
        const publication = byRecord.get(record);
        // A record of a publication that lost its race names a version no publication references.
        if (!publication || publication.versions[kind] !== record.version) continue;
        found.push({ change: record, version: record.version, publication });
        if (found.length === query.limit) return page(before);
      }
    }
    if (start === 1) return page(undefined);
    before = { version: start, scope: '' };
  }

  // Versions written before the index: compare each with the one it replaced, at most `limit` per page.
  // Publications come oldest first: the first naming a version put it in force (versions only grow).
  const introduced: { version: number; publication: Publication }[] = [];
  const seen = new Set<number>();
  for (const publication of await deps.repository.publications()) {
    const version = publication.versions[kind];
    if (seen.has(version)) continue;
    seen.add(version);
    introduced.push({ version, publication });
  }
  introduced.sort((a, b) => a.version - b.version);
  const contents = new Map<number, Promise<unknown>>();
  const contentOf = (version: number): Promise<unknown> => {
    let loading = contents.get(version);
    if (!loading) {
      loading = deps.repository.part(kind, version).then((part) => {
        if (!part) throw new Error(`part ${kind} v${version} is missing`);
        return part.content;
      });
      contents.set(version, loading);
    }
    return loading;
  };
  let examined = 0;
  for (let index = introduced.length - 1; index >= 0; index -= 1) {
    const entry = introduced[index];
    const reachable =
      entry !== undefined &&
      (before === undefined ||
        entry.version < before.version ||
        (entry.version === before.version && before.scope !== ''));
    if (!entry || !reachable) continue;
    if (examined === query.limit) return page(before);
    examined += 1;
    const previous = introduced[index - 1];
    const changes = historyChanges(
      kind,
      previous ? await contentOf(previous.version) : undefined,
      await contentOf(entry.version),
      subject,
    )
      .filter(
        (change) => wanted(change) && olderThan({ version: entry.version, scope: change.scope }, before),
      )
      .reverse();
    for (const change of changes) {
      found.push({ change, version: entry.version, publication: entry.publication });
      if (found.length === query.limit) return page({ version: entry.version, scope: change.scope });
    }
    before = { version: entry.version, scope: '' };
  }
  return page(undefined);
};

/** The page's items with their change requests and releases. */
const finish = async (
  deps: HistoryDependencies,
  query: HistoryQuery,
  kind: 'commercial' | 'fx',
  found: readonly Found[],
  next: HistoryPosition | undefined,
): Promise<HistoryPage> => {
  const crIds = [...new Set(found.flatMap((entry) => entry.publication.change_request_id ?? []))];
  const records = new Map<string, ChangeRequestRecord | undefined>(
    await Promise.all(crIds.map(async (crId) => [crId, await deps.changeRequests.get(crId)] as const)),
  );
  const items = found.map(({ change, version, publication }): HistoryItem => {
    const crId = publication.change_request_id;
    const record = crId === undefined ? undefined : records.get(crId);
    return {
      ...(query.sku !== undefined
        ? {
            sku_id: query.sku,
            pricelist_id: change.scope,
            ...(change.currency ? { currency: change.currency } : {}),
          }
        : { pair: canonicalPairOf(query.pair ?? '') ?? '', rate_set: change.scope }),
      change: change.change,
      value: change.value ?? null,
      ...(kind === 'commercial' ? { pricelist_version: version } : { fx_version: fxVersionName(version) }),
      revision: publication.revision,
      effective_from: publication.effective_from,
      published_at: publication.published_at,
      ...(record
        ? {
            change_request: {
              cr_id: record.cr_id,
              kind: record.kind,
              status: record.status,
              author: record.author,
              ...(record.note ? { note: record.note } : {}),
              approvers: record.approvals.map((approval) => ({ by: approval.by, at: approval.at })),
            },
          }
        : {}),
      ...(crId !== undefined
        ? {
            release: {
              journal_entry_id: `release:${crId}`,
              cr_id: crId,
              url: `/audit/releases/${crId}`,
              ...(record?.journal_index === undefined ? {} : { journal_index: record.journal_index }),
              ...(record?.release ? { release_sha256: contentHash(record.release) } : {}),
            },
          }
        : kind === 'fx'
          ? // An automatic rate tick: no change request; its journal entry is its record.
            { release: { journal_entry_id: `fx-publication:${fxVersionName(version)}` } }
          : {}),
    };
  });
  return {
    items,
    ...(next ? { cursor: historyCursor.encode({ version: next.version, scope: next.scope }) } : {}),
  };
};
