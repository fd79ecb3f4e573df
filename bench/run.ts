/**
 * Benchmark runner: `npm run bench` runs every `bench/*.bench.ts` (sorted by name); `npm run bench -- health`
 * runs only `bench/health.bench.ts`. `BENCH_JSON=<file>` also writes the figures as a JSON array.
 *
 * Exit codes: 0 whatever the timings, 1 when a benchmark itself crashes, 2 for an unknown benchmark name.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type BenchContext,
  type BenchResult,
  formatTable,
  isBenchModule,
  isBenchResults,
  nowMs,
} from './harness';

const SUFFIX = '.bench.ts';
const benchDir = path.dirname(fileURLToPath(import.meta.url));

class UsageError extends Error {}

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

const main = async (): Promise<number> => {
  let selected: [string, string][];
  try {
    selected = select(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }

  console.log(header());
  const ctx: BenchContext = { log: (line) => console.error(`  ${line}`) };
  const results: BenchResult[] = [];
  for (const [name, file] of selected) {
    const imported: unknown = await import(pathToFileURL(file).href);
    const candidate =
      typeof imported === 'object' && imported !== null ? Reflect.get(imported, 'default') : undefined;
    if (!isBenchModule(candidate)) {
      throw new Error(
        `${path.relative(process.cwd(), file)} does not default-export { name, description, run }`,
      );
    }
    console.error(`\n▶ ${name}: ${candidate.description}`);
    const start = nowMs();
    const figures: unknown = await candidate.run(ctx);
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
