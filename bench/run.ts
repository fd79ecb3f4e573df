/**
 * Benchmark runner: `npm run bench` runs every `bench/*.bench.ts` (sorted by name) except those that run only
 * when named (the load test); `npm run bench -- health` runs only `bench/health.bench.ts`. Options follow the
 * names (`npm run bench -- load --duration 10 --rate 400`; a `--` before them is skipped) and go to the
 * benchmarks that accept them. `BENCH_JSON=<file>` also writes the figures as a JSON array.
 *
 * Exit codes: 0 whatever the timings, 1 when a benchmark itself crashes, 2 for an unknown benchmark or option
 * (or a bad option value), 3 when a benchmark's own gate failed (the load test: a 5xx, a network error, or
 * the target rate not achieved); the figures are printed either way.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BenchResult, formatTable, isBenchModule, isBenchResults, nowMs } from './harness';
import { BenchUsageError, type OptionsBenchModule, parseArguments, type RunContext } from './options';

const SUFFIX = '.bench.ts';
const benchDir = path.dirname(fileURLToPath(import.meta.url));

class UsageError extends BenchUsageError {}

const available = (): Map<string, string> =>
  new Map(
    readdirSync(benchDir)
      .filter((file) => file.endsWith(SUFFIX))
      .sort()
      .map((file) => [file.slice(0, -SUFFIX.length), path.join(benchDir, file)]),
  );

/** `health`, `health.bench.ts` and `bench/health.bench.ts` all name the same benchmark. */
const normalize = (arg: string): string => {
  const base = path.basename(arg);
  return base.endsWith(SUFFIX) ? base.slice(0, -SUFFIX.length) : base;
};

const select = (args: readonly string[]): [string, string][] => {
  const files = available();
  if (args.length === 0) return [...files];
  const names = [...new Set(args.map(normalize))];
  const unknown = names.filter((name) => !files.has(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown benchmark${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}\n` +
        `available: ${[...files.keys()].join(', ') || '(none)'}`,
    );
  }
  return names.sort().map((name) => [name, files.get(name) as string]);
};

const header = (): string => {
  const cpus = os.cpus();
  const models = [...new Set(cpus.map((cpu) => cpu.model.trim()))].join(' / ') || 'unknown';
  const gib = (os.totalmem() / 1024 ** 3).toFixed(1);
  return [
    `node ${process.version} (${process.platform}/${process.arch})`,
    `cpu  ${models} × ${cpus.length}`,
    `mem  ${gib} GiB total`,
  ].join('\n');
};

const load = async (file: string): Promise<OptionsBenchModule> => {
  const imported: unknown = await import(pathToFileURL(file).href);
  const candidate =
    typeof imported === 'object' && imported !== null ? Reflect.get(imported, 'default') : undefined;
  if (!isBenchModule(candidate)) {
    throw new Error(
      `${path.relative(process.cwd(), file)} does not default-export { name, description, run }`,
    );
  }
  return candidate;
};

/** The options a module accepts, out of those given. */
const optionsFor = (module: OptionsBenchModule, given: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(given).filter(([name]) => module.options?.includes(name)));

const main = async (): Promise<number> => {
  let modules: [string, OptionsBenchModule][];
  let given: Record<string, string>;
  try {
    const { names, options } = parseArguments(process.argv.slice(2));
    given = options;
    const selected = select(names);
    modules = [];
    for (const [name, file] of selected) modules.push([name, await load(file)]);
    if (names.length === 0) modules = modules.filter(([, module]) => !module.onlyWhenNamed);
    const accepted = new Set(modules.flatMap(([, module]) => module.options ?? []));
    const unknown = Object.keys(options).filter((name) => !accepted.has(name));
    if (unknown.length > 0) {
      throw new UsageError(
        `unknown option${unknown.length > 1 ? 's' : ''} for ${modules.map(([name]) => name).join(', ') || '(none)'}: ` +
          `${unknown.map((name) => `--${name}`).join(', ')}`,
      );
    }
  } catch (error) {
    if (error instanceof BenchUsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }

  console.log(header());
  const results: BenchResult[] = [];
  const failures: string[] = [];
  for (const [name, module] of modules) {
    const ctx: RunContext = {
      log: (line) => console.error(`  ${line}`),
      options: optionsFor(module, given),
      fail: (reason) => failures.push(`${name}: ${reason}`),
    };
    console.error(`\n▶ ${name}: ${module.description}`);
    const start = nowMs();
    let figures: unknown;
    try {
      figures = await module.run(ctx);
    } catch (error) {
      if (error instanceof BenchUsageError) {
        console.error(error.message);
        return 2;
      }
      throw error;
    }
    if (!isBenchResults(figures)) throw new Error(`${name}: run() did not return BenchResult[]`);
    console.error(`  done in ${((nowMs() - start) / 1000).toFixed(1)} s`);
    results.push(...figures);
  }

  console.log(`\n${formatTable(results)}`);
  const jsonFile = process.env.BENCH_JSON;
  if (jsonFile) {
    const plain = results.map(({ bench, metric, value, unit }) => ({ bench, metric, value, unit }));
    writeFileSync(jsonFile, `${JSON.stringify(plain, null, 2)}\n`);
    console.error(`\nfigures written to ${jsonFile}`);
  }
  if (failures.length > 0) {
    console.error(`\nFAILED\n${failures.map((failure) => `  ✗ ${failure}`).join('\n')}`);
    return 3;
  }
  return 0;
};

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error('benchmark crashed:', error);
    process.exitCode = 1;
  },
);
