import { request as httpRequest } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type LocalServer,
  matchResource,
  rawTargetOf,
  serveProxyHandler,
} from '../../../functions/receiver/reference/local-server';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Serves a handler that records the events it gets and answers 200 `{}`. */
const recording = async () => {
  const events: APIGatewayProxyEvent[] = [];
  server = await serveProxyHandler({
    port: 0,
    handler: async (event) => {
      events.push(event);
      return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{}' };
    },
  });
  return { events, url: server.url };
};

/** A raw HTTP request (fetch would merge repeated headers). */
const send = (
  url: string,
  options: { method: string; path: string; headers: [string, string][]; body?: Buffer },
) =>
  new Promise<number>((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      { host: target.hostname, port: target.port, method: options.method, path: options.path },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    for (const [name, value] of options.headers) {
      const existing = req.getHeader(name);
      req.setHeader(name, existing === undefined ? value : [...[existing].flat().map(String), value]);
    }
    req.on('error', reject);
    req.end(options.body);
  });

describe('matchResource', () => {
  it('matches the three receiver templates with their path parameters', () => {
    expect(matchResource('/webhooks/v1/catalog')).toEqual({
      resource: '/webhooks/v1/{topic}',
      pathParameters: { topic: 'catalog' },
    });
    expect(matchResource('/webhooks/status/evt_1')).toEqual({
      resource: '/webhooks/status/{event_id}',
      pathParameters: { event_id: 'evt_1' },
    });
    expect(matchResource('/webhooks/ack')).toEqual({ resource: '/webhooks/ack', pathParameters: null });
    expect(matchResource('/other')).toEqual({ resource: '/other', pathParameters: null });
  });
});

describe('serveProxyHandler', () => {
  it('passes the raw body bytes base64-encoded, exactly as received', async () => {
    const { events, url } = await recording();
    const body = Buffer.concat([Buffer.from('{"a":"Café 🎉"}\r\n'), Buffer.from([0xff, 0x00, 0xfe])]);
    const response = await fetch(`${url}/webhooks/v1/catalog`, { method: 'POST', body });
    expect(response.status).toBe(200);
    const [event] = events;
    expect(event?.isBase64Encoded).toBe(true);
    expect(Buffer.from(event?.body ?? '', 'base64').equals(body)).toBe(true);
  });

  it('builds the path, resource, path parameters, query and raw target of the request', async () => {
    const { events, url } = await recording();
    await fetch(`${url}/webhooks/v1/payout?tenant=tn_01&region=eu%2Dwest&flag`, {
      method: 'POST',
      body: '{}',
    });
    const [event] = events;
    expect(event).toMatchObject({
      httpMethod: 'POST',
      path: '/webhooks/v1/payout',
      resource: '/webhooks/v1/{topic}',
      pathParameters: { topic: 'payout' },
      queryStringParameters: { tenant: 'tn_01', region: 'eu-west', flag: '' },
    });
    expect(rawTargetOf(event as APIGatewayProxyEvent)).toBe(
      '/webhooks/v1/payout?tenant=tn_01&region=eu%2Dwest&flag',
    );
  });

  it('keeps every value of a repeated header', async () => {
    const { events, url } = await recording();
    await send(url, {
      method: 'POST',
      path: '/webhooks/v1/catalog',
      headers: [
        ['X-Signature', 'v1=first'],
        ['X-Signature', 'v1=second'],
        ['X-Event-Id', 'evt_1'],
      ],
      body: Buffer.from('{}'),
    });
    const [event] = events;
    expect(event?.multiValueHeaders['x-signature']).toEqual(['v1=first', 'v1=second']);
    expect(event?.headers['x-event-id']).toBe('evt_1');
  });

  it('answers 413 in the C6 shape for a body over the limit, without calling the handler', async () => {
    const { events, url } = await recording();
    const response = await fetch(`${url}/webhooks/v1/catalog`, {
      method: 'POST',
      body: Buffer.alloc(256 * 1024 + 1, 0x61),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: 'payload_too_large',
      error_description: 'the body exceeds 262144 bytes',
      trace_id: response.headers.get('x-trace-id'),
    });
    expect(events).toHaveLength(0);
  });

  it('answers 500 with Retry-After in the C6 shape when the handler throws', async () => {
    const errors: unknown[] = [];
    server = await serveProxyHandler({
      port: 0,
      handler: async () => {
        throw new Error('boom');
      },
      onError: (error) => errors.push(error),
    });
    const response = await fetch(`${server.url}/webhooks/ack`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ error: 'internal_error' });
    expect(errors).toHaveLength(1);
  });

  it('listens on loopback by default and reports its URL', async () => {
    const { url } = await recording();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
