/**
 * FX provider credentials by reference, and rate-source GETs through the egress guard: the credential reaches
 * the provider (header or query parameter) from the secret store, never appears in the policy, an error or a
 * log line; a missing credential is a source failure like an outage; private destinations are refused without
 * connecting; redirects are not followed.
 */

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedFetch, type Resolver } from '../../../functions/adapters/http/guarded-http-client';
import {
  type FetchLike,
  JsonRateSource,
  RateSourceError,
  rateSourcesFor,
} from '../../../functions/adapters/http/rate-sources';
import { FileSecretValues } from '../../../functions/adapters/local/file-secrets';
import { AWS_EGRESS, LOCAL_EGRESS } from '../../../functions/composition/webhooks';
import { INITIAL_BREAKER } from '../../../functions/domain/rates/protection';
import type {
  CurrentRates,
  FxRate,
  JournalAppender,
  JsonValue,
  PairState,
  RatePublisher,
  RateStateStore,
  SaveResult,
} from '../../../functions/ports/rates';
import { SecretUnavailableError, type SecretValues } from '../../../functions/ports/secrets';
import { type RatePolicy, ratePolicySchema } from '../../../functions/schemas/rate-policy';
import { createLogger, loggedError } from '../../../functions/shared/logger';
import { ingestRates } from '../../../functions/usecases/rates/ingest';
import { captureLogLines } from '../support/log-capture';

/** A made-up provider credential: it must reach the provider and nowhere else. */
const SECRET = 'fxk_9d4c2b7e1a0f48c3b5e6d7a8c9b0e1f2';
const AT = new Date('2026-11-22T12:00:30.000Z');

// ---------------------------------------------------------------------------------------------------------
// A provider on loopback: answers by path, records every request and connection.

type Answer = { status?: number; body?: string; headers?: Record<string, string>; hang?: boolean };
let routes: Record<string, Answer> = {};
const requests: { url: string; headers: IncomingMessage['headers'] }[] = [];
let connections = 0;
let server: Server;
let base: string;
let port: number;

beforeAll(async () => {
  const sockets = new Set<Socket>();
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests.push({ url: request.url ?? '', headers: request.headers });
    const answer = routes[new URL(request.url ?? '/', 'http://x').pathname] ?? {
      status: 404,
      body: 'no route',
    };
    if (answer.hang) return;
    response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
    response.end(answer.body ?? '');
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('close', () => {
    for (const socket of sockets) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  routes = {};
  requests.length = 0;
  connections = 0;
});

/** The local stack's egress (loopback over http allowed): the test provider is reachable. */
const localFetch: FetchLike = createGuardedFetch({ policy: LOCAL_EGRESS });

/** Secrets from a map; a missing name fails as the stores do. */
const memorySecrets = (values: Record<string, string>): SecretValues & { reads: string[] } => {
  const reads: string[] = [];
  return {
    reads,
    value: async (ref) => {
      reads.push(ref);
      const value = values[ref];
      if (value === undefined) throw new SecretUnavailableError(ref, 'not_found');
      return value;
    },
  };
};

const policyWith = (sources: unknown[], pairs: { pair: string; sources: string[] }[] = []): RatePolicy =>
  ratePolicySchema.parse({
    sources,
    pairs: (pairs.length > 0
      ? pairs
      : [{ pair: 'EUR→USD', sources: [(sources[0] as { source_id: string }).source_id] }]
    ).map((pair) => ({
      ...pair,
      method: 'provider',
      interval_seconds: 60,
      publication_delay_seconds: 0,
      max_tick_move_bps: 10_000,
      precision: 4,
      stale_after_seconds: 300,
      max_age_seconds: 900,
    })),
    breaker: { failure_threshold: 2, window_seconds: 3600, open_seconds: 3600 },
  });

/** The policy's sources with `url`s on the test provider (the schema wants https; the guard allows loopback http). */
const onProvider = (policy: RatePolicy): RatePolicy => ({
  ...policy,
  sources: policy.sources.map((source) =>
    'url' in source && source.url !== undefined
      ? { ...source, url: source.url.replace(/^https:\/\/provider\.example/, base) }
      : source,
  ),
});

const failureOf = async (promise: Promise<unknown>): Promise<RateSourceError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RateSourceError);
  return error as RateSourceError;
};

/** An error as a log line would carry it: message and cause chain. */
const asLogged = (error: unknown): string => JSON.stringify(loggedError(error as Error));

// ---------------------------------------------------------------------------------------------------------

describe('credentials reach the provider, by reference only', () => {
  it('sends the credential in a header, with its prefix, read from the secret store', async () => {
    routes['/latest'] = { body: '{"rates":{"USD":"1.0845"}}' };
    routes['/products/BTC-EUR/ticker'] = { body: '{"price":"41000.5"}' };
    const policy = policyWith(
      [
        {
          source_id: 'fx',
          kind: 'json',
          url: 'https://provider.example/latest?from={base}',
          rate_pointer: '/rates/{quote}',
          auth: { header: 'X-Api-Key', secret_ref: 'fx/key' },
        },
        {
          source_id: 'ticker',
          kind: 'crypto_ticker',
          url: 'https://provider.example/products/{symbol}/ticker',
          auth: { header: 'Authorization', prefix: 'Bearer ', secret_ref: 'ticker-token' },
        },
      ],
      [
        { pair: 'EUR→USD', sources: ['fx'] },
        { pair: 'BTC→EUR', sources: ['ticker'] },
      ],
    );
    expect(JSON.stringify(policy)).not.toContain(SECRET);
    const secrets = memorySecrets({ 'fx/key': SECRET, 'ticker-token': `${SECRET}-t` });
    const sources = rateSourcesFor(onProvider(policy), { fetch: localFetch, secrets });
    expect(await sources.get('fx')?.fetch(['EUR→USD'], AT)).toMatchObject([{ rate: '1.0845' }]);
    expect(await sources.get('ticker')?.fetch(['BTC→EUR'], AT)).toMatchObject([{ rate: '41000.5' }]);
    expect(requests.map((request) => request.url)).toEqual(['/latest?from=EUR', '/products/BTC-EUR/ticker']);
    expect(requests[0]?.headers['x-api-key']).toBe(SECRET);
    expect(requests[1]?.headers.authorization).toBe(`Bearer ${SECRET}-t`);
    expect(requests[1]?.headers['x-api-key']).toBeUndefined();
  });

  it('sends the credential as a query parameter, one GET per distinct URL as before', async () => {
    routes['/latest'] = { body: '{"rates":{"USD":"1.0845","GBP":"0.8627"}}' };
    routes['/daily.xml'] = { status: 503 };
    const policy = policyWith(
      [
        {
          source_id: 'fx',
          kind: 'json',
          url: 'https://provider.example/latest?from={base}',
          rate_pointer: '/rates/{quote}',
          auth: { query_param: 'access_key', secret_ref: 'fx-key' },
        },
        {
          source_id: 'mirror',
          kind: 'ecb',
          url: 'https://provider.example/daily.xml',
          auth: { query_param: 'apikey', secret_ref: 'fx-key' },
        },
      ],
      [
        { pair: 'EUR→USD', sources: ['fx', 'mirror'] },
        { pair: 'EUR→GBP', sources: ['fx'] },
      ],
    );
    const sources = rateSourcesFor(onProvider(policy), {
      fetch: localFetch,
      secrets: memorySecrets({ 'fx-key': SECRET }),
    });
    expect((await sources.get('fx')?.fetch(['EUR→USD', 'EUR→GBP'], AT))?.map((quote) => quote.rate)).toEqual([
      '1.0845',
      '0.8627',
    ]);
    const error = await failureOf(sources.get('mirror')?.fetch(['EUR→USD'], AT) ?? Promise.resolve());
    expect(error.reason).toBe('http_status');
    expect(requests.map((request) => request.url)).toEqual([
      `/latest?from=EUR&access_key=${SECRET}`,
      `/daily.xml?apikey=${SECRET}`,
    ]);
    expect(asLogged(error)).not.toContain(SECRET);
  });

  it('reads the local stack secret files <DATA_DIR>/secrets/<ref>, and refuses a world-readable one', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'fx-data-'));
    try {
      mkdirSync(path.join(dataDir, 'secrets', 'fx'), { recursive: true });
      writeFileSync(path.join(dataDir, 'secrets', 'fx', 'key'), `${SECRET}\n`, { mode: 0o600 });
      routes['/latest'] = { body: '{"rates":{"USD":"1.0845"}}' };
      const source = new JsonRateSource({
        sourceId: 'fx',
        url: `${base}/latest?from={base}`,
        pointer: '/rates/{quote}',
        fetch: localFetch,
        credential: { secretRef: 'fx/key', header: 'X-Api-Key' },
        secrets: new FileSecretValues(path.join(dataDir, 'secrets')),
      });
      expect(await source.fetch(['EUR→USD'], AT)).toHaveLength(1);
      expect(requests[0]?.headers['x-api-key']).toBe(SECRET);
      chmodSync(path.join(dataDir, 'secrets', 'fx', 'key'), 0o644);
      const error = await failureOf(source.fetch(['EUR→USD'], AT));
      expect(error.reason).toBe('credential_unavailable');
      expect(error.message).toBe('fx: credential fx/key unavailable');
      expect(asLogged(error)).toContain('insecure permissions');
      expect(asLogged(error)).not.toContain(SECRET);
      expect(requests).toHaveLength(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a credential that cannot be had is a failure of that source, never a crash', () => {
  const source = (secrets: SecretValues | undefined, timeoutMs = 500) =>
    new JsonRateSource({
      sourceId: 'paid',
      url: `${base}/latest?from={base}`,
      pointer: '/rates/{quote}',
      timeoutMs,
      fetch: localFetch,
      credential: { secretRef: 'paid-key', queryParam: 'access_key' },
      ...(secrets ? { secrets } : {}),
    });

  it.each<[string, SecretValues | undefined]>([
    ['missing', memorySecrets({})],
    ['no secret store configured', undefined],
    [
      'a store that fails with the value in its message',
      { value: async () => Promise.reject(new Error(`backend error near ${SECRET}`)) },
    ],
  ])('%s: credential_unavailable, nothing sent, the text nowhere', async (_name, secrets) => {
    routes['/latest'] = { body: '{"rates":{"USD":"1.0845"}}' };
    const error = await failureOf(source(secrets).fetch(['EUR→USD'], AT));
    expect(error.reason).toBe('credential_unavailable');
    expect(error.message).toBe('paid: credential paid-key unavailable');
    expect(asLogged(error)).not.toContain(SECRET);
    expect(connections).toBe(0);
  });

  it('a store that never answers: credential_unavailable within the source timeout', async () => {
    const started = Date.now();
    const error = await failureOf(
      source({ value: () => new Promise<string>(() => undefined) }, 150).fetch(['EUR→USD'], AT),
    );
    expect(error.reason).toBe('credential_unavailable');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(connections).toBe(0);
  });

  it('errors after the credential was sent never carry it (error status with it in the body, timeout, refused)', async () => {
    const secrets = memorySecrets({ 'paid-key': SECRET });
    routes['/latest'] = { status: 401, body: `{"error":"invalid access_key ${SECRET}"}` };
    const status = await failureOf(source(secrets).fetch(['EUR→USD'], AT));
    expect(status.reason).toBe('http_status');
    routes['/latest'] = { hang: true };
    const timeout = await failureOf(source(secrets, 150).fetch(['EUR→USD'], AT));
    expect(timeout.reason).toBe('timeout');
    const refused = await failureOf(
      new JsonRateSource({
        sourceId: 'paid',
        url: 'http://127.0.0.1:1/latest?from={base}',
        pointer: '/rates/{quote}',
        fetch: localFetch,
        credential: { secretRef: 'paid-key', queryParam: 'access_key' },
        secrets,
      }).fetch(['EUR→USD'], AT),
    );
    expect(refused.reason).toBe('network');
    // Another fetch whose error quotes the URL (query included): the cause is dropped.
    const quoting = await failureOf(
      new JsonRateSource({
        sourceId: 'paid',
        url: 'https://provider.example/latest?from={base}',
        pointer: '/rates/{quote}',
        fetch: async (url) => {
          throw new TypeError(`fetch failed: ${url}`);
        },
        credential: { secretRef: 'paid-key', queryParam: 'access_key' },
        secrets,
      }).fetch(['EUR→USD'], AT),
    );
    expect(quoting.reason).toBe('network');
    for (const error of [status, timeout, refused, quoting]) {
      expect(error.message).not.toContain(SECRET);
      expect(asLogged(error)).not.toContain(SECRET);
    }
  });
});

describe('rate-source GETs go through the egress guard', () => {
  const jsonSource = (url: string, fetch?: FetchLike) =>
    new JsonRateSource({
      sourceId: 'fx',
      url,
      pointer: '/rates/{quote}',
      ...(fetch ? { fetch } : {}),
      credential: { secretRef: 'fx-key', header: 'X-Api-Key' },
      secrets: memorySecrets({ 'fx-key': SECRET }),
    });
  const noDns: Resolver = async () => {
    throw Object.assign(new Error('no DNS in this test'), { code: 'ENOTFOUND' });
  };

  it.each([
    ['a private address', 'https://10.0.0.1/latest?from={base}'],
    ['the instance metadata address', 'https://169.254.169.254/latest/meta-data?from={base}'],
    ['loopback (AWS policy)', `https://127.0.0.1:${0}/latest?from={base}`],
  ])('refuses %s without connecting', async (_name, url) => {
    const awsFetch = createGuardedFetch({ policy: AWS_EGRESS, resolve: noDns });
    const error = await failureOf(jsonSource(url, awsFetch).fetch(['EUR→USD'], AT));
    expect(error.reason).toBe('egress_refused');
    expect(error.message).toBe('fx: destination refused by the egress policy');
    expect(asLogged(error)).not.toContain(SECRET);
  });

  it('refuses a name resolving to 127.0.0.1 under the AWS policy, without connecting', async () => {
    const awsFetch = createGuardedFetch({
      policy: { ...AWS_EGRESS, allowHttp: true },
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const error = await failureOf(
      jsonSource(`http://rates.example:${port}/latest?from={base}`, awsFetch).fetch(['EUR→USD'], AT),
    );
    expect(error.reason).toBe('egress_refused');
    expect(connections).toBe(0);
  });

  it('by default (no fetch given) refuses anything but https to public addresses', async () => {
    routes['/latest'] = { body: '{"rates":{"USD":"1.0845"}}' };
    expect((await failureOf(jsonSource(`${base}/latest?from={base}`).fetch(['EUR→USD'], AT))).reason).toBe(
      'egress_refused',
    );
    expect(
      (await failureOf(jsonSource(`https://127.0.0.1:${port}/latest?from={base}`).fetch(['EUR→USD'], AT)))
        .reason,
    ).toBe('egress_refused');
    expect(connections).toBe(0);
  });

  it('does not follow a redirect, to the provider itself or to a private address', async () => {
    routes['/latest'] = { status: 302, headers: { location: `${base}/moved` } };
    routes['/moved'] = { body: '{"rates":{"USD":"1.0845"}}' };
    expect(
      (await failureOf(jsonSource(`${base}/latest?from={base}`, localFetch).fetch(['EUR→USD'], AT))).reason,
    ).toBe('http_status');
    routes['/latest'] = { status: 307, headers: { location: 'http://169.254.169.254/latest/meta-data/' } };
    expect(
      (await failureOf(jsonSource(`${base}/latest?from={base}`, localFetch).fetch(['EUR→USD'], AT))).reason,
    ).toBe('http_status');
    expect(requests.map((request) => request.url)).toEqual(['/latest?from=EUR', '/latest?from=EUR']);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Ingestion: a source without its credential fails like an outage; the others carry on; the breaker counts.

class MemoryStateStore implements RateStateStore {
  readonly items = new Map<string, PairState>();
  async get(pair: string): Promise<PairState> {
    return structuredClone(this.items.get(pair) ?? { pair, version: 0, breaker: INITIAL_BREAKER, ticks: [] });
  }
  async put(state: PairState): Promise<SaveResult> {
    if ((this.items.get(state.pair)?.version ?? 0) !== state.version) return { saved: false };
    const next = structuredClone({ ...state, version: state.version + 1 });
    this.items.set(state.pair, next);
    return { saved: true, state: structuredClone(next) };
  }
}

class MemoryCatalog implements RatePublisher, CurrentRates {
  version = 1;
  rates: FxRate[] = [{ pair: 'EUR→USD', rate: '1.08', source: 'seed', method: 'provider', precision: 4 }];
  constructor(readonly policy: RatePolicy) {}
  async current() {
    return {
      fx_version: `fx-${this.version}`,
      base_currency: 'EUR',
      rates: structuredClone(this.rates),
      policy: this.policy,
    };
  }
  async publish(input: { rates: readonly FxRate[] }) {
    this.version += 1;
    this.rates = [
      ...this.rates.filter((rate) => !input.rates.some((next) => next.pair === rate.pair)),
      ...input.rates,
    ];
    return { fx_version: `fx-${this.version}` };
  }
}

describe('ingestion with a missing credential', () => {
  const log = captureLogLines();

  const run = async (policy: RatePolicy, secrets: SecretValues, runs: number) => {
    const catalog = new MemoryCatalog(policy);
    const journal: { entry_id: string; type: string; data: JsonValue }[] = [];
    const appender: JournalAppender = {
      append: async (entry) => {
        journal.push(entry);
        return { index: journal.length - 1, created: true };
      },
    };
    const state = new MemoryStateStore();
    const reports = [];
    for (let index = 0; index < runs; index += 1) {
      const now = new Date(AT.getTime() + index * 60_000);
      reports.push(
        await ingestRates(
          {
            sources: (inForce) => rateSourcesFor(onProvider(inForce), { fetch: localFetch, secrets }),
            state,
            publisher: catalog,
            heldTicks: { open: async () => ({ cr_id: 'cr_1' }) },
            journal: appender,
            current: catalog,
            clock: { now: () => now },
          },
          { traceId: `trc_${index}` },
        ),
      );
    }
    return { reports, journal, state, catalog };
  };

  const paid = {
    source_id: 'paid',
    kind: 'json',
    url: 'https://provider.example/paid?from={base}',
    rate_pointer: '/rates/{quote}',
    auth: { query_param: 'access_key', secret_ref: 'paid-key' },
  };
  const free = {
    source_id: 'free',
    kind: 'json',
    url: 'https://provider.example/free?from={base}',
    rate_pointer: '/rates/{quote}',
  };

  it('falls back to the next source, journaling credential_unavailable; nothing logged carries a secret', async () => {
    routes['/paid'] = { body: '{"rates":{"USD":"1.0900"}}' };
    routes['/free'] = { body: '{"rates":{"USD":"1.0850"}}' };
    const policy = policyWith([paid, free], [{ pair: 'EUR→USD', sources: ['paid', 'free'] }]);
    const { reports, journal, catalog } = await run(policy, memorySecrets({ 'other-key': SECRET }), 1);
    expect(reports[0]?.pairs[0]).toMatchObject({
      outcome: 'published',
      rate: '1.0850',
      source: 'free',
      failures: [{ source_id: 'paid', reason: 'credential_unavailable', fallback_to: 'free' }],
    });
    expect(catalog.rates[0]?.rate).toBe('1.0850');
    expect(journal.map((entry) => entry.data)).toContainEqual(
      expect.objectContaining({ decision: 'fallback', source: 'paid', reason: 'credential_unavailable' }),
    );
    expect(requests.map((request) => request.url)).toEqual(['/free?from=EUR']);
    // What the rates function would log, and the errors themselves through the service logger.
    const logger = createLogger({ serviceName: 'pricing-rates', logLevel: 'DEBUG' });
    logger.info('ingestion', { report: JSON.stringify(reports[0]) });
    const sources = rateSourcesFor(onProvider(policy), { fetch: localFetch, secrets: memorySecrets({}) });
    logger.error(
      'source failed',
      await failureOf(sources.get('paid')?.fetch(['EUR→USD'], AT) ?? Promise.resolve()),
    );
    const output = log.lines().join('');
    expect(output).toContain('credential paid-key unavailable');
    expect(output).not.toContain(SECRET);
    expect(JSON.stringify({ reports, journal, policy: catalog.policy })).not.toContain(SECRET);
  });

  it('with the credential present, the query parameter reaches the provider and no log or journal entry', async () => {
    routes['/paid'] = { body: '{"rates":{"USD":"1.0900"}}' };
    const policy = policyWith([paid]);
    const { reports, journal } = await run(policy, memorySecrets({ 'paid-key': SECRET }), 1);
    expect(reports[0]?.pairs[0]).toMatchObject({ outcome: 'published', rate: '1.0900', source: 'paid' });
    expect(requests.map((request) => request.url)).toEqual([`/paid?from=EUR&access_key=${SECRET}`]);
    createLogger({ serviceName: 'pricing-rates', logLevel: 'DEBUG' }).info('ingestion', {
      report: reports[0],
    });
    expect(log.lines().join('')).not.toContain(SECRET);
    expect(JSON.stringify({ reports, journal })).not.toContain(SECRET);
  });

  it('as the only source: the pair is unavailable and the breaker opens at its threshold', async () => {
    const policy = policyWith([paid]);
    const { reports, state } = await run(policy, memorySecrets({}), 3);
    expect(reports.map((report) => report.pairs[0]?.outcome)).toEqual([
      'unavailable',
      'unavailable',
      'breaker_open',
    ]);
    expect(reports[0]?.pairs[0]?.failures).toEqual([{ source_id: 'paid', reason: 'credential_unavailable' }]);
    expect(state.items.get('EUR→USD')?.breaker.status).toBe('open');
    expect(connections).toBe(0);
  });
});
