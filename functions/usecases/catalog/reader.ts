import { ServiceError } from '../../domain/errors';
import type { CatalogPartKind, CatalogRepository, Publication } from '../../ports/catalog';
import type { Clock } from '../../ports/clock';
import type { CatalogRelease, CommercialPart, FxPart, TaxPart, VersionedPart } from './release';

export class CatalogNotFoundError extends ServiceError {
  constructor(message: string) {
    super('not_found', message);
    this.name = 'CatalogNotFoundError';
  }
}

/**
 * How long the current pointer is trusted before it is read again. Zero: every read checks the pointer (one small
 * consistent read), so a read after a publication never shows the old version as current. Part versions are
 * immutable and stay cached.
 */
export const POINTER_TTL_MS = 0;

/**
 * Reads releases. Part versions are immutable, so they are cached for the life of the instance; the current
 * pointer is read again after `POINTER_TTL_MS` (or on every call with `fresh`).
 */
export class CatalogReader {
  private readonly parts = new Map<string, Promise<VersionedPart<unknown>>>();
  private readonly releases = new Map<string, Promise<CatalogRelease>>();
  private pointer: { publication: Publication | undefined; readAt: number } | undefined;
  /** Publications read so far, oldest first: immutable, so only newer ones are ever read again. */
  private history: Publication[] = [];

  constructor(
    private readonly repository: CatalogRepository,
    private readonly clock: Clock,
  ) {}

  private part<Part>(kind: CatalogPartKind, version: number): Promise<VersionedPart<Part>> {
    const key = `${kind}:${version}`;
    let loading = this.parts.get(key);
    if (!loading) {
      loading = this.repository.part(kind, version).then((part) => {
        if (!part) throw new CatalogNotFoundError(`no ${kind} version ${version}`);
        return { version: part.version, effective_from: part.effective_from, content: part.content };
      });
      loading.catch(() => this.parts.delete(key));
      this.parts.set(key, loading);
    }
    return loading as Promise<VersionedPart<Part>>;
  }

  /**
   * The release made of these part versions (what a receipt pins). The same versions always give the same
   * object, so everything derived from a release by identity (the engine's snapshot and indexes) is built once.
   */
  release(versions: Readonly<Record<CatalogPartKind, number>>): Promise<CatalogRelease> {
    const key = `${versions.commercial}:${versions.fx}:${versions.tax}`;
    let loading = this.releases.get(key);
    if (!loading) {
      loading = Promise.all([
        this.part<CommercialPart>('commercial', versions.commercial),
        this.part<FxPart>('fx', versions.fx),
        this.part<TaxPart>('tax', versions.tax),
      ]).then(([commercial, fx, tax]) => ({ commercial, fx, tax }));
      loading.catch(() => this.releases.delete(key));
      this.releases.set(key, loading);
    }
    return loading;
  }

  async currentPublication(options: { fresh?: boolean } = {}): Promise<Publication | undefined> {
    const now = this.clock.now().getTime();
    if (!options.fresh && this.pointer && now - this.pointer.readAt < POINTER_TTL_MS)
      return this.pointer.publication;
    const publication = await this.repository.current();
    this.pointer = { publication, readAt: now };
    return publication;
  }

  /** The release in force now: the newest publication whose `effective_from` has come. */
  async current(
    options: { fresh?: boolean } = {},
  ): Promise<{ publication: Publication; release: CatalogRelease }> {
    const latest = await this.currentPublication(options);
    if (!latest) throw new CatalogNotFoundError('no catalog has been published yet');
    const now = this.clock.now();
    const publication = new Date(latest.effective_from) <= now ? latest : await this.inForceAt(now);
    return { publication, release: await this.release(publication.versions) };
  }

  /**
   * The publication in force at a time: the latest `effective_from` not after it (ties: the later revision).
   * Only publications newer than those already seen are read (a future-dated publication, such as a rate tick
   * with a publication delay, sends every read here until it comes into force).
   */
  async inForceAt(at: Date): Promise<Publication> {
    const instant = at.toISOString();
    const known = this.history.at(-1)?.revision;
    const newer = await this.repository.publications(known === undefined ? {} : { afterRevision: known });
    if (newer.length > 0) this.history = [...this.history, ...newer];
    const candidates = this.history.filter((entry) => entry.effective_from <= instant);
    const chosen = candidates.sort((a, b) =>
      a.effective_from === b.effective_from
        ? b.revision - a.revision
        : a.effective_from < b.effective_from
          ? 1
          : -1,
    )[0];
    if (!chosen) throw new CatalogNotFoundError(`no catalog was in force at ${instant}`);
    return chosen;
  }
}
