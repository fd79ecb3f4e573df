import type { APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_REQUEST_BODY_BYTES, type RouteDefinition } from '../../../functions/definitions';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import {
  createHttpApi,
  type HttpHandler,
  type Operation,
  type OperationRequest,
} from '../../../functions/handlers/middleware/http';
import { parseJsonBody } from '../../../functions/handlers/middleware/validation';
import { createLogger } from '../../../functions/shared/logger';
import { lambdaContext, type ProxyEventInput, proxyEvent } from '../support/lambda';
import { route } from '../support/routes';

const TRC_ID = /^trc_[0-9A-HJKMNP-TV-Z]{26}$/;

const routes: readonly RouteDefinition[] = [
  route('GET', '/things/{thing_id}', 'getThing'),
  route('POST', '/things', 'createThing'),
  route('GET', '/refused', 'refuse'),
  route('GET', '/broken', 'explode'),
  route('GET', '/custom', 'custom'),
  { ...route('GET', '/elsewhere', 'notMine'), function: 'deliver' },
];

const thingSchema = z.object({
  name: z.string().min(1),
  items: z.array(z.object({ quantity: z.number().int().positive() })),
});

const seen: OperationRequest[] = [];

const operations: Record<string, Operation> = {
  getThing: async (request) => {
    seen.push(request);
    return { statusCode: 200, body: { id: request.event.pathParameters?.thing_id } };
  },
  createThing: async ({ event }) => {
    const thing = parseJsonBody(thingSchema, event.body, event.isBase64Encoded);
    return { statusCode: 201, body: thing };
  },
  refuse: async () => {
    throw new HttpError('rate_limited', 'slow down', { retryAfterSeconds: 7, details: { error: 'spoofed' } });
  },
  explode: async () => {
    throw new Error('ECONNREFUSED db.internal:5432 password=hunter2');
  },
  custom: async () => ({
    statusCode: 202,
    body: { accepted: true },
    headers: { 'X-Trace-Id': 'operation-chosen-id', 'X-Extra': 'yes' },
  }),
  notMine: async () => ({ statusCode: 200, body: {} }),
};

const api: HttpHandler = createHttpApi({
  functionId: 'api',
  logger: createLogger({ logLevel: 'SILENT' }),
  operations,
  routes,
});

const call = (input: ProxyEventInput): Promise<APIGatewayProxyResult> =>
  api(proxyEvent(input), lambdaContext());

const bodyOf = (result: APIGatewayProxyResult): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(result.body);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('not an object');
  return parsed as Record<string, unknown>;
};

const traceHeaderOf = (result: APIGatewayProxyResult): unknown => result.headers?.['X-Trace-Id'];

describe('createHttpApi: success', () => {
  it('answers the operation result as JSON with Content-Type and a generated X-Trace-Id', async () => {
    const result = await call({
      resource: '/things/{thing_id}',
      path: '/things/t1',
      pathParameters: { thing_id: 't1' },
    });
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    expect(traceHeaderOf(result)).toMatch(TRC_ID);
    expect(bodyOf(result)).toEqual({ id: 't1' });
  });

  it('echoes a well-formed X-Trace-Id and hands it to the operation', async () => {
    const traceId = 'client-trace-0001';
    const result = await call({
      resource: '/things/{thing_id}',
      headers: { 'x-trace-id': traceId },
      pathParameters: { thing_id: 't2' },
    });
    expect(traceHeaderOf(result)).toBe(traceId);
    expect(seen.at(-1)?.traceId).toBe(traceId);
    expect(seen.at(-1)?.route.operation).toBe('getThing');
  });

  it('uses the Root of X-Amzn-Trace-Id when no X-Trace-Id is given', async () => {
    const result = await call({
      resource: '/things/{thing_id}',
      headers: {
        'X-Amzn-Trace-Id': 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      },
    });
    expect(traceHeaderOf(result)).toBe('1-5759e988-bd862e3fe1be46a994272793');
  });

  it.each([
    ['too short', 'abc'],
    ['forbidden characters', 'trace id with spaces'],
    ['header injection', 'abcdefgh\r\nSet-Cookie: x=1'],
    ['too long', 'a'.repeat(129)],
  ])('replaces a malformed X-Trace-Id (%s) with a fresh one', async (_label, given) => {
    const result = await call({ resource: '/things/{thing_id}', headers: { 'X-Trace-Id': given } });
    expect(traceHeaderOf(result)).toMatch(TRC_ID);
  });

  it('keeps operation headers but never lets them replace X-Trace-Id', async () => {
    const result = await call({ resource: '/custom', headers: { 'X-Trace-Id': 'client-trace-0002' } });
    expect(result.statusCode).toBe(202);
    expect(result.headers?.['X-Extra']).toBe('yes');
    expect(traceHeaderOf(result)).toBe('client-trace-0002');
  });
});

describe('createHttpApi: errors (C6)', () => {
  it('answers an HttpError with its status, the C6 body, the same trace id and Retry-After', async () => {
    const result = await call({ resource: '/refused', headers: { 'X-Trace-Id': 'client-trace-0003' } });
    expect(result.statusCode).toBe(429);
    expect(result.headers?.['Content-Type']).toBe('application/json');
    expect(result.headers?.['Retry-After']).toBe('7');
    expect(traceHeaderOf(result)).toBe('client-trace-0003');
    expect(bodyOf(result)).toEqual({
      error: 'rate_limited',
      error_description: 'slow down',
      trace_id: 'client-trace-0003',
    });
  });

  it('omits Retry-After when the error sets none', async () => {
    const result = await call({ method: 'POST', resource: '/things', body: '{' });
    expect(result.headers?.['Retry-After']).toBeUndefined();
  });

  it('answers an unexpected error with 500 internal_error and leaks no message or stack', async () => {
    const result = await call({ resource: '/broken' });
    expect(result.statusCode).toBe(500);
    const body = bodyOf(result);
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'trace_id']);
    expect(body.error).toBe('internal_error');
    expect(body.trace_id).toBe(traceHeaderOf(result));
    expect(result.body).not.toMatch(/ECONNREFUSED|hunter2|password|db\.internal|at .+\.ts/);
  });

  it('answers an unknown resource with 404 not_found', async () => {
    const result = await call({ resource: '/unknown' });
    expect(result.statusCode).toBe(404);
    expect(bodyOf(result)).toMatchObject({ error: 'not_found', trace_id: traceHeaderOf(result) });
  });

  it('answers 404 for a route of another function', async () => {
    const result = await call({ resource: '/elsewhere' });
    expect(result.statusCode).toBe(404);
  });

  it('answers a known resource with another method 404 (the gateway answers 405 before)', async () => {
    const result = await call({ method: 'DELETE', resource: '/things' });
    expect(result.statusCode).toBe(404);
  });
});

describe('createHttpApi: request bodies', () => {
  it('parses a valid JSON body', async () => {
    const body = { name: 'widget', items: [{ quantity: 2 }] };
    const result = await call({ method: 'POST', resource: '/things', body: JSON.stringify(body) });
    expect(result.statusCode).toBe(201);
    expect(bodyOf(result)).toEqual(body);
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const result = await call({ method: 'POST', resource: '/things', body: '{"name": ' });
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toMatchObject({
      error: 'invalid_request',
      error_description: 'the body is not valid JSON',
    });
  });

  it('answers a body above 256 KiB with 413 payload_too_large before any operation runs, as in AWS', async () => {
    const name = 'x'.repeat(MAX_REQUEST_BODY_BYTES);
    const atLimit = JSON.stringify({ name: 'x'.repeat(MAX_REQUEST_BODY_BYTES - 22), items: [] });
    expect(Buffer.byteLength(atLimit)).toBe(MAX_REQUEST_BODY_BYTES);
    expect((await call({ method: 'POST', resource: '/things', body: atLimit })).statusCode).toBe(201);
    const tooLarge = await call({
      method: 'POST',
      resource: '/things',
      body: JSON.stringify({ name, items: [] }),
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(bodyOf(tooLarge)).toMatchObject({ error: 'payload_too_large' });
    // Multi-byte characters count as the bytes the client sent; base64 bodies as their decoded bytes.
    const wide = JSON.stringify({ name: 'é'.repeat(MAX_REQUEST_BODY_BYTES / 2), items: [] });
    expect((await call({ method: 'POST', resource: '/things', body: wide })).statusCode).toBe(413);
    const encoded = Buffer.from(atLimit).toString('base64');
    const event = {
      ...proxyEvent({ method: 'POST', resource: '/things', body: encoded }),
      isBase64Encoded: true,
    };
    expect((await api(event, lambdaContext())).statusCode).toBe(201);
  });

  it('answers a null body with 400 invalid_request', async () => {
    const result = await call({ method: 'POST', resource: '/things', body: null });
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result).error).toBe('invalid_request');
  });

  it('answers a schema failure with 400 listing each problem with its $.path', async () => {
    const result = await call({
      method: 'POST',
      resource: '/things',
      body: JSON.stringify({ name: '', items: [{ quantity: 1 }, { quantity: -3 }] }),
    });
    expect(result.statusCode).toBe(400);
    const body = bodyOf(result);
    expect(body.error).toBe('invalid_request');
    const problems = z.array(z.object({ path: z.string(), message: z.string() })).parse(body.problems);
    expect(problems.map((problem) => problem.path).sort()).toEqual(['$.items[1].quantity', '$.name']);
    expect(body.error_description).toContain('$.items[1].quantity');
    expect(body.error_description).toContain('$.name');
  });
});

describe('parseJsonBody', () => {
  const schema = z.object({ n: z.number() });

  it('decodes a base64 body', () => {
    expect(parseJsonBody(schema, Buffer.from('{"n":1}').toString('base64'), true)).toEqual({ n: 1 });
  });

  it('refuses an empty body', () => {
    expect(() => parseJsonBody(schema, '')).toThrow(HttpError);
  });

  it('reports a missing top-level body field as $.field', () => {
    try {
      parseJsonBody(schema, '{}');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      expect(error instanceof HttpError ? error.details : undefined).toEqual({
        problems: [{ path: '$.n', message: expect.any(String) }],
      });
    }
  });
});

describe('createHttpApi: construction', () => {
  it('refuses a route table with an operation nobody implements', () => {
    expect(() =>
      createHttpApi({
        functionId: 'api',
        logger: createLogger({ logLevel: 'SILENT' }),
        operations: {},
        routes: [route('GET', '/x', 'missing')],
      }),
    ).toThrow(/missing/);
  });
});
