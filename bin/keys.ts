/**
 * What the offline verifiers (`npm run verify-receipt`, `npm run verify-journal`) read their inputs with: a
 * JSON document from an `http(s)://` URL (GET) or a file, and where the service's public keys are by default.
 */
import { type CliIo, DEFAULT_API_URL, UsageError } from './admin-client';

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
