import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionPool } from '../../../functions/adapters/local/function-pool';
import {
  type GatewayOptions,
  MAX_BODY_BYTES,
  startGateway,
} from '../../../functions/composition/local/gateway';
import { FUNCTIONS, type RouteDefinition } from '../../../functions/definitions';
import { createAuthorizerHandler } from '../../../functions/handlers/authorizer';
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

const route = (
  method: RouteDefinition['method'],
  path: string,
  auth: RouteDefinition['auth'],
  fn: RouteDefinition['function'] = 'api',
): RouteDefinition => ({ method, path, auth, function: fn, operation: `${method} ${path}`, summary: path });

const routes: readonly RouteDefinition[] = [
  route('GET', '/health', 'none'),
  route('POST', '/echo/{item_id}', 'none'),
  route('GET', '/catalog/{sku}', 'api_key'),
  route('GET', '/admin/things', 'admin'),
  route('GET', '/binary', 'none', 'deliver'),
  route('GET', '/crash', 'none', 'fanout'),
];

type Pool = FunctionPool<APIGatewayProxyEvent, APIGatewayProxyResult>;

const poolOf = (
  fn: keyof typeof FUNCTIONS,
  handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>,
): Pool => new FunctionPool(FUNCTIONS[fn], () => handler);

const echo = poolOf('api', async (event) => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(event),
}));

const BINARY = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7f]);
const binary = poolOf('deliver', async () => ({
  statusCode: 203,
  headers: { 'Content-Type': 'application/octet-stream', 'X-Custom': 'kept' },
  multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] },
  body: BINARY.toString('base64'),
  isBase64Encoded: true,
}));

const crash = poolOf('fanout', async () => {
  throw new Error('handler exploded: password=hunter2');
});

const servers = closedAfterEach();
const errors: unknown[] = [];

afterEach(async () => {
  errors.length = 0;
});

const start = async (overrides: Partial<GatewayOptions> = {}): Promise<string> => {
  const { server, url } = await startGateway({
    host: '127.0.0.1',
    port: 0,
    authorizer: authorizerFor(API_KEY),
    admins: [{ name: 'admin', token: ADMIN_TOKEN, roles: ['author', 'endpoint_admin', 'auditor'] }],
    functions: { api: echo, deliver: binary, fanout: crash },
    routes,
    onError: (error) => errors.push(error),
    ...overrides,
  });
  servers.push(server);
  return url;
};

const jsonOf = async (response: Response): Promise<Record<string, unknown>> => {
  const parsed: unknown = await response.json();
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('not an object');
  return parsed as Record<string, unknown>;
};

const eventOf = async (response: Response): Promise<APIGatewayProxyEvent> =>
  (await response.json()) as APIGatewayProxyEvent;

/** The C6 error shape, with the body's trace id equal to the X-Trace-Id header. */
const expectC6 = async (
  response: Response,
  status: number,
  code: string,
): Promise<Record<string, unknown>> => {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = await jsonOf(response);
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'trace_id']);
  expect(body.error).toBe(code);
  expect(body.trace_id).toBe(response.headers.get('x-trace-id'));
  expect(body.trace_id).toMatch(/^trc_/);
  return body;
};

describe('startGateway: proxy events', () => {
  it('passes path parameters, query, headers and body in the event; resource is the template', async () => {
    const url = await start();
    const response = await fetch(`${url}/echo/sku%201?currency=EUR&tag=a&tag=b`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Trace-Id': 'client-trace-1' },
      body: '{"hello":"world"}',
    });
    expect(response.status).toBe(200);
    const event = await eventOf(response);
    expect(event.resource).toBe('/echo/{item_id}');
    expect(event.path).toBe('/echo/sku%201');
    expect(event.httpMethod).toBe('POST');
    expect(event.pathParameters).toEqual({ item_id: 'sku 1' });
    expect(event.queryStringParameters).toEqual({ currency: 'EUR', tag: 'b' });
    expect(event.multiValueQueryStringParameters).toEqual({ currency: ['EUR'], tag: ['a', 'b'] });
    expect(event.headers['x-trace-id']).toBe('client-trace-1');
    expect(event.body).toBe('{"hello":"world"}');
    expect(event.isBase64Encoded).toBe(false);
    expect(event.requestContext.resourcePath).toBe('/echo/{item_id}');
  });

  it('sends a request without query or body as nulls', async () => {
    const url = await start();
    const event = await eventOf(await fetch(`${url}/health`));
    expect(event.queryStringParameters).toBeNull();
    expect(event.pathParameters).toBeNull();
    expect(event.body).toBeNull();
  });

  it('base64-encodes a binary request body', async () => {
    const url = await start();
    const response = await fetch(`${url}/echo/x`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: BINARY,
    });
    const event = await eventOf(response);
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64')).toEqual(BINARY);
  });

  it("passes the handler's status, headers and base64 body through", async () => {
    const url = await start();
    const response = await fetch(`${url}/binary`);
    expect(response.status).toBe(203);
    expect(response.headers.get('x-custom')).toBe('kept');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(BINARY);
  });

  it('answers 502 bad_gateway in C6 shape when the handler throws, as API Gateway does, without its message', async () => {
    const url = await start();
    const response = await fetch(`${url}/crash`);
    const body = await expectC6(response, 502, 'bad_gateway');
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(errors).toHaveLength(1);
  });
});

describe('startGateway: routing', () => {
  it('answers an unknown path with 404 not_found', async () => {
    const url = await start();
    await expectC6(await fetch(`${url}/nowhere`), 404, 'not_found');
  });

  it('answers a known path with another method with 405 method_not_allowed', async () => {
    const url = await start();
    const response = await fetch(`${url}/health`, { method: 'DELETE' });
    expect(response.headers.get('allow')).toBe('GET');
    await expectC6(response, 405, 'method_not_allowed');
  });

  it('answers 404 when no function serves the route', async () => {
    const url = await start({ functions: { api: echo } });
    await expectC6(await fetch(`${url}/binary`), 404, 'not_found');
  });
});

describe('startGateway: api_key routes', () => {
  it('refuses a request without x-api-key with 401', async () => {
    const url = await start();
    await expectC6(await fetch(`${url}/catalog/sku-1`), 401, 'unauthorized');
  });

  it('refuses a wrong x-api-key with 401', async () => {
    const url = await start();
    const response = await fetch(`${url}/catalog/sku-1`, { headers: { 'x-api-key': `${API_KEY}x` } });
    await expectC6(response, 401, 'unauthorized');
  });

  it('refuses the admin token given as x-api-key with 401', async () => {
    const url = await start();
    const response = await fetch(`${url}/catalog/sku-1`, { headers: { 'x-api-key': ADMIN_TOKEN } });
    await expectC6(response, 401, 'unauthorized');
  });

  it('passes a request with the API key, which the event carries in its identity', async () => {
    const url = await start();
    const response = await fetch(`${url}/catalog/sku-1`, { headers: { 'x-api-key': API_KEY } });
    expect(response.status).toBe(200);
    const event = await eventOf(response);
    expect(event.pathParameters).toEqual({ sku: 'sku-1' });
    expect(event.requestContext.identity.apiKey).toBe(API_KEY);
  });
});

describe('startGateway: admin routes', () => {
  it('passes a request with the admin bearer token', async () => {
    const url = await start();
    const response = await fetch(`${url}/admin/things`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
  });

  it('refuses a catalog API key alone with 403 forbidden', async () => {
    const url = await start();
    const response = await fetch(`${url}/admin/things`, { headers: { 'x-api-key': API_KEY } });
    await expectC6(response, 403, 'forbidden');
  });

  it('refuses a request without credentials with 401 and WWW-Authenticate', async () => {
    const url = await start();
    const response = await fetch(`${url}/admin/things`);
    await expectC6(response, 401, 'unauthorized');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('refuses a wrong bearer token with 401', async () => {
    const url = await start();
    const response = await fetch(`${url}/admin/things`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    await expectC6(response, 401, 'unauthorized');
  });

  it('refuses the admin token sent as x-api-key with 401', async () => {
    const url = await start();
    const response = await fetch(`${url}/admin/things`, { headers: { 'x-api-key': ADMIN_TOKEN } });
    await expectC6(response, 401, 'unauthorized');
  });
});

describe('startGateway: body limit (C22)', () => {
  it('accepts a body of exactly the limit', async () => {
    const url = await start();
    const response = await fetch(`${url}/echo/x`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'a'.repeat(MAX_BODY_BYTES),
    });
    expect(response.status).toBe(200);
    expect((await eventOf(response)).body).toHaveLength(MAX_BODY_BYTES);
  });

  it('answers a body over 256 KiB with 413 payload_too_large', async () => {
    const url = await start();
    const response = await fetch(`${url}/echo/x`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'a'.repeat(256 * 1024 + 1),
    });
    await expectC6(response, 413, 'payload_too_large');
  });
});
