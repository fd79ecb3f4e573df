/**
 * Catching up after an outage or a long lag (spec "Delivery guarantees" 4): a snapshot of the catalog as of
 * `from`, then every event of the window `[from, to]` (this endpoint's own events, oldest first), each through
 * the receiver's usual idempotent processing. Running it again, or over a window that overlaps events already
 * delivered, applies nothing twice: the idempotency store answers `duplicate` for those.
 *
 * ```ts
 * const store = new IdempotencyStore({ documents, tableName, handlerVersion });
 * await resync({
 *   baseUrl: 'https://pricing.example.com', partnerKey: process.env.PARTNER_KEY,
 *   from: lastHealthyAt, to: new Date().toISOString(),
 *   onSnapshot: async (snapshot) => replaceLocalCatalog(snapshot.catalog, snapshot.versions),
 *   process: (envelope) => store.processTransactional(envelope, applyEvent),
 * });
 * ```
 *
 * Authenticity: fetched events carry no webhook signature; they are trusted because they come over HTTPS
 * from the service, authenticated with the partner key. Plain `http` is refused except to a loopback host.
 * Keep `from` inside the store's dedup memory (7 days by default): older events make the store throw
 * EventTooOldError, which stops the resync (nothing of that event is applied).
 */

import type { ProcessOutcome } from './process-once';
import { parseReceivedEnvelope, parseTimestamp, type ReceivedEnvelope } from './verify';

/** `GET /catalog/snapshot?as_of=`: the catalog in force at `as_of`, in the import format, with its versions. */
export interface CatalogSnapshot {
  /** The time asked for. */
  readonly as_of: string;
  /** The catalog revision in force at `as_of`. */
  readonly revision: number;
  readonly versions: {
    readonly pricelist_version: number;
    readonly fx_version: string;
    readonly tax_rule_version: number;
  };
  /** When that revision came into force. */
  readonly effective_from: string;
  /** The catalog document (the `POST /admin/catalog/import` format, without `effective_from`). */
  readonly catalog: Readonly<Record<string, unknown>>;
}

/** Page size asked of `GET /partner/events` by default. */
export const DEFAULT_RESYNC_PAGE_SIZE = 100;

/** The most events the service serves per page of `GET /partner/events`. */
export const MAX_RESYNC_PAGE_SIZE = 200;

/** Time allowed for each HTTP request of a resync, in milliseconds. */
export const DEFAULT_RESYNC_TIMEOUT_MS = 30_000;

/** Where to resync from, for which window, and what to do with the snapshot and each event. */
export interface ResyncOptions {
  /** The service's base URL (`https://pricing.example.com`, with a path prefix if any). */
  readonly baseUrl: string;
  /** The endpoint's partner key (`pk_…`), returned once when the endpoint was registered. */
  readonly partnerKey: string;
  /** Start of the window (inclusive): ISO 8601 UTC with ms. The snapshot is taken as of this time. */
  readonly from: string;
  /** End of the window (inclusive): ISO 8601 UTC with ms, not before `from`. */
  readonly to: string;
  /** The fetch to use. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Events per page, 1–{@link MAX_RESYNC_PAGE_SIZE}. @default {@link DEFAULT_RESYNC_PAGE_SIZE} */
  readonly pageSize?: number;
  /** Per-request timeout in milliseconds. @default {@link DEFAULT_RESYNC_TIMEOUT_MS} */
  readonly timeoutMs?: number;
  /** Called first, with the snapshot as of `from`, before any event is processed. */
  readonly onSnapshot?: (snapshot: CatalogSnapshot) => Promise<void>;
  /**
   * Applies one event, idempotently: typically `store.processTransactional(envelope, handler)`. Returning
   * `{ kind: 'duplicate' }` counts the event as a duplicate; anything else counts it as processed. An error
   * stops the resync (events before it stay applied; running the resync again continues safely).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a `process` that returns nothing (Promise<void>) must fit.
  readonly process: (envelope: ReceivedEnvelope) => Promise<ProcessOutcome | void>;
}

/** What a resync did. */
export interface ResyncResult {
  readonly snapshot: CatalogSnapshot;
  /** Events received, counting an event served on two pages twice. */
  readonly events: number;
  /** Events `process` applied. */
  readonly processed: number;
  /** Events already applied (by `process`'s answer, or served twice within this resync). */
  readonly duplicates: number;
}

/**
 * Why a resync stopped. `code`: `unauthorized` (401/403: wrong or revoked partner key), `http_error` (another
 * 4xx), `server_error` (5xx or 429: worth retrying later, see `retryAfterSeconds`), `network_error`
 * (unreachable, timeout), `malformed_response` (not the documented JSON, or a page cursor that repeats). The
 * message never contains the partner key.
 */
export class ResyncError extends Error {
  constructor(
    readonly code: 'unauthorized' | 'http_error' | 'server_error' | 'network_error' | 'malformed_response',
    message: string,
    readonly details: {
      readonly status?: number;
      readonly retryAfterSeconds?: number;
      /** The service's `trace_id` (from the error body or `X-Trace-Id`), for support requests. */
      readonly traceId?: string;
    } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ResyncError';
  }

  /** Whether running the resync again later may succeed (`server_error`, `network_error`). */
  get retryable(): boolean {
    return this.code === 'server_error' || this.code === 'network_error';
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const positiveInteger = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) > 0;

const parseSnapshot = (value: unknown): CatalogSnapshot | undefined => {
  if (!isRecord(value) || !isRecord(value.versions) || !isRecord(value.catalog)) return undefined;
  const { versions } = value;
  const ok =
    typeof value.as_of === 'string' &&
    positiveInteger(value.revision) &&
    typeof value.effective_from === 'string' &&
    positiveInteger(versions.pricelist_version) &&
    typeof versions.fx_version === 'string' &&
    positiveInteger(versions.tax_rule_version);
  return ok ? (value as unknown as CatalogSnapshot) : undefined;
};

/** `Retry-After` as seconds (delta-seconds or an HTTP-date), when present and sensible. */
const retryAfterOf = (header: string | null): number | undefined => {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - Date.now()) / 1000)) : undefined;
};

/**
 * Fetches the snapshot as of `from`, hands it to `onSnapshot`, then pages through `GET /partner/events` for
 * `[from, to]` and passes each event, oldest first, to `process`. An event served twice (overlapping pages) is
 * passed once. Throws {@link ResyncError} for HTTP and format failures, RangeError for bad options, and
 * whatever `onSnapshot` or `process` throw.
 */
export const resync = async (options: ResyncOptions): Promise<ResyncResult> => {
  const from = parseTimestamp(options.from);
  const to = parseTimestamp(options.to);
  if (from === undefined || to === undefined)
    throw new RangeError('from and to must be ISO 8601 UTC with ms');
  if (from > to) throw new RangeError('from must not be after to');
  const pageSize = options.pageSize ?? DEFAULT_RESYNC_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_RESYNC_PAGE_SIZE) {
    throw new RangeError(`pageSize must be an integer within 1..${MAX_RESYNC_PAGE_SIZE}`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_RESYNC_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');
  if (options.partnerKey.length === 0) throw new RangeError('partnerKey must not be empty');
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:' && !(base.protocol === 'http:' && LOOPBACK_HOSTS.has(base.hostname))) {
    throw new RangeError('baseUrl must be https (plain http only to a loopback host)');
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;

  const getJson = async (path: string, query: Record<string, string>): Promise<unknown> => {
    const url = new URL(base.origin);
    url.pathname = `${basePath}${path}`;
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'GET',
        headers: { Authorization: `Bearer ${options.partnerKey}`, Accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ResyncError('network_error', `GET ${path} failed: no response`, {}, { cause: error });
    }
    const text = await response.text().catch(() => '');
    let body: unknown;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const status = response.status;
      const traceId =
        (isRecord(body) && typeof body.trace_id === 'string' ? body.trace_id : undefined) ??
        response.headers.get('x-trace-id') ??
        undefined;
      const retryAfterSeconds = retryAfterOf(response.headers.get('retry-after'));
      const code =
        status === 401 || status === 403
          ? 'unauthorized'
          : status >= 500 || status === 429
            ? 'server_error'
            : 'http_error';
      const reason = isRecord(body) && typeof body.error === 'string' ? ` (${body.error})` : '';
      throw new ResyncError(code, `GET ${path} answered ${status}${reason}`, {
        status,
        ...(traceId !== undefined ? { traceId } : {}),
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      });
    }
    if (body === undefined) throw new ResyncError('malformed_response', `GET ${path}: the body is not JSON`);
    return body;
  };

  const snapshot = parseSnapshot(await getJson('/catalog/snapshot', { as_of: options.from }));
  if (snapshot === undefined) {
    throw new ResyncError('malformed_response', 'GET /catalog/snapshot: not a catalog snapshot');
  }
  await options.onSnapshot?.(snapshot);

  const handled = new Set<string>();
  const cursors = new Set<string>();
  let events = 0;
  let processed = 0;
  let duplicates = 0;
  let cursor: string | undefined;
  do {
    const page = await getJson('/partner/events', {
      from: options.from,
      to: options.to,
      limit: String(pageSize),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    if (
      !isRecord(page) ||
      !Array.isArray(page.items) ||
      !(page.cursor === undefined || typeof page.cursor === 'string')
    ) {
      throw new ResyncError('malformed_response', 'GET /partner/events: not a page of events');
    }
    const envelopes = page.items.map(parseReceivedEnvelope);
    if (envelopes.some((envelope) => envelope === undefined)) {
      throw new ResyncError('malformed_response', 'GET /partner/events: an item is not an event envelope');
    }
    for (const envelope of envelopes as ReceivedEnvelope[]) {
      events += 1;
      if (handled.has(envelope.event_id)) {
        duplicates += 1;
        continue;
      }
      const outcome = await options.process(envelope);
      handled.add(envelope.event_id);
      if (outcome?.kind === 'duplicate') duplicates += 1;
      else processed += 1;
    }
    cursor = page.cursor === '' ? undefined : page.cursor;
    if (cursor !== undefined) {
      if (cursors.has(cursor))
        throw new ResyncError('malformed_response', 'GET /partner/events: a cursor repeats');
      cursors.add(cursor);
    }
  } while (cursor !== undefined);

  return { snapshot, events, processed, duplicates };
};
