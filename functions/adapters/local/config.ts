import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { effectiveRoles, isOperatorRole, type OperatorRole } from '../../domain/access/principals';

export const DEFAULT_PORT = 3000;
export const DEFAULT_DATA_DIR = '.local/data';
const CREDENTIALS_FILE = 'credentials.json';

export interface LocalConfig {
  readonly port: number;
  readonly host: string;
  /** `undefined` when `IN_MEMORY=true`: nothing is written to disk and everything is gone at stop. */
  readonly dataDir: string | undefined;
  /** The demo tenant's storefront key (API_KEY): every scope but `chargebacks:write`. */
  readonly apiKey: string;
  /** The demo tenant's payment-provider key: `chargebacks:write` only. */
  readonly chargebackKey: string;
  /** The token of the operator `admin` (ADMIN_TOKEN); the CLIs use it by default. */
  readonly adminToken: string;
  /**
   * Every local operator identity with its bearer token, `admin` first: standing in for IAM principals, so
   * four-eyes approvals can be tried locally (two operators other than a change's author approve it).
   */
  readonly admins: readonly LocalAdmin[];
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /** `LOCAL_BUNDLES=1`: the functions run from the bundles `npm run deploy` builds, each in processes of its own. */
  readonly bundles: boolean;
  /**
   * `LOCAL_DYNAMODB_ENDPOINT` and `LOCAL_FAUXQS_ENDPOINT`: engines that are already running, which the stack uses
   * (and leaves running) instead of starting its own.
   */
  readonly engines?: { readonly dynamoDbEndpoint: string; readonly sqsEndpoint: string };
  /** Where each credential came from, for the start banner. */
  readonly generated: { readonly apiKey: boolean; readonly adminToken: boolean };
}

/**
 * A local operator (C27): `name` is the identity four-eyes counts (one person may have several tokens, i.e.
 * sessions, each with its own roles); a `machine` principal never approves.
 */
export interface LocalAdmin {
  readonly name: string;
  readonly token: string;
  readonly roles: readonly OperatorRole[];
  readonly machine?: boolean;
}

/** A named operator without roles in ADMIN_TOKENS is a reviewer, as the generated ones are. */
export const DEFAULT_OPERATOR_ROLES: readonly OperatorRole[] = ['author', 'approver', 'auditor'];
/** The plain ADMIN_TOKEN: every role but `approver` (it runs the service; others review its changes). */
export const ADMIN_ROLES: readonly OperatorRole[] = ['author', 'endpoint_admin', 'auditor'];

/** Operators generated besides `admin` when ADMIN_TOKENS is not set: reviewers for four-eyes approvals. */
export const DEFAULT_REVIEWERS = ['alice', 'bob'] as const;

export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

const credentialsSchema = z.object({
  api_key: z.string().min(16),
  admin_token: z.string().min(16),
  /** Reviewers' tokens by name (added on first start of this version when missing). */
  admin_tokens: z.record(z.string(), z.string().min(16)).optional(),
  /** The demo tenant's payment-provider key (added on first start of this version when missing). */
  chargeback_key: z.string().min(16).optional(),
});

const reviewerTokens = (): Record<string, string> =>
  Object.fromEntries(DEFAULT_REVIEWERS.map((name) => [name, secret('adm_local')]));

const secret = (prefix: string): string => `${prefix}_${randomBytes(24).toString('base64url')}`;

/** Credentials generated on first start and kept in the data directory (mode 0600) for the next ones. */
const storedCredentials = (dataDir: string | undefined) => {
  if (!dataDir) {
    return {
      api_key: secret('key_local'),
      chargeback_key: secret('key_local'),
      admin_token: secret('adm_local'),
      admin_tokens: reviewerTokens(),
      created: true,
    };
  }
  const file = path.join(dataDir, CREDENTIALS_FILE);
  if (existsSync(file)) {
    let content: unknown;
    try {
      content = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      content = undefined;
    }
    const parsed = credentialsSchema.safeParse(content);
    if (!parsed.success) {
      throw new ConfigurationError(`${file} is not a valid credentials file; remove it to regenerate`);
    }
    const { admin_tokens: adminTokens, chargeback_key: chargebackKey } = parsed.data;
    if (adminTokens && chargebackKey)
      return { ...parsed.data, admin_tokens: adminTokens, chargeback_key: chargebackKey, created: false };
    const upgraded = {
      ...parsed.data,
      admin_tokens: adminTokens ?? reviewerTokens(),
      chargeback_key: chargebackKey ?? secret('key_local'),
    };
    writeFileSync(file, `${JSON.stringify(upgraded, null, 2)}\n`, { mode: 0o600 });
    return { ...upgraded, created: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fresh = {
    api_key: secret('key_local'),
    chargeback_key: secret('key_local'),
    admin_token: secret('adm_local'),
    admin_tokens: reviewerTokens(),
  };
  writeFileSync(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  return { ...fresh, created: true };
};

const truthy = (value: string | undefined): boolean => value !== undefined && /^(1|true|yes)$/i.test(value);

const IDENTITY = /^[A-Za-z0-9_.-]{1,64}$/;

/** A role list of ADMIN_TOKENS: `role+role`, roles of C27 plus `machine` for a machine principal. */
const parseRoles = (name: string, value: string): { roles: OperatorRole[]; machine: boolean } => {
  const words = value.split('+').filter((word) => word.length > 0);
  const machine = words.includes('machine');
  const unknown = words.filter((word) => word !== 'machine' && !isOperatorRole(word));
  if (unknown.length > 0 || words.length === 0) {
    throw new ConfigurationError(
      `ADMIN_TOKENS: ${name} has unknown roles ${unknown.join(', ') || '(none)'}; ` +
        'use author, approver, endpoint_admin, auditor and machine, joined by +',
    );
  }
  const roles = words.filter(isOperatorRole);
  if (machine && roles.includes('approver'))
    throw new ConfigurationError(`ADMIN_TOKENS: ${name} is a machine principal, which never approves`);
  return { roles: effectiveRoles(roles, machine), machine };
};

/**
 * `ADMIN_TOKENS=name:token[:role+role],…`: operator identities besides `admin`, each with its bearer token and
 * roles (C27; without roles: author+approver+auditor). A name may come more than once — several sessions of one
 * person — and four-eyes counts it once.
 */
const parseAdminTokens = (value: string): LocalAdmin[] => {
  const admins = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry): LocalAdmin => {
      const [name = '', token = '', roles, ...rest] = entry.split(':');
      if (!IDENTITY.test(name) || rest.length > 0) {
        throw new ConfigurationError(
          'ADMIN_TOKENS is name:token[:role+role],… with names of letters, digits, _ . - (1–64 characters)',
        );
      }
      if (token.length < 16)
        throw new ConfigurationError(`ADMIN_TOKENS: the token of ${name} must be at least 16 characters`);
      if (roles === undefined) return { name, token, roles: DEFAULT_OPERATOR_ROLES };
      const parsed = parseRoles(name, roles);
      return { name, token, roles: parsed.roles, ...(parsed.machine ? { machine: true } : {}) };
    });
  return admins;
};

/** An engine's endpoint: an http(s) URL of scheme, host and port only. */
const engineEndpoint = (name: string, value: string): string => {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.pathname !== '/' ||
    url.search ||
    url.username ||
    url.password
  ) {
    // The value is not echoed: a URL with credentials in it would print them.
    throw new ConfigurationError(
      `${name} must be an http(s) URL of scheme, host and port only, such as http://127.0.0.1:8000`,
    );
  }
  return url.origin;
};

/** Running engines to attach to: both endpoints, or neither. */
const attachedEngines = (env: Readonly<Record<string, string | undefined>>): LocalConfig['engines'] => {
  const dynamo = env.LOCAL_DYNAMODB_ENDPOINT || undefined;
  const fauxqs = env.LOCAL_FAUXQS_ENDPOINT || undefined;
  if (!dynamo && !fauxqs) return undefined;
  if (!dynamo || !fauxqs) {
    throw new ConfigurationError(
      'LOCAL_DYNAMODB_ENDPOINT and LOCAL_FAUXQS_ENDPOINT go together: name both running engines, or neither',
    );
  }
  return {
    dynamoDbEndpoint: engineEndpoint('LOCAL_DYNAMODB_ENDPOINT', dynamo),
    sqsEndpoint: engineEndpoint('LOCAL_FAUXQS_ENDPOINT', fauxqs),
  };
};

/**
 * Local stack configuration from the environment: PORT, HOST, DATA_DIR, IN_MEMORY, API_KEY, ADMIN_TOKEN,
 * ADMIN_TOKENS, LOG_LEVEL, LOCAL_BUNDLES, LOCAL_DYNAMODB_ENDPOINT, LOCAL_FAUXQS_ENDPOINT.
 */
export const loadLocalConfig = (
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): LocalConfig => {
  const port = env.PORT === undefined || env.PORT === '' ? DEFAULT_PORT : Number(env.PORT);
  if ((env.PORT && !/^\d{1,5}$/.test(env.PORT)) || !Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigurationError(`PORT must be an integer from 0 to 65535, got ${JSON.stringify(env.PORT)}`);
  }
  const logLevel = (env.LOG_LEVEL ?? 'INFO').toUpperCase();
  if (!['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'].includes(logLevel)) {
    throw new ConfigurationError('LOG_LEVEL must be one of DEBUG, INFO, WARN, ERROR, SILENT');
  }
  if (env.LOCAL_BUNDLES && !/^(1|true|yes|0|false|no)$/i.test(env.LOCAL_BUNDLES)) {
    throw new ConfigurationError('LOCAL_BUNDLES must be 1 (run the deployed bundles) or 0');
  }
  const engines = attachedEngines(env);
  if (engines && truthy(env.IN_MEMORY)) {
    // The engines keep the data across restarts, so the keys that sign and encrypt it must be kept too.
    throw new ConfigurationError(
      'IN_MEMORY cannot go with LOCAL_DYNAMODB_ENDPOINT and LOCAL_FAUXQS_ENDPOINT: the attached engines keep ' +
        'their data across restarts, and the keys that signed and encrypted it live in DATA_DIR',
    );
  }
  const dataDir = truthy(env.IN_MEMORY) ? undefined : path.resolve(cwd, env.DATA_DIR || DEFAULT_DATA_DIR);
  const stored = storedCredentials(dataDir);
  for (const [name, value] of [
    ['API_KEY', env.API_KEY],
    ['ADMIN_TOKEN', env.ADMIN_TOKEN],
  ] as const) {
    if (value !== undefined && value !== '' && value.length < 16) {
      throw new ConfigurationError(`${name} must be at least 16 characters`);
    }
  }
  const adminToken = env.ADMIN_TOKEN || stored.admin_token;
  const others = env.ADMIN_TOKENS
    ? parseAdminTokens(env.ADMIN_TOKENS)
    : Object.entries(stored.admin_tokens).map(
        ([name, token]): LocalAdmin => ({ name, token, roles: DEFAULT_OPERATOR_ROLES }),
      );
  if (others.some((admin) => admin.name === 'admin')) {
    throw new ConfigurationError('ADMIN_TOKENS cannot name "admin": its token is ADMIN_TOKEN');
  }
  const admins: LocalAdmin[] = [{ name: 'admin', token: adminToken, roles: ADMIN_ROLES }, ...others];
  if (new Set(admins.map((admin) => admin.token)).size !== admins.length) {
    throw new ConfigurationError('two operators have the same token: each identity needs its own');
  }
  return {
    port,
    host: env.HOST || '127.0.0.1',
    dataDir,
    apiKey: env.API_KEY || stored.api_key,
    chargebackKey: stored.chargeback_key,
    adminToken,
    admins,
    logLevel: logLevel as LocalConfig['logLevel'],
    bundles: truthy(env.LOCAL_BUNDLES),
    ...(engines ? { engines } : {}),
    generated: { apiKey: !env.API_KEY && stored.created, adminToken: !env.ADMIN_TOKEN && stored.created },
  };
};
