import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handleStreamBatch } from '../../../functions/handlers/stream-batch';
import { mapConcurrently } from '../../../functions/shared/concurrency';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('mapConcurrently', () => {
  it('keeps the order of the items and never runs more than `parallel` tasks at once (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        async (delays, parallel) => {
          let running = 0;
          let most = 0;
          const results = await mapConcurrently(delays, parallel, async (delay, index) => {
            running += 1;
            most = Math.max(most, running);
            for (let i = 0; i < delay; i += 1) await tick();
            running -= 1;
            return index * 2;
          });
          expect(results).toEqual(delays.map((_, index) => index * 2));
          expect(most).toBeLessThanOrEqual(parallel);
          if (delays.length > 0) expect(most).toBeGreaterThan(0);
        },
      ),
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

const record = (sequence: string): DynamoDBRecord => ({ dynamodb: { SequenceNumber: sequence } });

describe('handleStreamBatch', () => {
  it('reports nothing when every record succeeds', async () => {
    const seen: string[] = [];
    const answer = await handleStreamBatch(
      ['1', '2', '3'].map(record),
      2,
      async (item) => {
        seen.push(item.dynamodb?.SequenceNumber ?? '');
      },
      () => undefined,
    );
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(seen.sort()).toEqual(['1', '2', '3']);
  });

  it('reports the earliest failed record, whatever order the failures happened in, and sees each failure', async () => {
    const failures: string[] = [];
    const answer = await handleStreamBatch(
      ['10', '11', '12', '13'].map(record),
      4,
      async (item) => {
        const sequence = item.dynamodb?.SequenceNumber;
        if (sequence === '13') throw new Error('late failure first');
        await tick();
        if (sequence === '11') throw new Error('earlier failure');
      },
      (item, error) => failures.push(`${item.dynamodb?.SequenceNumber}: ${(error as Error).message}`),
    );
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '11' }] });
    expect(failures.sort()).toEqual(['11: earlier failure', '13: late failure first']);
  });
});
