/**
 * What the offline verifiers (`npm run verify-receipt`, `npm run verify-journal`) read their inputs with: a
 * JSON document from an `http(s)://` URL (GET) or a file, and where the service's public keys are by default.
 */
import type { DsseKeys } from '../functions/domain/audit/dsse';
import { type CliIo, DEFAULT_API_URL, UsageError } from './admin-client';
import { describeCliFailure } from './cli';

/** Parsed JSON from a URL (GET; a non-2xx answer is an error) or from a file. */
export const loadJson = async (io: Pick<CliIo, 'fetch' | 'readFile'>, source: string): Promise<unknown> => {
  if (/^https?:\/\//.test(source)) {
    const response = await io.fetch(source, { method: 'GET' });
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return response.json();
  }
  return JSON.parse(await io.readFile(source));
};

/** The JWKS of the API: `<API_URL>/keys` (`API_URL` defaults to the local stack). */
export const defaultKeysSource = (io: Pick<CliIo, 'env'>, apiUrl?: string): string =>
  `${(apiUrl || io.env.API_URL || DEFAULT_API_URL).replace(/\/+$/, '')}/keys`;

/** The command line of an offline verifier: one input file, or a remote flag that fetches it. */
export interface VerifierArgs {
  readonly file?: string;
  /** The value of each value flag given (`--keys`, `--out`, the remote flag…). */
  readonly values: Readonly<Record<string, string>>;
  readonly sigv4: boolean;
}

/**
 * Parses `<file> | <remote flag> <value>` with value flags and `--sigv4`. `words` name things in messages:
 * `file` ("an export file"), `fetched` ("an export").
 */
export const parseVerifierArgs = (
  argv: readonly string[],
  spec: {
    readonly valueFlags: readonly string[];
    readonly remoteFlag: string;
    readonly remoteValue: string;
    readonly words: { readonly file: string; readonly fetched: string };
  },
): VerifierArgs => {
  const values: Record<string, string> = {};
  let file: string | undefined;
  let sigv4 = false;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (spec.valueFlags.includes(arg)) {
      const given = argv[index + 1];
      if (given === undefined || given.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      values[arg] = given;
      index += 1;
    } else if (arg === '--sigv4') sigv4 = true;
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else if (file !== undefined)
      throw new UsageError(`one ${spec.words.file.replace(/^an? /, '')}, not ${arg} as well`);
    else file = arg;
  }
  const remote = values[spec.remoteFlag];
  if ((file === undefined) === (remote === undefined)) {
    throw new UsageError(`give ${spec.words.file} or ${spec.remoteFlag} ${spec.remoteValue}`);
  }
  if (values['--out'] !== undefined && remote === undefined) {
    throw new UsageError(`--out saves ${spec.words.fetched} fetched with ${spec.remoteFlag}`);
  }
  if (sigv4 && remote === undefined) throw new UsageError(`--sigv4 goes with ${spec.remoteFlag}`);
  return { ...(file === undefined ? {} : { file }), values, sigv4 };
};

/** Exit code of an offline verifier for a wrong command line. */
export const EXIT_USAGE = 2;

const isKeys = (value: unknown): value is DsseKeys =>
  Array.isArray(value) ||
  (typeof value === 'object' && value !== null && Array.isArray((value as { keys?: unknown }).keys));

/** The public keys (a JWKS, or a list of JWKs) at a URL or in a file. */
export const loadKeys = async (io: Pick<CliIo, 'fetch' | 'readFile'>, source: string): Promise<DsseKeys> => {
  const keys = await loadJson(io, source);
  if (!isKeys(keys)) throw new Error(`${source} is not a JWKS ({ "keys": [...] })`);
  return keys;
};

/**
 * Runs an offline verifier: a wrong command line prints the usage and exits 2; a failure to read or fetch
 * prints `cannot verify: …` and exits 1; otherwise `verify` says the exit code (0 verified, 1 not).
 */
export const runVerifier = async <Options>(
  argv: readonly string[],
  io: CliIo,
  cli: {
    readonly usage: string;
    readonly parse: (argv: readonly string[]) => Options;
    readonly verify: (options: Options) => Promise<number>;
  },
): Promise<number> => {
  let options: Options;
  try {
    options = cli.parse(argv);
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${cli.usage}\n`);
    return EXIT_USAGE;
  }
  try {
    return await cli.verify(options);
  } catch (error) {
    io.stderr(`cannot verify: ${describeCliFailure(error, cli.usage)}`);
    return 1;
  }
};
