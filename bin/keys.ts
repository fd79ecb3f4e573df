/**
 * What the offline verifiers (`npm run verify-receipt`, `verify-release`, `verify-journal`, `receipts`) share:
 * a JSON document from an `http(s)://` URL (GET) or a file, where the service's public keys are by default,
 * their "a file or the option that fetches it" input, and their run (failures as `cannot verify: …`).
 */
import type { DsseKeys } from '../functions/domain/audit/dsse';
import { DEFAULT_API_URL } from './admin-client';
import { atMost, type Cli, type CliIo, type CliOptions, type CommandLine, runCli, UsageError } from './cli';

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

/** The options of a verifier that reads its document from a file or fetches it from the API. */
export const VERIFIER_OPTIONS = {
  keys: { type: 'string' },
  out: { type: 'string' },
  sigv4: { type: 'boolean' },
} as const satisfies CliOptions;

/**
 * The file of `<file> | <remote option> <value>`, or undefined when the remote option fetches the document
 * (`remote.given`). `--out` (save what was fetched) and `--sigv4` go with the remote option only. `remote`
 * names things in messages: `file` ("an export file"), `fetched` ("an export").
 */
export const verifierFile = (
  line: CommandLine<typeof VERIFIER_OPTIONS>,
  remote: {
    readonly option: string;
    readonly given: string | undefined;
    readonly value: string;
    readonly file: string;
    readonly fetched: string;
  },
): string | undefined => {
  const [file] = atMost(line.positionals, 1);
  if ((file === undefined) === (remote.given === undefined))
    throw new UsageError(`give ${remote.file} or ${remote.option} ${remote.value}`);
  if (line.values.out !== undefined && remote.given === undefined)
    throw new UsageError(`--out saves ${remote.fetched} fetched with ${remote.option}`);
  if (line.values.sigv4 && remote.given === undefined)
    throw new UsageError(`--sigv4 goes with ${remote.option}`);
  return file;
};

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
 * Runs an offline verifier ({@link runCli}): 0 when the document verifies, 1 when it does not or cannot be
 * read or fetched (`cannot verify: …`), 2 for a wrong command line.
 */
export const runVerifier = <Options>(
  argv: readonly string[],
  io: CliIo,
  cli: Omit<Cli<Options>, 'failurePrefix'>,
): Promise<number> => runCli({ ...cli, failurePrefix: 'cannot verify: ' }, argv, io);
