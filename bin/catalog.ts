/**
 * `npm run catalog -- import <file>` and `npm run catalog -- export [--revision N] [--out file]`.
 *
 * Talks to the admin routes of `API_URL` (default `http://127.0.0.1:3000`, the local stack) through the admin
 * client (bin/admin-client.ts): `Authorization: Bearer <ADMIN_TOKEN>` locally, the token defaulting to
 * `admin_token` in `<DATA_DIR>/credentials.json` (`DATA_DIR` defaults to `.local/data`); IAM SigV4 signed
 * requests against a deployed API (C7) with `--sigv4` or `API_AUTH=sigv4`.
 *
 * Prints the result JSON on stdout. A refusal prints the error and, for 400, every problem with its path, on
 * stderr; any failure exits 1.
 */
import path from 'node:path';
import { type AdminClient, type CliIo, UsageError } from './admin-client';
import { ADMIN_CLI_ENVIRONMENT, adminCliRunner, isMainModule, processIo } from './cli';

// What the other CLIs (bin/verify-receipt.ts) and the tests import from here.
export {
  adminToken,
  type CliIo,
  DEFAULT_API_URL,
  DEFAULT_DATA_DIR,
  describeFailure,
  isDeployed,
  UsageError,
} from './admin-client';

export type Command = (
  | { readonly kind: 'help' }
  | { readonly kind: 'import'; readonly file: string }
  | { readonly kind: 'export'; readonly revision?: number; readonly out?: string }
) & {
  /** `--sigv4`: sign the requests with IAM SigV4 (a deployed API). */
  readonly sigv4?: true;
};

export const USAGE = `usage:
  npm run catalog -- import <file.json> [--sigv4]
  npm run catalog -- export [--revision N] [--out file.json] [--sigv4]

${ADMIN_CLI_ENVIRONMENT}`;

const parseCommand = (argv: readonly string[]): Command => {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === 'help' || verb === '--help' || verb === '-h') return { kind: 'help' };
  if (verb === 'import') {
    const [file, ...extra] = rest;
    if (file === undefined || file.startsWith('--')) throw new UsageError('import needs a file');
    if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
    return { kind: 'import', file };
  }
  if (verb === 'export') {
    let revision: number | undefined;
    let out: string | undefined;
    for (let index = 0; index < rest.length; index += 1) {
      const flag = rest[index] as string;
      const [name, inline] = flag.includes('=') ? flag.split(/=(.*)/s, 2) : [flag, undefined];
      const value = (): string => {
        if (inline !== undefined) return inline;
        index += 1;
        const next = rest[index];
        if (next === undefined || next.startsWith('--')) throw new UsageError(`${name} needs a value`);
        return next;
      };
      if (name === '--revision') {
        const text = value();
        if (!/^[1-9]\d{0,9}$/.test(text)) throw new UsageError('--revision must be a positive integer');
        revision = Number(text);
      } else if (name === '--out') {
        out = value();
      } else {
        throw new UsageError(`unknown option ${flag}`);
      }
    }
    return {
      kind: 'export',
      ...(revision === undefined ? {} : { revision }),
      ...(out === undefined ? {} : { out }),
    };
  }
  throw new UsageError(`unknown command ${verb}`);
};

/** The command line (after `npm run catalog --`) as a command, or a UsageError naming what is wrong. */
export const parseArgs = (argv: readonly string[]): Command => {
  const sigv4 = argv.includes('--sigv4');
  const command = parseCommand(argv.filter((arg) => arg !== '--sigv4'));
  return sigv4 && command.kind !== 'help' ? { ...command, sigv4: true } : command;
};

const execute = async (
  command: Exclude<Command, { readonly kind: 'help' }>,
  client: AdminClient,
  io: CliIo,
): Promise<number | undefined> => {
  let body: unknown;
  let revision: number | undefined;
  if (command.kind === 'import') {
    let document: unknown;
    try {
      document = JSON.parse(await io.readFile(path.resolve(io.cwd, command.file)));
    } catch (error) {
      io.stderr(`cannot read ${command.file} as JSON: ${(error as Error).message}\n`);
      return 1;
    }
    ({ body } = await client.post('/admin/catalog/import', document));
  } else {
    const response = await client.get(
      '/admin/catalog/export',
      command.revision === undefined ? undefined : { revision: command.revision },
    );
    body = response.body;
    revision = Number(response.headers.get('x-catalog-revision')) || undefined;
  }
  const json = `${JSON.stringify(body, null, 2)}\n`;
  if (command.kind === 'export' && command.out !== undefined) {
    await io.writeFile(path.resolve(io.cwd, command.out), json);
    io.stdout(`${JSON.stringify({ revision, out: command.out }, null, 2)}\n`);
  } else {
    io.stdout(json);
  }
  return 0;
};

/** Runs one command; the exit code is 0 on success, 1 on any failure (usage errors included). */
export const run = adminCliRunner<Command, CliIo>({ usage: USAGE, parse: parseArgs, execute });

if (isMainModule(import.meta.url)) {
  process.exitCode = await run(process.argv.slice(2), processIo());
}
