import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  DEFAULT_DATA_DIR,
  DEFAULT_PORT,
  loadLocalConfig,
} from '../../../functions/adapters/local/config';

let cwd: string;

beforeEach(() => {
  cwd = mkdtempSync(path.join(tmpdir(), 'pricing-config-'));
});

afterEach(() => {
  rmSync(cwd, { recursive: true, force: true });
});

const credentialsFile = (dataDir: string) => path.join(dataDir, 'credentials.json');

describe('loadLocalConfig: defaults', () => {
  it('listens on port 3000 on 127.0.0.1 at level INFO by default', () => {
    const config = loadLocalConfig({}, cwd);
    expect(config.port).toBe(DEFAULT_PORT);
    expect(DEFAULT_PORT).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.logLevel).toBe('INFO');
  });

  it('keeps data in .local/data resolved against the working directory', () => {
    expect(loadLocalConfig({}, cwd).dataDir).toBe(path.resolve(cwd, DEFAULT_DATA_DIR));
    expect(path.resolve(cwd, DEFAULT_DATA_DIR)).toBe(path.join(cwd, '.local', 'data'));
  });

  it('resolves a relative DATA_DIR against the working directory and keeps an absolute one', () => {
    expect(loadLocalConfig({ DATA_DIR: 'elsewhere' }, cwd).dataDir).toBe(path.join(cwd, 'elsewhere'));
    const absolute = path.join(cwd, 'absolute');
    expect(loadLocalConfig({ DATA_DIR: absolute }, cwd).dataDir).toBe(absolute);
  });

  it('treats an empty PORT as the default', () => {
    expect(loadLocalConfig({ PORT: '' }, cwd).port).toBe(DEFAULT_PORT);
  });
});

describe('loadLocalConfig: PORT', () => {
  it.each(['0', '8080', '65535'])('accepts %s', (port) => {
    expect(loadLocalConfig({ PORT: port, IN_MEMORY: 'true' }, cwd).port).toBe(Number(port));
  });

  it.each(['-1', '65536', '80.5', 'http', '3000abc'])('refuses %s with ConfigurationError', (port) => {
    expect(() => loadLocalConfig({ PORT: port, IN_MEMORY: 'true' }, cwd)).toThrow(ConfigurationError);
  });
});

describe('loadLocalConfig: LOG_LEVEL', () => {
  it('accepts a level in any case', () => {
    expect(loadLocalConfig({ LOG_LEVEL: 'debug', IN_MEMORY: '1' }, cwd).logLevel).toBe('DEBUG');
  });

  it('refuses an unknown level', () => {
    expect(() => loadLocalConfig({ LOG_LEVEL: 'verbose', IN_MEMORY: '1' }, cwd)).toThrow(ConfigurationError);
  });
});

describe('loadLocalConfig: IN_MEMORY', () => {
  it.each(['true', '1', 'yes', 'TRUE'])('IN_MEMORY=%s has no data directory and writes nothing', (value) => {
    const config = loadLocalConfig({ IN_MEMORY: value }, cwd);
    expect(config.dataDir).toBeUndefined();
    expect(existsSync(path.join(cwd, '.local'))).toBe(false);
    expect(config.generated).toEqual({ apiKey: true, adminToken: true });
    expect(config.apiKey.length).toBeGreaterThanOrEqual(16);
  });

  it('IN_MEMORY=false keeps the data directory', () => {
    expect(loadLocalConfig({ IN_MEMORY: 'false' }, cwd).dataDir).toBe(path.join(cwd, '.local', 'data'));
  });
});

describe('loadLocalConfig: running engines (LOCAL_DYNAMODB_ENDPOINT, LOCAL_FAUXQS_ENDPOINT)', () => {
  it('starts its own engines when neither is set', () => {
    expect(loadLocalConfig({}, cwd).engines).toBeUndefined();
    expect(
      loadLocalConfig({ LOCAL_DYNAMODB_ENDPOINT: '', LOCAL_FAUXQS_ENDPOINT: '' }, cwd).engines,
    ).toBeUndefined();
  });

  it('attaches to both, as origins', () => {
    const config = loadLocalConfig(
      { LOCAL_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000/', LOCAL_FAUXQS_ENDPOINT: 'http://localhost:4566' },
      cwd,
    );
    expect(config.engines).toEqual({
      dynamoDbEndpoint: 'http://127.0.0.1:8000',
      sqsEndpoint: 'http://localhost:4566',
    });
  });

  it.each([
    [{ LOCAL_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }, /go together/],
    [{ LOCAL_FAUXQS_ENDPOINT: 'http://127.0.0.1:4566' }, /go together/],
    [
      { LOCAL_DYNAMODB_ENDPOINT: 'ftp://127.0.0.1:8000', LOCAL_FAUXQS_ENDPOINT: 'http://127.0.0.1:1' },
      /LOCAL_DYNAMODB_ENDPOINT must be/,
    ],
    [
      { LOCAL_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', LOCAL_FAUXQS_ENDPOINT: 'http://127.0.0.1:1/path' },
      /LOCAL_FAUXQS_ENDPOINT must be/,
    ],
    [
      { LOCAL_DYNAMODB_ENDPOINT: 'not a url', LOCAL_FAUXQS_ENDPOINT: 'http://127.0.0.1:1' },
      /LOCAL_DYNAMODB_ENDPOINT must be/,
    ],
    [
      {
        LOCAL_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
        LOCAL_FAUXQS_ENDPOINT: 'http://127.0.0.1:1',
        IN_MEMORY: 'true',
      },
      /IN_MEMORY cannot go with/,
    ],
  ])('refuses %j with a ConfigurationError naming the variable', (env, message) => {
    expect(() => loadLocalConfig(env, cwd)).toThrow(ConfigurationError);
    expect(() => loadLocalConfig(env, cwd)).toThrow(message);
  });
});

describe('loadLocalConfig: an engine URL with credentials', () => {
  it('is refused without echoing them', () => {
    // Built at run time: a URL with credentials in the source would be (rightly) flagged by the secret scan.
    const withCredentials = new URL('http://127.0.0.1:8000');
    withCredentials.username = 'user';
    withCredentials.password = `pw-${randomBytes(6).toString('hex')}`;
    const env = {
      LOCAL_DYNAMODB_ENDPOINT: String(withCredentials),
      LOCAL_FAUXQS_ENDPOINT: 'http://127.0.0.1:1',
    };
    expect(() => loadLocalConfig(env, cwd)).toThrow(/LOCAL_DYNAMODB_ENDPOINT must be/);
    expect(() => loadLocalConfig(env, cwd)).not.toThrow(new RegExp(withCredentials.password));
  });
});

describe('loadLocalConfig: credentials', () => {
  it('generates credentials on first load into <dataDir>/credentials.json with mode 0600', () => {
    const config = loadLocalConfig({}, cwd);
    const dataDir = config.dataDir ?? '';
    const file = credentialsFile(dataDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const reviewers = Object.fromEntries(config.admins.slice(1).map((admin) => [admin.name, admin.token]));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      api_key: config.apiKey,
      chargeback_key: config.chargebackKey,
      admin_token: config.adminToken,
      admin_tokens: reviewers,
    });
    expect(Object.keys(reviewers)).toEqual(['alice', 'bob']);
    expect(
      new Set([config.apiKey, config.chargebackKey, ...config.admins.map((admin) => admin.token)]).size,
    ).toBe(5);
    // C27: the plain admin token holds every role but approver; generated reviewers author, approve, audit.
    expect(config.admins.map((admin) => [admin.name, admin.roles])).toEqual([
      ['admin', ['author', 'endpoint_admin', 'auditor']],
      ['alice', ['author', 'approver', 'auditor']],
      ['bob', ['author', 'approver', 'auditor']],
    ]);
    expect(config.generated).toEqual({ apiKey: true, adminToken: true });
  });

  it('creates the data directory readable by its owner only', () => {
    const dataDir = loadLocalConfig({}, cwd).dataDir ?? '';
    expect(statSync(dataDir).mode & 0o077).toBe(0);
  });

  it('reuses the stored credentials on the next load', () => {
    const first = loadLocalConfig({}, cwd);
    const second = loadLocalConfig({}, cwd);
    expect(second.apiKey).toBe(first.apiKey);
    expect(second.adminToken).toBe(first.adminToken);
    expect(second.generated).toEqual({ apiKey: false, adminToken: false });
  });

  it('lets API_KEY and ADMIN_TOKEN from the environment override the stored ones', () => {
    loadLocalConfig({}, cwd);
    const config = loadLocalConfig(
      { API_KEY: 'env-api-key-0123456789', ADMIN_TOKEN: 'env-admin-token-0123456789' },
      cwd,
    );
    expect(config.apiKey).toBe('env-api-key-0123456789');
    expect(config.adminToken).toBe('env-admin-token-0123456789');
    expect(config.generated).toEqual({ apiKey: false, adminToken: false });
  });

  it('reports as generated only the credential the environment did not give', () => {
    const config = loadLocalConfig({ API_KEY: 'env-api-key-0123456789' }, cwd);
    expect(config.generated).toEqual({ apiKey: false, adminToken: true });
  });

  it.each(['API_KEY', 'ADMIN_TOKEN'])('refuses a %s shorter than 16 characters', (name) => {
    expect(() => loadLocalConfig({ [name]: 'short', IN_MEMORY: 'true' }, cwd)).toThrow(
      new ConfigurationError(`${name} must be at least 16 characters`),
    );
  });

  it('refuses a credentials file with values too short', () => {
    const dataDir = path.join(cwd, 'data');
    mkdirSync(dataDir);
    writeFileSync(
      credentialsFile(dataDir),
      JSON.stringify({ api_key: 'short', admin_token: 'x'.repeat(20) }),
    );
    expect(() => loadLocalConfig({ DATA_DIR: dataDir }, cwd)).toThrow(ConfigurationError);
  });

  it('refuses a credentials file that is not JSON with ConfigurationError', () => {
    const dataDir = path.join(cwd, 'data');
    mkdirSync(dataDir);
    writeFileSync(credentialsFile(dataDir), '{ not json');
    expect(() => loadLocalConfig({ DATA_DIR: dataDir }, cwd)).toThrow(ConfigurationError);
  });
});

describe('loadLocalConfig: operators and roles (C27)', () => {
  const token = (name: string) => `adm_test_${name}_0123456789abcdef`;

  it('reads name:token:role+role, a name without roles being author+approver+auditor', () => {
    const config = loadLocalConfig(
      {
        IN_MEMORY: 'true',
        ADMIN_TOKENS: [
          `carol:${token('carol')}:approver`,
          `dave:${token('dave')}:auditor`,
          `erin:${token('erin')}`,
          `fx-bot:${token('fx')}:machine+author`,
        ].join(','),
      },
      cwd,
    );
    expect(config.admins.map((admin) => [admin.name, admin.roles, admin.machine === true])).toEqual([
      ['admin', ['author', 'endpoint_admin', 'auditor'], false],
      ['carol', ['approver'], false],
      ['dave', ['auditor'], false],
      ['erin', ['author', 'approver', 'auditor'], false],
      ['fx-bot', ['author'], true],
    ]);
  });

  it('accepts one person under several tokens (sessions): each is the same identity', () => {
    const config = loadLocalConfig(
      { IN_MEMORY: 'true', ADMIN_TOKENS: `alice:${token('a1')}:author,alice:${token('a2')}:approver` },
      cwd,
    );
    expect(config.admins.filter((admin) => admin.name === 'alice').map((admin) => admin.roles)).toEqual([
      ['author'],
      ['approver'],
    ]);
  });

  it.each([
    ['an unknown role', `carol:${token('c')}:owner`],
    ['an empty role list', `carol:${token('c')}:`],
    ['a machine approver', `bot:${token('b')}:machine+approver`],
    ['a fourth field', `carol:${token('c')}:author:extra`],
  ])('refuses %s with ConfigurationError', (_label, value) => {
    expect(() => loadLocalConfig({ IN_MEMORY: 'true', ADMIN_TOKENS: value }, cwd)).toThrow(
      ConfigurationError,
    );
  });
});
