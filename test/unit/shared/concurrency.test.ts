import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handleStreamBatch } from '../../../functions/handlers/stream-batch';
import { limitConcurrency, mapConcurrently } from '../../../functions/shared/concurrency';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Delays (in event-loop turns) and a concurrency limit, for the properties of both helpers. */
const delaysAndLimit = [
  fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40 }),
  fc.integer({ min: 1, max: 8 }),
] as const;

/** A task that waits `delay` turns and records how many tasks ran at once (`most`). */
const tracked = () => {
  let running = 0;
  const state = { most: 0 };
  const run = async (delay: number): Promise<void> => {
    running += 1;
    state.most = Math.max(state.most, running);
    for (let i = 0; i < delay; i += 1) await tick();
    running -= 1;
  };
  return { state, run };
};

describe('mapConcurrently', () => {
  it('keeps the order of the items and never runs more than `parallel` tasks at once (property)', async () => {
    await fc.assert(
      fc.asyncProperty(...delaysAndLimit, async (delays, parallel) => {
        const { state, run } = tracked();
        const results = await mapConcurrently(delays, parallel, async (delay, index) => {
          await run(delay);
          return index * 2;
        });
        expect(results).toEqual(delays.map((_, index) => index * 2));
        expect(state.most).toBeLessThanOrEqual(parallel);
        if (delays.length > 0) expect(state.most).toBeGreaterThan(0);
      }),
      { numRuns: 50 },
    );
  });

  it('rejects with the first failure', async () => {
    await expect(
      mapConcurrently([1, 2, 3], 2, async (item) => {
        if (item === 2) throw new Error('two');
        return item;
      }),
    ).rejects.toThrow('two');
  });
});

describe('limitConcurrency', () => {
  it('never runs more than `parallel` calls at once, runs every call, and keeps each call’s result (property)', async () => {
    await fc.assert(
      fc.asyncProperty(...delaysAndLimit, async (delays, parallel) => {
        const { state, run } = tracked();
        const limited = limitConcurrency(parallel, async (delay: number, index: number) => {
          await run(delay);
          if (delay === 3) throw new Error(`failed ${index}`);
          return index;
        });
        const settled = await Promise.allSettled(delays.map((delay, index) => limited(delay, index)));
        expect(
          settled.map((result) => (result.status === 'fulfilled' ? result.value : result.reason.message)),
        ).toEqual(delays.map((delay, index) => (delay === 3 ? `failed ${index}` : index)));
        expect(state.most).toBeLessThanOrEqual(parallel);
      }),
      { numRuns: 50 },
    );
  });
});

const record = (sequence: string): DynamoDBRecord => ({
  eventID: sequence,
  eventName: 'INSERT',
  eventSource: 'aws:dynamodb',
  dynamodb: { SequenceNumber: sequence },
});
const batch = (...sequences: string[]): DynamoDBStreamEvent => ({ Records: sequences.map(record) });

describe('handleStreamBatch (Powertools batch processing)', () => {
  it('reports nothing when every record succeeds', async () => {
    const seen: string[] = [];
    const answer = await handleStreamBatch(
      batch('1', '2', '3'),
      2,
      async (item) => {
        seen.push(item.dynamodb?.SequenceNumber ?? '');
      },
      () => undefined,
    );
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(seen.sort()).toEqual(['1', '2', '3']);
  });

  it('reports every failed record, whatever order the failures happened in (the mapping resumes from the lowest), and sees each failure', async () => {
    const failures: string[] = [];
    const answer = await handleStreamBatch(
      batch('10', '11', '12', '13'),
      4,
      async (item) => {
        const sequence = item.dynamodb?.SequenceNumber;
        if (sequence === '13') throw new Error('late failure first');
        await tick();
        if (sequence === '11') throw new Error('earlier failure');
      },
      (item, error) => failures.push(`${item.dynamodb?.SequenceNumber}: ${(error as Error).message}`),
    );
    expect(answer.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(['11', '13']);
    expect(failures.sort()).toEqual(['11: earlier failure', '13: late failure first']);
  });

  it('answers a batch that fails whole with a partial response, not a throw', async () => {
    const answer = await handleStreamBatch(
      batch('1', '2'),
      1,
      async () => {
        throw new Error('down');
      },
      () => undefined,
    );
    expect(answer.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(['1', '2']);
  });
});
