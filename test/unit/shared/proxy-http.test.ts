import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BodyTooLargeError,
  listenOn,
  localProxyEvent,
  queryParametersOf,
  readBoundedBody,
  writeProxyResult,
} from '../../../functions/shared/proxy-http';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves `handle` on a free port and sends one request; the answer's status, headers and body. */
const exchange = async (
  handle: Parameters<typeof createServer>[1],
  send: { method?: string; path?: string; body?: Buffer; headers?: Record<string, string> } = {},
) => {
  server = createServer(handle);
  await listenOn(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  const outgoing = httpRequest({
    host: '127.0.0.1',
    port,
    method: send.method ?? 'POST',
    path: send.path ?? '/',
    headers: send.headers ?? {},
  });
  outgoing.end(send.body);
  const [response] = (await once(outgoing, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
};

describe('queryParametersOf', () => {
  it('keeps the last value of each name and all values in order, null without a query', () => {
    expect(queryParametersOf(new URL('http://localhost/a'))).toEqual({ single: null, multi: null });
    expect(queryParametersOf(new URL('http://localhost/a?x=1&y=2&x=3'))).toEqual({
      single: { x: '3', y: '2' },
      multi: { x: ['1', '3'], y: ['2'] },
    });
  });

  it('makes __proto__ an own property, never the prototype', () => {
    const { single } = queryParametersOf(new URL('http://localhost/?__proto__=x'));
    expect(Object.getPrototypeOf(single)).toBe(Object.prototype);
    expect(Object.hasOwn(single ?? {}, '__proto__')).toBe(true);
  });
});

describe('readBoundedBody and writeProxyResult', () => {
  it('reads a body within the limit and writes a base64 result with its headers', async () => {
    const answer = await exchange(
      (request, response) => {
        void readBoundedBody(request, 16).then((body) =>
          writeProxyResult(response, {
            statusCode: 201,
            headers: { 'X-One': 1 },
            multiValueHeaders: { 'X-Many': ['a', 'b'] },
            body: Buffer.from(`got ${body.toString('utf8')}`).toString('base64'),
            isBase64Encoded: true,
          }),
        );
      },
      { body: Buffer.from('hello') },
    );
    expect(answer.status).toBe(201);
    expect(answer.headers['x-one']).toBe('1');
    expect(answer.headers['x-many']).toBe('a, b');
    expect(answer.headers['content-length']).toBe('9');
    expect(answer.body.toString('utf8')).toBe('got hello');
  });

  it('rejects a body over the limit with BodyTooLargeError', async () => {
    let failure: unknown;
    const answer = await exchange(
      (request, response) => {
        readBoundedBody(request, 4).catch((error: unknown) => {
          failure = error;
          response.setHeader('Connection', 'close');
          writeProxyResult(response, { statusCode: 413, body: 'too large' });
        });
      },
      { body: Buffer.alloc(64, 1) },
    );
    expect(answer.status).toBe(413);
    expect(failure).toBeInstanceOf(BodyTooLargeError);
  });
});

describe('localProxyEvent', () => {
  it('builds a local REST proxy event from the request and the given parts', async () => {
    let event: ReturnType<typeof localProxyEvent> | undefined;
    await exchange(
      (request, response) => {
        event = localProxyEvent(request, {
          url: new URL(request.url ?? '/', 'http://localhost'),
          resource: '/items/{id}',
          pathParameters: { id: '7' },
          headers: { 'user-agent': 'probe' },
          multiValueHeaders: { 'user-agent': ['probe'] },
          body: null,
          isBase64Encoded: false,
          apiKey: 'key_1',
        });
        writeProxyResult(response, { statusCode: 204, body: '' });
      },
      { method: 'get', path: '/items/7?a=1' },
    );
    expect(event).toMatchObject({
      resource: '/items/{id}',
      path: '/items/7',
      httpMethod: 'GET',
      queryStringParameters: { a: '1' },
      pathParameters: { id: '7' },
      body: null,
      requestContext: {
        stage: 'local',
        resourcePath: '/items/{id}',
        protocol: 'HTTP/1.1',
        identity: { apiKey: 'key_1', userAgent: 'probe', sourceIp: '127.0.0.1' },
      },
    });
  });
});
