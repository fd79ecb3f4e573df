/**
 * Writes the authorization matrix into `docs/security.md` (between its markers) from the route table
 * (`npm run security-matrix`). `--check`: write nothing; exit 1 when the document's matrix is stale.
 */
import { resolve } from 'node:path';
import { MATRIX_BEGIN, MATRIX_END, renderAuthorizationMatrix } from '../functions/definitions/authorization';
import { type CliIo, runMain } from './cli';
import { runGenerator } from './generated-file';

const SECURITY_FILE = resolve(import.meta.dirname, '..', 'docs', 'security.md');

/** The document with its matrix replaced by the one the route table gives. */
export const withMatrix = (document: string, matrix: string = renderAuthorizationMatrix()): string => {
  const start = document.indexOf(MATRIX_BEGIN);
  const end = document.indexOf(MATRIX_END);
  if (start < 0 || end < start) throw new Error(`no matrix markers (${MATRIX_BEGIN} … ${MATRIX_END})`);
  return `${document.slice(0, start)}${matrix}${document.slice(end + MATRIX_END.length)}`;
};

export const USAGE = `usage: npm run security-matrix [-- --check]
writes the authorization matrix into docs/security.md (between its markers) from the route table; --check
writes nothing and exits 1 when the document's matrix is stale`;

export const run = (argv: readonly string[], io: CliIo): Promise<number> =>
  runGenerator(
    {
      usage: USAGE,
      file: SECURITY_FILE,
      // A missing document has no markers: withMatrix says so (exit 1).
      generate: (current) => withMatrix(current ?? ''),
      upToDate: (shown) => `${shown}: the authorization matrix is up to date`,
      stale: (shown) =>
        `${shown}: the authorization matrix is stale: run \`npm run security-matrix\` and commit it`,
      wrote: (shown) => `wrote the authorization matrix into ${shown}`,
    },
    argv,
    io,
  );

await runMain(import.meta.url, run);
