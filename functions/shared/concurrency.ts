/** Runs `task` over every item, at most `parallel` at a time; the results keep the items' order. */
export const mapConcurrently = async <T, R>(
  items: readonly T[],
  parallel: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < items.length; index = next++) {
      results[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, parallel), items.length) }, worker));
  return results;
};

/**
 * `mapConcurrently`, but every item is run even when some fail, and the call settles only once all of them did:
 * then it returns the results, or throws the first failure. No task outlives the call.
 */
export const mapAllConcurrently = async <T, R>(
  items: readonly T[],
  parallel: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const failures: unknown[] = [];
  const results = await mapConcurrently(items, parallel, (item, index) =>
    task(item, index).catch((error: unknown) => {
      failures.push(error);
      return undefined as R;
    }),
  );
  if (failures.length > 0) throw failures[0];
  return results;
};

/**
 * `task` wrapped so that at most `parallel` calls run at once; the others wait, in call order. A finishing call
 * hands its slot straight to the next waiter, so no new caller can slip in between and exceed the limit.
 */
export const limitConcurrency = <Args extends unknown[], Result>(
  parallel: number,
  task: (...args: Args) => Promise<Result>,
): ((...args: Args) => Promise<Result>) => {
  const limit = Math.max(1, parallel);
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (...args) => {
    if (running < limit) running += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task(...args);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
};

/** A turn taken with `KeyedTurns.take`: `ready` once every earlier turn of its key is done; `done` ends it. */
export interface Turn {
  readonly ready: Promise<void>;
  readonly done: () => void;
}

/**
 * Turns per key, in the order they were taken: work that must happen in call order per key (and may overlap
 * across keys) takes its turn synchronously, before its first `await`, and waits for `ready`.
 */
export class KeyedTurns {
  private readonly tails = new Map<string, Promise<void>>();

  take(key: string): Turn {
    const before = this.tails.get(key) ?? Promise.resolve();
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = before.then(() => finished);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return { ready: before, done };
  }
}
