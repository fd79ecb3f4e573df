/**
 * The storefront API through the local gateway with the demo catalog: `GET /catalog/prices` served from the
 * price cache (a few repeated combinations), `GET /catalog/prices` computed fresh (a unique `tenant` per
 * request, so the cache key never repeats) and `POST /pricing/quote` of a 10-line basket (DE/EUR and US/USD
 * alternately). In-memory stack, node:http keep-alive client, concurrency 16, about 10 s per scenario.
 *
 * Targets on this machine: prices p95 ≤ 20 ms, quote p95 ≤ 50 ms (the specification allows 120 ms and 250 ms).
 * The gateway's rate limit is raised out of the way: this measures latency, not the limiter.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, type OutgoingHttpHeaders, request } from 'node:http';
import { startLocalStack } from '../functions/adapters/local/stack';
import {
  type BenchModule,
  type BenchResult,
  latencyResults,
  measure,
  nowMs,
  stopBenchStack,
  summarize,
} from './harness';

const CONCURRENCY = 16;
const OPTIONS = { warmup: 400, durationMs: 10_000, concurrency: CONCURRENCY } as const;

const secret = (prefix: string): string => `${prefix}_${randomBytes(24).toString('base64url')}`;

interface Answer {
  /** HTTP status, 0 for a transport error. */
  readonly status: number;
  readonly cache: string | undefined;
  readonly body: string;
}

/** Resolves once the whole body has been read; never rejects. */
const send = (
  agent: Agent,
  url: URL,
  method: 'GET' | 'POST',
  headers: OutgoingHttpHeaders,
  body?: string,
): Promise<Answer> =>
  new Promise((resolve) => {
    const req = request(url, { agent, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', () => resolve({ status: 0, cache: undefined, body: '' }));
      res.on('end', () => {
        const cache = res.headers['x-cache'];
        resolve({
          status: res.statusCode ?? 0,
          cache: Array.isArray(cache) ? cache[0] : cache,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    req.on('error', (error) => resolve({ status: 0, cache: undefined, body: String(error) }));
    req.end(body);
  });

const ok = (status: number): boolean => status >= 200 && status < 300;

/** Combinations sellable in the demo catalog (region's display whitelist, currency not blocked there). */
const PRICE_SET = [
  { sku: 'GAME-STARFALL-PS5', currency: 'EUR', region: 'DE' },
  { sku: 'GAME-IRONVALE-PS5', currency: 'EUR', region: 'DE' },
  { sku: 'MERCH-TEE-STARFALL-M', currency: 'EUR', region: 'DE' },
  { sku: 'GAME-STARFALL-PS5', currency: 'USD', region: 'US' },
  { sku: 'DIG-STARFALL-SEASON', currency: 'USD', region: 'US' },
  { sku: 'BOOK-ART-STARFALL', currency: 'GBP', region: 'GB' },
  { sku: 'GAME-PIXELKART-SWITCH', currency: 'GBP', region: 'GB' },
  { sku: 'BNDL-STARFALL-FAN', currency: 'EUR', region: 'FR' },
] as const;

const BASKET = [
  { sku_id: 'GAME-STARFALL-PS5', quantity: 2 },
  { sku_id: 'GAME-IRONVALE-PS5', quantity: 1 },
  { sku_id: 'GAME-PIXELKART-SWITCH', quantity: 1 },
  { sku_id: 'DIG-STARFALL-SEASON', quantity: 1 },
  { sku_id: 'DIG-IRONVALE-DLC1', quantity: 3 },
  { sku_id: 'MERCH-TEE-STARFALL-M', quantity: 2 },
  { sku_id: 'MERCH-MUG-PIXELKART', quantity: 1 },
  { sku_id: 'BOOK-ART-STARFALL', quantity: 1 },
  { sku_id: 'BOOK-NOVEL-IRONVALE', quantity: 1 },
  { sku_id: 'BNDL-STARFALL-FAN', quantity: 1 },
] as const;

const QUOTE_BODIES = [
  JSON.stringify({ items: BASKET, region: 'DE', currency: 'EUR', buyer_type: 'consumer' }),
  JSON.stringify({ items: BASKET, region: 'US', currency: 'USD', buyer_type: 'consumer' }),
] as const;

interface Scenario {
  readonly name: string;
  /** One request; `n` counts every request of the scenario (warm-up included) from 0. */
  readonly call: (n: number) => Promise<Answer>;
  /** Report the share of answers with these `X-Cache` values. */
  readonly cacheRatio?: { readonly metric: string; readonly sources: readonly string[] };
}

const bench: BenchModule = {
  name: 'api',
  description:
    'GET /catalog/prices (cached, fresh) and POST /pricing/quote (10 lines) through the local gateway, demo ' +
    'catalog, concurrency 16; targets here: prices p95 ≤ 20 ms, quote p95 ≤ 50 ms (spec: 120 ms, 250 ms)',
  run: async (ctx) => {
    ctx.log('starting the local stack in memory with the demo catalog');
    const apiKey = secret('key_bench');
    const startedAt = nowMs();
    const stack = await startLocalStack({
      port: 0,
      apiKey,
      adminToken: secret('adm_bench'),
      logLevel: 'SILENT',
      seedCatalog: JSON.parse(readFileSync(new URL('../catalog/demo-catalog.json', import.meta.url), 'utf8')),
      rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
    });
    const startMs = nowMs() - startedAt;
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      ctx.log(`stack up at ${stack.url} in ${(startMs / 1000).toFixed(1)} s`);
      const results: BenchResult[] = [{ bench: 'api.stack', metric: 'start', value: startMs, unit: 'ms' }];
      const auth = { 'x-api-key': apiKey };
      const jsonAuth = { ...auth, 'content-type': 'application/json' };
      const priceUrl = (query: Record<string, string>): URL => {
        const url = new URL('/catalog/prices', stack.url);
        for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
        return url;
      };
      const cachedUrls = PRICE_SET.map((combination) => priceUrl(combination));
      const quoteUrl = new URL('/pricing/quote', stack.url);
      const run = randomBytes(4).toString('hex');

      const scenarios: Scenario[] = [
        {
          name: 'prices.cached',
          call: (n) => send(agent, cachedUrls[n % cachedUrls.length] as URL, 'GET', auth),
          cacheRatio: { metric: 'hit ratio', sources: ['hit-local', 'hit-shared'] },
        },
        {
          name: 'prices.fresh',
          // A tenant never seen before: a new cache key each time (no basket policy matches it, so the price is
          // the default one), computed and written to the shared tier.
          call: (n) =>
            send(
              agent,
              priceUrl({
                ...PRICE_SET[n % PRICE_SET.length],
                tenant: `bench-${run}-${n}`,
                channel: `web_${n}`,
              }),
              'GET',
              auth,
            ),
          cacheRatio: { metric: 'miss ratio', sources: ['miss'] },
        },
        {
          name: 'quote.10-lines',
          call: (n) => send(agent, quoteUrl, 'POST', jsonAuth, QUOTE_BODIES[n % QUOTE_BODIES.length]),
        },
      ];

      for (const scenario of scenarios) {
        const errors = { warmup: 0, measure: 0 };
        const sources = new Map<string, number>();
        let firstError: Answer | undefined;
        let n = 0;
        const cpuBefore = process.cpuUsage();
        const measurement = await measure(async (phase) => {
          const answer = await scenario.call(n++);
          if (!ok(answer.status)) {
            errors[phase] += 1;
            firstError ??= answer;
          } else if (phase === 'measure') {
            const source = answer.cache ?? '(none)';
            sources.set(source, (sources.get(source) ?? 0) + 1);
          }
        }, OPTIONS);
        const cpu = process.cpuUsage(cpuBefore);
        const summary = summarize(measurement);
        if (firstError) {
          ctx.log(
            `${scenario.name}: ${errors.warmup} non-2xx in warm-up, ${errors.measure} measured; first: ` +
              `${firstError.status} ${firstError.body.slice(0, 300)}`,
          );
        }
        ctx.log(
          `${scenario.name}: ${summary.count} requests in ${(measurement.elapsedMs / 1000).toFixed(2)} s, ` +
            `X-Cache ${JSON.stringify(Object.fromEntries(sources))}`,
        );
        const name = `api.${scenario.name}`;
        results.push(
          ...latencyResults(name, summary),
          { bench: name, metric: 'requests', value: summary.count, unit: 'count' },
          { bench: name, metric: 'errors', value: errors.measure, unit: 'count' },
        );
        if (scenario.cacheRatio) {
          const answered = [...sources.values()].reduce((total, count) => total + count, 0);
          const matching = scenario.cacheRatio.sources.reduce(
            (total, source) => total + (sources.get(source) ?? 0),
            0,
          );
          results.push({
            bench: name,
            metric: scenario.cacheRatio.metric,
            value: answered > 0 ? matching / answered : 0,
            unit: 'ratio',
          });
        }
        // CPU of this whole Node process (client, gateway, handlers, SDK clients, fauxqs); Java's DynamoDB
        // Local is not included.
        results.push({
          bench: name,
          metric: 'proc cpu',
          value: (cpu.user + cpu.system) / 1000 / summary.count,
          unit: 'ms/req',
        });
      }
      return results;
    } finally {
      await stopBenchStack(stack, agent, ctx);
    }
  },
};

export default bench;
