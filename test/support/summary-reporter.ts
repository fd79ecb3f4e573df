import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest test files the summary lists. */
const SLOWEST = 10;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/**
 * Ends a run with one plain line, `N passed, N failed, N skipped`, that CI and people can read at a glance,
 * preceded by the ten slowest test files (import, hooks and tests of each), so a regression of the test loop
 * shows in every run.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
      }
    }
    const timed = testModules
      .map((testModule) => {
        const diagnostic = testModule.diagnostic();
        return {
          file: path.relative(process.cwd(), testModule.moduleId),
          project: testModule.project.name,
          total: diagnostic.collectDuration + diagnostic.setupDuration + diagnostic.duration,
          tests: diagnostic.duration,
        };
      })
      .sort((a, b) => b.total - a.total)
      .slice(0, SLOWEST);
    if (timed.length > 0) {
      const lines = timed.map(
        ({ file, project, total, tests }, index) =>
          `${String(index + 1).padStart(3)}. ${seconds(total).padStart(8)}  (tests and hooks ${seconds(tests)})  ${project.padEnd(11)} ${file}`,
      );
      process.stdout.write(`\nSlowest ${timed.length} test files:\n${lines.join('\n')}\n`);
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
