import { describe, expect, it } from 'vitest';
import { Batcher } from '../../../functions/shared/batcher';

const deferred = () => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { gate, release };
};

describe('Batcher', () => {
  it('runs a call on an idle batcher at once, alone', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(async (inputs) => {
      batches.push([...inputs]);
      return inputs.map((input) => input * 2);
    }, 10);
    await expect(batcher.submit(4)).resolves.toBe(8);
    expect(batches).toEqual([[4]]);
  });

  it('groups calls arriving while batches are in flight, up to the batch size, each answered its own output', async () => {
    const batches: number[][] = [];
    const { gate, release } = deferred();
    const batcher = new Batcher<number, string>(
      async (inputs) => {
        batches.push([...inputs]);
        await gate;
        return inputs.map((input) => `v${input}`);
      },
      3,
      1,
    );
    const answers = Promise.all([1, 2, 3, 4, 5, 6].map((input) => batcher.submit(input)));
    expect(batches).toEqual([[1]]);
    release();
    await expect(answers).resolves.toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('keeps at most maxInFlight batches running', async () => {
    let running = 0;
    let peak = 0;
    const batcher = new Batcher<number, number>(
      async (inputs) => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 2));
        running -= 1;
        return inputs;
      },
      2,
      2,
    );
    await Promise.all(Array.from({ length: 20 }, (_, index) => batcher.submit(index)));
    expect(peak).toBe(2);
  });

  it('fails every call of a failed batch and goes on with the next', async () => {
    const { gate, release } = deferred();
    let call = 0;
    const batcher = new Batcher<number, number>(
      async (inputs) => {
        call += 1;
        if (call === 1) {
          await gate;
          return inputs;
        }
        if (call === 2) throw new Error('throttled');
        return inputs;
      },
      5,
      1,
    );
    const first = batcher.submit(1);
    const failing = [batcher.submit(2), batcher.submit(3)];
    release();
    await expect(first).resolves.toBe(1);
    for (const answer of failing) await expect(answer).rejects.toThrow('throttled');
    await expect(batcher.submit(4)).resolves.toBe(4);
  });

  it('refuses an answer with the wrong number of outputs', async () => {
    const batcher = new Batcher<number, number>(async () => [], 5);
    await expect(batcher.submit(1)).rejects.toThrow('0 results for 1 inputs');
  });
});
