import { afterEach, describe, expect, it } from 'vitest';
import {
  type CatalogSnapshot,
  type ProcessOutcome,
  type ReceivedEnvelope,
  ResyncError,
  type ResyncOptions,
  resync,
} from '../../../functions/receiver';
import { type FakePartnerApi, PARTNER_KEY, snapshotAt, startFakePartnerApi } from './fake-partner-api';

const FROM = '2026-11-20T00:00:00.000Z';
const TO = '2026-11-21T00:00:00.000Z';

const eventAt = (index: number): ReceivedEnvelope => ({
  event_id: `evt_${String(index).padStart(26, '0')}`,
  type: 'catalog.PriceListUpdated',
  version: '2026-11-01',
  ts: new Date(Date.parse(FROM) + index * 60_000).toISOString(),
  attempt: 1,
  data: { version: index },
});

const EVENTS = Array.from({ length: 25 }, (_, index) => eventAt(index));

let api: FakePartnerApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** An in-memory idempotent processor: what a receiver's store does, without the store. */
const memoryProcessor = (alreadyProcessed: readonly string[] = []) => {
  const applied = new Map<string, number>(alreadyProcessed.map((id) => [id, 1]));
  const order: string[] = [];
  const process = async (envelope: ReceivedEnvelope): Promise<ProcessOutcome> => {
    order.push(envelope.event_id);
    if (applied.has(envelope.event_id)) return { kind: 'duplicate', status: { seen: true } };
    applied.set(envelope.event_id, 1);
    return { kind: 'processed', status: { seen: true } };
  };
  return { applied, order, process };
};

const optionsOf = (overrides: Partial<ResyncOptions> & Pick<ResyncOptions, 'process'>): ResyncOptions => ({
  baseUrl: api?.baseUrl ?? 'http://127.0.0.1:1',
  partnerKey: PARTNER_KEY,
  from: FROM,
  to: TO,
  ...overrides,
});

describe('resync', () => {
  it('takes the snapshot as of `from` first, then every event of the window once, oldest first', async () => {
    api = await startFakePartnerApi(EVENTS, { prefix: '/prod', overlap: 2 });
    const processor = memoryProcessor(EVENTS.slice(0, 4).map((event) => event.event_id));
    const seen: string[] = [];
    let snapshot: CatalogSnapshot | undefined;
    const result = await resync(
      optionsOf({
        pageSize: 10,
        onSnapshot: async (received) => {
          snapshot = received;
          seen.push('snapshot');
        },
        process: async (envelope) => {
          seen.push(envelope.event_id);
          return processor.process(envelope);
        },
      }),
    );
    expect(seen[0]).toBe('snapshot');
    expect(snapshot).toEqual(snapshotAt(FROM));
    expect(result.snapshot).toEqual(snapshotAt(FROM));
    // Pages of 10 that overlap by 2: 25 events served as 10 + 10 + 9 = 29, the 4 repeats not passed on.
    expect(result).toMatchObject({ events: 29, processed: 21, duplicates: 8 });
    expect(processor.order).toEqual(EVENTS.map((event) => event.event_id));
    expect([...processor.applied.keys()].sort()).toEqual(EVENTS.map((event) => event.event_id).sort());

    const snapshotRequest = api.requests[0];
    expect(snapshotRequest?.path).toBe('/prod/catalog/snapshot');
    expect(snapshotRequest?.query.get('as_of')).toBe(FROM);
    const pages = api.requests.slice(1);
    expect(pages.map((request) => request.query.get('cursor'))).toEqual([null, '8', '16']);
    for (const request of api.requests) expect(request.authorization).toBe(`Bearer ${PARTNER_KEY}`);
    for (const request of pages) {
      expect(request.path).toBe('/prod/partner/events');
      expect(Object.fromEntries(request.query)).toMatchObject({ from: FROM, to: TO, limit: '10' });
    }
  });

  it('counts a `process` that returns nothing as processed', async () => {
    api = await startFakePartnerApi(EVENTS.slice(0, 3));
    const result = await resync(optionsOf({ process: async () => undefined }));
    expect(result).toMatchObject({ events: 3, processed: 3, duplicates: 0 });
  });

  it('an empty window: the snapshot only', async () => {
    api = await startFakePartnerApi([]);
    const result = await resync(optionsOf({ process: async () => undefined }));
    expect(result).toEqual({ snapshot: snapshotAt(FROM), events: 0, processed: 0, duplicates: 0 });
  });

  it('uses the fetch it is given', async () => {
    const calls: string[] = [];
    const fakeFetch: typeof fetch = async (input) => {
      const url = new URL(String(input));
      calls.push(url.pathname);
      const body = url.pathname.endsWith('/catalog/snapshot') ? snapshotAt(FROM) : { items: [eventAt(1)] };
      return new Response(JSON.stringify(body), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    };
    const result = await resync({
      baseUrl: 'https://pricing.example.com/',
      partnerKey: PARTNER_KEY,
      from: FROM,
      to: TO,
      fetch: fakeFetch,
      process: async () => undefined,
    });
    expect(calls).toEqual(['/catalog/snapshot', '/partner/events']);
    expect(result.events).toBe(1);
  });

  describe('errors surface as ResyncError', () => {
    it('401: unauthorized, with the trace id, never the key', async () => {
      api = await startFakePartnerApi(EVENTS);
      const failure = await resync(
        optionsOf({ partnerKey: 'pk_wrong', process: async () => undefined }),
      ).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ResyncError);
      expect(failure).toMatchObject({ code: 'unauthorized', details: { status: 401, traceId: 'tr-401' } });
      expect((failure as ResyncError).retryable).toBe(false);
      expect(String((failure as Error).message)).not.toContain('pk_wrong');
    });

    it('5xx: server_error, retryable, with Retry-After', async () => {
      api = await startFakePartnerApi(EVENTS);
      api.override = (request) =>
        request.path.endsWith('/partner/events')
          ? {
              status: 503,
              body: { error: 'unavailable', trace_id: 'tr-503' },
              headers: { 'retry-after': '7' },
            }
          : undefined;
      const processor = memoryProcessor();
      const failure = await resync(optionsOf({ process: processor.process })).catch(
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({
        name: 'ResyncError',
        code: 'server_error',
        details: { status: 503, retryAfterSeconds: 7, traceId: 'tr-503' },
      });
      expect((failure as ResyncError).retryable).toBe(true);
      expect(processor.order).toEqual([]);
    });

    it('a failure on a later page stops after the events already applied; a rerun finishes without repeats', async () => {
      api = await startFakePartnerApi(EVENTS);
      api.override = (request) =>
        request.query.get('cursor') === '10' ? { status: 500, body: 'oops' } : undefined;
      const processor = memoryProcessor();
      await expect(resync(optionsOf({ pageSize: 10, process: processor.process }))).rejects.toMatchObject({
        code: 'server_error',
        details: { status: 500 },
      });
      expect(processor.applied.size).toBe(10);
      api.override = () => undefined;
      const rerun = await resync(optionsOf({ pageSize: 10, process: processor.process }));
      expect(rerun).toMatchObject({ events: 25, processed: 15, duplicates: 10 });
      expect(processor.applied.size).toBe(25);
    });

    it('429 is retryable, another 4xx is not', async () => {
      api = await startFakePartnerApi(EVENTS);
      api.override = () => ({ status: 429, body: { error: 'rate_limited' } });
      await expect(resync(optionsOf({ process: async () => undefined }))).rejects.toMatchObject({
        code: 'server_error',
      });
      api.override = () => ({ status: 400, body: { error: 'invalid_request' } });
      await expect(resync(optionsOf({ process: async () => undefined }))).rejects.toMatchObject({
        code: 'http_error',
        message: expect.stringContaining('invalid_request'),
      });
    });

    it('unreachable: network_error', async () => {
      api = await startFakePartnerApi(EVENTS);
      const baseUrl = api.baseUrl;
      await api.close();
      api = undefined;
      await expect(resync(optionsOf({ baseUrl, process: async () => undefined }))).rejects.toMatchObject({
        code: 'network_error',
      });
    });

    it.each([
      [
        'a snapshot without versions',
        (path: string) => (path.endsWith('snapshot') ? { as_of: FROM } : undefined),
      ],
      ['a body that is not JSON', (path: string) => (path.endsWith('snapshot') ? '<html>' : undefined)],
      ['a page without items', (path: string) => (path.endsWith('events') ? { cursor: '1' } : undefined)],
      [
        'an item that is not an envelope',
        (path: string) => (path.endsWith('events') ? { items: [{ event_id: 'evt_1' }] } : undefined),
      ],
      [
        'a cursor that repeats',
        (path: string) => (path.endsWith('events') ? { items: [], cursor: 'same' } : undefined),
      ],
    ])('malformed_response: %s', async (_case, bodyFor) => {
      api = await startFakePartnerApi(EVENTS);
      api.override = (request) => {
        const body = bodyFor(request.path);
        return body === undefined ? undefined : { status: 200, body };
      };
      await expect(resync(optionsOf({ process: async () => undefined }))).rejects.toMatchObject({
        code: 'malformed_response',
      });
    });
  });

  it('refuses bad options before any request', async () => {
    const process = async () => undefined;
    await expect(resync(optionsOf({ from: TO, to: FROM, process }))).rejects.toThrow(RangeError);
    await expect(resync(optionsOf({ from: '2026-11-20', process }))).rejects.toThrow(RangeError);
    await expect(resync(optionsOf({ pageSize: 0, process }))).rejects.toThrow(RangeError);
    await expect(resync(optionsOf({ pageSize: 201, process }))).rejects.toThrow(RangeError);
    await expect(resync(optionsOf({ partnerKey: '', process }))).rejects.toThrow(RangeError);
    await expect(resync(optionsOf({ baseUrl: 'http://pricing.example.com', process }))).rejects.toThrow(
      /https/,
    );
  });

  it('stops on the error of `process` or `onSnapshot`', async () => {
    api = await startFakePartnerApi(EVENTS);
    const failure = new Error('handler broke');
    await expect(
      resync(
        optionsOf({
          process: async () => {
            throw failure;
          },
        }),
      ),
    ).rejects.toBe(failure);
    let processed = 0;
    await expect(
      resync(
        optionsOf({
          onSnapshot: async () => {
            throw failure;
          },
          process: async () => {
            processed += 1;
          },
        }),
      ),
    ).rejects.toBe(failure);
    expect(processed).toBe(0);
  });
});
