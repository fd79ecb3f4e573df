/**
 * The load generator of `load.bench.ts`, in a worker thread (as `api-load.worker.ts` is for the api bench), so
 * that sending, timing and the webhook receiver never queue behind the stack's event loop.
 *
 * Open model: request i is due at `start + i / rate`, whatever happened to the earlier ones (no closed loop, so
 * a slow stack cannot slow the arrivals down and hide its queue: coordinated omission). Each latency is taken
 * from the request's scheduled time to the end of its response body, so time spent waiting in the client (a
 * late timer, a socket not yet free) counts as the stack's. What each request does is drawn from a seeded
 * generator, so two runs at the same rate send the same sequence.
 */
import { Agent, createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { nowMs } from './harness';
import { type Answer, header, send as sendRequest } from './http-send';

/** `workerData.role` of this module's thread (the module is also imported, for its types and constants). */
export const LOAD_ROLE = 'load-generator';

export const OPERATIONS = ['prices', 'quote', 'commit', 'receipt', 'event'] as const;
export type LoadOperation = (typeof OPERATIONS)[number];

/** How each operation shows in the report. */
export const OPERATION_ROUTES: Readonly<Record<LoadOperation, string>> = {
  prices: 'GET /catalog/prices',
  quote: 'POST /pricing/quote',
  commit: 'POST /pricing/commit',
  receipt: 'GET /receipts/{receipt_id}',
  event: 'POST /webhooks/events',
};

/**
 * The mix, in requests per 1 000. Price reads: `hot` is the plain storefront read of a sellable (SKU, region,
 * currency), Zipf-distributed so a few SKUs take most reads (cached after their first read); `variant` adds one
 * of 40 channels on the 20 hottest combinations (a bounded set of keys: cached once seen); `fresh` names a
 * channel never seen before (always a miss, computed and written to the shared tier).
 * Quotes are baskets of 1 to 4 lines; a commit takes the oldest quote not yet committed; a receipt read
 * takes a random receipt committed earlier; an event is a `payout.processed` for one loopback endpoint.
 */
export const MIX_PER_MILLE = {
  'prices.hot': 750,
  'prices.variant': 70,
  'prices.fresh': 40,
  quote: 80,
  commit: 20,
  receipt: 30,
  event: 10,
} as const;
type Draw = keyof typeof MIX_PER_MILLE;

export interface LoadConfig {
  readonly role: typeof LOAD_ROLE;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly adminToken: string;
  /** Requests per second of the measured phase. */
  readonly rate: number;
  readonly durationMs: number;
  /** Warm-up: five equal steps at 20 %…100 % of the rate, not recorded. */
  readonly warmupMs: number;
  /** Combinations to probe; those answered 200 make up the price reads and the baskets. */
  readonly candidates: readonly {
    readonly sku: string;
    readonly region: string;
    readonly currency: string;
  }[];
  /** Makes the keys (tenants, idempotency keys, payout ids) of this run its own. */
  readonly run: string;
  readonly seed: number;
}

/** Status classes; `network` is a transport error or a request without an answer within the timeout. */
export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx' | 'network';
export const STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '5xx', 'network'];

/** One failed request (5xx, network error or unexpected 4xx), for the report. */
export interface FailureSample {
  readonly operation: LoadOperation;
  readonly request: string;
  readonly status: number;
  readonly body: string;
  readonly traceId: string | undefined;
  /** Milliseconds since the measured phase began. */
  readonly atMs: number;
}

export interface OperationFigures {
  /** Latency (ms) from scheduled send to response end, one per answered or failed request. */
  readonly latencies: number[];
  readonly statuses: Record<StatusClass, number>;
  rateLimited: number;
}

export interface LoadOutcome {
  readonly operations: Record<LoadOperation, OperationFigures>;
  /** Price read latencies by `X-Cache` (`hit-local`, `hit-shared`, `miss`). */
  readonly cacheLatencies: Record<string, number[]>;
  /** All latencies by the window of the measured phase they were scheduled in (`WINDOW_MS` each). */
  readonly windows: number[][];
  readonly sent: number;
  /** Scheduled time of the first request to the end of the last response (ms). */
  readonly windowMs: number;
  /** First scheduled to last actual send (ms). */
  readonly sendWindowMs: number;
  /** Actual send time minus scheduled time (ms), per request: how far the generator itself fell behind. */
  readonly sendLagP99Ms: number;
  readonly sendLagMaxMs: number;
  readonly failures: FailureSample[];
  readonly unexpected4xx: FailureSample[];
  /** `fx_version`s seen in price answers, in order of first sight (a publication during the run adds one). */
  readonly fxVersions: string[];
  readonly webhooks: { readonly accepted: number; readonly delivered: number; readonly duplicates: number };
  readonly sellable: number;
  readonly clientCpuMs: number;
}

export type LoadMessage =
  | { readonly type: 'log'; readonly line: string }
  | { readonly type: 'measure-start' }
  | { readonly type: 'measure-end' }
  | { readonly type: 'result'; readonly result: LoadOutcome };

/** A request that got no answer in this long is a network error (a Lambda's own timeouts are 10 to 30 s). */
const REQUEST_TIMEOUT_MS = 30_000;
/** After the last send: how long accepted events may take to reach the receiver. */
const WEBHOOK_DRAIN_MS = 10_000;
const MAX_SAMPLES_KEPT = 10;
/** Latencies are also kept by window of scheduled time, to show whether a queue builds up during the run. */
export const WINDOW_MS = 10_000;

/** Sends one request of the load; one that gets no answer in REQUEST_TIMEOUT_MS counts as a network error. */
const send = (agent: Agent, url: URL, method: 'GET' | 'POST', headers: OutgoingHttpHeaders, body?: string) =>
  sendRequest(agent, url, method, headers, body, REQUEST_TIMEOUT_MS);

/** mulberry32: a small seeded generator, so a run's sequence of requests is reproducible. */
const seeded = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

/** Index in 0..n-1, Zipf-distributed with exponent `s` (index 0 the most frequent). */
const zipf = (n: number, s: number): ((u: number) => number) => {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= n; rank += 1) {
    total += 1 / rank ** s;
    cumulative.push(total);
  }
  return (u) => {
    const target = u * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((cumulative[middle] as number) < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
};

const classOf = (status: number): StatusClass =>
  status === 0 ? 'network' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fisher–Yates with the run's generator. */
const shuffled = <T>(items: readonly T[], random: () => number): T[] => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
};

interface Combination {
  readonly sku: string;
  readonly region: string;
  readonly currency: string;
}

const runLoad = async (config: LoadConfig): Promise<void> => {
  const port = parentPort;
  if (!port) throw new Error('the load generator runs in a worker thread');
  const post = (message: LoadMessage) => port.postMessage(message);
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const base = config.baseUrl;
  const apiHeaders = { 'x-api-key': config.apiKey };
  const adminHeaders = { authorization: `Bearer ${config.adminToken}` };
  const json = { 'content-type': 'application/json' };

  // The webhook receiver: counts first arrivals by event id.
  const received = new Set<string>();
  let duplicates = 0;
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const eventId = header(req.headers['x-event-id']);
      if (eventId !== undefined) {
        if (received.has(eventId)) duplicates += 1;
        else received.add(eventId);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/v1`;
  const endpoint = await send(
    agent,
    new URL('/webhooks/endpoints', base),
    'POST',
    { ...adminHeaders, ...json },
    JSON.stringify({ url: receiverUrl, topics: ['payout'], description: 'load test receiver' }),
  );
  if (endpoint.status !== 201) throw new Error(`endpoint not created: ${endpoint.status} ${endpoint.body}`);

  // Which combinations the catalog sells: one plain read each (which also puts them in the price cache, as a
  // warm-up before a campaign would).
  const sellable: Combination[] = [];
  const priceUrl = (query: Record<string, string>): URL => {
    const url = new URL('/catalog/prices', base);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    return url;
  };
  for (let index = 0; index < config.candidates.length; index += 16) {
    const slice = config.candidates.slice(index, index + 16);
    const answers = await Promise.all(
      slice.map((combination) => send(agent, priceUrl({ ...combination }), 'GET', apiHeaders)),
    );
    answers.forEach((answer, offset) => {
      if (answer.status === 200) sellable.push(slice[offset] as Combination);
    });
  }
  if (sellable.length === 0) throw new Error('no sellable combination answered 200');
  post({
    type: 'log',
    line: `${sellable.length} of ${config.candidates.length} (SKU, region, currency) combinations sellable`,
  });

  const random = seeded(config.seed);
  // Hot SKUs: the sellable combinations in a seeded random order, read with Zipf(1.1) popularity.
  const hot = shuffled(sellable, random);
  const hotIndex = zipf(hot.length, 1.1);
  const byMarket = new Map<string, string[]>();
  for (const { sku, region, currency } of sellable) {
    const market = `${region}:${currency}`;
    byMarket.set(market, [...(byMarket.get(market) ?? []), sku]);
  }
  const markets = [...byMarket.entries()];
  const draws: Draw[] = [];
  for (const [draw, perMille] of Object.entries(MIX_PER_MILLE) as [Draw, number][]) {
    for (let count = 0; count < perMille; count += 1) draws.push(draw);
  }

  // Phase state: what the requests of a phase record, and the pools commits and receipt reads draw from.
  let recording = false;
  let measureStart = 0;
  const quotes: { quote_id: string; signature: string }[] = [];
  const receipts: string[] = [];
  const acceptedEvents = new Set<string>();
  const fxVersions: string[] = [];
  const operations = Object.fromEntries(
    OPERATIONS.map((operation) => [
      operation,
      {
        latencies: [] as number[],
        statuses: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, network: 0 },
        rateLimited: 0,
      },
    ]),
  ) as Record<LoadOperation, OperationFigures>;
  const cacheLatencies: Record<string, number[]> = {};
  const windows: number[][] = [];
  const failures: FailureSample[] = [];
  const unexpected4xx: FailureSample[] = [];
  const sendLags: number[] = [];
  let lastCompletion = 0;
  let sequence = 0;
  let inFlight = 0;

  const fxOf = /"fx_version":"([^"]+)"/;
  const noteFx = (body: string) => {
    const version = fxOf.exec(body)?.[1];
    if (version && !fxVersions.includes(version)) fxVersions.push(version);
  };

  /** Builds the request for a draw: operation, description and the call. */
  const prepare = (
    draw: Draw,
  ): { operation: LoadOperation; describe: string; call: () => Promise<Answer> } | undefined => {
    const n = sequence++;
    const idempotency = { 'idempotency-key': `load-${config.run}-${n}` };
    switch (draw) {
      case 'prices.hot': {
        const combination = hot[hotIndex(random())] as Combination;
        const url = priceUrl({ ...combination });
        return {
          operation: 'prices',
          describe: `GET ${url.pathname}${url.search}`,
          call: () => send(agent, url, 'GET', apiHeaders),
        };
      }
      case 'prices.variant': {
        const combination = hot[Math.floor(random() * Math.min(20, hot.length))] as Combination;
        const url = priceUrl({
          ...combination,
          // 40 channel variants (the tenant is the caller key's, C26): cached once seen.
          channel: `${random() < 0.5 ? 'web' : 'app'}-${Math.floor(random() * 20)}`,
        });
        return {
          operation: 'prices',
          describe: `GET ${url.pathname}${url.search}`,
          call: () => send(agent, url, 'GET', apiHeaders),
        };
      }
      case 'prices.fresh': {
        const combination = hot[Math.floor(random() * hot.length)] as Combination;
        const url = priceUrl({ ...combination, channel: `load-${config.run}-${n}` });
        return {
          operation: 'prices',
          describe: `GET ${url.pathname}${url.search}`,
          call: () => send(agent, url, 'GET', apiHeaders),
        };
      }
      case 'quote': {
        const [market, skus] = markets[Math.floor(random() * markets.length)] as [string, string[]];
        const [region, currency] = market.split(':') as [string, string];
        const lines = 1 + Math.floor(random() * Math.min(4, skus.length));
        const chosen = shuffled(skus, random).slice(0, lines);
        const body = JSON.stringify({
          items: chosen.map((sku_id) => ({ sku_id, quantity: 1 + Math.floor(random() * 3) })),
          region,
          currency,
          buyer_type: 'consumer',
        });
        const url = new URL('/pricing/quote', base);
        return {
          operation: 'quote',
          describe: `POST /pricing/quote ${body}`,
          call: async () => {
            const answer = await send(agent, url, 'POST', { ...apiHeaders, ...json, ...idempotency }, body);
            if (answer.status === 201) {
              const quote = JSON.parse(answer.body) as { quote_id: string; signature: string };
              quotes.push({ quote_id: quote.quote_id, signature: quote.signature });
            }
            return answer;
          },
        };
      }
      case 'commit': {
        const quote = quotes.shift();
        if (!quote) return undefined;
        const body = JSON.stringify(quote);
        const url = new URL('/pricing/commit', base);
        return {
          operation: 'commit',
          describe: `POST /pricing/commit ${body}`,
          call: async () => {
            const answer = await send(agent, url, 'POST', { ...apiHeaders, ...json, ...idempotency }, body);
            if (answer.status === 201)
              receipts.push((JSON.parse(answer.body) as { receipt_id: string }).receipt_id);
            return answer;
          },
        };
      }
      case 'receipt': {
        const receiptId = receipts[Math.floor(random() * receipts.length)];
        if (receiptId === undefined) return undefined;
        const url = new URL(`/receipts/${receiptId}`, base);
        return {
          operation: 'receipt',
          describe: `GET ${url.pathname}`,
          call: () => send(agent, url, 'GET', apiHeaders),
        };
      }
      case 'event': {
        const measured = recording;
        const body = JSON.stringify({
          type: 'payout.processed',
          tenant: 'load',
          producer: 'payments',
          data: {
            payout_id: `po_load_${config.run}_${n}`,
            status: 'paid',
            amount_minor: 1000 + Math.floor(random() * 100_000),
            currency: 'EUR',
          },
        });
        const url = new URL('/webhooks/events', base);
        return {
          operation: 'event',
          describe: `POST /webhooks/events ${body}`,
          call: async () => {
            const answer = await send(agent, url, 'POST', { ...adminHeaders, ...json, ...idempotency }, body);
            if (answer.status === 202 && measured)
              acceptedEvents.add((JSON.parse(answer.body) as { event_id: string }).event_id);
            return answer;
          },
        };
      }
    }
  };

  /** A commit or receipt read with nothing to act on yet (only early in the warm-up) reads a price instead. */
  const nextRequest = () =>
    prepare(draws[Math.floor(random() * draws.length)] as Draw) ??
    (prepare('prices.hot') as NonNullable<ReturnType<typeof prepare>>);

  const fire = (scheduledAt: number) => {
    const planned = nextRequest();
    const sentAt = nowMs();
    const record = recording;
    if (record) sendLags.push(sentAt - scheduledAt);
    inFlight += 1;
    planned.call().then((answer) => {
      inFlight -= 1;
      const done = nowMs();
      if (!record) return;
      lastCompletion = Math.max(lastCompletion, done);
      const latency = done - scheduledAt;
      const figures = operations[planned.operation];
      figures.latencies.push(latency);
      const window = Math.max(0, Math.floor((scheduledAt - measureStart) / WINDOW_MS));
      windows[window] ??= [];
      windows[window].push(latency);
      const statusClass = classOf(answer.status);
      figures.statuses[statusClass] += 1;
      if (answer.status === 429) figures.rateLimited += 1;
      if (planned.operation === 'prices' && answer.status === 200) {
        const source = answer.cache ?? '(none)';
        cacheLatencies[source] ??= [];
        cacheLatencies[source].push(latency);
        noteFx(answer.body);
      }
      const sample = (): FailureSample => ({
        operation: planned.operation,
        request: planned.describe.slice(0, 400),
        status: answer.status,
        body: answer.body.slice(0, 400),
        traceId: answer.traceId,
        atMs: Math.round(scheduledAt - measureStart),
      });
      if ((statusClass === '5xx' || statusClass === 'network') && failures.length < MAX_SAMPLES_KEPT)
        failures.push(sample());
      else if (statusClass === '4xx' && unexpected4xx.length < MAX_SAMPLES_KEPT) unexpected4xx.push(sample());
    });
  };

  /** Sends at `rate` for `durationMs`, each request at its scheduled time; resolves after the last send. */
  const phase = (
    rate: number,
    durationMs: number,
  ): Promise<{ sent: number; start: number; lastSend: number }> =>
    new Promise((resolve) => {
      const total = Math.max(1, Math.round((durationMs / 1000) * rate));
      const intervalMs = 1000 / rate;
      const start = nowMs();
      let next = 0;
      let lastSend = start;
      const tick = () => {
        const now = nowMs();
        while (next < total && start + next * intervalMs <= now) {
          fire(start + next * intervalMs);
          next += 1;
          lastSend = nowMs();
        }
        if (next >= total) resolve({ sent: total, start, lastSend });
        else setTimeout(tick, Math.max(0, start + next * intervalMs - nowMs()));
      };
      tick();
    });

  const settle = async (limitMs: number) => {
    const deadline = nowMs() + limitMs;
    while (inFlight > 0 && nowMs() < deadline) await sleep(10);
  };

  // Warm-up: function instances, JIT, connections, the pools of quotes and receipts.
  const step = config.warmupMs / 5;
  for (const share of [0.2, 0.4, 0.6, 0.8, 1]) await phase(config.rate * share, step);
  await settle(REQUEST_TIMEOUT_MS);
  post({
    type: 'log',
    line: `warm-up done: ${quotes.length} open quotes and ${receipts.length} receipts to draw from`,
  });

  post({ type: 'measure-start' });
  const cpuBefore = process.threadCpuUsage();
  recording = true;
  measureStart = nowMs();
  const measured = await phase(config.rate, config.durationMs);
  await settle(REQUEST_TIMEOUT_MS + 1_000);
  recording = false;
  const deadline = measured.lastSend + WEBHOOK_DRAIN_MS;
  while ([...acceptedEvents].some((id) => !received.has(id)) && nowMs() < deadline) await sleep(20);
  const cpu = process.threadCpuUsage(cpuBefore);
  post({ type: 'measure-end' });

  const lags = sendLags.sort((a, b) => a - b);
  const delivered = [...acceptedEvents].filter((id) => received.has(id)).length;
  agent.destroy();
  await new Promise<void>((resolve) => {
    receiver.close(() => resolve());
    receiver.closeAllConnections();
  });
  post({
    type: 'result',
    result: {
      operations,
      cacheLatencies,
      windows: Array.from(windows, (samples) => samples ?? []),
      sent: measured.sent,
      windowMs: Math.max(lastCompletion, measured.lastSend) - measured.start,
      sendWindowMs: measured.lastSend - measured.start,
      sendLagP99Ms: lags[Math.max(0, Math.ceil(lags.length * 0.99) - 1)] ?? 0,
      sendLagMaxMs: lags.at(-1) ?? 0,
      failures,
      unexpected4xx,
      fxVersions,
      webhooks: { accepted: acceptedEvents.size, delivered, duplicates },
      sellable: sellable.length,
      clientCpuMs: (cpu.user + cpu.system) / 1000,
    },
  });
};

if (!isMainThread && (workerData as Partial<LoadConfig> | null)?.role === LOAD_ROLE) {
  // A failure rejects here and ends the thread with an error, which the main thread reports.
  void runLoad(workerData as LoadConfig);
}
