/**
 * Load test: `npm run bench -- load [--duration <s>] [--rate <rps>]`. Starts the local stack in memory with the
 * demo catalog without its rate policy (as the e2e tests' demo stack does: rates neither move nor go stale, so a
 * run does not depend on where the simulated feed stands that minute) and drives it at a constant arrival rate, by default twice the planned local peak (docs/capacity.md),
 * for 60 s, with the storefront mix of `load.worker.ts`: mostly `GET /catalog/prices` (hot, variant and
 * never-seen keys), quotes, commits of those quotes, receipt reads and webhook events delivered to a loopback
 * endpoint. Open model with latency from the scheduled send time (see `load.worker.ts`).
 *
 * Prints the achieved throughput (overall and per operation), p50/p95/p99 per operation and overall (price
 * reads also by `X-Cache`), responses by status class with the 5xx and network errors counted apart, 429s,
 * webhook deliveries, and CPU per request of the stack, of DynamoDB Local and of the generator. Fails the run
 * (exit 3) on any 5xx or network error, or when the achieved rate is below 95 % of the target.
 *
 * The gateway's per-key token bucket stays in the path but is raised out of reach (one API key sends
 * everything here, where a deployment has one key per storefront, each with its own 100 req/s): this measures
 * capacity, not the limiter. A 429 would still be counted and reported.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { LoggerOptions } from '../functions/shared/logger';
import {
  type BenchResult,
  nowMs,
  processTreeCpuMs,
  randomSecret,
  stopBenchStack,
  summarize,
} from './harness';
import {
  LOAD_ROLE,
  type LoadConfig,
  type LoadMessage,
  type LoadOutcome,
  MIX_PER_MILLE,
  OPERATION_ROUTES,
  OPERATIONS,
  STATUS_CLASSES,
  type StatusClass,
  WINDOW_MS,
} from './load.worker';
import { BenchUsageError, isRunContext, type OptionsBenchModule, positiveOption } from './options';

/**
 * The planned peak of the local stack on one 2-core machine (DynamoDB Local's JVM, the gateway and every
 * function in one Node process, and this generator): docs/capacity.md derives it from the measured capacity.
 */
export const PLANNED_LOCAL_PEAK_RPS = 400;
export const DEFAULT_RATE = 2 * PLANNED_LOCAL_PEAK_RPS;
export const DEFAULT_SECONDS = 60;
export const DEFAULT_WARMUP_SECONDS = 5;
/** The run fails below this share of the target rate. */
export const MIN_ACHIEVED_SHARE = 0.95;

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

interface DemoCatalog {
  readonly products: readonly { readonly sku_id: string }[];
  readonly display_rules: readonly {
    readonly region: string;
    readonly currency_whitelist: readonly string[];
  }[];
}

/** Every (SKU, region, currency) the demo catalog's display rules whitelist; the generator keeps the sellable. */
const candidatesOf = (catalog: DemoCatalog): LoadConfig['candidates'] =>
  catalog.products.flatMap(({ sku_id }) =>
    catalog.display_rules.flatMap(({ region, currency_whitelist }) =>
      currency_whitelist.map((currency) => ({ sku: sku_id, region, currency })),
    ),
  );

const runGenerator = (
  config: LoadConfig,
  onLog: (line: string) => void,
  onMeasure: (phase: 'start' | 'end') => void,
): Promise<LoadOutcome> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load.worker.ts', import.meta.url), { workerData: config });
    let answered = false;
    worker.on('message', (message: LoadMessage) => {
      if (message.type === 'log') onLog(message.line);
      else if (message.type === 'measure-start') onMeasure('start');
      else if (message.type === 'measure-end') onMeasure('end');
      else {
        answered = true;
        resolve(message.result);
      }
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the load generator exited with code ${code} without a result`));
    });
  });

const fixed = (value: number, digits = 1): string => value.toFixed(digits);

const bench: OptionsBenchModule = {
  name: 'load',
  description:
    `open-model load at 2 × the planned local peak (${DEFAULT_RATE} req/s by default) for ${DEFAULT_SECONDS} s: ` +
    'prices, quotes, commits, receipts, webhook events; fails on a 5xx, a network error or < 95 % of the rate',
  options: ['duration', 'rate', 'warmup', 'log-level'],
  onlyWhenNamed: true,
  run: async (ctx) => {
    const seconds = positiveOption(ctx, 'duration', DEFAULT_SECONDS);
    const rate = positiveOption(ctx, 'rate', DEFAULT_RATE);
    const warmupSeconds = positiveOption(ctx, 'warmup', DEFAULT_WARMUP_SECONDS);
    const logLevel = (isRunContext(ctx) ? ctx.options['log-level'] : undefined) ?? 'SILENT';
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
      throw new BenchUsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
    }
    const fail = (reason: string) => {
      if (isRunContext(ctx)) ctx.fail(reason);
      else ctx.log(`FAIL: ${reason}`);
    };

    // The demo catalog without its rate policy: published rates stay as they are for the whole run.
    const { rate_policy: _ratePolicy, ...catalog } = JSON.parse(
      readFileSync(new URL('../catalog/demo-catalog.json', import.meta.url), 'utf8'),
    ) as DemoCatalog & { readonly rate_policy?: unknown };
    const { startLocalStack } = await import('../functions/composition/local/stack');
    const apiKey = randomSecret('key_load');
    const adminToken = randomSecret('adm_load');
    ctx.log('starting the local stack in memory with the demo catalog (without its rate policy)');
    const startedAt = nowMs();
    const stack = await startLocalStack({
      port: 0,
      apiKey,
      adminToken,
      logLevel: logLevel as LoggerOptions['logLevel'],
      seedCatalog: catalog,
      rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
    });
    ctx.log(`stack up at ${stack.url} in ${fixed((nowMs() - startedAt) / 1000)} s`);
    try {
      const mix = Object.entries(MIX_PER_MILLE)
        .map(([draw, perMille]) => `${draw} ${fixed(perMille / 10)} %`)
        .join(', ');
      ctx.log(`target ${rate} req/s for ${seconds} s after a ${warmupSeconds} s ramp; mix: ${mix}`);

      let stackCpu: NodeJS.CpuUsage | undefined;
      let javaBefore: number | undefined;
      let javaMs: number | undefined;
      const outcome = await runGenerator(
        {
          role: LOAD_ROLE,
          baseUrl: stack.url,
          apiKey,
          adminToken,
          rate,
          durationMs: seconds * 1000,
          warmupMs: warmupSeconds * 1000,
          candidates: candidatesOf(catalog),
          run: randomBytes(4).toString('hex'),
          seed: 20261122,
        },
        (line) => ctx.log(line),
        (phase) => {
          if (phase === 'start') {
            stackCpu = process.threadCpuUsage();
            javaBefore = processTreeCpuMs(stack.dynamoDbSupervisorPid);
          } else {
            stackCpu = process.threadCpuUsage(stackCpu);
            const javaAfter = processTreeCpuMs(stack.dynamoDbSupervisorPid);
            javaMs = javaBefore !== undefined && javaAfter !== undefined ? javaAfter - javaBefore : undefined;
          }
        },
      );
      return report(outcome, { rate, seconds }, { stackCpu, javaMs }, ctx.log, fail);
    } finally {
      await stopBenchStack(stack, undefined, ctx);
    }
  },
};

/** Prints the report, returns the table rows and fails the run where the gate says so. */
const report = (
  outcome: LoadOutcome,
  target: { readonly rate: number; readonly seconds: number },
  cpu: { readonly stackCpu: NodeJS.CpuUsage | undefined; readonly javaMs: number | undefined },
  log: (line: string) => void,
  fail: (reason: string) => void,
): BenchResult[] => {
  const windowSeconds = outcome.windowMs / 1000;
  const all = OPERATIONS.flatMap((operation) => outcome.operations[operation].latencies);
  const total = all.length;
  const statuses = Object.fromEntries(
    STATUS_CLASSES.map((statusClass) => [
      statusClass,
      OPERATIONS.reduce((sum, operation) => sum + outcome.operations[operation].statuses[statusClass], 0),
    ]),
  ) as Record<StatusClass, number>;
  // A request still without an answer when the generator stopped waiting is a network error too.
  statuses.network += Math.max(0, outcome.sent - total);
  const rateLimited = OPERATIONS.reduce(
    (sum, operation) => sum + outcome.operations[operation].rateLimited,
    0,
  );
  const achieved = windowSeconds > 0 ? total / windowSeconds : 0;
  const rows: BenchResult[] = [];
  const latencyRows = (bench: string, samples: readonly number[]) => {
    if (samples.length === 0) return;
    const summary = summarize(samples);
    rows.push(
      { bench, metric: 'p50', value: summary.median, unit: 'ms' },
      { bench, metric: 'p95', value: summary.p95, unit: 'ms' },
      { bench, metric: 'p99', value: summary.p99, unit: 'ms' },
    );
  };
  const line = (label: string, samples: readonly number[], count: number, extra = '') => {
    const summary = samples.length > 0 ? summarize(samples) : undefined;
    log(
      `${label.padEnd(30)} ${String(count).padStart(7)} req ${fixed(count / windowSeconds).padStart(8)} req/s` +
        (summary
          ? `  p50 ${fixed(summary.median).padStart(6)}  p95 ${fixed(summary.p95).padStart(6)}  ` +
            `p99 ${fixed(summary.p99).padStart(7)}  max ${fixed(summary.max).padStart(7)} ms`
          : '') +
        extra,
    );
  };

  log('');
  log(
    `target ${target.rate} req/s for ${target.seconds} s: sent ${outcome.sent} in ${fixed(outcome.sendWindowMs / 1000, 2)} s, ` +
      `all answered ${fixed(windowSeconds, 2)} s after the first was due; generator lag p99 ` +
      `${fixed(outcome.sendLagP99Ms)} ms, max ${fixed(outcome.sendLagMaxMs)} ms`,
  );
  line('overall', all, total);
  for (const operation of OPERATIONS) {
    const figures = outcome.operations[operation];
    const classes = STATUS_CLASSES.filter((statusClass) => figures.statuses[statusClass] > 0)
      .map((statusClass) => `${statusClass} ${figures.statuses[statusClass]}`)
      .join(', ');
    line(`  ${OPERATION_ROUTES[operation]}`, figures.latencies, figures.latencies.length, `  [${classes}]`);
  }
  for (const [source, samples] of Object.entries(outcome.cacheLatencies).sort()) {
    line(`    prices X-Cache ${source}`, samples, samples.length);
  }
  const windowSummaries = outcome.windows.map((samples) =>
    samples.length > 0 ? summarize(samples) : undefined,
  );
  log(
    `by ${WINDOW_MS / 1000} s window of scheduled time, p50/p99 ms: ` +
      windowSummaries
        .map((summary, index) =>
          summary ? `[${index * (WINDOW_MS / 1000)} s] ${fixed(summary.median)}/${fixed(summary.p99)}` : '',
        )
        .filter(Boolean)
        .join('  '),
  );
  log(
    `status classes: ${STATUS_CLASSES.map((statusClass) => `${statusClass} ${statuses[statusClass]}`).join(', ')}; ` +
      `429 ${rateLimited}`,
  );
  log(`5xx: ${statuses['5xx']}   network errors: ${statuses.network}`);
  log(
    `webhooks: ${outcome.webhooks.accepted} events accepted, ${outcome.webhooks.delivered} delivered within ` +
      `10 s of the last send, ${outcome.webhooks.duplicates} duplicate arrivals`,
  );
  log(`fx_version seen in price answers: ${outcome.fxVersions.join(' → ') || '(none)'}`);
  for (const failure of outcome.failures) {
    log(
      `FAILED at +${failure.atMs} ms ${failure.status || 'network'} trace ${failure.traceId ?? '-'}: ` +
        `${failure.request} → ${failure.body}`,
    );
  }
  for (const sample of outcome.unexpected4xx) {
    log(`4xx at +${sample.atMs} ms ${sample.status}: ${sample.request} → ${sample.body}`);
  }

  rows.push(
    { bench: 'load', metric: 'target', value: target.rate, unit: 'req/s' },
    { bench: 'load', metric: 'achieved', value: achieved, unit: 'req/s' },
    { bench: 'load', metric: 'requests', value: total, unit: 'count' },
  );
  latencyRows('load', all);
  for (const statusClass of STATUS_CLASSES)
    rows.push({ bench: 'load', metric: statusClass, value: statuses[statusClass], unit: 'count' });
  rows.push({ bench: 'load', metric: '429', value: rateLimited, unit: 'count' });
  for (const operation of OPERATIONS) {
    const figures = outcome.operations[operation];
    const bench = `load.${operation}`;
    rows.push({ bench, metric: 'achieved', value: figures.latencies.length / windowSeconds, unit: 'req/s' });
    latencyRows(bench, figures.latencies);
    for (const statusClass of ['4xx', '5xx', 'network'] as const)
      if (figures.statuses[statusClass] > 0)
        rows.push({ bench, metric: statusClass, value: figures.statuses[statusClass], unit: 'count' });
  }
  for (const [source, samples] of Object.entries(outcome.cacheLatencies).sort()) {
    rows.push({ bench: `load.prices.${source}`, metric: 'requests', value: samples.length, unit: 'count' });
    latencyRows(`load.prices.${source}`, samples);
  }
  rows.push(
    { bench: 'load.webhooks', metric: 'accepted', value: outcome.webhooks.accepted, unit: 'count' },
    { bench: 'load.webhooks', metric: 'delivered', value: outcome.webhooks.delivered, unit: 'count' },
  );
  const perRequest = (ms: number) => (total > 0 ? ms / total : 0);
  if (cpu.stackCpu)
    rows.push({
      bench: 'load.cpu',
      metric: 'stack',
      value: perRequest((cpu.stackCpu.user + cpu.stackCpu.system) / 1000),
      unit: 'ms/req',
    });
  if (cpu.javaMs !== undefined)
    rows.push({ bench: 'load.cpu', metric: 'ddb-local', value: perRequest(cpu.javaMs), unit: 'ms/req' });
  rows.push({
    bench: 'load.cpu',
    metric: 'generator',
    value: perRequest(outcome.clientCpuMs),
    unit: 'ms/req',
  });

  if (statuses['5xx'] > 0) fail(`${statuses['5xx']} responses were 5xx`);
  if (statuses.network > 0) fail(`${statuses.network} requests ended in a network error or timeout`);
  if (achieved < MIN_ACHIEVED_SHARE * target.rate)
    fail(
      `achieved ${fixed(achieved)} req/s, below ${MIN_ACHIEVED_SHARE * 100} % of the target ${target.rate} req/s`,
    );
  return rows;
};

export default bench;
