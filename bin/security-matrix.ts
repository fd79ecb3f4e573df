/**
 * Writes the authorization matrix into `docs/security.md` (between its markers) from the route table
 * (`npm run security-matrix`). `--check`: write nothing; exit 1 when the document's matrix is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { MATRIX_BEGIN, MATRIX_END, renderAuthorizationMatrix } from '../functions/definitions/authorization';

const SECURITY_FILE = resolve(import.meta.dirname, '..', 'docs', 'security.md');

/** The document with its matrix replaced by the one the route table gives. */
export const withMatrix = (document: string, matrix: string = renderAuthorizationMatrix()): string => {
  const start = document.indexOf(MATRIX_BEGIN);
  const end = document.indexOf(MATRIX_END);
  if (start < 0 || end < start) throw new Error(`no matrix markers (${MATRIX_BEGIN} … ${MATRIX_END})`);
  return `${document.slice(0, start)}${matrix}${document.slice(end + MATRIX_END.length)}`;
};

const main = async (args: readonly string[]): Promise<number> => {
  const shown = relative(process.cwd(), SECURITY_FILE);
  const current = await readFile(SECURITY_FILE, 'utf8');
  const updated = withMatrix(current);
  if (args.includes('--check')) {
    if (updated === current) {
      console.log(`${shown}: the authorization matrix is up to date`);
      return 0;
    }
    console.error(
      `${shown}: the authorization matrix is stale: run \`npm run security-matrix\` and commit it`,
    );
    return 1;
  }
  await writeFile(SECURITY_FILE, updated);
  console.log(`wrote the authorization matrix into ${shown}`);
  return 0;
};

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  process.exitCode = await main(process.argv.slice(2));
}
