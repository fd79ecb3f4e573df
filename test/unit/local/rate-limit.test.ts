import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { FunctionPool } from '../../../functions/adapters/local/function-pool';
import {
  type GatewayOptions,
  startGateway,
  TokenBuckets,
} from '../../../functions/composition/local/gateway';
import { CATALOG_RATE_LIMIT, FUNCTIONS, type RouteDefinition } from '../../../functions/definitions';
import { createAuthorizerHandler } from '../../../functions/handlers/authorizer';
import type { Clock } from '../../../functions/ports/clock';
import { systemClock } from '../../../functions/shared/clock';
import { MemoryApiKeyStore } from '../../support/memory-api-keys';
import { closedAfterEach } from '../support/servers';

const API_KEY = 'key_local_0123456789abcdef';
const ADMIN_TOKEN = 'adm_local_0123456789abcdef';

/** The caller-key authorizer over a store holding one key of tenant `demo`. */
const authorizerFor = (key: string) => {
  const store = new MemoryApiKeyStore();
  store.seed(key, 'demo', ['prices:read', 'quotes:write']);
  return createAuthorizerHandler({ apiKeys: store, clock: systemClock });
};

/** A clock that only moves when told to. */
const manualClock = (start = Date.parse('2026-11-01T00:00:00.000Z')) => {
  let nowMs = start;
  const clock: Clock = { now: () => new Date(nowMs) };
  const advance = (ms: number): void => {
    nowMs += ms;
  };
  return { clock, advance };
};

const route = (
  method: RouteDefinition['method'],
  path: string,
  auth: RouteDefinition['auth'],
): RouteDefinition => ({
  method,
  path,
  auth,
  function: 'api',
  operation: `${method} ${path}`,
  summary: path,
});

const routes: readonly RouteDefinition[] = [
  route('GET', '/health', 'none'),
  route('GET', '/catalog/{sku}', 'api_key'),
  route('POST', '/quotes', 'api_key'),
  route('GET', '/admin/things', 'admin'),
];

const ok = new FunctionPool<APIGatewayProxyEvent, APIGatewayProxyResult>(FUNCTIONS.api, () => async () => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json' },
  body: '{"ok":true}',
}));

const servers = closedAfterEach();

const start = async (overrides: Partial<GatewayOptions> = {}): Promise<string> => {
  const { server, url } = await startGateway({
    host: '127.0.0.1',
    port: 0,
    authorizer: authorizerFor(API_KEY),
    admins: [{ name: 'admin', token: ADMIN_TOKEN, roles: ['author', 'endpoint_admin', 'auditor'] }],
    functions: { api: ok },
    routes,
    ...overrides,
  });
  servers.push(server);
  return url;
};

const statuses = async (count: number, send: () => Promise<Response>): Promise<number[]> => {
  const result: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const response = await send();
    await response.arrayBuffer();
    result.push(response.status);
  }
  return result;
};

describe('TokenBuckets', () => {
  it('allows a full burst, then refuses with Retry-After in whole seconds of at least 1', () => {
    const { clock } = manualClock();
    const buckets = new TokenBuckets({ requestsPerSecond: 100, burst: 200 }, clock);
    for (let i = 0; i < 200; i += 1) expect(buckets.take('k').allowed).toBe(true);
    expect(buckets.take('k')).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('refills at requestsPerSecond, never above burst', () => {
    const { clock, advance } = manualClock();
    const buckets = new TokenBuckets({ requestsPerSecond: 10, burst: 20 }, clock);
    for (let i = 0; i < 20; i += 1) buckets.take('k');
    expect(buckets.take('k').allowed).toBe(false);
    advance(500); // 5 tokens back
    for (let i = 0; i < 5; i += 1) expect(buckets.take('k').allowed).toBe(true);
    expect(buckets.take('k').allowed).toBe(false);
    advance(60_000); // long idle: back to the burst, not 600 tokens
    let allowed = 0;
    while (buckets.take('k').allowed) allowed += 1;
    expect(allowed).toBe(20);
  });

  it('answers the seconds until a token is back when the rate is below one per second', () => {
    const { clock, advance } = manualClock();
    const buckets = new TokenBuckets({ requestsPerSecond: 0.25, burst: 1 }, clock);
    expect(buckets.take('k').allowed).toBe(true);
    expect(buckets.take('k')).toEqual({ allowed: false, retryAfterSeconds: 4 });
    advance(2_500);
    expect(buckets.take('k')).toEqual({ allowed: false, retryAfterSeconds: 2 });
    advance(1_500);
    expect(buckets.take('k').allowed).toBe(true);
  });

  it('keeps a separate bucket per key', () => {
    const { clock } = manualClock();
    const buckets = new TokenBuckets({ requestsPerSecond: 1, burst: 2 }, clock);
    expect([buckets.take('a'), buckets.take('a'), buckets.take('a')].map((r) => r.allowed)).toEqual([
      true,
      true,
      false,
    ]);
    expect([buckets.take('b'), buckets.take('b'), buckets.take('b')].map((r) => r.allowed)).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('refuses a limit that could never admit a request', () => {
    expect(() => new TokenBuckets({ requestsPerSecond: 0, burst: 10 })).toThrow(/requestsPerSecond/);
    expect(() => new TokenBuckets({ requestsPerSecond: 1, burst: 0 })).toThrow(/burst/);
  });

  it('uses the C22 limit by default: 100 req/s, burst 200', () => {
    expect(CATALOG_RATE_LIMIT).toEqual({ requestsPerSecond: 100, burst: 200 });
  });
});

describe('startGateway: rate limit on api_key routes (C22)', () => {
  const withKey = { 'x-api-key': API_KEY };

  it('allows the burst, then answers 429 rate_limited in the C6 shape with Retry-After', async () => {
    const { clock } = manualClock();
    const url = await start({ rateLimit: { requestsPerSecond: 1, burst: 3 }, clock });
    expect(await statuses(3, () => fetch(`${url}/catalog/sku-1`, { headers: withKey }))).toEqual([
      200, 200, 200,
    ]);
    const refused = await fetch(`${url}/catalog/sku-1`, { headers: withKey });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('content-type')).toBe('application/json');
    const body = (await refused.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'trace_id']);
    expect(body.error).toBe('rate_limited');
    expect(body.trace_id).toBe(refused.headers.get('x-trace-id'));
  });

  it('shares one bucket across the api_key routes of a key and admits again after the refill', async () => {
    const { clock, advance } = manualClock();
    const url = await start({ rateLimit: { requestsPerSecond: 2, burst: 2 }, clock });
    const get = () => fetch(`${url}/catalog/sku-1`, { headers: withKey });
    const post = () => fetch(`${url}/quotes`, { method: 'POST', headers: withKey, body: '{"lines":[]}' });
    expect(await statuses(1, get)).toEqual([200]);
    expect(await statuses(1, post)).toEqual([200]);
    expect(await statuses(1, post)).toEqual([429]);
    advance(500); // one token back at 2 req/s
    expect(await statuses(2, get)).toEqual([200, 429]);
  });

  it('counts only requests with a valid key: refused keys take no token', async () => {
    const { clock } = manualClock();
    const url = await start({ rateLimit: { requestsPerSecond: 1, burst: 1 }, clock });
    expect(
      await statuses(3, () => fetch(`${url}/catalog/sku-1`, { headers: { 'x-api-key': 'wrong' } })),
    ).toEqual([401, 401, 401]);
    expect(await statuses(2, () => fetch(`${url}/catalog/sku-1`, { headers: withKey }))).toEqual([200, 429]);
  });

  it('leaves admin and unauthenticated routes unlimited', async () => {
    const { clock } = manualClock();
    const url = await start({ rateLimit: { requestsPerSecond: 1, burst: 1 }, clock });
    expect(await statuses(1, () => fetch(`${url}/catalog/sku-1`, { headers: withKey }))).toEqual([200]);
    expect(await statuses(1, () => fetch(`${url}/catalog/sku-1`, { headers: withKey }))).toEqual([429]);
    expect(await statuses(5, () => fetch(`${url}/health`))).toEqual([200, 200, 200, 200, 200]);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    expect(await statuses(5, () => fetch(`${url}/admin/things`, { headers: admin }))).toEqual([
      200, 200, 200, 200, 200,
    ]);
  });

  it('applies the C22 default limit when none is injected', async () => {
    const { clock } = manualClock();
    const url = await start({ clock });
    const results = await statuses(CATALOG_RATE_LIMIT.burst + 1, () =>
      fetch(`${url}/catalog/sku-1`, { headers: withKey }),
    );
    expect(results.filter((status) => status === 200)).toHaveLength(CATALOG_RATE_LIMIT.burst);
    expect(results.at(-1)).toBe(429);
  });
});
