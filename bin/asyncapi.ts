/**
 * Writes `docs/asyncapi.json` from the event-type catalog and the envelope schema (`npm run asyncapi`).
 * `--check`: write nothing; exit 1 when the committed file differs from what would be generated (CI).
 */
import { resolve } from 'node:path';
import { renderAsyncApi } from '../functions/schemas/asyncapi';
import { type CliIo, runMain } from './cli';
import { runGenerator } from './generated-file';

const ASYNCAPI_FILE = resolve(import.meta.dirname, '..', 'docs', 'asyncapi.json');

export const USAGE = `usage: npm run asyncapi [-- --check]
writes docs/asyncapi.json from the event-type catalog; --check writes nothing and exits 1 when the
committed file differs (npm run asyncapi:check)`;

export const run = (argv: readonly string[], io: CliIo): Promise<number> =>
  runGenerator(
    {
      usage: USAGE,
      file: ASYNCAPI_FILE,
      generate: () => renderAsyncApi(),
      upToDate: (shown) => `${shown} is up to date`,
      stale: (shown) =>
        `${shown} is out of date with the event-type catalog: run \`npm run asyncapi\` and commit it`,
      wrote: (shown) => `wrote ${shown}`,
    },
    argv,
    io,
  );

await runMain(import.meta.url, run);
