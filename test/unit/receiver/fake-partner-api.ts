import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CatalogSnapshot, ReceivedEnvelope } from '../../../functions/receiver';

/** The partner key the fake service accepts. */
export const PARTNER_KEY = `pk_${'a'.repeat(43)}`;

export interface FakeServiceRequest {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
}

export interface FakePartnerApi {
  /** `http://127.0.0.1:<port>` plus the prefix given. */
  readonly baseUrl: string;
  readonly requests: FakeServiceRequest[];
  /** Replaces the answer to the next requests (return undefined for the default behaviour). */
  override: (
    request: FakeServiceRequest,
  ) => { status: number; body: unknown; headers?: Record<string, string> } | undefined;
  close(): Promise<void>;
}

export const snapshotAt = (asOf: string): CatalogSnapshot => ({
  as_of: asOf,
  revision: 3,
  versions: { pricelist_version: 12, fx_version: 'fx-4', tax_rule_version: 2 },
  effective_from: '2026-11-20T00:00:00.000Z',
  catalog: { products: [{ sku_id: 'sku_1', title: 'One' }] },
});

/**
 * The service's two resync routes on loopback, port 0: `GET <prefix>/catalog/snapshot?as_of=` and
 * `GET <prefix>/partner/events?from&to&limit&cursor` serving `events` (filtered by the window, oldest first)
 * in pages of `limit`, each page starting `overlap` events before the previous page's end (so pages overlap,
 * as a cursor taken at a timestamp boundary can). Both need `Authorization: Bearer <PARTNER_KEY>`.
 */
export const startFakePartnerApi = async (
  events: readonly ReceivedEnvelope[],
  options: { prefix?: string; overlap?: number } = {},
): Promise<FakePartnerApi> => {
  const prefix = options.prefix ?? '';
  const overlap = options.overlap ?? 0;
  const api: FakePartnerApi = {
    baseUrl: '',
    requests: [],
    override: () => undefined,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const request: FakeServiceRequest = {
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
    };
    api.requests.push(request);
    const overridden = api.override(request);
    if (overridden) return send(res, overridden.status, overridden.body, overridden.headers);
    if (request.authorization !== `Bearer ${PARTNER_KEY}`) {
      return send(res, 401, {
        error: 'unauthorized',
        error_description: 'a valid partner key is required',
        trace_id: 'tr-401',
      });
    }
    if (url.pathname === `${prefix}/catalog/snapshot`) {
      return send(res, 200, snapshotAt(url.searchParams.get('as_of') ?? ''));
    }
    if (url.pathname === `${prefix}/partner/events`) {
      const from = url.searchParams.get('from') ?? '';
      const to = url.searchParams.get('to') ?? '';
      const limit = Number(url.searchParams.get('limit') ?? '100');
      const start = Number(url.searchParams.get('cursor') ?? '0');
      const inWindow = events.filter((event) => event.ts >= from && event.ts <= to);
      const items = inWindow.slice(start, start + limit);
      const next = start + limit;
      return send(res, 200, {
        items,
        ...(next < inWindow.length ? { cursor: String(Math.max(start + 1, next - overlap)) } : {}),
      });
    }
    return send(res, 404, { error: 'not_found', error_description: 'no such route', trace_id: 'tr-404' });
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(api, { baseUrl: `http://127.0.0.1:${port}${prefix}` });
};
