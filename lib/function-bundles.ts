/**
 * The bundles AWS runs, built and run outside the repository (issue 17: deployment parity).
 *
 * `synthesizeFunctionBundles` synthesizes the app with bundling on — the same `addPricingStacks` and the same
 * `NodejsFunction` settings as `npm run deploy` — and finds each function's bundle in the cloud assembly.
 * `runBundle` copies a bundle into a directory of its own under the system's temporary directory (so no
 * `node_modules` of the repository can be resolved from it, as in Lambda) and loads it in a fresh Node process
 * (the same executable as the caller: the pinned Node 24), with only the environment given: it reports how long
 * the import took, what the module exports, and, when asked, the result of invoking its `handler` with an event.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { App, type CfnResource, Stack } from 'aws-cdk-lib';
import { FUNCTIONS, type FunctionId } from '../functions/definitions';
import { addPricingStacks } from './pricing-app';

export interface FunctionBundle {
  readonly functionId: FunctionId;
  /** The bundle's entry file (`index.mjs`) in the cloud assembly. */
  readonly file: string;
  /** Its size in bytes (minified, source map apart). */
  readonly bytes: number;
}

export interface SynthesizedBundles {
  readonly bundles: Readonly<Record<FunctionId, FunctionBundle>>;
  /** Synthesis time (esbuild included), ms. */
  readonly synthMs: number;
  /** Removes the cloud assembly. */
  readonly cleanup: () => void;
}

/** Synthesizes the app with bundling (every function's esbuild bundle, as `npm run deploy` builds it). */
const synthesizeInto = (outdir: string): { bundles: Record<FunctionId, FunctionBundle>; synthMs: number } => {
  const started = performance.now();
  const app = new App({ outdir });
  const stacks = addPricingStacks(app, { stage: 'bundles', nag: false });
  app.synth();
  const synthMs = performance.now() - started;
  const bundles = Object.fromEntries(
    (Object.keys(FUNCTIONS) as FunctionId[]).map((functionId) => {
      const resource = stacks.service.functions[functionId].function.node.defaultChild as CfnResource;
      // The asset's object key is `<hash>.zip`; its staged directory in the assembly is `asset.<hash>`.
      const code = Stack.of(resource).resolve((resource as unknown as { code: unknown }).code) as {
        s3Key: string;
      };
      const file = join(outdir, `asset.${code.s3Key.replace(/\.zip$/, '')}`, 'index.mjs');
      return [functionId, { functionId, file, bytes: statSync(file).size }];
    }),
  ) as Record<FunctionId, FunctionBundle>;
  return { bundles, synthMs };
};

const ROOT = resolve(import.meta.dirname, '..');
/**
 * Everything a bundle is built from: the function and CDK sources, the package manifest (its module resolution
 * fields) and the locked dependencies, the compiler settings.
 */
const BUNDLE_INPUTS = ['functions', 'lib', 'package.json', 'package-lock.json', 'tsconfig.json'];
/** Where built bundles are kept between runs, keyed by their inputs (removed by `npm ci`). */
export const BUNDLE_CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'pricing-bundles');
/** How many builds the cache keeps (the newest). */
const CACHED_BUILDS = 2;

/** A digest of every file the bundles are built from, so a build is reused only for identical inputs. */
export const bundleInputsDigest = (root = ROOT): string => {
  const hash = createHash('sha256');
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path).sort()) visit(join(path, entry));
      return;
    }
    hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  };
  for (const input of BUNDLE_INPUTS) visit(join(root, input));
  return hash.digest('hex').slice(0, 32);
};

interface CachedBuild {
  readonly synthMs: number;
  readonly files: Readonly<Record<FunctionId, string>>;
}

const fromCache = (dir: string): Record<FunctionId, FunctionBundle> | undefined => {
  const manifest = join(dir, 'bundles.json');
  if (!existsSync(manifest)) return undefined;
  const build = JSON.parse(readFileSync(manifest, 'utf8')) as CachedBuild;
  const entries = (Object.keys(FUNCTIONS) as FunctionId[]).map((functionId) => {
    const name = build.files[functionId];
    const file = name === undefined ? undefined : join(dir, name);
    return file && existsSync(file)
      ? [functionId, { functionId, file, bytes: statSync(file).size }]
      : undefined;
  });
  if (entries.some((entry) => entry === undefined)) return undefined;
  return Object.fromEntries(entries as [FunctionId, FunctionBundle][]) as Record<FunctionId, FunctionBundle>;
};

/**
 * Synthesizes the app with bundling, as `npm run deploy` builds it, and finds each function's bundle.
 *
 * With `cache` (the tests and `LOCAL_BUNDLES=1 npm start`), a build whose inputs — every file under `functions/`
 * and `lib/`, the lock file and the compiler settings — are unchanged is reused from {@link BUNDLE_CACHE_DIR}
 * instead of running esbuild again (`synthMs` is then 0); a new build is moved into place whole, so a concurrent
 * reader never sees half of one. Without it (the bundle bench), every call builds afresh.
 */
export const synthesizeFunctionBundles = (options: { readonly cache?: boolean } = {}): SynthesizedBundles => {
  if (!options.cache) {
    const outdir = mkdtempSync(join(tmpdir(), 'pricing-bundles-'));
    const cleanup = () => rmSync(outdir, { recursive: true, force: true });
    try {
      return { ...synthesizeInto(outdir), cleanup };
    } catch (error) {
      // A bundle that does not build (esbuild's error is in the message) leaves no assembly behind.
      cleanup();
      throw error;
    }
  }
  const keep = () => {};
  const dir = join(BUNDLE_CACHE_DIR, bundleInputsDigest());
  const cached = fromCache(dir);
  if (cached) return { bundles: cached, synthMs: 0, cleanup: keep };
  mkdirSync(BUNDLE_CACHE_DIR, { recursive: true });
  const building = mkdtempSync(join(BUNDLE_CACHE_DIR, 'building-'));
  try {
    const built = synthesizeInto(building);
    const files = Object.fromEntries(
      Object.values(built.bundles).map((bundle) => [bundle.functionId, relative(building, bundle.file)]),
    );
    writeFileSync(join(building, 'bundles.json'), JSON.stringify({ synthMs: built.synthMs, files }));
    try {
      renameSync(building, dir);
    } catch {
      // Another process put the same build in place first: use that one.
      rmSync(building, { recursive: true, force: true });
    }
    const bundles = fromCache(dir);
    if (!bundles) throw new Error(`the bundle build in ${dir} is incomplete`);
    pruneCache(dir);
    return { bundles, synthMs: built.synthMs, cleanup: keep };
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
};

/** A build directory left by a process that died while building is removed after this long. */
const ABANDONED_BUILD_MS = 30 * 60_000;

/** Keeps the newest builds and those still being built; removes the rest and abandoned partial builds. */
const pruneCache = (current: string) => {
  const now = Date.now();
  const entries = readdirSync(BUNDLE_CACHE_DIR).map((name) => {
    const path = join(BUNDLE_CACHE_DIR, name);
    return { name, path, mtimeMs: statSync(path).mtimeMs };
  });
  const abandoned = entries.filter(
    (entry) => entry.name.startsWith('building-') && now - entry.mtimeMs > ABANDONED_BUILD_MS,
  );
  // A build made in the last half hour may still be in use by another run (a worktree's tests): kept.
  const older = entries
    .filter((entry) => !entry.name.startsWith('building-') && entry.path !== current)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(CACHED_BUILDS - 1)
    .filter((entry) => now - entry.mtimeMs > ABANDONED_BUILD_MS);
  for (const stale of [...abandoned, ...older]) rmSync(stale.path, { recursive: true, force: true });
};

/** Each function's bundle entry file, as the local stack on bundles takes them. */
export const bundleFiles = (synthesized: SynthesizedBundles): Record<FunctionId, string> =>
  Object.fromEntries(
    Object.values(synthesized.bundles).map((bundle) => [bundle.functionId, bundle.file]),
  ) as Record<FunctionId, string>;

export interface BundleRun {
  /** Time to import the module in the fresh process (Lambda's init phase), ms. */
  readonly importMs: number;
  readonly exports: readonly string[];
  /** The handler's result, when an event was given and it returned. */
  readonly result?: unknown;
  /** What failed: the import or the invocation, with the error's message. */
  readonly error?: { readonly phase: 'import' | 'invoke'; readonly message: string };
}

/** Loads the bundle and, with an event, invokes `handler(event, context)`; prints one JSON line. */
const RUNNER = `
const started = performance.now();
let module;
try {
  module = await import('./index.mjs');
} catch (error) {
  console.log(JSON.stringify({ importMs: performance.now() - started, exports: [], error: { phase: 'import', message: String(error?.message ?? error) } }));
  process.exit(0);
}
const importMs = performance.now() - started;
const exports = Object.keys(module).sort();
const eventJson = process.env.BUNDLE_EVENT;
if (!eventJson) {
  console.log(JSON.stringify({ importMs, exports }));
  process.exit(0);
}
const context = { awsRequestId: 'bundle-test', functionName: 'bundle-test', getRemainingTimeInMillis: () => 30000 };
try {
  const result = await module.handler(JSON.parse(eventJson), context);
  console.log(JSON.stringify({ importMs, exports, result: result ?? null }));
} catch (error) {
  console.log(JSON.stringify({ importMs, exports, error: { phase: 'invoke', message: String(error?.message ?? error) } }));
}
process.exit(0);
`;

/**
 * Runs a bundle in a fresh process outside the repository with exactly `env` (plus `PATH`), optionally invoking
 * its handler with `event`. The bundle's directory is removed afterwards.
 */
export const runBundle = async (
  file: string,
  options: { readonly env?: Readonly<Record<string, string>>; readonly event?: unknown } = {},
): Promise<BundleRun> => {
  const dir = mkdtempSync(join(tmpdir(), 'pricing-bundle-run-'));
  try {
    copyFileSync(file, join(dir, 'index.mjs'));
    writeFileSync(join(dir, 'runner.mjs'), RUNNER);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      ...options.env,
      ...(options.event === undefined ? {} : { BUNDLE_EVENT: JSON.stringify(options.event) }),
    };
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['runner.mjs'], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('error', reject);
      child.on('close', (code) => {
        const line = stdout.trim().split('\n').at(-1) ?? '';
        if (code !== 0 || !line.startsWith('{'))
          reject(new Error(`the bundle's process exited ${code}: ${stderr.slice(-2000)}`));
        else resolve(line);
      });
    });
    return JSON.parse(output) as BundleRun;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
