/**
 * `GET /health` round trip through the local gateway: HTTP parsing, routing, the proxy event, the `api`
 * function pool and the health operation, whose probes call DynamoDB Local, fauxqs SQS and fauxqs S3.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { startLocalStack } from '../functions/composition/local/stack';
import {
  type BenchModule,
  type BenchResult,
  latencyResults,
  measure,
  nowMs,
  stopBenchStack,
  summarize,
} from './harness';

const SEQUENTIAL = { warmup: 50, iterations: 500, concurrency: 1 } as const;
const CONCURRENT = { warmup: 50, durationMs: 3_000, concurrency: 16 } as const;

const secret = (prefix: string): string => `${prefix}_${randomBytes(24).toString('base64url')}`;

/** Resolves with the status code (0 for a transport error), after the body has been read. */
const get = (agent: Agent, url: URL): Promise<number> =>
  new Promise((resolve) => {
    const req = request(url, { agent, method: 'GET' }, (res) => {
      res.on('error', () => resolve(0));
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.resume();
    });
    req.on('error', () => resolve(0));
    req.end();
  });

const bench: BenchModule = {
  name: 'health',
  description: 'GET /health through the local gateway (in-memory stack, node:http keep-alive client)',
  run: async (ctx) => {
    ctx.log('starting the local stack in memory');
    const startedAt = nowMs();
    const stack = await startLocalStack({
      port: 0,
      apiKey: secret('key_bench'),
      adminToken: secret('adm_bench'),
      logLevel: 'SILENT',
    });
    const startMs = nowMs() - startedAt;
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENT.concurrency });
    try {
      const url = new URL('/health', stack.url);
      ctx.log(
        `stack up at ${stack.url} in ${(startMs / 1000).toFixed(1)} s (DynamoDB Local ${stack.dynamoDbEndpoint})`,
      );
      const results: BenchResult[] = [{ bench: 'health.stack', metric: 'start', value: startMs, unit: 'ms' }];

      for (const [label, options] of [
        ['sequential', SEQUENTIAL],
        ['concurrent', CONCURRENT],
      ] as const) {
        const errors = { warmup: 0, measure: 0 };
        const cpuBefore = process.cpuUsage();
        const measurement = await measure(async (phase) => {
          if ((await get(agent, url)) !== 200) errors[phase] += 1;
        }, options);
        // CPU of this whole Node process over the run: the benchmark's own HTTP client as well as the gateway, the
        // SDK clients, in-process fauxqs and the pollers (Java's DynamoDB Local is not included).
        const cpu = process.cpuUsage(cpuBefore);
        if (errors.warmup > 0) ctx.log(`${label}: ${errors.warmup} non-200 answers during warm-up`);
        const summary = summarize(measurement);
        ctx.log(
          `${label}: ${summary.count} requests, concurrency ${measurement.concurrency}, ` +
            `${(measurement.elapsedMs / 1000).toFixed(2)} s`,
        );
        const bench = `health.${label}`;
        results.push(
          ...latencyResults(bench, summary),
          { bench, metric: 'requests', value: summary.count, unit: 'count' },
          { bench, metric: 'errors', value: errors.measure, unit: 'count' },
          {
            bench,
            metric: 'proc cpu',
            value: (cpu.user + cpu.system) / 1000 / summary.count,
            unit: 'ms/req',
          },
        );
      }

      // Where a sequential request's time goes: each health probe on its own, without HTTP in front.
      for (const probe of stack.deps.healthProbes) {
        const summary = summarize(await measure(() => probe.check(), { warmup: 20, iterations: 200 }));
        results.push(...latencyResults(`health.probe.${probe.component}`, summary, ['median', 'p95']));
      }
      return results;
    } finally {
      await stopBenchStack(stack, agent, ctx);
    }
  },
};

export default bench;
