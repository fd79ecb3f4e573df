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
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
export const synthesizeFunctionBundles = (): SynthesizedBundles => {
  const outdir = mkdtempSync(join(tmpdir(), 'pricing-bundles-'));
  const cleanup = () => rmSync(outdir, { recursive: true, force: true });
  const started = performance.now();
  const app = new App({ outdir });
  const stacks = addPricingStacks(app, { stage: 'bundles', nag: false });
  try {
    app.synth();
  } catch (error) {
    // A bundle that does not build (esbuild's error is in the message) leaves no assembly behind.
    cleanup();
    throw error;
  }
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
  return { bundles, synthMs, cleanup };
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
