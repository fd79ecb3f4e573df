import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_FX_SECRETS_PREFIX,
  SECRET_CACHE_TTL_MS,
  SecretsManagerSecretValues,
} from '../../../functions/adapters/aws/secrets-manager';
import { FileSecretValues } from '../../../functions/adapters/local/file-secrets';
import {
  awsRateSourceAccess,
  fxSecretsPrefixFromEnv,
  localRateSourceAccess,
} from '../../../functions/composition/rates';
import { AWS_EGRESS, LOCAL_EGRESS } from '../../../functions/composition/webhooks';
import { isSecretRef, SecretUnavailableError, usableSecretValue } from '../../../functions/ports/secrets';

/** A made-up credential: it must never appear in an error. */
const SECRET = 'fxk_5b1e0c9d7a3f42e8b6d1c0a9f8e7d6c5';

const unavailable = async (promise: Promise<unknown>): Promise<SecretUnavailableError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SecretUnavailableError);
  expect(JSON.stringify({ message: (error as Error).message, error })).not.toContain(SECRET);
  return error as SecretUnavailableError;
};

describe('secret references and values', () => {
  it.each([
    ['provider', true],
    ['openexchangerates/app-id', true],
    ['a.b@c+d=e_f-g', true],
    ['x'.repeat(128), true],
    ['x'.repeat(129), false],
    ['', false],
    ['../etc/passwd', false],
    ['a/../../b', false],
    ['./a', false],
    ['/absolute', false],
    ['a//b', false],
    ['a/', false],
    ['a b', false],
    ['a\\b', false],
    ['a%2F..', false],
  ])('isSecretRef(%j) is %s', (ref, valid) => {
    expect(isSecretRef(ref)).toBe(valid);
  });

  it('trims trailing line breaks and refuses empty, control, non-ASCII or padded values', () => {
    expect(usableSecretValue(`${SECRET}\n`)).toBe(SECRET);
    expect(usableSecretValue(`${SECRET}\r\n`)).toBe(SECRET);
    expect(usableSecretValue('Bearer-ish token with spaces')).toBe('Bearer-ish token with spaces');
    for (const bad of [
      '',
      '\n',
      `${SECRET}\nX-Injected: 1`,
      `${SECRET}\u0000`,
      'clé',
      ` ${SECRET}`,
      `${SECRET} `,
    ])
      expect(usableSecretValue(bad)).toBeUndefined();
    expect(usableSecretValue('x'.repeat(8193))).toBeUndefined();
  });
});

describe('FileSecretValues (local stack: <DATA_DIR>/secrets/<ref>)', () => {
  let root: string;
  let secrets: FileSecretValues;
  const write = (ref: string, text: string, mode = 0o600) => {
    const file = path.join(root, 'secrets', ref);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    chmodSync(file, mode);
    return file;
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'fx-secrets-'));
    secrets = new FileSecretValues(path.join(root, 'secrets'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads a file readable by its owner (and group), a subdirectory for a / in the reference', async () => {
    write('provider', `${SECRET}\n`);
    write('oxr/app-id', SECRET, 0o640);
    expect(await secrets.value('provider')).toBe(SECRET);
    expect(await secrets.value('oxr/app-id')).toBe(SECRET);
  });

  it('refuses a file other users may read or write, without reading it', async () => {
    write('shared', SECRET, 0o644);
    write('writable', SECRET, 0o602);
    const error = await unavailable(secrets.value('shared'));
    expect(error.reason).toBe('insecure_permissions');
    expect(error.message).toBe('secret shared unavailable: insecure permissions (mode 644)');
    expect((await unavailable(secrets.value('writable'))).reason).toBe('insecure_permissions');
  });

  it('answers not_found for a missing file or directory', async () => {
    expect((await unavailable(secrets.value('missing'))).reason).toBe('not_found');
    expect((await unavailable(secrets.value('no/such/dir'))).reason).toBe('not_found');
  });

  it('makes path traversal impossible: invalid references, and links out of the directory', async () => {
    writeFileSync(path.join(root, 'outside'), SECRET, { mode: 0o600 });
    for (const ref of ['../outside', 'a/../../outside', '/etc/passwd', '..', '.'])
      expect((await unavailable(secrets.value(ref))).reason).toBe('invalid_reference');
    mkdirSync(path.join(root, 'secrets'), { recursive: true });
    symlinkSync(path.join(root, 'outside'), path.join(root, 'secrets', 'link'));
    expect((await unavailable(secrets.value('link'))).reason).toBe('insecure_permissions');
    symlinkSync(root, path.join(root, 'secrets', 'escape'));
    expect((await unavailable(secrets.value('escape/outside'))).reason).toBe('invalid_reference');
  });

  it('refuses a directory, an empty file and a value that could inject a header', async () => {
    mkdirSync(path.join(root, 'secrets', 'dir'), { recursive: true });
    expect((await unavailable(secrets.value('dir'))).reason).toBe('unreadable');
    write('empty', '\n');
    expect((await unavailable(secrets.value('empty'))).reason).toBe('invalid_value');
    write('injection', `${SECRET}\r\nX-Other: 1`);
    expect((await unavailable(secrets.value('injection'))).reason).toBe('invalid_value');
  });

  it('is what the local composition uses, with the webhooks egress policy', async () => {
    write('provider', SECRET);
    const access = localRateSourceAccess(root, LOCAL_EGRESS);
    expect(access.egress).toBe(LOCAL_EGRESS);
    expect(await access.secrets.value('provider')).toBe(SECRET);
  });
});

describe('SecretsManagerSecretValues (AWS)', () => {
  const client = new SecretsManagerClient({ region: 'eu-west-1' });
  const mock = mockClient(client);
  afterEach(() => mock.reset());

  it('asks GetSecretValue for <prefix><ref> and caches the value for five minutes', async () => {
    mock.on(GetSecretValueCommand).resolves({ SecretString: `${SECRET}\n` });
    let now = 1_000_000;
    const secrets = new SecretsManagerSecretValues({ client, now: () => now });
    const [first, second] = await Promise.all([secrets.value('oxr/app-id'), secrets.value('oxr/app-id')]);
    expect([first, second]).toEqual([SECRET, SECRET]);
    now += SECRET_CACHE_TTL_MS - 1;
    expect(await secrets.value('oxr/app-id')).toBe(SECRET);
    expect(mock.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input)).toEqual([
      { SecretId: 'pricing/fx/oxr/app-id' },
    ]);
    now += 1;
    await secrets.value('oxr/app-id');
    expect(mock.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('does not cache a failure, and names only the reference and the error name', async () => {
    mock
      .on(GetSecretValueCommand)
      .rejectsOnce(
        new ResourceNotFoundException({ message: `no secret; last value was ${SECRET}`, $metadata: {} }),
      )
      .resolves({ SecretString: SECRET });
    const secrets = new SecretsManagerSecretValues({ client, prefix: 'stage/fx/' });
    const error = await unavailable(secrets.value('provider'));
    expect(error.reason).toBe('not_found');
    expect(error.message).toBe('secret provider unavailable: not found (ResourceNotFoundException)');
    expect(error.cause).toBeUndefined();
    expect(await secrets.value('provider')).toBe(SECRET);
    expect(mock.commandCalls(GetSecretValueCommand)[0]?.args[0].input).toEqual({
      SecretId: 'stage/fx/provider',
    });
  });

  it('maps access denied, binary and unusable secrets, and refuses invalid references without a call', async () => {
    const secrets = new SecretsManagerSecretValues({ client });
    mock
      .on(GetSecretValueCommand)
      .rejectsOnce(Object.assign(new Error(SECRET), { name: 'AccessDeniedException' }))
      .resolvesOnce({ SecretBinary: new TextEncoder().encode(SECRET) })
      .resolvesOnce({ SecretString: `${SECRET}\nX-Other: 1` });
    expect((await unavailable(secrets.value('a'))).reason).toBe('access_denied');
    expect((await unavailable(secrets.value('b'))).reason).toBe('invalid_value');
    expect((await unavailable(secrets.value('c'))).reason).toBe('invalid_value');
    const calls = mock.commandCalls(GetSecretValueCommand).length;
    expect((await unavailable(secrets.value('../d'))).reason).toBe('invalid_reference');
    expect(mock.commandCalls(GetSecretValueCommand)).toHaveLength(calls);
  });

  it('creates the client on the first read only', async () => {
    let created = 0;
    mock.on(GetSecretValueCommand).resolves({ SecretString: SECRET });
    const secrets = new SecretsManagerSecretValues({
      client: () => {
        created += 1;
        return client;
      },
    });
    expect(created).toBe(0);
    await secrets.value('x');
    await secrets.value('y');
    expect(created).toBe(1);
  });

  it('takes its prefix from FX_SECRETS_PREFIX (default pricing/fx/)', () => {
    expect(fxSecretsPrefixFromEnv({})).toBe(DEFAULT_FX_SECRETS_PREFIX);
    expect(DEFAULT_FX_SECRETS_PREFIX).toBe('pricing/fx/');
    expect(fxSecretsPrefixFromEnv({ FX_SECRETS_PREFIX: 'prod/pricing/fx/' })).toBe('prod/pricing/fx/');
    expect(fxSecretsPrefixFromEnv({ FX_SECRETS_PREFIX: '' })).toBe('');
    expect(() => fxSecretsPrefixFromEnv({ FX_SECRETS_PREFIX: 'bad prefix*' })).toThrow('FX_SECRETS_PREFIX');
    const access = awsRateSourceAccess({}, 'eu-west-1');
    expect(access.egress).toBe(AWS_EGRESS);
    expect(access.secrets).toBeInstanceOf(SecretsManagerSecretValues);
  });
});
