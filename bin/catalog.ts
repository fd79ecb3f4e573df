/**
 * `npm run catalog -- import <file>` and `npm run catalog -- export [--revision N] [--out file]`.
 *
 * Talks to the admin routes of `API_URL` (default `http://127.0.0.1:3000`, the local stack) with
 * `Authorization: Bearer <ADMIN_TOKEN>`; the token defaults to `admin_token` in `<DATA_DIR>/credentials.json`
 * (`DATA_DIR` defaults to `.local/data`), the file the local stack writes on first start.
 *
 * A deployed API protects its admin routes with IAM (SigV4, C7). This CLI does not sign requests: the project
 * has no SigV4 signer among its dependencies (only a transitive `@smithy/signature-v4`, which is not ours to
 * import). Against a deployed API it says so and exits 1; sign with `awscurl` or a script using
 * `@smithy/signature-v4` once it is a declared dependency.
 *
 * Prints the result JSON on stdout. A refusal prints the error and, for 400, every problem with its path, on
 * stderr; any failure exits 1.
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';
export const DEFAULT_DATA_DIR = '.local/data';

export type Command =
  | { readonly kind: 'help' }
  | { readonly kind: 'import'; readonly file: string }
  | { readonly kind: 'export'; readonly revision?: number; readonly out?: string };

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `usage:
  npm run catalog -- import <file.json>
  npm run catalog -- export [--revision N] [--out file.json]

environment:
  API_URL      the API (default ${DEFAULT_API_URL})
  ADMIN_TOKEN  the local admin token (default: admin_token in $DATA_DIR/credentials.json)
  DATA_DIR     the local stack's data directory (default ${DEFAULT_DATA_DIR})`;

/** The command line (after `npm run catalog --`) as a command, or a UsageError naming what is wrong. */
export const parseArgs = (argv: readonly string[]): Command => {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === 'help' || verb === '--help' || verb === '-h') return { kind: 'help' };
  if (rest.includes('--sigv4')) {
    throw new UsageError(
      '--sigv4 is not supported: no SigV4 signer is a dependency of this project (see bin/catalog.ts)',
    );
  }
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

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>;
  readonly readFile: (file: string) => Promise<string>;
  readonly writeFile: (file: string, content: string) => Promise<void>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/** Whether `API_URL` is a deployed API (admin routes behind IAM) rather than the local stack. */
export const isDeployed = (apiUrl: URL, explicitToken: boolean): boolean => {
  const host = apiUrl.hostname.toLowerCase();
  if (host.endsWith('.amazonaws.com') || host.endsWith('.on.aws')) return true;
  // Another host with an explicit ADMIN_TOKEN: a local stack elsewhere (e.g. in a container).
  return !LOOPBACK_HOSTS.has(host) && !explicitToken;
};

const SIGV4_MESSAGE = (url: string) =>
  `${url} looks like a deployed API: its admin routes need IAM (SigV4) signed requests, which this CLI does ` +
  'not make. Use awscurl (or another SigV4 client) with credentials allowed to invoke the admin routes, or ' +
  'point API_URL at the local stack.';

/** The admin token: ADMIN_TOKEN, else `admin_token` in the local stack's credentials file. */
export const adminToken = async (io: CliIo): Promise<string> => {
  const given = io.env.ADMIN_TOKEN;
  if (given) return given;
  const file = path.resolve(io.cwd, io.env.DATA_DIR || DEFAULT_DATA_DIR, 'credentials.json');
  let content: unknown;
  try {
    content = JSON.parse(await io.readFile(file));
  } catch {
    throw new UsageError(`no ADMIN_TOKEN and no readable ${file}: start the local stack or set ADMIN_TOKEN`);
  }
  const token = (content as { admin_token?: unknown } | null)?.admin_token;
  if (typeof token !== 'string' || token.length === 0) throw new UsageError(`${file} has no admin_token`);
  return token;
};

interface Problem {
  readonly path: string;
  readonly message: string;
}

const isProblem = (value: unknown): value is Problem =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Problem).path === 'string' &&
  typeof (value as Problem).message === 'string';

/** A refusal on stderr: status, error code and description, trace id, and every problem with its path. */
export const describeFailure = (status: number, body: unknown): string => {
  const lines: string[] = [];
  if (typeof body === 'object' && body !== null) {
    const error = body as {
      error?: unknown;
      error_description?: unknown;
      trace_id?: unknown;
      problems?: unknown;
    };
    lines.push(
      `error ${status}${typeof error.error === 'string' ? ` ${error.error}` : ''}` +
        `${typeof error.error_description === 'string' ? `: ${error.error_description}` : ''}`,
    );
    if (Array.isArray(error.problems)) {
      const problems = error.problems.filter(isProblem);
      lines.push(`${problems.length} problem${problems.length === 1 ? '' : 's'}:`);
      for (const problem of problems) lines.push(`  ${problem.path}: ${problem.message}`);
    }
    if (typeof error.trace_id === 'string') lines.push(`trace id: ${error.trace_id}`);
  } else {
    lines.push(`error ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 500)}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
};

const readBody = async (response: Response): Promise<unknown> => {
  const text = await response.text();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** Runs one command; the exit code is 0 on success, 1 on any failure (usage errors included). */
export const run = async (argv: readonly string[], io: CliIo): Promise<number> => {
  let command: Command;
  try {
    command = parseArgs(argv);
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${USAGE}\n`);
    return 1;
  }
  if (command.kind === 'help') {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const apiUrlText = io.env.API_URL || DEFAULT_API_URL;
  let apiUrl: URL;
  try {
    apiUrl = new URL(apiUrlText);
  } catch {
    io.stderr(`API_URL is not a URL: ${apiUrlText}\n`);
    return 1;
  }
  if (isDeployed(apiUrl, Boolean(io.env.ADMIN_TOKEN))) {
    io.stderr(`${SIGV4_MESSAGE(apiUrlText)}\n`);
    return 1;
  }
  try {
    const token = await adminToken(io);
    const base = apiUrlText.replace(/\/+$/, '');
    const headers = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
    const send = async (url: string, init: RequestInit): Promise<Response> => {
      try {
        return await io.fetch(url, init);
      } catch (error) {
        throw new Error(`cannot reach ${apiUrlText}: ${(error as Error).message}`);
      }
    };
    let response: Response;
    if (command.kind === 'import') {
      let document: unknown;
      try {
        document = JSON.parse(await io.readFile(path.resolve(io.cwd, command.file)));
      } catch (error) {
        io.stderr(`cannot read ${command.file} as JSON: ${(error as Error).message}\n`);
        return 1;
      }
      response = await send(`${base}/admin/catalog/import`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
        body: JSON.stringify(document),
      });
    } else {
      const query = command.revision === undefined ? '' : `?revision=${command.revision}`;
      response = await send(`${base}/admin/catalog/export${query}`, { method: 'GET', headers });
    }
    const body = await readBody(response);
    if (!response.ok) {
      io.stderr(describeFailure(response.status, body));
      return 1;
    }
    const json = `${JSON.stringify(body, null, 2)}\n`;
    if (command.kind === 'export' && command.out !== undefined) {
      await io.writeFile(path.resolve(io.cwd, command.out), json);
      const revision = Number(response.headers.get('x-catalog-revision')) || undefined;
      io.stdout(`${JSON.stringify({ revision, out: command.out }, null, 2)}\n`);
    } else {
      io.stdout(json);
    }
    return 0;
  } catch (error) {
    io.stderr(`${(error as Error).message}\n`);
    return 1;
  }
};

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;

if (isMain) {
  process.exitCode = await run(process.argv.slice(2), {
    env: process.env,
    cwd: process.cwd(),
    fetch: (url, init) => fetch(url, init),
    readFile: (file) => readFile(file, 'utf8'),
    writeFile: (file, content) => writeFile(file, content, 'utf8'),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
