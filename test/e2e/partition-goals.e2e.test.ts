/**
 * The partition load model's verdict on the real code paths (issue "scale past one partition"): the workload of
 * `npm run bench -- partitions` (price reads, quotes, commits, deliveries to five endpoints on the local stack,
 * every DynamoDB request's consumed capacity recorded per partition key), scaled to the goal rates, puts no key
 * above 50 % of DynamoDB's per-partition limits — and the same run with a hot key planted in one phase reports that
 * key, and only it. Fewer operations per phase than the bench (its figures are in the closing notes); the sharded
 * families are judged at their mean, which the hash's uniformity test below backs.
 */
import { describe, expect, it } from 'vitest';
import { loadAtGoals, overCeiling, type PhaseUsage } from '../../bench/partition-model';
import { GOALS, measurePartitionLoad, SHARD_FAMILIES } from '../../bench/partition-workload';
import { ENDPOINT_SHARDS, shardOf } from '../../functions/domain/webhooks/envelope';
import { newId } from '../../functions/shared/ids';

const PLANTED = 'planted-hot-key';

describe('partitions at the goal rates', () => {
  it('no key above 50 % of a partition at 30 000 price reads/s, 1 000 quotes/s, 300 commits/s and 10 000 deliveries/s; a planted hot key is reported', async () => {
    const phases = await measurePartitionLoad({
      operations: 60,
      // Each half of the commit phase writes one shared item per commit: a key every commit touches.
      plant: (recorder, phase) => {
        if (phase === 'commit') recorder.add({ table: 'idempotency', key: PLANTED }, 'write', 60);
      },
    });
    expect([...phases.keys()].sort()).toEqual(Object.keys(GOALS).sort());
    const loads = loadAtGoals(phases, GOALS, SHARD_FAMILIES);
    const over = overCeiling(loads);
    expect(over.map((load) => load.name)).toEqual([`idempotency ${PLANTED}`]);
    expect(over[0]?.mostFrom).toBe('commit');

    // Without the planted key: nothing above half a partition, every phase measured.
    const clean = new Map<string, PhaseUsage>(
      [...phases].map(([name, usage]) => [
        name,
        { ...usage, units: new Map([...usage.units].filter(([key]) => !key.includes(PLANTED))) },
      ]),
    );
    const cleanLoads = loadAtGoals(clean, GOALS, SHARD_FAMILIES);
    expect(overCeiling(cleanLoads)).toEqual([]);
    expect(cleanLoads[0]?.share).toBeGreaterThan(0.1);
  }, 240_000);

  it("spreads fresh ids evenly over an index's shards (the model judges a family at its mean)", () => {
    const counts = new Array<number>(ENDPOINT_SHARDS).fill(0);
    const ids = 64_000;
    for (let index = 0; index < ids; index += 1) {
      const shard = shardOf(newId('evt'), ENDPOINT_SHARDS);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    const mean = ids / ENDPOINT_SHARDS;
    // One standard deviation at 1 000 per shard is about 3 %; ± 20 % is past 6 of them for the worst of the 64
    // shards, so only a skewed hash fails (a uniform one about once in 10^8 runs).
    expect(Math.max(...counts)).toBeLessThan(mean * 1.2);
    expect(Math.min(...counts)).toBeGreaterThan(mean * 0.8);
  });
});
