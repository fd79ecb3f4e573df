import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FunctionPool,
  FunctionTimeoutError,
  type LambdaHandler,
} from '../../../functions/adapters/local/function-pool';
import { FUNCTIONS, type FunctionDefinition } from '../../../functions/definitions';

const definition = (timeoutSeconds = 10): FunctionDefinition => ({ ...FUNCTIONS.api, timeoutSeconds });

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

const deferred = <T>(): Deferred<T> => {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

/** Lets every pending promise reaction run (no timers involved). */
const settle = async (): Promise<void> => {
  for (let round = 0; round < 10; round += 1) await Promise.resolve();
};

/**
 * A fake function: each instance records the events it serves and how many it serves at once; each invocation
 * waits until the test releases it through `gates`.
 */
const fakeFunction = () => {
  const instances: { readonly id: number; served: string[]; active: number; maxActive: number }[] = [];
  const gates = new Map<string, Deferred<string>>();
  const create = (): LambdaHandler<string, string> => {
    const instance = { id: instances.length + 1, served: [] as string[], active: 0, maxActive: 0 };
    instances.push(instance);
    return async (event) => {
      instance.active += 1;
      instance.maxActive = Math.max(instance.maxActive, instance.active);
      instance.served.push(event);
      const gate = deferred<string>();
      gates.set(event, gate);
      try {
        return await gate.promise;
      } finally {
        instance.active -= 1;
      }
    };
  };
  const release = (event: string, result = `done:${event}`): void => {
    const gate = gates.get(event);
    if (!gate) throw new Error(`${event} is not running`);
    gate.resolve(result);
  };
  return { instances, create, release, running: (event: string) => gates.has(event) };
};

afterEach(() => {
  vi.useRealTimers();
});

describe('FunctionPool', () => {
  it('serves one event at a time per instance, creating instances for concurrent events', async () => {
    const fake = fakeFunction();
    const pool = new FunctionPool(definition(), fake.create, 3);
    const results = ['a', 'b', 'c'].map((event) => pool.invoke(event));
    await settle();
    expect(fake.instances).toHaveLength(3);
    for (const event of ['a', 'b', 'c']) fake.release(event);
    expect(await Promise.all(results)).toEqual(['done:a', 'done:b', 'done:c']);
    expect(fake.instances.map((instance) => instance.maxActive)).toEqual([1, 1, 1]);
  });

  it('reuses an idle instance instead of creating another', async () => {
    const fake = fakeFunction();
    const pool = new FunctionPool(definition(), fake.create, 3);
    const first = pool.invoke('a');
    await settle();
    fake.release('a');
    await first;
    const second = pool.invoke('b');
    await settle();
    fake.release('b');
    expect(await second).toBe('done:b');
    expect(fake.instances).toHaveLength(1);
    expect(fake.instances[0]?.served).toEqual(['a', 'b']);
  });

  it('waits for a free instance once the maximum is reached', async () => {
    const fake = fakeFunction();
    const pool = new FunctionPool(definition(), fake.create, 2);
    const results = ['a', 'b', 'c'].map((event) => pool.invoke(event));
    await settle();
    expect(fake.instances).toHaveLength(2);
    expect(fake.running('c')).toBe(false);
    fake.release('b');
    await settle();
    expect(fake.running('c')).toBe(true);
    expect(fake.instances).toHaveLength(2);
    expect(fake.instances[1]?.served).toEqual(['b', 'c']);
    fake.release('a');
    fake.release('c');
    expect(await Promise.all(results)).toEqual(['done:a', 'done:b', 'done:c']);
    expect(fake.instances.map((instance) => instance.maxActive)).toEqual([1, 1]);
  });

  it('propagates a handler error and reuses the instance', async () => {
    let created = 0;
    const failure = new Error('handler failed');
    const pool = new FunctionPool<string, string>(definition(), () => {
      created += 1;
      return async (event) => {
        if (event === 'bad') throw failure;
        return `ok:${event}`;
      };
    });
    await expect(pool.invoke('bad')).rejects.toBe(failure);
    expect(await pool.invoke('good')).toBe('ok:good');
    expect(created).toBe(1);
  });

  it('fails an invocation past the timeout with FunctionTimeoutError and discards the instance', async () => {
    vi.useFakeTimers();
    const fake = fakeFunction();
    const pool = new FunctionPool(definition(1), fake.create, 1);
    const slow = pool.invoke('slow');
    const outcome = expect(slow).rejects.toBeInstanceOf(FunctionTimeoutError);
    await vi.advanceTimersByTimeAsync(1_000);
    await outcome;
    await expect(slow).rejects.toThrow(/timed out after 1 seconds/);
    const next = pool.invoke('next');
    await settle();
    expect(fake.instances).toHaveLength(2);
    expect(fake.instances[1]?.served).toEqual(['next']);
    fake.release('next');
    expect(await next).toBe('done:next');
  });

  it('does not time out an invocation that answers in time', async () => {
    vi.useFakeTimers();
    const fake = fakeFunction();
    const pool = new FunctionPool(definition(1), fake.create, 1);
    const result = pool.invoke('quick');
    await vi.advanceTimersByTimeAsync(999);
    fake.release('quick');
    expect(await result).toBe('done:quick');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives a waiting event a fresh instance when the busy one times out', async () => {
    vi.useFakeTimers();
    const fake = fakeFunction();
    const pool = new FunctionPool(definition(1), fake.create, 1);
    const slow = pool.invoke('slow');
    const slowOutcome = expect(slow).rejects.toBeInstanceOf(FunctionTimeoutError);
    const waiting = pool.invoke('waiting');
    await vi.advanceTimersByTimeAsync(1_000);
    await slowOutcome;
    expect(fake.instances).toHaveLength(2);
    expect(fake.instances[1]?.served).toEqual(['waiting']);
    fake.release('waiting');
    expect(await waiting).toBe('done:waiting');
  });

  it('passes a context whose remaining time starts at the timeout and decreases', async () => {
    vi.useFakeTimers();
    const readings: number[] = [];
    let context: Context | undefined;
    const pool = new FunctionPool<string, string>(definition(10), () => async (_event, given) => {
      context = given;
      readings.push(given.getRemainingTimeInMillis());
      vi.advanceTimersByTime(4_000);
      readings.push(given.getRemainingTimeInMillis());
      return 'ok';
    });
    await pool.invoke('e');
    expect(readings).toEqual([10_000, 6_000]);
    expect(context?.functionName).toContain('api');
    expect(context?.memoryLimitInMB).toBe(String(FUNCTIONS.api.memoryMb));
  });

  it('gives each invocation its own request id', async () => {
    const ids: string[] = [];
    const pool = new FunctionPool<string, string>(definition(), () => async (_event, context) => {
      ids.push(context.awsRequestId);
      return 'ok';
    });
    await pool.invoke('a');
    await pool.invoke('b');
    expect(new Set(ids).size).toBe(2);
  });

  it('recovers from an instance factory that throws once (init failure)', async () => {
    let attempts = 0;
    const pool = new FunctionPool<string, string>(
      definition(),
      () => {
        attempts += 1;
        if (attempts === 1) throw new Error('init failed');
        return async (event) => `ok:${event}`;
      },
      1,
    );
    await expect(pool.invoke('first')).rejects.toThrow('init failed');
    const outcome = await Promise.race([
      pool.invoke('second'),
      new Promise<string>((resolve) => setTimeout(resolve, 50, 'still waiting')),
    ]);
    expect(outcome).toBe('ok:second');
  });
});
