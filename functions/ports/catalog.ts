import type { HistoryChange } from '../domain/change-control/history';
import type { OutboxItem } from '../schemas/envelope';

/** The three independently versioned parts of the catalog (see `usecases/catalog/release.ts`). */
export type CatalogPartKind = 'commercial' | 'fx' | 'tax';

export const CATALOG_PART_KINDS: readonly CatalogPartKind[] = ['commercial', 'fx', 'tax'];

export interface StoredPart {
  readonly kind: CatalogPartKind;
  readonly version: number;
  readonly effective_from: string;
  /** `sha256:<hex>` of the RFC 8785 bytes of the content. */
  readonly content_sha256: string;
  readonly content: unknown;
}

/** Which part versions make up a release, and from when they are in force. */
export interface Publication {
  readonly revision: number;
  readonly versions: Readonly<Record<CatalogPartKind, number>>;
  readonly effective_from: string;
  readonly published_at: string;
  /** The change request that put it in force (C23). */
  readonly change_request_id?: string;
}

export interface PublishRequest {
  /** The revision the caller read; the pointer moves only if it is still current (0: nothing published yet). */
  readonly expectedRevision: number;
  /** New part versions to write (immutable); parts not listed keep their current version. */
  readonly newParts: readonly StoredPart[];
  readonly publication: Publication;
  /** Catalog change events written to the outbox in the same transaction as the pointer (C11). */
  readonly events?: readonly OutboxItem[];
  /**
   * The history index of the new part versions (C30): one record per price item or rate they changed, written
   * with the parts, before the pointer. Every new part is indexed, even with no record (it changed no entry).
   */
  readonly history?: readonly HistoryRecord[];
}

/** One entry a new part version changed (C30), as the history index keeps it. */
export interface HistoryRecord extends HistoryChange {
  readonly kind: CatalogPartKind;
  readonly version: number;
  /**
   * The publication that was to put the version in force. A publication that lost its race leaves the version
   * unreferenced: readers keep a record only when that publication names its version.
   */
  readonly revision: number;
}

/** A position in a subject's history: everything older than `version` (and, within it, scopes before `scope`). */
export interface HistoryPosition {
  readonly version: number;
  /** `''`: the whole version `version` is excluded. */
  readonly scope: string;
}

/**
 * Versioned reference data. Part versions are immutable once written; publication is one small conditional
 * write of the current pointer (with the publication record in the same transaction), so a catalog of any
 * size goes in whole or not at all.
 */
export interface CatalogRepository {
  /**
   * The publication in force. Readers may be served a replica of the pointer; `primary` reads the pointer itself,
   * which a publication's condition compares with: writers read it, so a replica that lags (a publication by a
   * build that wrote the pointer alone) can never block the next publication, which rewrites every replica.
   */
  current(options?: { readonly primary?: boolean }): Promise<Publication | undefined>;
  /** Every publication, oldest first; with `afterRevision`, only those above it (publications are immutable). */
  publications(options?: { readonly afterRevision?: number }): Promise<Publication[]>;
  part(kind: CatalogPartKind, version: number): Promise<StoredPart | undefined>;
  /** Highest version of a part ever written (published or not): new versions go above it. */
  latestPartVersion(kind: CatalogPartKind): Promise<number>;
  /**
   * Publishes: `conflict` when the pointer moved since `expectedRevision`, or when the publication's change
   * request was published already (one publication per change request, ever).
   */
  publish(request: PublishRequest): Promise<'published' | 'conflict'>;
  /** The publication a change request made, if it made one. */
  publicationOfChange(changeRequestId: string): Promise<Publication | undefined>;
  /** One publication by revision. */
  publication(revision: number): Promise<Publication | undefined>;
  /**
   * History records of a subject (`sku:<sku_id>`, `pair:<FROM>-<TO>`), newest part version first, then scope
   * descending; with `before`, only those older than that position. `more` when the store holds further ones.
   */
  history(
    subject: string,
    options: { readonly limit: number; readonly before?: HistoryPosition },
  ): Promise<{ readonly records: readonly HistoryRecord[]; readonly more: boolean }>;
  /**
   * The first version of a part whose changes are in the history index (every later one is too); undefined while
   * none is. Versions before it (written before the index existed) are read from the parts themselves.
   */
  historyStart(kind: CatalogPartKind): Promise<number | undefined>;
}
