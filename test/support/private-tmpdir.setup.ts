/**
 * A temporary directory of the test file's own: `os.tmpdir()` points into it while the file runs, and it is
 * removed afterwards with whatever was left there. The CDK's `App` without an `outdir` makes a `cdk.out…`
 * directory under the system's temporary directory that nothing removes; the infra tests leave none behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const previous = process.env.TMPDIR;
const own = mkdtempSync(join(tmpdir(), 'pricing-test-tmp-'));
process.env.TMPDIR = own;

afterAll(() => {
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  rmSync(own, { recursive: true, force: true });
});
