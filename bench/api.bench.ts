/**
 * The storefront API through the local gateway with the demo catalog: `GET /catalog/prices` served from the
 * price cache (a few repeated combinations), `GET /catalog/prices` computed fresh (a unique `channel` per
 * request, so the cache key never repeats), `GET /catalog/prices?explain=true` (the cached combinations with
 * their explanation: computed fresh, bypassing the cache, C28), and `POST /pricing/quote` of a 10-line basket
 * (DE/EUR and US/USD alternately), without and with `"explain": true`. The explain scenarios run right after
 * their plain twins and the log ends with each pair side by side. In-memory stack; the load generator
 * (node:http keep-alive client, concurrency 16, about 10 s per scenario) runs in a worker thread so that it
 * never queues behind the stack's event loop.
 *
 * Targets on this machine: prices p95 ≤ 20 ms, quote p95 ≤ 50 ms (the specification allows 120 ms and 250 ms).
 * The gateway's rate limit is raised out of the way: this measures latency, not the limiter.
 * `API_SCENARIOS=prices.fresh,quote.10-lines` runs only those (for profiling one path).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { startLocalStack } from '../functions/composition/local/stack';
import type { LoadRequest, LoadResult } from './api-load.worker';
import {
  type BenchModule,
  type BenchResult,
  latencyResults,
  nowMs,
  processTreeCpuMs,
  randomSecret,
  stopBenchStack,
  summarize,
} from './harness';

const CONCURRENCY = 16;
const SCENARIOS: readonly LoadRequest['scenario'][] = [
  'prices.cached',
  'prices.fresh',
  'prices.explain',
  'quote.10-lines',
  'quote.10-lines.explain',
];
/** Explain scenarios and the plain scenario each is compared with. */
const EXPLAIN_TWINS: Partial<Record<LoadRequest['scenario'], LoadRequest['scenario']>> = {
  'prices.explain': 'prices.fresh',
  'quote.10-lines.explain': 'quote.10-lines',
};
/** Which `X-Cache` answers each scenario expects, reported as a ratio. */
const CACHE_RATIOS: Partial<Record<LoadRequest['scenario'], { metric: string; sources: readonly string[] }>> =
  {
    'prices.cached': { metric: 'hit ratio', sources: ['hit-local', 'hit-shared'] },
    'prices.fresh': { metric: 'miss ratio', sources: ['miss'] },
    'prices.explain': { metric: 'bypass ratio', sources: ['bypass'] },
  };

/** Runs one scenario's load in a worker thread (same loader as this process, so TypeScript runs as is). */
const runLoad = (load: LoadRequest): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./api-load.worker.ts', import.meta.url), { workerData: load });
    let answered = false;
    worker.once('message', (result: LoadResult) => {
      answered = true;
      resolve(result);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the load generator exited with code ${code} without a result`));
    });
  });

const bench: BenchModule = {
  name: 'api',
  description:
    'GET /catalog/prices (cached, fresh, explained) and POST /pricing/quote (10 lines, plain and explained) ' +
    'through the local gateway, demo catalog, concurrency 16; targets here: prices p95 ≤ 20 ms, quote p95 ≤ ' +
    '50 ms (spec: 120 ms, 250 ms)',
  run: async (ctx) => {
    ctx.log('starting the local stack in memory with the demo catalog');
    const apiKey = randomSecret('key_bench');
    const startedAt = nowMs();
    const stack = await startLocalStack({
      port: 0,
      apiKey,
      adminToken: randomSecret('adm_bench'),
      logLevel: 'SILENT',
      seedCatalog: JSON.parse(readFileSync(new URL('../catalog/demo-catalog.json', import.meta.url), 'utf8')),
      rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
    });
    const startMs = nowMs() - startedAt;
    try {
      ctx.log(`stack up at ${stack.url} in ${(startMs / 1000).toFixed(1)} s`);
      const results: BenchResult[] = [{ bench: 'api.stack', metric: 'start', value: startMs, unit: 'ms' }];
      const run = randomBytes(4).toString('hex');
      const only = process.env.API_SCENARIOS?.split(',').map((name) => name.trim());
      const summaries = new Map<LoadRequest['scenario'], ReturnType<typeof summarize>>();
      for (const scenario of SCENARIOS.filter((name) => !only || only.includes(name))) {
        const stackCpuBefore = process.threadCpuUsage();
        const javaBefore = processTreeCpuMs(stack.dynamoDbSupervisorPid);
        const load = await runLoad({
          scenario,
          baseUrl: stack.url,
          apiKey,
          run,
          warmup: 400,
          durationMs: 10_000,
          concurrency: CONCURRENCY,
        });
        const stackCpu = process.threadCpuUsage(stackCpuBefore);
        const javaAfter = processTreeCpuMs(stack.dynamoDbSupervisorPid);
        const summary = summarize(load.measurement);
        summaries.set(scenario, summary);
        if (load.firstError) {
          ctx.log(
            `${scenario}: ${load.errors.warmup} non-2xx in warm-up, ${load.errors.measure} measured; first: ` +
              `${load.firstError.status} ${load.firstError.body}`,
          );
        }
        ctx.log(
          `${scenario}: ${summary.count} requests in ${(load.measurement.elapsedMs / 1000).toFixed(2)} s, ` +
            `X-Cache ${JSON.stringify(load.sources)}`,
        );
        const name = `api.${scenario}`;
        // Per request, warm-up included in the CPU figures: the stack's thread (gateway, handlers, SDK clients,
        // fauxqs), DynamoDB Local's JVM, and the load generator's thread.
        const requests = summary.count + 400;
        const perRequest = (ms: number) => ms / requests;
        results.push(
          ...latencyResults(name, summary),
          { bench: name, metric: 'requests', value: summary.count, unit: 'count' },
          { bench: name, metric: 'errors', value: load.errors.measure, unit: 'count' },
          {
            bench: name,
            metric: 'stack cpu',
            value: perRequest((stackCpu.user + stackCpu.system) / 1000),
            unit: 'ms/req',
          },
          { bench: name, metric: 'client cpu', value: perRequest(load.clientCpuMs), unit: 'ms/req' },
        );
        if (javaBefore !== undefined && javaAfter !== undefined)
          results.push({
            bench: name,
            metric: 'ddb-local cpu',
            value: perRequest(javaAfter - javaBefore),
            unit: 'ms/req',
          });
        const expected = CACHE_RATIOS[scenario];
        if (expected) {
          const answered = Object.values(load.sources).reduce((total, count) => total + count, 0);
          const matching = expected.sources.reduce((total, source) => total + (load.sources[source] ?? 0), 0);
          results.push({
            bench: name,
            metric: expected.metric,
            value: answered > 0 ? matching / answered : 0,
            unit: 'ratio',
          });
        }
      }
      // Explain (C28) against its plain twin, side by side.
      for (const [explained, plain] of Object.entries(EXPLAIN_TWINS) as [
        LoadRequest['scenario'],
        LoadRequest['scenario'],
      ][]) {
        const withExplain = summaries.get(explained);
        const without = summaries.get(plain);
        if (!withExplain || !without) continue;
        ctx.log(
          `${plain} vs ${explained}: median ${without.median.toFixed(2)} / ${withExplain.median.toFixed(2)} ms, ` +
            `p95 ${without.p95.toFixed(2)} / ${withExplain.p95.toFixed(2)} ms, ` +
            `${without.opsPerSecond.toFixed(0)} / ${withExplain.opsPerSecond.toFixed(0)} req/s`,
        );
      }
      return results;
    } finally {
      await stopBenchStack(stack, undefined, ctx);
    }
  },
};

export default bench;
