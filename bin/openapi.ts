/**
 * Writes `docs/openapi.json` from the route table and the zod schemas (`npm run openapi`).
 * `--check`: write nothing; exit 1 when the committed file differs from what would be generated (CI).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { renderOpenApi } from '../functions/schemas/openapi';

const OPENAPI_FILE = resolve(import.meta.dirname, '..', 'docs', 'openapi.json');

const readIfPresent = async (file: string): Promise<string | undefined> => {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
};

const main = async (args: readonly string[]): Promise<number> => {
  const generated = renderOpenApi();
  const shown = relative(process.cwd(), OPENAPI_FILE);
  if (args.includes('--check')) {
    const committed = await readIfPresent(OPENAPI_FILE);
    if (committed === generated) {
      console.log(`${shown} is up to date`);
      return 0;
    }
    console.error(
      `${shown} is out of date with the routes and schemas: run \`npm run openapi\` and commit it`,
    );
    return 1;
  }
  await writeFile(OPENAPI_FILE, generated);
  console.log(`wrote ${shown}`);
  return 0;
};

process.exitCode = await main(process.argv.slice(2));
