import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedFetch } from '../../../functions/adapters/http/guarded-http-client';
import {
  CryptoTickerRateSource,
  EcbRateSource,
  JsonRateSource,
  parseJsonExact,
  RateSourceError,
  rateOfJson,
  rateSourcesFor,
  resolvePointer,
  SimulatedRateSource,
} from '../../../functions/adapters/http/rate-sources';
import { SimulatedFeed } from '../../../functions/domain/rates/simulated';
import type { RatePolicy } from '../../../functions/schemas/rate-policy';

const FIXTURE = readFileSync(
  path.resolve(import.meta.dirname, '../../fixtures/ecb/eurofxref-daily.xml'),
  'utf8',
);
/** The fixture's day, 2024-01-04, at 16:30 CET. */
const AT = new Date('2024-01-04T15:30:00.000Z');

/** The test provider listens on loopback: the guarded GET under the local stack's egress policy. */
const loopbackFetch = createGuardedFetch({ policy: { allowHttp: true, allowedCidrs: ['127.0.0.0/8'] } });

type Answer = { status?: number; body?: string; headers?: Record<string, string>; hang?: boolean };
let routes: Record<string, Answer> = {};
const hits: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const answer = routes[req.url ?? ''] ?? { status: 404, body: 'not found' };
    if (answer.hang) return;
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  routes = {};
  hits.length = 0;
});

const failure = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RateSourceError);
  return (error as RateSourceError).reason;
};

describe('EcbRateSource', () => {
  const ecb = (overrides: Partial<ConstructorParameters<typeof EcbRateSource>[0]> = {}) =>
    new EcbRateSource({
      sourceId: 'ecb',
      url: `${base}/ecb.xml`,
      timeoutMs: 500,
      fetch: loopbackFetch,
      precisionOf: (pair) => (pair === 'GBP→USD' ? 6 : 4),
      ...overrides,
    });

  it('quotes direct, inverse and cross pairs at each pair precision; pairs it cannot derive are left out', async () => {
    routes['/ecb.xml'] = { body: FIXTURE, headers: { 'content-type': 'text/xml' } };
    const quotes = await ecb().fetch(['EUR→USD', 'USD->EUR', 'GBP→USD', 'EUR→BTC', 'EUR→EUR'], AT);
    expect(quotes).toEqual([
      { pair: 'EUR→USD', rate: '1.0953', source: 'ecb', observed_at: AT.toISOString() },
      { pair: 'USD→EUR', rate: '0.9130', source: 'ecb', observed_at: AT.toISOString() },
      { pair: 'GBP→USD', rate: '1.269501', source: 'ecb', observed_at: AT.toISOString() },
    ]);
  });

  it('refuses a file more than five days old or dated in the future', async () => {
    routes['/ecb.xml'] = { body: FIXTURE };
    expect(await failure(ecb().fetch(['EUR→USD'], new Date('2024-01-10T09:00:00.000Z')))).toBe('stale');
    expect((await ecb().fetch(['EUR→USD'], new Date('2024-01-09T09:00:00.000Z')))[0]?.rate).toBe('1.0953');
    expect(await failure(ecb().fetch(['EUR→USD'], new Date('2024-01-02T09:00:00.000Z')))).toBe('malformed');
  });

  it('turns a malformed document, an error status, a slow or oversized answer into a source failure', async () => {
    routes['/ecb.xml'] = { body: FIXTURE.replace("rate='1.0953'", "rate='1,0953'") };
    expect(await failure(ecb().fetch(['EUR→USD'], AT))).toBe('malformed');
    routes['/ecb.xml'] = { body: '<html>maintenance</html>', status: 200 };
    expect(await failure(ecb().fetch(['EUR→USD'], AT))).toBe('malformed');
    routes['/ecb.xml'] = { status: 503, body: 'busy' };
    expect(await failure(ecb().fetch(['EUR→USD'], AT))).toBe('http_status');
    routes['/ecb.xml'] = { hang: true };
    expect(await failure(ecb({ timeoutMs: 150 }).fetch(['EUR→USD'], AT))).toBe('timeout');
    routes['/ecb.xml'] = { body: 'x'.repeat(300 * 1024) };
    expect(await failure(ecb().fetch(['EUR→USD'], AT))).toBe('too_large');
    routes['/ecb.xml'] = { status: 302, headers: { location: `${base}/elsewhere` } };
    expect(await failure(ecb().fetch(['EUR→USD'], AT))).toBe('http_status');
    expect(await failure(ecb({ url: 'http://127.0.0.1:1/ecb.xml' }).fetch(['EUR→USD'], AT))).toBe('network');
  });

  it('refuses an answer that is not UTF-8, and a body larger than it declared', async () => {
    routes['/ecb.xml'] = { body: Buffer.from([0xff, 0xfe, 0x3c]).toString('latin1') };
    const latin1 = new EcbRateSource({
      sourceId: 'ecb',
      precisionOf: () => 4,
      fetch: async () => new Response(new Uint8Array([0xc3, 0x28])),
    });
    expect(await failure(latin1.fetch(['EUR→USD'], AT))).toBe('malformed');
    const declared = new EcbRateSource({
      sourceId: 'ecb',
      precisionOf: () => 4,
      fetch: async () => new Response('x', { headers: { 'content-length': String(10 * 1024 * 1024) } }),
    });
    expect(await failure(declared.fetch(['EUR→USD'], AT))).toBe('too_large');
    const empty = new EcbRateSource({
      sourceId: 'ecb',
      precisionOf: () => 4,
      fetch: async () => new Response(null),
    });
    expect(await failure(empty.fetch(['EUR→USD'], AT))).toBe('malformed');
  });

  it('uses the ECB daily URL by default', async () => {
    const seen: string[] = [];
    const source = new EcbRateSource({
      sourceId: 'ecb',
      precisionOf: () => 4,
      fetch: async (url) => {
        seen.push(url);
        return new Response(FIXTURE);
      },
    });
    await source.fetch(['EUR→USD'], AT);
    expect(seen).toEqual(['https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml']);
  });
});

describe('JsonRateSource', () => {
  const json = (url = `${base}/latest?from={base}`, pointer = '/rates/{quote}') =>
    new JsonRateSource({ sourceId: 'frankfurter', url, pointer, timeoutMs: 500, fetch: loopbackFetch });

  it('reads each pair at its pointer, one GET per distinct URL, numbers exactly as written', async () => {
    routes['/latest?from=EUR'] = {
      body: '{"base":"EUR","rates":{"USD":1.08450000000000000001,"GBP":"0.86278","JPY":157.91}}',
    };
    routes['/latest?from=USD'] = { body: '{"base":"USD","rates":{"EUR":0.913}}' };
    const quotes = await json().fetch(['EUR→USD', 'EUR→GBP', 'EUR->JPY', 'USD→EUR'], AT);
    expect(quotes.map((quote) => [quote.pair, quote.rate])).toEqual([
      ['EUR→USD', '1.08450000000000000001'],
      ['EUR→GBP', '0.86278'],
      ['EUR→JPY', '157.91'],
      ['USD→EUR', '0.913'],
    ]);
    expect(hits.sort()).toEqual(['/latest?from=EUR', '/latest?from=USD']);
  });

  it('leaves out pairs whose value is missing, not a positive plain decimal, or of the wrong type', async () => {
    routes['/latest?from=EUR'] = {
      body: '{"rates":{"USD":1e-5,"GBP":-0.86,"JPY":"abc","CHF":true,"SEK":{"v":1},"NOK":0}}',
    };
    expect(
      await json().fetch(['EUR→USD', 'EUR→GBP', 'EUR→JPY', 'EUR→CHF', 'EUR→SEK', 'EUR→NOK', 'EUR→DKK'], AT),
    ).toEqual([]);
  });

  it('fails when every document failed, and leaves out pairs of a failed document otherwise', async () => {
    routes['/latest?from=EUR'] = { body: '{"rates":' };
    expect(await failure(json().fetch(['EUR→USD'], AT))).toBe('malformed');
    routes['/latest?from=USD'] = { body: '{"rates":{"EUR":"0.913"}}' };
    expect((await json().fetch(['EUR→USD', 'USD→EUR'], AT)).map((quote) => quote.pair)).toEqual(['USD→EUR']);
    expect(await json().fetch([], AT)).toEqual([]);
  });
});

describe('CryptoTickerRateSource', () => {
  const ticker = (url = `${base}/products/{symbol}/ticker`, symbolTemplate?: string) =>
    new CryptoTickerRateSource({
      sourceId: 'coinbase',
      url,
      timeoutMs: 500,
      fetch: loopbackFetch,
      ...(symbolTemplate ? { symbolTemplate } : {}),
    });

  it('reads an exchange ticker {price, time}, one GET per symbol', async () => {
    routes['/products/BTC-EUR/ticker'] = {
      body: '{"trade_id":1,"price":"41000.12","size":"0.01","time":"2024-01-04T15:29:58.123456Z","volume":"1"}',
    };
    routes['/products/ETH-EUR/ticker'] = { body: '{"price":2100.5}' };
    const quotes = await ticker().fetch(['BTC→EUR', 'ETH->EUR'], AT);
    expect(quotes).toEqual([
      { pair: 'BTC→EUR', rate: '41000.12', source: 'coinbase', observed_at: '2024-01-04T15:29:58.123Z' },
      { pair: 'ETH→EUR', rate: '2100.5', source: 'coinbase', observed_at: AT.toISOString() },
    ]);
  });

  it('reads a spot price {data: {amount, base, currency}} with a custom symbol', async () => {
    routes['/v2/prices/USDT_EUR/spot'] = {
      body: '{"data":{"amount":"0.9201","base":"USDT","currency":"EUR"}}',
    };
    const quotes = await ticker(`${base}/v2/prices/{symbol}/spot`, '{base}_{quote}').fetch(['USDT→EUR'], AT);
    expect(quotes).toEqual([
      { pair: 'USDT→EUR', rate: '0.9201', source: 'coinbase', observed_at: AT.toISOString() },
    ]);
  });

  it.each([
    ['not an object', '["41000"]', 'not an object'],
    ['null', 'null', 'not an object'],
    ['neither shape', '{"last":"41000"}', 'neither price nor data.amount'],
    ['a price that is not a decimal', '{"price":"41k"}', 'not a positive decimal'],
    ['a zero price', '{"price":"0"}', 'not a positive decimal'],
    ['a time that is not ISO 8601', '{"price":"41000","time":"yesterday"}', 'not an ISO 8601 time'],
    ['a numeric time', '{"price":"41000","time":1704382198}', 'not an ISO 8601 time'],
    ['a time in the future', '{"price":"41000","time":"2024-01-04T15:35:00Z"}', 'in the future'],
    ['another pair', '{"data":{"amount":"0.92","base":"USDC","currency":"EUR"}}', 'answer is for USDC-EUR'],
    [
      'another quote currency',
      '{"data":{"amount":"0.92","base":"BTC","currency":"USD"}}',
      'answer is for BTC-USD',
    ],
    ['an array as data', '{"data":[1]}', 'neither price nor data.amount'],
  ])('refuses %s', async (_name, body, message) => {
    routes['/products/BTC-EUR/ticker'] = { body };
    const source = ticker();
    const error = await source.fetch(['BTC→EUR'], AT).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateSourceError);
    expect((error as RateSourceError).reason).toBe('malformed');
    expect((error as Error).message).toContain(message);
  });

  it('leaves out a pair whose request failed when others answered', async () => {
    routes['/products/BTC-EUR/ticker'] = { body: '{"price":"41000.12"}' };
    routes['/products/ETH-EUR/ticker'] = { status: 500 };
    expect((await ticker().fetch(['BTC→EUR', 'ETH→EUR'], AT)).map((quote) => quote.pair)).toEqual([
      'BTC→EUR',
    ]);
  });

  it('reports why when every request failed', async () => {
    routes['/products/BTC-EUR/ticker'] = { status: 429, body: '{"message":"slow down"}' };
    expect(await failure(ticker().fetch(['BTC→EUR'], AT))).toBe('http_status');
    routes['/products/BTC-EUR/ticker'] = { body: 'not json' };
    expect(await failure(ticker().fetch(['BTC→EUR'], AT))).toBe('malformed');
  });
});

describe('SimulatedRateSource', () => {
  const feed = () =>
    new SimulatedFeed({ seed: 7, start_rates: { 'EUR→USD': '1.0845', 'EUR→USDT': '1.0851' } });

  it('quotes the feed at the asked time', async () => {
    const simulated = feed();
    const quotes = await new SimulatedRateSource('sim', simulated).fetch(
      ['EUR→USD', 'EUR->USDT', 'EUR→GBP'],
      AT,
    );
    expect(quotes).toEqual([
      { pair: 'EUR→USD', rate: simulated.quote('EUR→USD', AT), source: 'sim', observed_at: AT.toISOString() },
      {
        pair: 'EUR→USDT',
        rate: simulated.quote('EUR→USDT', AT),
        source: 'sim',
        observed_at: AT.toISOString(),
      },
    ]);
  });

  it('fails the fetch in an outage of every pair asked, and leaves out pairs in a partial one', async () => {
    const simulated = feed();
    const source = new SimulatedRateSource('sim', simulated);
    simulated.setOutage(['EUR→USD']);
    expect((await source.fetch(['EUR→USD', 'EUR→USDT'], AT)).map((quote) => quote.pair)).toEqual([
      'EUR→USDT',
    ]);
    expect(await failure(source.fetch(['EUR→USD'], AT))).toBe('outage');
    simulated.setOutage('all');
    expect(await failure(source.fetch(['EUR→USD', 'EUR→USDT'], AT))).toBe('outage');
    expect(await source.fetch([], AT)).toEqual([]);
  });
});

describe('JSON helpers', () => {
  it('resolves RFC 6901 pointers, escapes and array indexes included', () => {
    const document = parseJsonExact('{"a/b":{"m~n":[10,{"x":"1.5"}]},"":{"":"empty"}}');
    expect(rateOfJson(resolvePointer(document, '/a~1b/m~0n/0'))).toBe('10');
    expect(resolvePointer(document, '/a~1b/m~0n/1/x')).toBe('1.5');
    expect(resolvePointer(document, '//')).toBe('empty');
    expect(resolvePointer(document, '')).toBe(document);
    expect(resolvePointer(document, '/a~1b/m~0n/01')).toBeUndefined();
    expect(resolvePointer(document, '/a~1b/m~0n/2')).toBeUndefined();
    expect(resolvePointer(document, '/missing/x')).toBeUndefined();
    expect(resolvePointer(document, '/a~1b/m~0n/0/deeper')).toBeUndefined();
    expect(resolvePointer(document, 'no-slash')).toBeUndefined();
    expect(resolvePointer(parseJsonExact('{"toString":1}'), '/constructor')).toBeUndefined();
  });
});

describe('rateSourcesFor', () => {
  const policy: RatePolicy = {
    sources: [
      { source_id: 'ecb', kind: 'ecb' },
      { source_id: 'fx', kind: 'json', url: 'https://fx.example/{base}', rate_pointer: '/{quote}' },
      {
        source_id: 'cb',
        kind: 'crypto_ticker',
        url: 'https://cb.example/{symbol}',
        symbol_template: '{base}{quote}',
      },
      { source_id: 'cb2', kind: 'crypto_ticker', url: 'https://cb.example/{symbol}' },
      { source_id: 'sim', kind: 'simulated' },
    ],
    pairs: [
      {
        pair: 'EUR->USD',
        sources: ['ecb', 'fx'],
        method: 'provider',
        interval_seconds: 86_400,
        publication_delay_seconds: 0,
        max_tick_move_bps: 100,
        precision: 5,
        stale_after_seconds: 86_400,
        max_age_seconds: 172_800,
      },
    ],
    breaker: { failure_threshold: 3, window_seconds: 600, open_seconds: 600 },
  };

  it('builds one source per policy source, with the pair precision for the ECB', async () => {
    const seen: string[] = [];
    const fetchStub = async (url: string) => {
      seen.push(url);
      if (url.includes('ecb')) return new Response(FIXTURE);
      if (url.startsWith('https://cb.example/BTCEUR')) return new Response('{"price":"41000"}');
      return new Response('{"USD":"1.09"}');
    };
    const registry = rateSourcesFor(policy, {
      fetch: fetchStub,
      simulatedFeed: new SimulatedFeed({ seed: 1, start_rates: { 'EUR→USD': '1.08' } }),
    });
    expect([...registry.keys()]).toEqual(['ecb', 'fx', 'cb', 'cb2', 'sim']);
    expect(registry.get('ecb')).toBeInstanceOf(EcbRateSource);
    expect(registry.get('sim')).toBeInstanceOf(SimulatedRateSource);
    expect(
      (await registry.get('ecb')?.fetch(['EUR→USD', 'EUR→GBP'], AT))?.map((quote) => quote.rate),
    ).toEqual(['1.09530', '0.862780000000']);
    expect((await registry.get('fx')?.fetch(['EUR→USD'], AT))?.[0]?.rate).toBe('1.09');
    expect((await registry.get('cb')?.fetch(['BTC→EUR'], AT))?.[0]?.rate).toBe('41000');
    await registry
      .get('cb2')
      ?.fetch(['BTC→EUR'], AT)
      .catch(() => undefined);
    expect(seen).toContain('https://cb.example/BTC-EUR');
  });

  it('needs a simulated feed for a simulated source', () => {
    expect(() => rateSourcesFor(policy)).toThrow('source sim is simulated, but no simulated feed was given');
  });
});
