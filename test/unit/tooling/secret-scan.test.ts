/**
 * The secret scan of `npm run check` (`npm run secrets`: secretlint over the files git lists) is run, as
 * package.json has it, in a throwaway git repository with this repository's secretlint configuration: a
 * planted private key (made here with node:crypto, never stored) fails it and is named, a clean tree passes,
 * and files .gitignore excludes (build output, key files) are not scanned.
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
const SECRETS_SCRIPT = scripts.secrets ?? '';

/** The scan starts secretlint once (about a second); generous for a loaded machine. */
const SCAN_TIMEOUT = 60_000;

const workspaces: string[] = [];
afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
});

/**
 * This environment without git's own variables: a test run from a git hook has GIT_DIR / GIT_INDEX_FILE set,
 * which would point the throwaway repository's commands at this repository's index.
 */
const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GIT_')) env[name] = value;
  // The project's binaries first (secretlint and the pinned Node 24), as under `npm run`.
  env.PATH = `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
  return env;
};

interface ScanResult {
  readonly status: number | null;
  readonly output: string;
  readonly dir: string;
}

/**
 * A git repository with this repository's secretlint configuration and .gitignore, the given files (`tracked`
 * are added to its index, `untracked` are left as they are), then `npm run secrets`' command run in it.
 */
const scan = (tracked: Record<string, string>, untracked: Record<string, string> = {}): ScanResult => {
  const dir = mkdtempSync(join(tmpdir(), 'secret-scan-'));
  workspaces.push(dir);
  const env = cleanEnv();
  const git = (...args: string[]) => {
    const run = spawnSync('git', ['-c', 'init.defaultBranch=main', ...args], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${run.stderr}`);
  };
  const write = (files: Record<string, string>) => {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), content);
    }
  };
  git('init', '-q');
  for (const config of ['.secretlintrc.yaml', '.secretlintignore', '.gitignore'])
    copyFileSync(join(ROOT, config), join(dir, config));
  write(tracked);
  git('add', '-A');
  write(untracked);
  const run = spawnSync('bash', ['-c', SECRETS_SCRIPT], { cwd: dir, env, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}`, dir };
};

const ecPrivateKey = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();

const rsaPrivateKey = (): string =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();

/** The base64 body of a PEM block (what must never be echoed by the scan). */
const pemBody = (pem: string): string => pem.split('\n').slice(1, 3).join('');

const CLEAN = {
  'src/prices.ts': "export const price = '12.30';\n",
  'README.md': '# Example\n\nSet `Authorization: Bearer $ADMIN` from the banner.\n',
};

describe('npm run secrets', () => {
  it('is part of npm run check and lists the files with git', () => {
    expect(scripts.check).toMatch(/(^|&& )npm run secrets( &&|$)/);
    expect(SECRETS_SCRIPT).toMatch(
      /^git ls-files -z --cached --others --exclude-standard \| xargs -0 secretlint /,
    );
    expect(SECRETS_SCRIPT).toContain('--maskSecrets');
  });

  it('passes a clean tree', { timeout: SCAN_TIMEOUT }, () => {
    const result = scan(CLEAN);
    expect(result.output).not.toMatch(/error/);
    expect(result.status).toBe(0);
  });

  it('fails on a PKCS #8 private key in a tracked source file and names the file', {
    timeout: SCAN_TIMEOUT,
  }, () => {
    const key = ecPrivateKey();
    const result = scan({ ...CLEAN, 'test/fixtures/signing.ts': `export const key = \`${key}\`;\n` });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(join(result.dir, 'test/fixtures/signing.ts'));
    expect(result.output).toContain('[PrivateKey]');
    expect(result.output).not.toContain(join(result.dir, 'src/prices.ts'));
    // The finding is reported masked: CI logs never get the key.
    expect(result.output).not.toContain(pemBody(key));
  });

  it('fails on an RSA private key embedded in JSON (escaped newlines), even before it is added', {
    timeout: SCAN_TIMEOUT,
  }, () => {
    const key = rsaPrivateKey();
    const result = scan(CLEAN, {
      'config/service-account.json': `${JSON.stringify({ private_key: key })}\n`,
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(join(result.dir, 'config/service-account.json'));
  });

  // A secret access key is 40 base64 characters; the last one may be '+' or '/', which the preset's rule (ending
  // in \b) misses and the project's own pattern catches. Each ending is planted, not left to chance.
  it.each(['A', '/', '+'])(
    'fails on an AWS access key pair whose secret ends in %s',
    { timeout: SCAN_TIMEOUT },
    (last) => {
      const base32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
      const keyId = `AKIA${Array.from(randomBytes(16), (byte) => base32[byte % 32]).join('')}`;
      const secretKey = `${randomBytes(30).toString('base64').slice(0, 39)}${last}`;
      const result = scan({
        ...CLEAN,
        'deploy/env.ts': `export const aws = {\n  accessKeyId: '${keyId}',\n  secretAccessKey: '${secretKey}',\n};\n`,
      });
      expect(result.status).not.toBe(0);
      expect(result.output).toContain(join(result.dir, 'deploy/env.ts'));
      expect(result.output).not.toContain(secretKey);
    },
  );

  it("fails on this service's own secret formats, not on their all-zero placeholders", {
    timeout: SCAN_TIMEOUT,
  }, () => {
    const callerKey = `mck_${randomBytes(32).toString('base64url')}`;
    const partnerKey = `pk_${randomBytes(32).toString('base64url')}`;
    const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
    const localToken = `adm_local_${randomBytes(24).toString('base64url')}`;
    const leaked = scan({
      ...CLEAN,
      'docs/example.md': `curl -H "x-api-key: ${callerKey}"\n\npartner: ${partnerKey}\n`,
      'test/support/hook.ts': `export const secret = '${webhookSecret}';\nexport const admin = '${localToken}';\n`,
    });
    expect(leaked.status).not.toBe(0);
    expect(leaked.output).toContain(join(leaked.dir, 'docs/example.md'));
    expect(leaked.output).toContain(join(leaked.dir, 'test/support/hook.ts'));
    expect(leaked.output.match(/\[PATTERN\]/g)).toHaveLength(4);
    for (const secret of [callerKey, partnerKey, webhookSecret, localToken])
      expect(leaked.output).not.toContain(secret);

    const placeholders = scan({
      'test/wrong-keys.ts': `export const wrong = ['mck_${'A'.repeat(43)}', 'pk_${'A'.repeat(43)}', 'whsec_${'A'.repeat(43)}='];\n`,
    });
    expect(placeholders.output).not.toMatch(/error/);
    expect(placeholders.status).toBe(0);
  });

  it('does not scan what .gitignore excludes (build output, key files)', { timeout: SCAN_TIMEOUT }, () => {
    const key = ecPrivateKey();
    const result = scan(CLEAN, {
      'cdk.out/asset.1234/index.mjs': `const key = \`${key}\`;\n`,
      '.local/data/ec.key': key,
      'coverage/dump.json': JSON.stringify({ key }),
      'node_modules/some-package/test/key.js': `module.exports = \`${key}\`;\n`,
    });
    expect(result.output).not.toMatch(/error/);
    expect(result.status).toBe(0);
  });
});
