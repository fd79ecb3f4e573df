import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createGuardedFetch,
  type EgressPolicy,
  GuardedFetchError,
  type Resolver,
} from '../../../../functions/adapters/http/guarded-http-client';
import { AWS_EGRESS, LOCAL_EGRESS } from '../../../../functions/composition/webhooks';
import {
  type CanaryPorts,
  type HostileTarget,
  hostileTargets,
  httpsVariant,
  stubResolver,
} from '../../../support/ssrf-targets';
import { createTestCa } from '../../../support/test-pki';

const OPEN_HTTP_POLICY: EgressPolicy = { allowHttp: true, allowedCidrs: [] };

const noDns: Resolver = async (hostname) => {
  throw Object.assign(new Error(`no DNS in this test: ${hostname}`), { code: 'ENOTFOUND' });
};

/** A stub resolver answering `answers` for every name. */
const resolvesTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }) as const);

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Counts connections; closing the server also ends kept or stalled ones. */
const track = (server: Server) => {
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
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { connections: () => connections, closed: () => closed, close };
};

const listen = async (server: Server, host = '127.0.0.1'): Promise<number> => {
  server.listen(0, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};

interface Provider {
  readonly url: (path?: string) => string;
  readonly requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  readonly connections: () => number;
  readonly closed: () => number;
}

const startProvider = async (
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Provider> => {
  const requests: Provider['requests'] = [];
  const server = createHttpServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  const counts = track(server);
  closers.push(counts.close);
  const port = await listen(server);
  return { url: (path = '/latest') => `http://127.0.0.1:${port}${path}`, requests, ...counts };
};

const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('guarded GET: hostile targets never connect', () => {
  let canaryV4: ReturnType<typeof track> & { port: number };
  let canaryV6: ReturnType<typeof track> & { port: number };

  beforeAll(async () => {
    const v4 = createTcpServer((socket) => socket.destroy());
    const v6 = createTcpServer((socket) => socket.destroy());
    canaryV4 = { ...track(v4), port: await listen(v4, '127.0.0.1') };
    canaryV6 = { ...track(v6), port: await listen(v6, '::1') };
  });

  afterAll(async () => {
    await Promise.all([canaryV4.close(), canaryV6.close()]);
  });

  const ports = (): CanaryPorts => ({ ipv4: canaryV4.port, ipv6: canaryV6.port });

  const runAll = async (targets: readonly HostileTarget[], policy: EgressPolicy): Promise<string[]> => {
    const mismatches: string[] = [];
    for (const target of targets) {
      const dns = stubResolver(target);
      if (target.preResolve === true && target.dns !== undefined) await dns.resolve(target.dns.hostname);
      const guardedFetch = createGuardedFetch({ policy, resolve: dns.resolve });
      const error = await rejection(guardedFetch(target.url, { headers: { accept: 'application/json' } }));
      const got = error instanceof GuardedFetchError ? error.kind : `not refused: ${String(error)}`;
      if (got !== target.expected) mismatches.push(`${target.name} (${target.url}): ${got}`);
    }
    return mismatches;
  };

  it('refuses every hostile target, http and https, without a single connection', async () => {
    const targets = hostileTargets(ports());
    expect(await runAll(targets, OPEN_HTTP_POLICY)).toEqual([]);
    expect(
      await runAll(
        targets.flatMap((target) => httpsVariant(target) ?? []),
        OPEN_HTTP_POLICY,
      ),
    ).toEqual([]);
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });

  it.each([
    ['a private address', 'https://10.0.0.1/latest'],
    ['the instance metadata address', 'https://169.254.169.254/latest/meta-data/'],
    ['loopback', 'https://127.0.0.1/latest'],
    ['IPv6 loopback', 'https://[::1]/latest'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.0.1]/latest'],
  ])('refuses %s under the AWS policy before connecting (DNS not even asked)', async (_name, url) => {
    let lookups = 0;
    const guardedFetch = createGuardedFetch({
      policy: AWS_EGRESS,
      resolve: async () => {
        lookups += 1;
        return [];
      },
    });
    const error = await rejection(guardedFetch(url, {}));
    expect(error).toBeInstanceOf(GuardedFetchError);
    expect((error as GuardedFetchError).kind).toBe('address_not_allowed');
    expect((error as Error).message).toBe('destination address is not allowed by the egress policy');
    expect(lookups).toBe(0);
  });

  it('refuses a name resolving to 127.0.0.1 under the AWS policy, at connect time', async () => {
    const guardedFetch = createGuardedFetch({ policy: AWS_EGRESS, resolve: resolvesTo('127.0.0.1') });
    const error = await rejection(guardedFetch(`https://rates.example:${canaryV4.port}/latest`, {}));
    expect((error as GuardedFetchError).kind).toBe('address_not_allowed');
    expect(canaryV4.connections()).toBe(0);
  });

  it('refuses a name resolving to a public and a private address (one bad answer refuses)', async () => {
    const guardedFetch = createGuardedFetch({
      policy: AWS_EGRESS,
      resolve: resolvesTo('93.184.215.14', '10.1.2.3'),
    });
    const error = await rejection(guardedFetch('https://rates.example/latest', {}));
    expect((error as GuardedFetchError).kind).toBe('address_not_allowed');
  });

  it('refuses http under the AWS policy, and userinfo under any', async () => {
    const aws = createGuardedFetch({ policy: AWS_EGRESS, resolve: noDns });
    expect(((await rejection(aws(`http://rates.example/latest`, {}))) as GuardedFetchError).kind).toBe(
      'scheme_not_allowed',
    );
    const local = createGuardedFetch({ policy: LOCAL_EGRESS, resolve: noDns });
    const error = await rejection(local(`http://user:password@127.0.0.1:${canaryV4.port}/`, {}));
    expect((error as GuardedFetchError).kind).toBe('other');
    expect((error as Error).message).not.toContain('password');
    expect(canaryV4.connections()).toBe(0);
  });

  it('refuses loopback through the system resolver (localhost) under the AWS policy', async () => {
    const guardedFetch = createGuardedFetch({ policy: { ...AWS_EGRESS, allowHttp: true } });
    const error = await rejection(guardedFetch(`http://localhost:${canaryV4.port}/`, {}));
    expect((error as GuardedFetchError).kind).toBe('address_not_allowed');
    expect(canaryV4.connections() + canaryV6.connections()).toBe(0);
  });
});

describe('guarded GET: allowed providers (local policy: loopback)', () => {
  const local = (options: { timeoutMs?: number; resolve?: Resolver } = {}) =>
    createGuardedFetch({ policy: LOCAL_EGRESS, resolve: options.resolve ?? noDns, ...options });

  it('GETs with the caller headers, streams the body, and closes the connection', async () => {
    const provider = await startProvider((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'r1' });
      response.end('{"rates":{"USD":"1.08"}}');
    });
    const response = await local()(provider.url('/latest?from=EUR'), {
      method: 'GET',
      headers: { accept: 'application/json', 'x-api-key': 'k', host: 'evil.example', 'content-length': '5' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('r1');
    expect(await response.text()).toBe('{"rates":{"USD":"1.08"}}');
    const [request] = provider.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url).toBe('/latest?from=EUR');
    expect(request?.headers['x-api-key']).toBe('k');
    expect(request?.headers.host).toBe(provider.url('').replace('http://', ''));
    expect(request?.headers['content-length']).toBeUndefined();
    expect(request?.headers.connection).toBe('close');
    await expect.poll(() => provider.closed()).toBe(1);
  });

  it('never reuses a connection', async () => {
    const provider = await startProvider((_request, response) => response.end('ok'));
    const guardedFetch = local();
    for (let index = 0; index < 3; index += 1)
      expect(await (await guardedFetch(provider.url(), {})).text()).toBe('ok');
    expect(provider.connections()).toBe(3);
  });

  it('returns a redirect as it is, never following it (whatever init.redirect says)', async () => {
    const provider = await startProvider((request, response) => {
      if (request.url === '/latest') response.writeHead(302, { location: '/elsewhere' }).end();
      else response.end('followed');
    });
    for (const redirect of ['follow', 'manual', 'error'] as const) {
      const response = await local()(provider.url(), { redirect });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/elsewhere');
      await response.body?.cancel();
    }
    expect(provider.requests.map((request) => request.url)).toEqual(['/latest', '/latest', '/latest']);
  });

  it('reaches a name resolved at connect time to an allowed address', async () => {
    const provider = await startProvider((_request, response) => response.end('resolved'));
    const port = new URL(provider.url()).port;
    const guardedFetch = local({ resolve: resolvesTo('127.0.0.1') });
    const response = await guardedFetch(`http://rates.test:${port}/latest`, {});
    expect(await response.text()).toBe('resolved');
    expect(provider.requests[0]?.headers.host).toBe(`rates.test:${port}`);
  });

  it('streams a large body chunk by chunk; cancelling it closes the socket', async () => {
    const provider = await startProvider((_request, response) => {
      response.writeHead(200);
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const write = (): void => {
        while (sent < 200) {
          sent += 1;
          if (!response.write(chunk)) {
            response.once('drain', write);
            return;
          }
        }
        response.end();
      };
      write();
    });
    const response = await local()(provider.url(), {});
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = 0;
    while (received < 256 * 1024) {
      const chunk = await reader.read();
      if (chunk.done) break;
      received += chunk.value.byteLength;
    }
    expect(received).toBeGreaterThanOrEqual(256 * 1024);
    expect(received).toBeLessThan(200 * 64 * 1024);
    await reader.cancel();
    await expect.poll(() => provider.closed()).toBe(1);
  });

  it('times out on a provider that never answers, with a TimeoutError, and closes the socket', async () => {
    const provider = await startProvider(() => undefined);
    const started = Date.now();
    const error = await rejection(local({ timeoutMs: 200 })(provider.url(), {}));
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(1_500);
    await expect.poll(() => provider.closed()).toBe(1);
  });

  it("ends a stalled body when the caller's signal fires", async () => {
    const provider = await startProvider((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const response = await local()(provider.url(), { signal: AbortSignal.timeout(200) });
    const error = await rejection(response.text());
    expect((error as Error).name).toBe('TimeoutError');
    await expect.poll(() => provider.closed()).toBe(1);
  });

  it('reports a body cut off by the provider as a network error', async () => {
    const provider = await startProvider((request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('short');
      setTimeout(() => request.socket.destroy(), 20);
    });
    const response = await local()(provider.url(), {});
    const error = await rejection(response.text());
    expect(error).toBeInstanceOf(GuardedFetchError);
    expect((error as GuardedFetchError).kind).toBe('connection_reset');
  });

  it('answers connection_refused for a closed port, and refuses other methods or a body', async () => {
    const error = await rejection(local()('http://127.0.0.1:1/latest', {}));
    expect((error as GuardedFetchError).kind).toBe('connection_refused');
    expect(((await rejection(local()('http://127.0.0.1:1/', { method: 'POST' }))) as Error).message).toBe(
      'only GET and HEAD requests are sent',
    );
    expect(((await rejection(local()('http://127.0.0.1:1/', { body: 'x' }))) as Error).message).toBe(
      'a GET carries no body',
    );
  });

  it('never echoes an invalid header value', async () => {
    const error = await rejection(local()('http://127.0.0.1:1/', { headers: { 'x-api-key': 'sk_live\nX' } }));
    expect((error as Error).message).not.toContain('sk_live');
  });

  it('verifies https providers against the public roots plus the configured CA', async () => {
    const ca = await createTestCa();
    const leaf = await ca.issueServer({
      commonName: 'rates.test',
      dnsNames: ['rates.test'],
      ipAddresses: [],
    });
    const server = createHttpsServer({ cert: leaf.certPem, key: leaf.keyPem }, (_request, response) =>
      response.end('tls ok'),
    );
    server.on('tlsClientError', () => undefined);
    const counts = track(server);
    closers.push(counts.close);
    const port = await listen(server);
    const policy: EgressPolicy = { allowHttp: false, allowedCidrs: ['127.0.0.0/8'] };
    const trusted = createGuardedFetch({ policy, ca: ca.certPem, resolve: resolvesTo('127.0.0.1') });
    expect(await (await trusted(`https://rates.test:${port}/`, {})).text()).toBe('tls ok');
    const untrusted = createGuardedFetch({ policy, resolve: resolvesTo('127.0.0.1') });
    const error = await rejection(untrusted(`https://rates.test:${port}/`, {}));
    expect((error as GuardedFetchError).kind).toBe('tls_error');
  });
});
