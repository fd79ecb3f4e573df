/** `CI` set to anything but empty, `0` or `false` (`.ci/run` sets it when the caller has not). */
export const isCi = (): boolean => !/^(|0|false|no)$/i.test(process.env.CI ?? '');

/**
 * How much of a heavy test runs: the acceptance volume with `CI=true` (what `.ci/run` runs on a fresh clone), a
 * quicker one in a local `npm test` (the same code paths, fewer repetitions), and the named variable overrides
 * both (e.g. `FUZZ_RUNS=1000 npx vitest run test/e2e/fuzz.e2e.test.ts`).
 */
export const volume = (
  variable: string,
  volumes: { readonly local: number; readonly ci: number },
): number => {
  const asked = process.env[variable];
  if (asked !== undefined && asked !== '') {
    const value = Number(asked);
    if (!Number.isInteger(value) || value <= 0) {
      throw new Error(`${variable} must be a positive integer, got ${JSON.stringify(asked)}`);
    }
    return value;
  }
  return isCi() ? volumes.ci : volumes.local;
};
