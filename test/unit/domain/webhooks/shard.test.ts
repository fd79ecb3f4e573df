import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FANOUT_PENDING,
  FANOUT_PENDING_MARKERS,
  FANOUT_PENDING_SHARDS,
  fanoutPendingMarker,
  shardOf,
} from '../../../../functions/domain/webhooks/envelope';

describe('shardOf', () => {
  it('is stable and in range for any key and shard count (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 256 }), (key, shards) => {
        const shard = shardOf(key, shards);
        expect(Number.isInteger(shard) && shard >= 0 && shard < shards).toBe(true);
        expect(shardOf(key, shards)).toBe(shard);
      }),
    );
  });

  it('spreads event ids evenly: every shard within ±30 % of the mean over 16 000 ids', () => {
    const counts = new Array<number>(FANOUT_PENDING_SHARDS).fill(0);
    for (let index = 0; index < 16_000; index += 1) {
      const shard = shardOf(
        `evt_${index.toString(36)}_${(index * 7919).toString(16)}`,
        FANOUT_PENDING_SHARDS,
      );
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    for (const count of counts) expect(Math.abs(count - 1_000)).toBeLessThan(300);
  });
});

describe('the fan-out-pending markers', () => {
  it('names each event’s shard, and the sweeper reads every shard and the marker from before the shards', () => {
    expect(fanoutPendingMarker('evt_1')).toMatch(/^yes#([0-9]|1[0-5])$/);
    expect(FANOUT_PENDING_MARKERS).toHaveLength(FANOUT_PENDING_SHARDS + 1);
    expect(FANOUT_PENDING_MARKERS).toContain(FANOUT_PENDING);
    expect(FANOUT_PENDING_MARKERS).toContain(fanoutPendingMarker('evt_1'));
  });
});
