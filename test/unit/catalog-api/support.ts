import { toHttpError } from '../../../functions/handlers/middleware/domain-errors';
import type { HttpError } from '../../../functions/handlers/middleware/errors';
import type { HttpResult, OperationRequest } from '../../../functions/handlers/middleware/http';
import type {
  CatalogPartKind,
  CatalogRepository,
  HistoryPosition,
  HistoryRecord,
  Publication,
  PublishRequest,
  StoredPart,
} from '../../../functions/ports/catalog';
import type { Clock } from '../../../functions/ports/clock';
import type { CachedPrice, PriceCacheStore } from '../../../functions/usecases/catalog/price-cache';
import { proxyEvent } from '../support/lambda';
import { route } from '../support/routes';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(private current = new Date('2026-11-22T12:00:00.000Z')) {}

  now(): Date {
    return this.current;
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** The shared tier in memory, counting calls; `fail` makes every call throw. */
export class InMemoryPriceCacheStore implements PriceCacheStore {
  readonly entries = new Map<string, CachedPrice>();
  readonly tagEpochs = new Map<string, number>();
  readonly calls = { get: 0, put: 0, epochs: 0, bump: 0 };
  fail = false;

  private check(): void {
    if (this.fail) throw new Error('store unavailable');
  }

  async get(key: string): Promise<CachedPrice | undefined> {
    this.calls.get += 1;
    this.check();
    return this.entries.get(key);
  }

  async put(entries: readonly CachedPrice[]): Promise<void> {
    this.calls.put += 1;
    this.check();
    for (const entry of entries) this.entries.set(entry.key, entry);
  }

  async epochs(tagKeys: readonly string[]): Promise<ReadonlyMap<string, number>> {
    this.calls.epochs += 1;
    this.check();
    return new Map(
      tagKeys.flatMap((key) => (this.tagEpochs.has(key) ? [[key, this.tagEpochs.get(key) ?? 0]] : [])),
    );
  }

  async bump(tagKey: string): Promise<number> {
    this.calls.bump += 1;
    this.check();
    const epoch = (this.tagEpochs.get(tagKey) ?? 0) + 1;
    this.tagEpochs.set(tagKey, epoch);
    return epoch;
  }
}

/** The catalog repository in memory (the DynamoDB one is covered by the integration tests). */
export class InMemoryCatalogRepository implements CatalogRepository {
  private readonly parts = new Map<string, StoredPart>();
  private readonly published: Publication[] = [];
  /** The history index, by subject; and the first indexed version of each part kind. */
  readonly historyRecords = new Map<string, HistoryRecord[]>();
  readonly historyStarts = new Map<CatalogPartKind, number>();
  /** Calls of `part` (tests bound the work of a history read). */
  partReads = 0;

  async current(): Promise<Publication | undefined> {
    return this.published.at(-1);
  }

  async publications(options: { readonly afterRevision?: number } = {}): Promise<Publication[]> {
    return this.published.filter((entry) => entry.revision > (options.afterRevision ?? 0));
  }

  async part(kind: CatalogPartKind, version: number): Promise<StoredPart | undefined> {
    this.partReads += 1;
    return this.parts.get(`${kind}:${version}`);
  }

  async publication(revision: number): Promise<Publication | undefined> {
    return this.published.find((entry) => entry.revision === revision);
  }

  async history(
    subject: string,
    options: { readonly limit: number; readonly before?: HistoryPosition },
  ): Promise<{ readonly records: readonly HistoryRecord[]; readonly more: boolean }> {
    const key = (position: HistoryPosition) =>
      `${String(position.version).padStart(10, '0')}#${position.scope}`;
    const older = (this.historyRecords.get(subject) ?? [])
      .filter((record) => options.before === undefined || key(record) < key(options.before))
      .sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0));
    return { records: older.slice(0, options.limit), more: older.length > options.limit };
  }

  async historyStart(kind: CatalogPartKind): Promise<number | undefined> {
    return this.historyStarts.get(kind);
  }

  /** Forgets the history index (as if every version had been written before it existed). */
  dropHistoryIndex(): void {
    this.historyRecords.clear();
    this.historyStarts.clear();
  }

  async latestPartVersion(kind: CatalogPartKind): Promise<number> {
    return Math.max(
      0,
      ...[...this.parts.values()].filter((part) => part.kind === kind).map((part) => part.version),
    );
  }

  async publicationOfChange(changeRequestId: string): Promise<Publication | undefined> {
    return this.published.find((entry) => entry.change_request_id === changeRequestId);
  }

  async publish(request: PublishRequest): Promise<'published' | 'conflict'> {
    if ((this.published.at(-1)?.revision ?? 0) !== request.expectedRevision) return 'conflict';
    const changeRequestId = request.publication.change_request_id;
    if (changeRequestId && (await this.publicationOfChange(changeRequestId))) return 'conflict';
    for (const part of request.newParts) this.parts.set(`${part.kind}:${part.version}`, part);
    if (request.history) {
      for (const part of request.newParts) {
        if (!this.historyStarts.has(part.kind)) this.historyStarts.set(part.kind, part.version);
      }
      for (const record of request.history) {
        this.historyRecords.set(record.subject, [...(this.historyRecords.get(record.subject) ?? []), record]);
      }
    }
    this.published.push(request.publication);
    return 'published';
  }
}

/** An operation request for a catalog route. */
export const operationRequest = (input: {
  readonly method?: 'GET' | 'POST';
  readonly resource: string;
  readonly query?: Record<string, string>;
  readonly body?: unknown;
  /** The customer groups (C29) the caller key may name; none by default. */
  readonly customerGroups?: readonly string[];
}): OperationRequest => {
  const event = proxyEvent({
    method: input.method ?? 'GET',
    resource: input.resource,
    ...(input.body === undefined
      ? {}
      : { body: typeof input.body === 'string' ? input.body : JSON.stringify(input.body) }),
  });
  return {
    event: { ...event, queryStringParameters: input.query ?? null },
    route: route(input.method ?? 'GET', input.resource, 'test'),
    traceId: 'trc_test',
    principal: {
      kind: 'caller',
      keyId: 'ak_test',
      tenant: 'demo',
      scopes: ['prices:read', 'quotes:write', 'receipts:read', 'refunds:write'],
      channels: [],
      customerGroups: input.customerGroups ?? [],
    },
  };
};

/** Runs an operation; a thrown error comes back as the C6 error the middleware would answer. */
export const call = async (
  operation: (request: OperationRequest) => Promise<HttpResult>,
  request: OperationRequest,
): Promise<HttpResult | HttpError> => {
  try {
    return await operation(request);
  } catch (error) {
    const mapped = toHttpError(error);
    if (!mapped) throw error;
    return mapped;
  }
};
