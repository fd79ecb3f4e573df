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
