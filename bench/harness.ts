import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
/**
 * A small benchmark library. Benchmarks are not tests: they print figures and never fail on timing.
 *
 * A benchmark module (`bench/<name>.bench.ts`) default-exports a {@link BenchModule}; `bench/run.ts` discovers,
 * runs and prints them. All timing uses monotonic clocks (`process.hrtime.bigint()`), never `Date.now()`.
 */

/** One figure: `bench` names the scenario (e.g. `health.sequential`), `metric` the statistic. */
export interface BenchResult {
  readonly bench: string;
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
}

export interface BenchContext {
  /** Progress lines (to stderr, so stdout keeps only the header and the table). */
  log(line: string): void;
}

export interface BenchModule {
  readonly name: string;
  readonly description: string;
  run(ctx: BenchContext): Promise<BenchResult[]>;
}

export interface MeasureOptions {
  /** Operations run before measuring, not recorded (spread over the same workers). Default 0. */
  readonly warmup?: number;
  /** Recorded operations; exactly one of `iterations` and `durationMs` is required. */
  readonly iterations?: number;
  /** Run for this long: workers start new operations until the deadline, in-flight ones are recorded. */
  readonly durationMs?: number;
  /** Operations in flight at once (independent workers, each running one operation at a time). Default 1. */
  readonly concurrency?: number;
}

/** Which phase an operation belongs to, so `fn` can count its own failures in the measured phase only. */
export type Phase = 'warmup' | 'measure';

export interface Measurement {
  /** Per-operation latency in milliseconds, in completion order. */
  readonly samples: number[];
  /** Wall time of the measured phase (warm-up excluded), in milliseconds. */
  readonly elapsedMs: number;
  readonly concurrency: number;
}

export interface Summary {
  readonly count: number;
  readonly mean: number;
  readonly min: number;
  readonly median: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  /** Operations per second (see {@link summarize}). */
  readonly opsPerSecond: number;
}

const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

/** Monotonic milliseconds since an arbitrary origin. */
export const nowMs = (): number => nsToMs(process.hrtime.bigint());

const positiveInteger = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
  return value;
};

/**
 * Runs `fn` `warmup` times unrecorded, then `iterations` times (or for `durationMs`) with `concurrency`
 * operations in flight, recording each operation's latency with `process.hrtime.bigint()`. An operation that
 * throws aborts the measurement (the benchmark crashes); count expected failures inside `fn` instead.
 */
export const measure = async (
  fn: (phase: Phase) => Promise<unknown>,
  options: MeasureOptions,
): Promise<Measurement> => {
  const concurrency = positiveInteger('concurrency', options.concurrency ?? 1);
  if (concurrency < 1) throw new RangeError('concurrency must be at least 1');
  const warmup = positiveInteger('warmup', options.warmup ?? 0);
  if ((options.iterations === undefined) === (options.durationMs === undefined)) {
    throw new RangeError('give exactly one of iterations and durationMs');
  }

  const workers = async (phase: Phase, next: () => boolean, record: (ns: bigint) => void): Promise<void> => {
    const worker = async () => {
      while (next()) {
        const start = process.hrtime.bigint();
        await fn(phase);
        record(process.hrtime.bigint() - start);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };

  let warmupLeft = warmup;
  await workers(
    'warmup',
    () => warmupLeft-- > 0,
    () => undefined,
  );

  const samples: number[] = [];
  const record = (ns: bigint) => {
    samples.push(nsToMs(ns));
  };
  const start = process.hrtime.bigint();
  if (options.iterations !== undefined) {
    let left = positiveInteger('iterations', options.iterations);
    await workers('measure', () => left-- > 0, record);
  } else {
    const durationMs = options.durationMs ?? 0;
    if (!(durationMs > 0)) throw new RangeError('durationMs must be positive');
    const deadline = start + BigInt(Math.round(durationMs * 1e6));
    await workers('measure', () => process.hrtime.bigint() < deadline, record);
  }
  return { samples, elapsedMs: nsToMs(process.hrtime.bigint() - start), concurrency };
};

/**
 * Times a synchronous `fn`: `warmup` calls unrecorded, then `iterations` calls each timed on its own with
 * `process.hrtime.bigint()` (no promise per operation). Latencies in milliseconds.
 */
export const timeSync = (fn: () => unknown, iterations: number, warmup: number): number[] => {
  for (let i = 0; i < warmup; i += 1) fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const start = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
};

/**
 * Nearest-rank percentile: the smallest sample such that at least `p`% of the samples are less than or equal
 * to it, i.e. `sorted[ceil(p / 100 * n) - 1]` (p = 0 gives the minimum). No interpolation, so the result is
 * always an observed latency. `sorted` must be in ascending order and non-empty.
 */
export const percentile = (sorted: readonly number[], p: number): number => {
  if (sorted.length === 0) throw new RangeError('no samples');
  if (!(p >= 0 && p <= 100)) throw new RangeError('p must be within 0..100');
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
};

/**
 * Latency statistics of `samples` (milliseconds): median (p50), p95 and p99 by nearest rank
 * ({@link percentile}), mean, min and max. Ops/s is throughput: the sample count over the measured wall time
 * when a {@link Measurement} is given (right for concurrent runs); for bare samples it is `count / sum`,
 * which equals the throughput of a sequential run.
 */
export const summarize = (input: readonly number[] | Measurement): Summary => {
  const samples = Array.isArray(input) ? (input as readonly number[]) : (input as Measurement).samples;
  if (samples.length === 0) throw new RangeError('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, sample) => total + sample, 0);
  const elapsedMs = Array.isArray(input) ? sum : (input as Measurement).elapsedMs;
  return {
    count: sorted.length,
    mean: sum / sorted.length,
    min: sorted[0] as number,
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] as number,
    opsPerSecond: elapsedMs > 0 ? sorted.length / (elapsedMs / 1000) : Number.POSITIVE_INFINITY,
  };
};

/** The usual rows for one scenario: median, p95, p99 (ms) and ops/s. */
export const latencyResults = (
  bench: string,
  summary: Summary,
  metrics: readonly (keyof Summary)[] = ['median', 'p95', 'p99', 'opsPerSecond'],
): BenchResult[] =>
  metrics.map((metric) =>
    metric === 'opsPerSecond'
      ? { bench, metric: 'ops/s', value: summary.opsPerSecond, unit: 'ops/s' }
      : metric === 'count'
        ? { bench, metric, value: summary.count, unit: 'count' }
        : { bench, metric, value: summary[metric], unit: 'ms' },
  );

const MICROSECONDS_PER_MS = 1000;

/** The rows for one microsecond-scale scenario: median and p95 in µs, and ops/s (one operation at a time). */
export const microsecondResults = (bench: string, summary: Summary): BenchResult[] => [
  { bench, metric: 'median', value: summary.median * MICROSECONDS_PER_MS, unit: 'µs' },
  { bench, metric: 'p95', value: summary.p95 * MICROSECONDS_PER_MS, unit: 'µs' },
  { bench, metric: 'ops/s', value: 1000 / summary.mean, unit: 'ops/s' },
];

/** A number for the table: integers as they are, else about 3-4 significant digits (fewer decimals as it grows). */
export const formatValue = (value: number): string => {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude < 1) return value.toPrecision(3);
  return value.toFixed(magnitude >= 1000 ? 0 : magnitude >= 100 ? 1 : 2);
};

const COLUMNS = ['bench', 'metric', 'value', 'unit'] as const;

/** A fixed-width table: text columns left-aligned, values right-aligned, widths from the widest cell. */
export const formatTable = (results: readonly BenchResult[]): string => {
  const rows = results.map((result) => ({
    bench: result.bench,
    metric: result.metric,
    value: formatValue(result.value),
    unit: result.unit,
  }));
  const width = (column: (typeof COLUMNS)[number]) =>
    Math.max(column.length, ...rows.map((row) => row[column].length));
  const widths = COLUMNS.map(width);
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, index) => {
        const columnWidth = widths[index] ?? 0;
        return COLUMNS[index] === 'value' ? cell.padStart(columnWidth) : cell.padEnd(columnWidth);
      })
      .join('  ')
      .trimEnd();
  return [
    line(COLUMNS),
    line(widths.map((columnWidth) => '-'.repeat(columnWidth))),
    ...rows.map((row) => line(COLUMNS.map((column) => row[column]))),
  ].join('\n');
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/** Whether an imported module's default export is a {@link BenchModule}. */
export const isBenchModule = (value: unknown): value is BenchModule =>
  isRecord(value) &&
  typeof value.name === 'string' &&
  typeof value.description === 'string' &&
  typeof value.run === 'function';

/** Whether a value returned by `run` is a well-formed list of figures. */
export const isBenchResults = (value: unknown): value is BenchResult[] =>
  Array.isArray(value) &&
  value.every(
    (item: unknown) =>
      isRecord(item) &&
      typeof item.bench === 'string' &&
      typeof item.metric === 'string' &&
      typeof item.value === 'number' &&
      typeof item.unit === 'string',
  );

/** A fresh random credential for a benchmark's local stack: `<prefix>_<32 base64url characters>`. */
/** A positive number from the environment variable `name`, or `fallback` when it is unset or empty. */
export const positiveNumber = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be a positive number`);
  return value;
};

export const randomSecret = (prefix: string): string => `${prefix}_${randomBytes(24).toString('base64url')}`;

/** Ends a benchmark that ran against a local stack: closes the client agent, stops the stack, says how long. */
export const stopBenchStack = async (
  stack: { stop(): Promise<void> },
  agent: { destroy(): void } | undefined,
  ctx: BenchContext,
): Promise<void> => {
  agent?.destroy();
  const stoppedAt = nowMs();
  await stack.stop();
  ctx.log(`stack stopped in ${((nowMs() - stoppedAt) / 1000).toFixed(1)} s`);
};

/**
 * CPU time (ms) used so far by a process and its living descendants, from `/proc` (Linux); undefined where
 * `/proc` is not there or no process is named (a stack attached to engines it did not start). Used for DynamoDB
 * Local's JVM, which shares the machine with the stack.
 */
export const processTreeCpuMs = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined;
  const ticksToMs = 10; // USER_HZ is 100 on Linux
  const own = (id: number): number => {
    const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * ticksToMs;
  };
  const children = (id: number): number[] =>
    readFileSync(`/proc/${id}/task/${id}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  try {
    let total = 0;
    const pending = [pid];
    for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
      total += own(id);
      pending.push(...children(id));
    }
    return total;
  } catch {
    return undefined;
  }
};
