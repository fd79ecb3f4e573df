/**
 * A temporary directory of the test process's own, inside the run's (`private-tmpdir.global-setup.ts`, which
 * removes it at the end): `os.tmpdir()` points into it while the infra files run. The CDK's `App` without an
 * `outdir` makes a `cdk.out…` directory under the system's temporary directory that nothing removes; the infra
 * tests leave none behind.
 *
 * One per process, not one per file: the CDK keeps the first temporary directory it sees for the life of the
 * process (`FileSystem.tmpdir`, where custom resource providers such as the cross-region references' are staged),
 * so a directory removed after one file would break the next file's synthesis in the same process.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

const own = join(inject('privateTmpRoot'), `process-${process.pid}`);
mkdirSync(own, { recursive: true });
process.env.TMPDIR = own;
