import { defineConfig } from 'vitest/config';

/**
 * Four projects: `unit` (pure code and adapters with mocked AWS-only clients), `integration` (real DynamoDB
 * Local and fauxqs started by the global setup), `infra` (CDK template assertions and cdk-nag) and `e2e` (the
 * local stack started as a user would, driven over HTTP).
 */
/** `TEST_WORKERS` sets every project's workers (e.g. `TEST_WORKERS=1 npm test` to rule out interference). */
const WORKERS = process.env.TEST_WORKERS ? Number(process.env.TEST_WORKERS) : undefined;

/** E2E files that measure latency against a baseline and so run alone (project `e2e-solo`). */
const SOLO_E2E = ['test/e2e/endpoint-isolation.e2e.test.ts'];

export default defineConfig({
  test: {
    // The summary reporter ends the run with the ten slowest files and the pass/fail counts.
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Vitest's default on a 2-core machine is one worker (cores - 1): every file ran in turn. Three workers overlap
    // the CPU-bound unit and infra files with the integration files, which mostly wait on the engines and on
    // shortened retry schedules (unit, integration and infra: 169 s on two, 141 s on three, 154 s on four here).
    maxWorkers: WORKERS ?? 3,
    // unit, integration and infra files share their worker's module cache (`isolate: false`): each file imported
    // zod, the AWS SDK or aws-cdk-lib anew, which was most of an infra file's time (infra 58 s → 19 s, unit 49 s →
    // 25 s alone). Their files leave no state behind (mocks restored, env stubs undone, resources of their own); the
    // e2e files, which start stacks, keep a fresh module graph each.
    // The domain (money and pricing) must stay covered: `npm test` fails below 95 % of lines or branches. It is
    // measured on the unit, integration and infra files (`npm test` runs the e2e files in a second run without
    // coverage: instrumented domain code in their in-process stacks cost them ~10 % more CPU, for 0.2 % of branches).
    coverage: {
      // Istanbul instruments only the included files (the domain); V8's precise coverage slowed every process of
      // the run, the e2e stacks included (unit property tests ×2, e2e files +28 %).
      provider: 'istanbul',
      include: ['functions/domain/**/*.ts'],
      exclude: ['functions/domain/**/types.ts'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: { lines: 95, branches: 95 },
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          isolate: false,
          environment: 'node',
          // Property tests run thousands of cases under coverage; on two busy cores 5 s is not enough headroom.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          isolate: false,
          globalSetup: ['test/support/engines.global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          isolate: false,
          // Apps synthesized without an outdir leave their assemblies in the run's own temporary directory.
          globalSetup: ['test/support/private-tmpdir.global-setup.ts'],
          setupFiles: ['test/support/private-tmpdir.setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // Two side by side: each starts a stack with DynamoDB Local, which keeps both cores busy (three were
          // slower: 505 s against 472 s for the whole run).
          maxWorkers: WORKERS ?? 2,
          exclude: [...SOLO_E2E],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each e2e file starts its own stack(s) on free ports chosen at run time, in its own temporary data
          // directory, so files may run side by side; they run as a second group, after unit, integration and
          // infra, so the CPU-bound property tests do not compete with their stacks.
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          // Latency measured against a baseline (isolation of a hanging endpoint) needs the machine to itself: these
          // files run alone, after every other file.
          name: 'e2e-solo',
          maxWorkers: 1,
          include: [...SOLO_E2E],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
