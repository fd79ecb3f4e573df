/**
 * A deliver batch's attempts counted into stats slots: one addition per endpoint and 5-minute slot with that
 * group's counts; nothing for an empty batch; a store that fails is signalled and never fails the batch.
 */
import { describe, expect, it } from 'vitest';
import { addAttempt, emptyTally } from '../../../functions/domain/webhooks/endpoint-stats';
import type { AttemptRecord, EndpointStatsStore } from '../../../functions/ports/webhooks';
import { recordAttemptStats } from '../../../functions/usecases/webhooks/stats';

const NOW = new Date('2026-11-26T12:07:00.000Z');
const attempt = (at: string, http_status?: number, duration_ms = 40): AttemptRecord => ({
  attempt: 1,
  at,
  duration_ms,
  outcome: http_status === 200 ? 'delivered' : 'retry',
  ...(http_status !== undefined ? { http_status } : { error: 'timeout' }),
});

const world = (fail = false) => {
  const adds: Parameters<EndpointStatsStore['add']>[] = [];
  const signals: string[] = [];
  const ctx = {
    clock: { now: () => NOW },
    stats: {
      add: async (...args: Parameters<EndpointStatsStore['add']>) => {
        if (fail) throw new Error('throttled');
        adds.push(args);
      },
      read: async () => [],
    },
    signal: (name: string) => {
      signals.push(name);
    },
  };
  return { ctx, adds, signals };
};

describe('recordAttemptStats', () => {
  it('adds one tally per endpoint and slot', async () => {
    const { ctx, adds } = world();
    await recordAttemptStats(ctx, [
      { endpointId: 'ep_a', attempt: attempt('2026-11-26T12:01:00.000Z', 200) },
      { endpointId: 'ep_a', attempt: attempt('2026-11-26T12:04:59.000Z', 503, 700) },
      { endpointId: 'ep_a', attempt: attempt('2026-11-26T12:05:00.000Z', 200) },
      { endpointId: 'ep_b', attempt: attempt('2026-11-26T12:02:00.000Z') },
    ]);
    const expires = Math.floor(NOW.getTime() / 1000) + 8 * 86_400;
    const tally = (...attempts: AttemptRecord[]) => attempts.reduce(addAttempt, emptyTally());
    expect(adds).toEqual([
      ['ep_a', '2026-11-26T12:00', tally(attempt('x', 200), attempt('x', 503, 700)), expires],
      ['ep_a', '2026-11-26T12:05', tally(attempt('x', 200)), expires],
      ['ep_b', '2026-11-26T12:00', tally(attempt('x')), expires],
    ]);
  });

  it('writes nothing for a batch without HTTP attempts, and signals a store failure without throwing', async () => {
    const empty = world();
    await recordAttemptStats(empty.ctx, []);
    expect(empty.adds).toEqual([]);
    const failing = world(true);
    await expect(
      recordAttemptStats(failing.ctx, [
        { endpointId: 'ep_a', attempt: attempt('2026-11-26T12:01:00.000Z', 200) },
      ]),
    ).resolves.toBeUndefined();
    expect(failing.signals).toEqual(['stats_not_recorded']);
  });
});
