/**
 * The client of the service's admin routes, shared by the CLIs (`npm run catalog`, `npm run ops`).
 *
 * Two ways to authenticate (routes with `auth: 'admin'` in functions/definitions/routes.ts):
 * - the local stack: `Authorization: Bearer <ADMIN_TOKEN>`; the token defaults to `admin_token` in
 *   `<DATA_DIR>/credentials.json` (`DATA_DIR` defaults to `.local/data`), the file the local stack writes on
 *   first start. Another local operator (an `identity`, the CLIs' `--as <name>` / `ADMIN_AS`) uses its own
 *   token: `admin_tokens[name]` in the same file (`ADMIN_TOKENS=name:token,…` when set, as the stack reads it;
 *   `admin`: `admin_token`), never ADMIN_TOKEN;
 * - a deployed API (C7): IAM SigV4, chosen with `--sigv4` or `API_AUTH=sigv4`. Each request is signed for the
 *   service `execute-api` (method, path, query, host and body) with the credentials of the default AWS
 *   provider chain (environment, profile, SSO, container or instance role). The region is the one in an
 *   `*.execute-api.<region>.amazonaws.com` host, else `AWS_REGION` / `AWS_DEFAULT_REGION` (a custom domain).
 *
 * `API_URL` (default `http://127.0.0.1:3000`) may carry a stage path (`https://…/prod`). Every POST carries a
 * fresh `Idempotency-Key` (C8). JSON answers are parsed; a non-2xx answer becomes an `AdminApiError` with the
 * status and the C6 body (`error`, `error_description`, `trace_id`, `problems` when present).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { type Cli, type CliIo, DescribedError, runCli, UsageError } from './cli';

export { type CliIo, UsageError } from './cli';

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';
export const DEFAULT_DATA_DIR = '.local/data';

/** The part of the CLI's world the admin client uses. */
export type AdminIo = Pick<CliIo, 'env' | 'cwd' | 'fetch' | 'readFile'>;

/** A setting of the environment that keeps the client from talking to the API (URL, token, region, mode). */
export class AdminConfigurationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AdminConfigurationError';
  }
}

/** The API could not be reached at all (connection refused, DNS, TLS). */
export class ApiUnreachableError extends Error {
  constructor(apiUrl: string, cause: unknown) {
    super(`cannot reach ${apiUrl}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ApiUnreachableError';
  }
}

/** One validation problem of a C6 `invalid_request` body. */
export interface Problem {
  readonly path: string;
  readonly message: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isProblem = (value: unknown): value is Problem =>
  isRecord(value) && typeof value.path === 'string' && typeof value.message === 'string';

const C6_FIELDS = new Set(['error', 'error_description', 'trace_id', 'problems']);

/** A refusal on stderr: status, error code and description, problems with their paths, details, trace id. */
export const describeFailure = (status: number, body: unknown): string => {
  const lines: string[] = [];
  if (isRecord(body)) {
    const description =
      typeof body.error_description === 'string'
        ? body.error_description
        : // API Gateway's own refusals (IAM, throttling) answer `{"message": "…"}`.
          typeof body.message === 'string'
          ? body.message
          : undefined;
    lines.push(
      `error ${status}${typeof body.error === 'string' ? ` ${body.error}` : ''}` +
        `${description === undefined ? '' : `: ${description}`}`,
    );
    if (Array.isArray(body.problems)) {
      const problems = body.problems.filter(isProblem);
      lines.push(`${problems.length} problem${problems.length === 1 ? '' : 's'}:`);
      for (const problem of problems) lines.push(`  ${problem.path}: ${problem.message}`);
    }
    if (typeof body.error === 'string') {
      // Details of the refusal beside the C6 fields (`missing_event_ids`, `rule`, …).
      for (const [key, value] of Object.entries(body)) {
        if (!C6_FIELDS.has(key)) lines.push(`${key}: ${JSON.stringify(value)}`);
      }
    }
    if (typeof body.trace_id === 'string') lines.push(`trace id: ${body.trace_id}`);
  } else {
    lines.push(`error ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 500)}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
};

/** A non-2xx answer of the API, with its C6 body for the CLI to print (`describe()`). */
export class AdminApiError extends DescribedError {
  readonly status: number;
  /** The parsed body (a C6 object, or the raw text of another answer). */
  readonly body: unknown;
  readonly error?: string;
  readonly errorDescription?: string;
  readonly traceId?: string;
  readonly problems?: readonly Problem[];

  constructor(status: number, body: unknown) {
    super(describeFailure(status, body).split('\n')[0]);
    this.name = 'AdminApiError';
    this.status = status;
    this.body = body;
    if (isRecord(body)) {
      if (typeof body.error === 'string') this.error = body.error;
      if (typeof body.error_description === 'string') this.errorDescription = body.error_description;
      if (typeof body.trace_id === 'string') this.traceId = body.trace_id;
      if (Array.isArray(body.problems)) this.problems = body.problems.filter(isProblem);
    }
  }

  /** Every line of the refusal, as the CLIs print it on stderr. */
  override describe(): string {
    return describeFailure(this.status, this.body);
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/** Whether `API_URL` is a deployed API (admin routes behind IAM) rather than the local stack. */
export const isDeployed = (apiUrl: URL, explicitToken: boolean): boolean => {
  const host = apiUrl.hostname.toLowerCase();
  if (host.endsWith('.amazonaws.com') || host.endsWith('.on.aws')) return true;
  // Another host with an explicit ADMIN_TOKEN: a local stack elsewhere (e.g. in a container).
  return !LOOPBACK_HOSTS.has(host) && !explicitToken;
};

/** The local stack's credentials file: `<DATA_DIR>/credentials.json`. */
export const credentialsFile = (io: Pick<AdminIo, 'env' | 'cwd'>): string =>
  path.resolve(io.cwd, io.env.DATA_DIR || DEFAULT_DATA_DIR, 'credentials.json');

/** A local operator's name, as the local stack takes it (`ADMIN_TOKENS`, `admin_tokens`). */
export const OPERATOR_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The operator whose token is ADMIN_TOKEN, `admin_token` in the credentials file. */
export const DEFAULT_OPERATOR = 'admin';

/**
 * The local operator to act as: `--as <name>` when given, else `ADMIN_AS`; `undefined` for the default token
 * (ADMIN_TOKEN, else `admin_token`).
 */
export const operatorIdentity = (
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined => flag ?? (env.ADMIN_AS || undefined);

/** `ADMIN_TOKENS=name:token,…` (the local stack's format) as name → token. */
const parseAdminTokens = (value: string): Map<string, string> => {
  const tokens = new Map<string, string>();
  for (const entry of value.split(',')) {
    const trimmed = entry.trim();
    if (trimmed.length === 0) continue;
    const separator = trimmed.indexOf(':');
    const name = trimmed.slice(0, Math.max(separator, 0));
    const token = trimmed.slice(separator + 1);
    if (separator <= 0 || !OPERATOR_NAME.test(name) || token.length === 0)
      throw new AdminConfigurationError('ADMIN_TOKENS must be name:token,… (as the local stack takes it)');
    tokens.set(name, token);
  }
  return tokens;
};

const readCredentials = async (
  io: AdminIo,
  file: string,
  missing: string,
): Promise<Record<string, unknown>> => {
  let content: unknown;
  try {
    content = JSON.parse(await io.readFile(file));
  } catch (error) {
    throw new AdminConfigurationError(missing, { cause: error });
  }
  if (!isRecord(content))
    throw new AdminConfigurationError(`${file} is not a credentials file (a JSON object)`);
  return content;
};

const unknownOperator = (
  identity: string,
  known: readonly string[],
  source: string,
): AdminConfigurationError =>
  new AdminConfigurationError(
    `unknown operator ${JSON.stringify(identity)}: the local operators are ${known.join(', ')} (${source})`,
  );

/** The token of the local operator `identity`: `admin_token` for `admin`, else ADMIN_TOKENS or `admin_tokens`. */
const operatorToken = async (io: AdminIo, identity: string): Promise<string> => {
  if (!OPERATOR_NAME.test(identity))
    throw new AdminConfigurationError(
      `${JSON.stringify(identity)} is not an operator name (--as / ADMIN_AS: letters, digits, _ . -, at most 64)`,
    );
  if (identity !== DEFAULT_OPERATOR && io.env.ADMIN_TOKENS) {
    const listed = parseAdminTokens(io.env.ADMIN_TOKENS);
    const token = listed.get(identity);
    if (token !== undefined) return token;
    throw unknownOperator(identity, [DEFAULT_OPERATOR, ...listed.keys()], 'ADMIN_TOKENS');
  }
  const file = credentialsFile(io);
  const content = await readCredentials(
    io,
    file,
    `acting as ${identity} needs the local stack's ${file} (no readable file): start the local stack`,
  );
  if (identity === DEFAULT_OPERATOR) {
    if (typeof content.admin_token !== 'string' || content.admin_token.length === 0)
      throw new AdminConfigurationError(`${file} has no admin_token`);
    return content.admin_token;
  }
  const tokens = isRecord(content.admin_tokens) ? content.admin_tokens : undefined;
  if (tokens === undefined)
    throw unknownOperator(
      identity,
      [DEFAULT_OPERATOR],
      `${file} has no admin_tokens: restart the local stack to generate the reviewers' tokens`,
    );
  const token = Object.hasOwn(tokens, identity) ? tokens[identity] : undefined;
  if (typeof token === 'string' && token.length > 0) return token;
  const known = Object.entries(tokens)
    .filter(([name, value]) => name !== DEFAULT_OPERATOR && typeof value === 'string' && value.length > 0)
    .map(([name]) => name);
  throw unknownOperator(identity, [DEFAULT_OPERATOR, ...known], `admin_tokens in ${file}`);
};

/** The reviewers the local stack generates besides `admin` when ADMIN_TOKENS is not set. */
const DEFAULT_REVIEWERS = ['alice', 'bob'] as const;

/**
 * The local operators' names, `admin` first: ADMIN_TOKENS when set, else `admin_tokens` of the credentials file;
 * only `admin` for a file without `admin_tokens`; the stack's defaults (`admin`, `alice`, `bob`) when neither can be
 * read. For hints such as "approve --as alice".
 */
export const localOperators = async (io: AdminIo): Promise<string[]> => {
  try {
    if (io.env.ADMIN_TOKENS) return [DEFAULT_OPERATOR, ...parseAdminTokens(io.env.ADMIN_TOKENS).keys()];
    const content = await readCredentials(io, credentialsFile(io), 'no credentials file');
    if (isRecord(content.admin_tokens)) {
      const names = Object.entries(content.admin_tokens)
        .filter(([name, token]) => name !== DEFAULT_OPERATOR && typeof token === 'string' && token.length > 0)
        .map(([name]) => name);
      return [DEFAULT_OPERATOR, ...names];
    }
    return [DEFAULT_OPERATOR];
  } catch {
    // The defaults below.
  }
  return [DEFAULT_OPERATOR, ...DEFAULT_REVIEWERS];
};

/**
 * The admin token. Without `identity`: ADMIN_TOKEN, else `admin_token` in the local stack's credentials file.
 * With one (`--as <name>`): that local operator's own token — `admin_token` for `admin`, else its entry of
 * `ADMIN_TOKENS` when set (as the stack reads it), else `admin_tokens[name]` in the credentials file; ADMIN_TOKEN
 * is not used, so it never stands in for another operator. An unknown name lists the known ones.
 */
export const adminToken = async (io: AdminIo, identity?: string): Promise<string> => {
  // `admin` is ADMIN_TOKEN when set, as in the local stack; other operators come from their own tokens.
  if (identity !== undefined && identity !== 'admin') return operatorToken(io, identity);
  const given = io.env.ADMIN_TOKEN;
  if (given) return given;
  const file = credentialsFile(io);
  const content = await readCredentials(
    io,
    file,
    `no ADMIN_TOKEN and no readable ${file}: start the local stack or set ADMIN_TOKEN`,
  );
  const token = content.admin_token;
  if (typeof token !== 'string' || token.length === 0)
    throw new AdminConfigurationError(`${file} has no admin_token`);
  return token;
};

export type AuthMode = 'bearer' | 'sigv4';

/** `sigv4` with `--sigv4` or `API_AUTH=sigv4`; `bearer` otherwise (`API_AUTH` unset or `bearer`). */
export const authMode = (env: AdminIo['env'], sigv4Flag: boolean): AuthMode => {
  if (sigv4Flag) return 'sigv4';
  const given = env.API_AUTH?.trim().toLowerCase();
  if (!given || given === 'bearer') return 'bearer';
  if (given === 'sigv4') return 'sigv4';
  throw new AdminConfigurationError(`API_AUTH must be sigv4 or bearer, not ${env.API_AUTH}`);
};

const EXECUTE_API_HOST = /\.execute-api\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/;

/** The region of an `*.execute-api.<region>.amazonaws.com` host (regional, edge or private endpoint). */
export const regionFromHost = (hostname: string): string | undefined =>
  EXECUTE_API_HOST.exec(hostname.toLowerCase())?.[1];

/**
 * The region to sign for: the API's own (its host), else `AWS_REGION`, else `AWS_DEFAULT_REGION` (a custom
 * domain hides it). The host wins because a signature for another region than the API's is always refused.
 */
export const signingRegion = (apiUrl: URL, env: AdminIo['env']): string => {
  const region = regionFromHost(apiUrl.hostname) ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION);
  if (!region)
    throw new AdminConfigurationError(
      `cannot tell the AWS region of ${apiUrl.host}: set AWS_REGION (or AWS_DEFAULT_REGION)`,
    );
  return region;
};

/** AWS credentials (the shape of `AwsCredentialIdentity`). */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface AdminClientOptions {
  /** `--sigv4` was given. */
  readonly sigv4?: boolean;
  /**
   * The local operator to act as (`--as <name>` / `ADMIN_AS`): its own bearer token ({@link adminToken}).
   * Refused (a `UsageError`) with SigV4 or a deployed API, where the operator is the IAM principal.
   */
  readonly identity?: string;
  /** SigV4 credentials; default: the AWS default provider chain (`defaultProvider()`). */
  readonly credentials?: AwsCredentials | AwsCredentialsProvider;
  /** The signing time; default now. */
  readonly now?: () => Date;
  /** The `Idempotency-Key` of a POST; default a random UUID. */
  readonly idempotencyKey?: () => string;
}

/** What a CLI's caller (a test) may set of the client: the command line says SigV4 and the operator. */
export type ConnectOptions = Omit<AdminClientOptions, 'sigv4' | 'identity'>;

export type AdminMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Query values; `undefined` ones are left out. */
export type AdminQuery = Readonly<Record<string, string | number | boolean | undefined>>;

export interface AdminRequest {
  readonly method: AdminMethod;
  /** The route path, e.g. `/webhooks/events/evt_…` (appended to API_URL, stage path included). */
  readonly path: string;
  readonly query?: AdminQuery;
  /** A JSON body. */
  readonly body?: unknown;
}

export interface AdminResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON (the text when it is not JSON; `undefined` when empty, e.g. 204). */
  readonly body: unknown;
}

/** RFC 3986 encoding, the one SigV4 canonicalises the query with (so the signed and the sent query agree). */
const rfc3986 = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

const readBody = async (response: Response): Promise<unknown> => {
  const text = await response.text();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

type Signer = (request: {
  method: string;
  url: URL;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string | undefined;
}) => Promise<Record<string, string>>;

const sigv4Signer = (region: string, options: AdminClientOptions): Signer => {
  const signer = new SignatureV4({
    service: 'execute-api',
    region,
    sha256: Sha256,
    credentials: options.credentials ?? defaultProvider(),
  });
  return async ({ method, url, query, headers, body }) => {
    let signed: Awaited<ReturnType<SignatureV4['sign']>>;
    try {
      signed = await signer.sign(
        {
          method,
          protocol: url.protocol,
          hostname: url.hostname,
          ...(url.port ? { port: Number(url.port) } : {}),
          path: url.pathname,
          query,
          headers: { ...headers, host: url.host },
          ...(body === undefined ? {} : { body }),
        },
        { signingDate: (options.now ?? (() => new Date()))() },
      );
    } catch (error) {
      throw new AdminConfigurationError(
        `cannot sign the request (SigV4): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const result: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      // fetch sets Host itself, from the same URL.
      if (name.toLowerCase() !== 'host') result[name] = String(value);
    }
    return result;
  };
};

/** The admin routes of one API, with the authentication it needs. */
export class AdminClient {
  readonly apiUrl: string;
  readonly auth: AuthMode;
  readonly #io: AdminIo;
  readonly #base: string;
  readonly #bearer: string | undefined;
  readonly #signer: Signer | undefined;
  readonly #idempotencyKey: () => string;

  private constructor(
    io: AdminIo,
    apiUrl: string,
    auth: { bearer: string } | { signer: Signer },
    options: AdminClientOptions,
  ) {
    this.#io = io;
    this.apiUrl = apiUrl;
    this.#base = apiUrl.replace(/\/+$/, '');
    if ('bearer' in auth) {
      this.auth = 'bearer';
      this.#bearer = auth.bearer;
    } else {
      this.auth = 'sigv4';
      this.#signer = auth.signer;
    }
    this.#idempotencyKey = options.idempotencyKey ?? randomUUID;
  }

  /**
   * A client for `API_URL`: SigV4 with `--sigv4` / `API_AUTH=sigv4`, the admin token otherwise. Refuses (an
   * `AdminConfigurationError`) a URL that is not one, a deployed API without SigV4, a missing token or region.
   */
  static async connect(io: AdminIo, options: AdminClientOptions = {}): Promise<AdminClient> {
    const apiUrlText = io.env.API_URL || DEFAULT_API_URL;
    let apiUrl: URL;
    try {
      apiUrl = new URL(apiUrlText);
    } catch (error) {
      throw new AdminConfigurationError(`API_URL is not a URL: ${apiUrlText}`, { cause: error });
    }
    if (apiUrl.protocol !== 'http:' && apiUrl.protocol !== 'https:')
      throw new AdminConfigurationError(`API_URL must be http(s): ${apiUrlText}`);
    const mode = authMode(io.env, options.sigv4 === true);
    if (options.identity !== undefined) {
      const where =
        mode === 'sigv4'
          ? 'with SigV4'
          : isDeployed(apiUrl, Boolean(io.env.ADMIN_TOKEN))
            ? `${apiUrlText} is a deployed API:`
            : undefined;
      if (where !== undefined)
        throw new UsageError(
          `--as ${options.identity} (--as / ADMIN_AS) picks a local operator's token; ${where} the operator is ` +
            'the IAM principal of your AWS credentials. Drop --as (unset ADMIN_AS) and sign with the ' +
            'credentials (profile, role) of the operator who acts.',
        );
    }
    if (mode === 'sigv4') {
      return new AdminClient(
        io,
        apiUrlText,
        { signer: sigv4Signer(signingRegion(apiUrl, io.env), options) },
        options,
      );
    }
    if (isDeployed(apiUrl, Boolean(io.env.ADMIN_TOKEN))) {
      throw new AdminConfigurationError(
        `${apiUrlText} looks like a deployed API: its admin routes need IAM (SigV4) signed requests. Give ` +
          '--sigv4 (or set API_AUTH=sigv4) with AWS credentials allowed to invoke the admin routes, or point ' +
          'API_URL at the local stack.',
      );
    }
    return new AdminClient(io, apiUrlText, { bearer: await adminToken(io, options.identity) }, options);
  }

  /** Sends one request; the answer of a 2xx, else an `AdminApiError` (or `ApiUnreachableError`). */
  async request(request: AdminRequest): Promise<AdminResponse> {
    const query: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) query[name] = String(value);
    }
    const search = Object.entries(query)
      .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
      .join('&');
    const url = new URL(`${this.#base}${request.path}${search ? `?${search}` : ''}`);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    let headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (request.method === 'POST') headers['Idempotency-Key'] = this.#idempotencyKey();
    if (this.#signer) {
      headers = await this.#signer({ method: request.method, url, query, headers, body });
    } else {
      headers = { Authorization: `Bearer ${this.#bearer}`, ...headers };
    }
    let response: Response;
    try {
      response = await this.#io.fetch(url.href, {
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        // A 303 (a large export's download link) is the answer: its link is followed without the credentials.
        redirect: 'manual',
      });
    } catch (error) {
      throw new ApiUnreachableError(this.apiUrl, error);
    }
    const parsed = await readBody(response);
    if (!response.ok && response.status !== 303) throw new AdminApiError(response.status, parsed);
    return { status: response.status, headers: response.headers, body: parsed };
  }

  get(path: string, query?: AdminQuery): Promise<AdminResponse> {
    return this.request({ method: 'GET', path, ...(query ? { query } : {}) });
  }

  post(path: string, body: unknown = {}): Promise<AdminResponse> {
    return this.request({ method: 'POST', path, body });
  }

  patch(path: string, body: unknown): Promise<AdminResponse> {
    return this.request({ method: 'PATCH', path, body });
  }

  delete(path: string): Promise<AdminResponse> {
    return this.request({ method: 'DELETE', path });
  }
}

/** A `--limit` of a paginated admin listing: 1 to 200 (undefined when not given). */
export const pageLimit = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 200)
    throw new UsageError('--limit must be an integer from 1 to 200');
  return Number(value);
};

/** The end of an admin CLI's usage: the environment it reads. */
export const ADMIN_CLI_ENVIRONMENT = `environment:
  API_URL      the API (default ${DEFAULT_API_URL})
  ADMIN_TOKEN  the local admin token (default: admin_token in $DATA_DIR/credentials.json)
  DATA_DIR     the local stack's data directory (default ${DEFAULT_DATA_DIR})
  API_AUTH     sigv4 to sign requests with IAM SigV4 like --sigv4 (AWS credentials from the default
               provider chain; region from the execute-api host, else AWS_REGION / AWS_DEFAULT_REGION)`;

/** A command of an admin CLI (`--sigv4`: signed with IAM SigV4). */
export type AdminCommand = { readonly sigv4?: true };

/** An admin CLI: a tool whose commands run with a client connected to the admin routes. */
export interface AdminCli<Command extends AdminCommand, Io extends CliIo>
  extends Omit<Cli<Command, Io>, 'execute'> {
  /** Runs a command; an exit code to end with, else 0. */
  readonly execute: (
    command: Command,
    client: AdminClient,
    io: Io,
  ) => Promise<number | undefined> | Promise<void>;
  /** The local operator a command acts as (`--as`), if the CLI has operators. */
  readonly identity?: (command: Command, io: Io) => string | undefined;
}

/**
 * Runs one command of an admin CLI ({@link runCli}): the command runs with a client connected as it asks
 * (SigV4 with `--sigv4`, the operator's token with `--as`); a refusal prints every line of it (exit 1).
 */
export const runAdminCli = <Command extends AdminCommand, Io extends CliIo>(
  cli: AdminCli<Command, Io>,
  argv: readonly string[],
  io: Io,
  options: ConnectOptions,
): Promise<number> =>
  runCli(
    {
      ...cli,
      execute: async (command, commandIo) => {
        const identity = cli.identity?.(command, commandIo);
        const client = await AdminClient.connect(commandIo, {
          ...options,
          sigv4: command.sigv4 === true,
          ...(identity === undefined ? {} : { identity }),
        });
        const code: unknown = await cli.execute(command, client, commandIo);
        return typeof code === 'number' ? code : undefined;
      },
    },
    argv,
    io,
  );
