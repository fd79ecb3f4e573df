import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const DEFAULT_PORT = 3000;
export const DEFAULT_DATA_DIR = '.local/data';
const CREDENTIALS_FILE = 'credentials.json';

export interface LocalConfig {
  readonly port: number;
  readonly host: string;
  /** `undefined` when `IN_MEMORY=true`: nothing is written to disk and everything is gone at stop. */
  readonly dataDir: string | undefined;
  readonly apiKey: string;
  readonly adminToken: string;
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /** Where each credential came from, for the start banner. */
  readonly generated: { readonly apiKey: boolean; readonly adminToken: boolean };
}

export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

const credentialsSchema = z.object({ api_key: z.string().min(16), admin_token: z.string().min(16) });

const secret = (prefix: string): string => `${prefix}_${randomBytes(24).toString('base64url')}`;

/** Credentials generated on first start and kept in the data directory (mode 0600) for the next ones. */
const storedCredentials = (dataDir: string | undefined) => {
  if (!dataDir) return { api_key: secret('key_local'), admin_token: secret('adm_local'), created: true };
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
    return { ...parsed.data, created: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fresh = { api_key: secret('key_local'), admin_token: secret('adm_local') };
  writeFileSync(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  return { ...fresh, created: true };
};

const truthy = (value: string | undefined): boolean => value !== undefined && /^(1|true|yes)$/i.test(value);

/** Local stack configuration from the environment: PORT, HOST, DATA_DIR, IN_MEMORY, API_KEY, ADMIN_TOKEN, LOG_LEVEL. */
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
  return {
    port,
    host: env.HOST || '127.0.0.1',
    dataDir,
    apiKey: env.API_KEY || stored.api_key,
    adminToken: env.ADMIN_TOKEN || stored.admin_token,
    logLevel: logLevel as LocalConfig['logLevel'],
    generated: { apiKey: !env.API_KEY && stored.created, adminToken: !env.ADMIN_TOKEN && stored.created },
  };
};
