/**
 * Writes `docs/openapi.json` from the route table and the zod schemas (`npm run openapi`).
 * `--check`: write nothing; exit 1 when the committed file differs from what would be generated (CI).
 */
import { resolve } from 'node:path';
import { renderOpenApi } from '../functions/schemas/openapi';
import { type CliIo, runMain } from './cli';
import { runGenerator } from './generated-file';

const OPENAPI_FILE = resolve(import.meta.dirname, '..', 'docs', 'openapi.json');

export const USAGE = `usage: npm run openapi [-- --check]
writes docs/openapi.json from the route table and the schemas; --check writes nothing and exits 1 when the
committed file differs (npm run openapi:check)`;

export const run = (argv: readonly string[], io: CliIo): Promise<number> =>
  runGenerator(
    {
      usage: USAGE,
      file: OPENAPI_FILE,
      generate: () => renderOpenApi(),
      upToDate: (shown) => `${shown} is up to date`,
      stale: (shown) =>
        `${shown} is out of date with the routes and schemas: run \`npm run openapi\` and commit it`,
      wrote: (shown) => `wrote ${shown}`,
    },
    argv,
    io,
  );

await runMain(import.meta.url, run);
