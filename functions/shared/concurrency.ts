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
