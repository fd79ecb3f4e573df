import { generateKeyPairSync, sign } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createGuardedHttpClient,
  EgressPolicyError,
  type GuardedHttpClientOptions,
  RESPONSE_EXCERPT_MAX_CHARS,
  type Resolver,
} from '../../functions/adapters/http/guarded-http-client';
import type { WebhookRequest, WebhookResponse } from '../../functions/ports/webhook-http';
import {
  type CanaryPorts,
  type HostileTarget,
  hostileTargets,
  httpsVariant,
  stubResolver,
} from '../support/ssrf-targets';

const LOOPBACK_POLICY = { allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] } as const;
const OPEN_HTTP_POLICY = { allowHttp: true, allowedCidrs: [] } as const;
const HTTPS_ONLY_POLICY = { allowHttp: false, allowedCidrs: [] } as const;
/** Slack over `timeoutMs` a timed-out attempt may take to come back (timers, socket teardown, CI noise). */
const TIMEOUT_SLACK_MS = 400;

const noDns: Resolver = async (hostname) => {
  throw Object.assign(new Error(`no DNS in this test: ${hostname}`), { code: 'ENOTFOUND' });
};

const post = (
  url: string,
  overrides: Partial<WebhookRequest> = {},
  options: Partial<GuardedHttpClientOptions> = {},
): Promise<WebhookResponse> =>
  createGuardedHttpClient({ policy: LOOPBACK_POLICY, resolve: noDns, ...options }).post({
    url,
    headers: {},
    body: new TextEncoder().encode('{"event_id":"evt_01"}'),
    timeoutMs: 2_000,
    ...overrides,
  });

// ---------------------------------------------------------------------------------------------------------
// Servers: everything listens on port 0 and is closed after each test.

const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Tracks a server's sockets so closing it also ends kept or stalled connections. */
const track = (server: Server): { connections: () => number; closed: () => number } => {
  let connections = 0;
  let closed = 0;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => {
      closed += 1;
      sockets.delete(socket);
    });
  });
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { connections: () => connections, closed: () => closed };
};

const listen = async (server: Server, host: string): Promise<number> => {
  server.listen(0, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};

type Handler = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;

interface Receiver {
  readonly port: number;
  readonly url: (path?: string) => string;
  readonly requests: {
    readonly method: string;
    readonly url: string;
    readonly headers: IncomingMessage['headers'];
    readonly rawHeaders: string[];
    readonly body: Buffer;
  }[];
  readonly connections: () => number;
  readonly closed: () => number;
}

const withBody =
  (handler: Handler, requests: Receiver['requests']) =>
  (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body,
      });
      handler(request, response, body);
    });
  };

const startReceiver = async (handler: Handler, host = '127.0.0.1'): Promise<Receiver> => {
  const requests: Receiver['requests'] = [];
  const server = createHttpServer(withBody(handler, requests));
  const counts = track(server);
  const port = await listen(server, host);
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return { port, url: (path = '/webhooks/v1/catalog') => `http://${authority}${path}`, requests, ...counts };
};

/** A TCP listener that only counts connections (and closes them at once). */
const startCanary = async (host: string): Promise<{ port: number; connections: () => number }> => {
  const server = createTcpServer((socket) => socket.destroy());
  const counts = track(server);
  return { port: await listen(server, host), connections: counts.connections };
};

const closedPort = async (): Promise<number> => {
  const server = createTcpServer();
  const port = await listen(server, '127.0.0.1');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

// ---------------------------------------------------------------------------------------------------------
// Self-signed X.509 certificates, DER-encoded by hand (node:crypto has no certificate builder).

const tlv = (tag: number, content: Uint8Array): Buffer => {
  const length = content.byteLength;
  const header =
    length < 0x80
      ? [tag, length]
      : length < 0x100
        ? [tag, 0x81, length]
        : [tag, 0x82, length >> 8, length & 0xff];
  return Buffer.concat([Buffer.from(header), content]);
};
const sequence = (...items: Uint8Array[]): Buffer => tlv(0x30, Buffer.concat(items));
const objectId = (dotted: string): Buffer => {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first + second];
  for (const part of rest) {
    const groups = [part & 0x7f];
    for (let high = part >>> 7; high > 0; high >>>= 7) groups.unshift((high & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
};
const commonName = (cn: string): Buffer =>
  sequence(tlv(0x31, sequence(objectId('2.5.4.3'), tlv(0x0c, Buffer.from(cn, 'utf8')))));
const utcTime = (date: Date): Buffer =>
  tlv(0x17, Buffer.from(`${date.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`, 'ascii'));
const TRUE = tlv(0x01, Buffer.from([0xff]));

/** A self-signed P-256 certificate (CA:TRUE, so it is its own trust anchor) for the given SAN names and IPs. */
const selfSignedCertificate = (cn: string, dnsNames: readonly string[], ipAddresses: readonly number[][]) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaWithSha256 = sequence(objectId('1.2.840.10045.4.3.2'));
  const nowMs = Date.now();
  const subjectAltName = sequence(
    ...dnsNames.map((name) => tlv(0x82, Buffer.from(name, 'ascii'))),
    ...ipAddresses.map((address) => tlv(0x87, Buffer.from(address))),
  );
  const tbsCertificate = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, Buffer.from([0x01, ...Array.from({ length: 7 }, () => Math.floor(Math.random() * 256))])),
    ecdsaWithSha256,
    commonName(cn),
    sequence(utcTime(new Date(nowMs - 3_600_000)), utcTime(new Date(nowMs + 86_400_000))),
    commonName(cn),
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      sequence(
        sequence(objectId('2.5.29.19'), TRUE, tlv(0x04, sequence(TRUE))),
        sequence(objectId('2.5.29.17'), tlv(0x04, subjectAltName)),
      ),
    ),
  );
  const signature = sign('sha256', tbsCertificate, privateKey);
  const der = sequence(
    tbsCertificate,
    ecdsaWithSha256,
    tlv(0x03, Buffer.concat([Buffer.from([0]), signature])),
  );
  const base64Lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64Lines.join('\n')}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
};

const LOOPBACK_V4_BYTES = [127, 0, 0, 1];
const LOOPBACK_V6_BYTES = [...Array.from({ length: 15 }, () => 0), 1];

// ---------------------------------------------------------------------------------------------------------

describe('SSRF guard: hostile targets never connect', () => {
  let canaryV4: { port: number; connections: () => number };
  let canaryV6: { port: number; connections: () => number };
  const canaryClosers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    canaryV4 = await startCanary('127.0.0.1');
    canaryV6 = await startCanary('::1');
    // The canaries live for the whole describe block: take their closers out of the per-test list.
    canaryClosers.push(...closers.splice(0));
  });

  afterAll(async () => {
    await Promise.all(canaryClosers.map((close) => close()));
  });

  const ports = (): CanaryPorts => ({ ipv4: canaryV4.port, ipv6: canaryV6.port });

  /** Runs each target through a fresh client (fresh stub DNS); returns the mismatches. */
  const runAll = async (
    targets: readonly HostileTarget[],
    policy: { readonly allowHttp: boolean; readonly allowedCidrs: readonly string[] },
    expectedFor: (target: HostileTarget) => string,
  ): Promise<{ mismatches: string[]; results: number }> => {
    const mismatches: string[] = [];
    for (const target of targets) {
      const dns = stubResolver(target);
      if (target.preResolve === true && target.dns !== undefined) await dns.resolve(target.dns.hostname);
      const client = createGuardedHttpClient({ policy, resolve: dns.resolve });
      const result = await client.post({
        url: target.url,
        headers: { 'X-Event-Id': 'evt_hostile' },
        body: new TextEncoder().encode('{}'),
        timeoutMs: 2_000,
      });
      const got = result.kind === 'network_error' ? result.error : `response ${result.status}`;
      if (got !== expectedFor(target)) mismatches.push(`${target.name} (${target.url}): ${got}`);
      // A name is checked at connect time, by the socket's lookup, not by a pre-check.
      const expectedLookups = (target.preResolve === true ? 1 : 0) + 1;
      if (target.dns !== undefined && got === 'address_not_allowed' && dns.lookups() !== expectedLookups) {
        mismatches.push(`${target.name}: ${dns.lookups()} lookups, expected ${expectedLookups}`);
      }
    }
    return { mismatches, results: targets.length };
  };

  it('has at least 100 hostile targets', () => {
    expect(hostileTargets(ports()).length).toBeGreaterThanOrEqual(100);
  });

  it('refuses 100 % of the targets over http, without a single connection', async () => {
    const targets = hostileTargets(ports());
    const { mismatches, results } = await runAll(targets, OPEN_HTTP_POLICY, (target) => target.expected);
    expect(mismatches).toEqual([]);
    expect(results).toBe(targets.length);
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });

  it('refuses 100 % of the https variants, without a single connection', async () => {
    const targets = hostileTargets(ports()).flatMap((target) => httpsVariant(target) ?? []);
    expect(targets.length).toBeGreaterThanOrEqual(100);
    const { mismatches } = await runAll(targets, OPEN_HTTP_POLICY, (target) => target.expected);
    expect(mismatches).toEqual([]);
    const onlyHttps = await runAll(targets, HTTPS_ONLY_POLICY, (target) => target.expected);
    expect(onlyHttps.mismatches).toEqual([]);
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });

  it('answers scheme_not_allowed for every http target under an https-only policy', async () => {
    const targets = hostileTargets(ports());
    const { mismatches } = await runAll(targets, HTTPS_ONLY_POLICY, (target) =>
      URL.canParse(target.url) ? 'scheme_not_allowed' : 'other',
    );
    expect(mismatches).toEqual([]);
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });

  it('refuses loopback through the system resolver (localhost)', async () => {
    const client = createGuardedHttpClient({ policy: OPEN_HTTP_POLICY });
    const result = await client.post({
      url: `http://localhost:${canaryV4.port}/`,
      headers: {},
      body: new Uint8Array(),
      timeoutMs: 2_000,
    });
    expect(result).toMatchObject({ kind: 'network_error', error: 'address_not_allowed' });
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });

  it('keeps refusing what the allow-list does not cover (127/8 allowed: ::1, mapped and 10/8 still refused)', async () => {
    const policy = { allowHttp: true, allowedCidrs: ['127.0.0.0/8'] };
    const results = await Promise.all(
      [
        `http://[::1]:${canaryV6.port}/`,
        `http://[::ffff:10.0.0.1]:${canaryV4.port}/`,
        `http://10.0.0.1:${canaryV4.port}/`,
      ].map((url) => post(url, {}, { policy })),
    );
    expect(results.map((result) => (result.kind === 'network_error' ? result.error : result.status))).toEqual(
      ['address_not_allowed', 'address_not_allowed', 'address_not_allowed'],
    );
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });
});

describe('allowed receivers (loopback allow-listed)', () => {
  it('POSTs headers and the exact body bytes and returns status, first header values and an excerpt', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.setHeader('X-Trace-Id', ['trace-1', 'trace-2']);
      response.setHeader('Content-Type', 'application/json');
      response.writeHead(200);
      response.end('{"received":true}');
    });
    const body = new Uint8Array([0x7b, 0x00, 0xff, 0xfe, 0x0a, 0x7d, 0xc3, 0xa9]);
    const result = await post(receiver.url('/webhooks/v1/catalog?tenant=t1'), {
      headers: {
        'X-Signature': 'v1=abc',
        'X-Timestamp': '2026-11-01T00:00:00.000Z',
        'X-Event-Id': 'evt_01',
        'Content-Length': '999',
        'Transfer-Encoding': 'chunked',
        Connection: 'keep-alive',
      },
      body: body.subarray(0, 8),
    });
    expect(result).toMatchObject({
      kind: 'response',
      status: 200,
      excerpt: '{"received":true}',
      headers: { 'x-trace-id': 'trace-1', 'content-type': 'application/json' },
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/webhooks/v1/catalog?tenant=t1');
    expect(received?.body.equals(Buffer.from(body))).toBe(true);
    expect(received?.headers).toMatchObject({
      'x-signature': 'v1=abc',
      'x-timestamp': '2026-11-01T00:00:00.000Z',
      'x-event-id': 'evt_01',
      'content-length': '8',
      connection: 'close',
      host: `127.0.0.1:${receiver.port}`,
    });
    expect(received?.headers['transfer-encoding']).toBeUndefined();
  });

  it('sends a body that is a view into a larger buffer exactly', async () => {
    const receiver = await startReceiver((_request, response) => response.end());
    const backing = new TextEncoder().encode('xxxx{"event_id":"evt_view"}yyyy');
    const result = await post(receiver.url(), { body: backing.subarray(4, backing.length - 4) });
    expect(result).toMatchObject({ kind: 'response', status: 200, excerpt: '' });
    expect(receiver.requests[0]?.body.toString()).toBe('{"event_id":"evt_view"}');
  });

  it('reaches an allow-listed receiver on [::1]', async () => {
    const receiver = await startReceiver((_request, response) => response.end('v6'), '::1');
    expect(await post(receiver.url())).toMatchObject({ kind: 'response', status: 200, excerpt: 'v6' });
  });

  it('resolves a host name at connect time and connects to the checked address', async () => {
    const receiver = await startReceiver((request, response) => response.end(request.headers.host));
    let lookups = 0;
    const resolve: Resolver = async (hostname) => {
      lookups += 1;
      return hostname === 'receiver.test' ? [{ address: '127.0.0.1', family: 4 }] : [];
    };
    const result = await post(`http://receiver.test:${receiver.port}/webhooks/v1/catalog`, {}, { resolve });
    expect(result).toMatchObject({
      kind: 'response',
      status: 200,
      excerpt: `receiver.test:${receiver.port}`,
    });
    expect(lookups).toBe(1);
  });

  it('refuses a name resolving to an allow-listed and a non-allow-listed address, without connecting', async () => {
    const receiver = await startReceiver((_request, response) => response.end());
    const resolve: Resolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    const result = await post(`http://receiver.test:${receiver.port}/`, {}, { resolve });
    expect(result).toMatchObject({ kind: 'network_error', error: 'address_not_allowed' });
    expect(receiver.connections()).toBe(0);
  });

  it('returns a 302 without following it', async () => {
    const target = await startReceiver((_request, response) => response.end('followed'));
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(302, { Location: target.url('/elsewhere') });
      response.end('moved');
    });
    const result = await post(receiver.url());
    expect(result).toMatchObject({
      kind: 'response',
      status: 302,
      headers: { location: target.url('/elsewhere') },
      excerpt: 'moved',
    });
    expect(target.connections()).toBe(0);
  });

  it('returns a 503 with its Retry-After header', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(503, { 'Retry-After': '120' });
      response.end('{"error":"unavailable"}');
    });
    expect(await post(receiver.url())).toMatchObject({
      kind: 'response',
      status: 503,
      headers: { 'retry-after': '120' },
      excerpt: '{"error":"unavailable"}',
    });
  });

  it('times out on a receiver that never answers, within timeoutMs, and closes the socket', async () => {
    const receiver = await startReceiver(() => undefined);
    const timeoutMs = 300;
    const result = await post(receiver.url(), { timeoutMs });
    expect(result).toMatchObject({ kind: 'network_error', error: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(timeoutMs - 5);
    expect(result.durationMs).toBeLessThan(timeoutMs + TIMEOUT_SLACK_MS);
    await expect.poll(() => receiver.closed()).toBe(1);
  });

  it('times out when the response body stalls after the headers', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(200, { 'Content-Length': '100' });
      response.write('partial');
    });
    const result = await post(receiver.url(), { timeoutMs: 300 });
    expect(result).toMatchObject({ kind: 'network_error', error: 'timeout' });
    expect(result.durationMs).toBeLessThan(300 + TIMEOUT_SLACK_MS);
  });

  it('times out when DNS never answers', async () => {
    const resolve: Resolver = () => new Promise(() => undefined);
    const result = await post('http://stalled.test:1/', { timeoutMs: 200 }, { resolve });
    expect(result).toMatchObject({ kind: 'network_error', error: 'timeout' });
    expect(result.durationMs).toBeLessThan(200 + TIMEOUT_SLACK_MS);
  });

  it('answers connection_reset when the receiver destroys the socket', async () => {
    const receiver = await startReceiver((request) => request.socket.destroy());
    expect(await post(receiver.url())).toMatchObject({ kind: 'network_error', error: 'connection_reset' });
  });

  it('answers connection_reset when the receiver cuts the body off after the headers', async () => {
    const receiver = await startReceiver((request, response) => {
      response.writeHead(200, { 'Content-Length': '100' });
      response.write('partial', () => request.socket.destroy());
    });
    expect(await post(receiver.url())).toMatchObject({ kind: 'network_error', error: 'connection_reset' });
  });

  it('answers connection_refused for a closed port', async () => {
    const port = await closedPort();
    expect(await post(`http://127.0.0.1:${port}/`)).toMatchObject({
      kind: 'network_error',
      error: 'connection_refused',
      message: 'connection refused (ECONNREFUSED)',
    });
  });

  it('answers dns_failure for a name that does not resolve or resolves to nothing', async () => {
    expect(await post('http://unknown.test/')).toMatchObject({ kind: 'network_error', error: 'dns_failure' });
    const empty: Resolver = async () => [];
    expect(await post('http://empty.test/', {}, { resolve: empty })).toMatchObject({
      kind: 'network_error',
      error: 'dns_failure',
    });
  });

  it('reads only a bounded excerpt of a huge streaming body and returns promptly', async () => {
    let written = 0;
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = (): void => {
        while (!response.destroyed && written < 512 * 1024 * 1024) {
          written += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
      };
      response.on('error', () => undefined);
      pump();
    });
    const result = await post(receiver.url(), { timeoutMs: 5_000 });
    expect(result).toMatchObject({
      kind: 'response',
      status: 200,
      excerpt: 'a'.repeat(RESPONSE_EXCERPT_MAX_CHARS),
    });
    expect(result.durationMs).toBeLessThan(1_000);
    await expect.poll(() => receiver.closed()).toBe(1);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('sanitises the excerpt: controls replaced, no split characters, at most 256 UTF-16 units', async () => {
    const receiver = await startReceiver((request, response) => {
      const kind = request.url ?? '';
      if (kind === '/controls') response.end('line1\r\nline2\tx\u0000\u001b[31m\u202eevil\u007f\u0085');
      else if (kind === '/emoji') response.end('😀'.repeat(300));
      else if (kind === '/invalid') response.end(Buffer.from([0x61, 0xff, 0x62, 0xe2, 0x82]));
      else response.end(`${'é'.repeat(255)}€€`);
    });
    const excerpt = async (path: string): Promise<string> => {
      const result = await post(receiver.url(path));
      return result.kind === 'response' ? result.excerpt : `network_error ${result.error}`;
    };
    expect(await excerpt('/controls')).toBe('line1  line2 x\uFFFD\uFFFD[31m\uFFFDevil\uFFFD\uFFFD');
    expect(await excerpt('/emoji')).toBe('😀'.repeat(128));
    expect(await excerpt('/invalid')).toBe('a\uFFFDb\uFFFD');
    expect(await excerpt('/mixed')).toBe(`${'é'.repeat(255)}€`);
  });

  it('returns other (and never throws) for header values Node refuses to send', async () => {
    const receiver = await startReceiver((_request, response) => response.end());
    const result = await post(receiver.url(), { headers: { 'X-Injected': 'a\r\nHost: evil' } });
    expect(result).toMatchObject({ kind: 'network_error', error: 'other' });
    expect(receiver.connections()).toBe(0);
  });

  it('returns other for a non-positive or non-finite timeout', async () => {
    expect(await post('http://127.0.0.1:1/', { timeoutMs: 0 })).toMatchObject({ error: 'other' });
    expect(await post('http://127.0.0.1:1/', { timeoutMs: Number.NaN })).toMatchObject({ error: 'other' });
  });

  it('refuses http under an https-only policy without connecting', async () => {
    const receiver = await startReceiver((_request, response) => response.end());
    const result = await post(
      receiver.url(),
      {},
      { policy: { allowHttp: false, allowedCidrs: LOOPBACK_POLICY.allowedCidrs } },
    );
    expect(result).toMatchObject({ kind: 'network_error', error: 'scheme_not_allowed' });
    expect(receiver.connections()).toBe(0);
  });

  it('refuses to be created with an allow-list entry that is not a CIDR', () => {
    for (const cidr of [
      '127.0.0.1',
      '127.1/8',
      '10.0.0.0/33',
      '::1/129',
      'localhost/8',
      '0x7f.0.0.0/8',
      '',
    ]) {
      expect(() => createGuardedHttpClient({ policy: { allowHttp: true, allowedCidrs: [cidr] } })).toThrow(
        EgressPolicyError,
      );
    }
  });
});

describe('https receivers', () => {
  const serverCertificate = selfSignedCertificate(
    'receiver.test',
    ['localhost', 'receiver.test'],
    [LOOPBACK_V4_BYTES, LOOPBACK_V6_BYTES],
  );
  const clientCertificate = selfSignedCertificate('webhook-sender', [], []);

  const startHttpsReceiver = async (
    handler: Handler,
    options: { readonly requestClientCertificate?: boolean } = {},
  ): Promise<Receiver> => {
    const requests: Receiver['requests'] = [];
    const server = createHttpsServer(
      {
        cert: serverCertificate.cert,
        key: serverCertificate.key,
        ...(options.requestClientCertificate === true
          ? { requestCert: true, rejectUnauthorized: true, ca: [clientCertificate.cert] }
          : {}),
      },
      withBody(handler, requests),
    );
    server.on('tlsClientError', () => undefined);
    const counts = track(server);
    const port = await listen(server, '127.0.0.1');
    return {
      port,
      url: (path = '/webhooks/v1/catalog') => `https://127.0.0.1:${port}${path}`,
      requests,
      ...counts,
    };
  };

  it('delivers to a self-signed receiver trusted through `ca`', async () => {
    const receiver = await startHttpsReceiver((_request, response) => response.end('tls ok'));
    const result = await post(
      receiver.url(),
      {},
      { ca: serverCertificate.cert, policy: { ...LOOPBACK_POLICY, allowHttp: false } },
    );
    expect(result).toMatchObject({ kind: 'response', status: 200, excerpt: 'tls ok' });
    expect(receiver.requests[0]?.body.toString()).toBe('{"event_id":"evt_01"}');
  });

  it('checks the certificate against the host name resolved at connect time (SNI)', async () => {
    const receiver = await startHttpsReceiver((request, response) =>
      response.end((request.socket as TLSSocket).servername || 'no sni'),
    );
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const ok = await post(
      `https://receiver.test:${receiver.port}/`,
      {},
      { ca: serverCertificate.cert, resolve },
    );
    expect(ok).toMatchObject({ kind: 'response', status: 200, excerpt: 'receiver.test' });
    const wrongName = await post(
      `https://other.test:${receiver.port}/`,
      {},
      { ca: serverCertificate.cert, resolve },
    );
    expect(wrongName).toMatchObject({ kind: 'network_error', error: 'tls_error' });
  });

  it('answers tls_error for an untrusted certificate and for a plain-http port', async () => {
    const receiver = await startHttpsReceiver((_request, response) => response.end());
    expect(await post(receiver.url())).toMatchObject({ kind: 'network_error', error: 'tls_error' });
    expect(receiver.requests).toHaveLength(0);
    const plain = await startReceiver((_request, response) => response.end());
    expect(await post(plain.url().replace('http:', 'https:'))).toMatchObject({
      kind: 'network_error',
      error: 'tls_error',
    });
  });

  it('presents the client certificate for mTLS', async () => {
    const receiver = await startHttpsReceiver(
      (request, response) =>
        response.end((request.socket as TLSSocket).getPeerCertificate().subject?.CN ?? 'none'),
      { requestClientCertificate: true },
    );
    const withCertificate = await post(receiver.url(), {}, { ca: serverCertificate.cert, clientCertificate });
    expect(withCertificate).toMatchObject({ kind: 'response', status: 200, excerpt: 'webhook-sender' });
    const without = await post(receiver.url(), {}, { ca: serverCertificate.cert });
    expect(without.kind).toBe('network_error');
  });
});
