/**
 * Each function's bundle as `npm run deploy` builds it (the app synthesized with bundling): its size, and its
 * init time — importing it in a fresh Node 24 process outside the repository, as Lambda's init phase does (the
 * median of several fresh processes). Goals here: every bundle ≤ 1.5 MiB minified, init ≤ 300 ms.
 */
import { FUNCTIONS, type FunctionId } from '../functions/definitions';
import { runBundle, synthesizeFunctionBundles } from '../lib/function-bundles';
import type { BenchModule, BenchResult } from './harness';

/** Fresh processes per bundle; the median of their import times is the figure. */
const RUNS = 5;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const bench: BenchModule = {
  name: 'bundles',
  description: `each function's esbuild bundle (synthesized as deployed): size, and import time in a fresh process (median of ${RUNS})`,
  run: async (ctx) => {
    ctx.log('synthesizing the app with bundling');
    const synthesized = synthesizeFunctionBundles();
    try {
      ctx.log(`synthesized in ${(synthesized.synthMs / 1000).toFixed(1)} s`);
      const results: BenchResult[] = [
        { bench: 'bundle.synth', metric: 'time', value: synthesized.synthMs, unit: 'ms' },
      ];
      for (const functionId of Object.keys(FUNCTIONS) as FunctionId[]) {
        const bundle = synthesized.bundles[functionId];
        const imports: number[] = [];
        for (let run = 0; run < RUNS; run += 1) {
          const outcome = await runBundle(bundle.file);
          if (outcome.error)
            throw new Error(`${functionId}: ${outcome.error.phase}: ${outcome.error.message}`);
          imports.push(outcome.importMs);
        }
        results.push(
          { bench: `bundle.${functionId}`, metric: 'size', value: bundle.bytes / 1024 ** 2, unit: 'MiB' },
          { bench: `bundle.${functionId}`, metric: 'init', value: median(imports), unit: 'ms' },
        );
      }
      return results;
    } finally {
      synthesized.cleanup();
    }
  },
};

export default bench;
