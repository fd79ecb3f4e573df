/**
 * The load generator of `api.bench.ts`, in a worker thread: the client's HTTP work (requests, parsing answers,
 * timing) runs on its own thread and never queues behind the stack's event loop, as with autocannon or wrk in a
 * second process. Receives one scenario in `workerData`, posts back its samples and counts.
 */
import { Agent } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { type Measurement, measure } from './harness';
import { type Answer, send } from './http-send';

export interface LoadRequest {
  readonly scenario:
    | 'prices.cached'
    | 'prices.fresh'
    | 'prices.explain'
    | 'quote.10-lines'
    | 'quote.10-lines.explain';
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Makes the fresh scenario's cache keys unique to this run. */
  readonly run: string;
  readonly warmup: number;
  readonly durationMs: number;
  readonly concurrency: number;
}

export interface LoadResult {
  readonly measurement: Measurement;
  readonly errors: { readonly warmup: number; readonly measure: number };
  /** Measured answers by `X-Cache` value (`(none)` without the header). */
  readonly sources: Readonly<Record<string, number>>;
  readonly firstError: { readonly status: number; readonly body: string } | undefined;
  /** CPU time of the load generator thread (user + system), in ms. */
  readonly clientCpuMs: number;
}

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

const QUOTE_REQUESTS = [
  { items: BASKET, region: 'DE', currency: 'EUR', buyer_type: 'consumer' },
  { items: BASKET, region: 'US', currency: 'USD', buyer_type: 'consumer' },
] as const;

const QUOTE_BODIES = QUOTE_REQUESTS.map((request) => JSON.stringify(request));
/** The same baskets with `"explain": true` (C28). */
const EXPLAINED_QUOTE_BODIES = QUOTE_REQUESTS.map((request) => JSON.stringify({ ...request, explain: true }));

const caller = (load: LoadRequest, agent: Agent): ((n: number) => Promise<Answer>) => {
  const auth = { 'x-api-key': load.apiKey };
  const priceUrl = (query: Record<string, string>): URL => {
    const url = new URL('/catalog/prices', load.baseUrl);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    return url;
  };
  switch (load.scenario) {
    case 'prices.cached': {
      const urls = PRICE_SET.map((combination) => priceUrl(combination));
      return (n) => send(agent, urls[n % urls.length] as URL, 'GET', auth);
    }
    case 'prices.fresh':
      // A channel never seen before: a new cache key each time (no rule matches the channel, so the price is
      // the default one), computed and written to the shared tier. The tenant is the key's (C26).
      return (n) =>
        send(
          agent,
          priceUrl({
            ...PRICE_SET[n % PRICE_SET.length],
            channel: `web_${load.run}_${n}`,
          }),
          'GET',
          auth,
        );
    case 'prices.explain': {
      // The cached scenario's combinations with `explain=true` (C28): computed fresh every time, never cached.
      const urls = PRICE_SET.map((combination) => priceUrl({ ...combination, explain: 'true' }));
      return (n) => send(agent, urls[n % urls.length] as URL, 'GET', auth);
    }
    case 'quote.10-lines':
    case 'quote.10-lines.explain': {
      const url = new URL('/pricing/quote', load.baseUrl);
      const headers = { ...auth, 'content-type': 'application/json' };
      const bodies = load.scenario === 'quote.10-lines' ? QUOTE_BODIES : EXPLAINED_QUOTE_BODIES;
      return (n) => send(agent, url, 'POST', headers, bodies[n % bodies.length]);
    }
  }
};

const ok = (status: number): boolean => status >= 200 && status < 300;

const runLoad = async (load: LoadRequest): Promise<LoadResult> => {
  const agent = new Agent({ keepAlive: true, maxSockets: load.concurrency });
  const call = caller(load, agent);
  const errors = { warmup: 0, measure: 0 };
  const sources: Record<string, number> = {};
  let firstError: Answer | undefined;
  let n = 0;
  const cpuBefore = process.threadCpuUsage();
  try {
    const measurement = await measure(
      async (phase) => {
        const answer = await call(n++);
        if (!ok(answer.status)) {
          errors[phase] += 1;
          firstError ??= answer;
        } else if (phase === 'measure') {
          const source = answer.cache ?? '(none)';
          sources[source] = (sources[source] ?? 0) + 1;
        }
      },
      { warmup: load.warmup, durationMs: load.durationMs, concurrency: load.concurrency },
    );
    const cpu = process.threadCpuUsage(cpuBefore);
    return {
      measurement,
      errors,
      sources,
      firstError: firstError ? { status: firstError.status, body: firstError.body.slice(0, 300) } : undefined,
      clientCpuMs: (cpu.user + cpu.system) / 1000,
    };
  } finally {
    agent.destroy();
  }
};

if (parentPort) {
  const port = parentPort;
  runLoad(workerData as LoadRequest).then(
    (result) => port.postMessage(result),
    (error: unknown) => {
      throw error;
    },
  );
}
