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
  return process.env.CI ? volumes.ci : volumes.local;
};
