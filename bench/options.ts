/**
 * What `bench/run.ts` gives a benchmark beyond {@link BenchContext}: the command-line options it accepts
 * (`npm run bench -- load --duration 10 --rate 400`) and a way to fail the run on a gate of its own (the load
 * test's "no 5xx, rate achieved"). Benchmarks that neither read options nor gate anything ignore both.
 */
import type { BenchContext, BenchModule } from './harness';

/** A bad option value: the runner prints it and exits 2, like an unknown benchmark or option. */
export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export interface RunContext extends BenchContext {
  /** The options given for this benchmark, by name without the dashes (`duration` for `--duration 10`). */
  readonly options: Readonly<Record<string, string>>;
  /** Marks the run failed (exit code 3) without stopping it: the figures are still printed. */
  fail(reason: string): void;
}

/** A benchmark module that takes options or runs only when named (both optional, checked by the runner). */
export interface OptionsBenchModule extends BenchModule {
  /** Option names it accepts; the runner refuses an option no selected benchmark accepts. */
  readonly options?: readonly string[];
  /** Left out of a bare `npm run bench` (it saturates the machine or gates): run it by name. */
  readonly onlyWhenNamed?: boolean;
}

export const isRunContext = (ctx: BenchContext): ctx is RunContext =>
  'options' in ctx && typeof (ctx as Partial<RunContext>).fail === 'function';

/** A positive number option, else `fallback` when it is absent. */
export const positiveOption = (ctx: BenchContext, name: string, fallback: number): number => {
  const raw = isRunContext(ctx) ? ctx.options[name] : undefined;
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !(Number.isFinite(value) && value > 0)) {
    throw new BenchUsageError(`--${name} must be a positive number, got "${raw}"`);
  }
  return value;
};

/**
 * Splits the runner's arguments into benchmark names and `--name value` / `--name=value` options. A bare `--`
 * (as in `npm run bench -- load -- --duration 10`) is skipped.
 */
export const parseArguments = (
  args: readonly string[],
): { readonly names: string[]; readonly options: Record<string, string> } => {
  const names: string[] = [];
  const options: Record<string, string> = {};
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (arg === '--') continue;
    if (!arg.startsWith('--')) {
      names.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals === -1 ? undefined : equals);
    if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new BenchUsageError(`not an option: ${arg}`);
    let value: string | undefined;
    if (equals !== -1) value = arg.slice(equals + 1);
    else {
      value = args[index + 1];
      if (value === undefined || value.startsWith('--')) throw new BenchUsageError(`--${name} needs a value`);
      index += 1;
    }
    options[name] = value;
  }
  return { names, options };
};
