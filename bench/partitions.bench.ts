/**
 * `npm run bench -- partitions [--operations <n>]`: the partition load model. Drives the real code paths (the
 * local stack over HTTP: price reads, quotes, commits, webhook deliveries to five endpoints) with every DynamoDB
 * request's consumed capacity recorded per partition key (`partition-model.ts`), scales each phase to its goal
 * rate (`GOALS`: 30 000 price reads/s, 1 000 quotes/s, 300 commits/s, 10 000 deliveries/s, all at once) and
 * prints the hottest keys with their units per second and share of DynamoDB's per-partition limits (3 000 read
 * units/s, 1 000 write units/s); the design goal is ≤ 50 % for every key. Per-instance caches are warm, as at a
 * steady peak; per-second reads of an instance (tag epochs) are counted per request at the local request rate,
 * which overstates them.
 */
import type { BenchResult } from './harness';
import { BenchUsageError, type OptionsBenchModule, positiveOption } from './options';
import { loadAtGoals, overCeiling } from './partition-model';
import { GOALS, measurePartitionLoad, SHARD_FAMILIES } from './partition-workload';

const DEFAULT_OPERATIONS = 200;
const SHOWN = 15;

const percent = (share: number): string => `${(share * 100).toFixed(share < 0.1 ? 1 : 0)} %`;

const bench: OptionsBenchModule = {
  name: 'partitions',
  description:
    'partition load model: consumed capacity per partition key on the real code paths, scaled to the goal ' +
    'rates (30 000 price reads/s, 1 000 quotes/s, 300 commits/s, 10 000 deliveries/s)',
  options: ['operations'],
  onlyWhenNamed: true,
  run: async (ctx) => {
    const operations = Math.round(positiveOption(ctx, 'operations', DEFAULT_OPERATIONS));
    if (operations < 10) throw new BenchUsageError('--operations must be at least 10');
    ctx.log(`measuring ${operations} operations per phase on the local stack`);
    const phases = await measurePartitionLoad({ operations, log: (line) => ctx.log(line) });
    const loads = loadAtGoals(phases, GOALS, SHARD_FAMILIES);
    const results: BenchResult[] = [];
    for (const [phase, goal] of Object.entries(GOALS)) {
      const usage = phases.get(phase);
      if (!usage) continue;
      const own = loadAtGoals(new Map([[phase, usage]]), GOALS, SHARD_FAMILIES);
      const hottest = own[0];
      let read = 0;
      let write = 0;
      for (const units of usage.units.values()) {
        read += units.read;
        write += units.write;
      }
      ctx.log(
        `goal ${phase.padEnd(8)} ${String(goal).padStart(6)}/s  per operation ${(read / usage.operations).toFixed(2)} RU ` +
          `${(write / usage.operations).toFixed(2)} WU  hottest ${hottest?.name ?? '-'} ${percent(hottest?.share ?? 0)}`,
      );
      results.push(
        {
          bench: `partitions.${phase}`,
          metric: 'read_units_per_op',
          value: read / usage.operations,
          unit: 'RU',
        },
        {
          bench: `partitions.${phase}`,
          metric: 'write_units_per_op',
          value: write / usage.operations,
          unit: 'WU',
        },
        {
          bench: `partitions.${phase}`,
          metric: 'hottest_share',
          value: (hottest?.share ?? 0) * 100,
          unit: '%',
        },
      );
    }
    ctx.log(`hottest keys with every phase at its goal (limits: 3 000 RU/s, 1 000 WU/s per partition):`);
    for (const load of loads.slice(0, SHOWN)) {
      ctx.log(
        `  ${percent(load.share).padStart(7)}  ${load.name.slice(0, 70).padEnd(70)} ` +
          `${load.readPerSecond.toFixed(0).padStart(7)} RU/s ${load.writePerSecond.toFixed(0).padStart(7)} WU/s  ` +
          `(${load.perEntity ? 'one entity, ' : ''}most from ${load.mostFrom})`,
      );
    }
    const over = overCeiling(loads);
    ctx.log(`${over.length} key(s) above 50 % of a partition's limit at the goals`);
    results.push(
      { bench: 'partitions.all', metric: 'hottest_share', value: (loads[0]?.share ?? 0) * 100, unit: '%' },
      { bench: 'partitions.all', metric: 'keys_over_50pct', value: over.length, unit: 'count' },
    );
    return results;
  },
};

export default bench;
