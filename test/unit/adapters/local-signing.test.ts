import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LOCAL_QUOTE_MAC_KEY_ID,
  LocalKeyFileError,
  LocalMacSigner,
  LocalReceiptSigner,
  loadOrCreateLocalKeys,
} from '../../../functions/adapters/local/local-signing';
import { KEYS } from '../../../functions/definitions';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const posix = process.platform !== 'win32';

let root: string;
let keysDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'local-signing-'));
  keysDir = join(root, 'data', 'keys');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const keyFiles = (): string[] => Object.values(KEYS).map((key) => join(keysDir, key.localFile));

describe('loadOrCreateLocalKeys', () => {
  it('creates the keys on first start and loads the same keys afterwards', async () => {
    const first = await loadOrCreateLocalKeys(keysDir);
    const message = bytes('{"receipt_id":"rcpt_01"}');
    const signature = await first.receiptSigner.sign(message);
    const mac = await first.quoteMac.generateMac(message);
    const context = { endpoint_id: 'ep_01' };
    const ciphertext = await first.secretsCipher.encrypt(bytes('secret'), context);
    const contents = await Promise.all(keyFiles().map((file) => readFile(file, 'utf8')));

    const second = await loadOrCreateLocalKeys(keysDir);
    expect(second.receiptSigner.keyId).toBe(first.receiptSigner.keyId);
    expect(await second.receiptSigner.publicKey()).toEqual(await first.receiptSigner.publicKey());
    const jwk = await second.receiptSigner.publicKey();
    expect(verify('sha256', message, createPublicKey({ key: { ...jwk }, format: 'jwk' }), signature)).toBe(
      true,
    );
    expect(await second.quoteMac.verifyMac(message, mac)).toBe(true);
    expect(Buffer.from(await second.secretsCipher.decrypt(ciphertext, context)).toString()).toBe('secret');
    expect(await Promise.all(keyFiles().map((file) => readFile(file, 'utf8')))).toEqual(contents);
  });

  it('writes a PKCS#8 PEM P-256 key and base64 32-byte keys, and nothing else', async () => {
    await loadOrCreateLocalKeys(keysDir);
    const pem = await readFile(join(keysDir, KEYS.receiptSigning.localFile), 'utf8');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    for (const key of [KEYS.quoteMac, KEYS.data]) {
      const text = await readFile(join(keysDir, key.localFile), 'utf8');
      expect(Buffer.from(text.trim(), 'base64')).toHaveLength(32);
    }
    expect((await readdir(keysDir)).sort()).toEqual(
      Object.values(KEYS)
        .map((key) => key.localFile)
        .sort(),
    );
  });

  it.skipIf(!posix)('creates the directory with mode 0700 and the key files with mode 0600', async () => {
    await loadOrCreateLocalKeys(keysDir);
    expect((await stat(keysDir)).mode & 0o777).toBe(0o700);
    for (const file of keyFiles()) expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it.skipIf(!posix)('tightens an existing keys directory that others can read', async () => {
    await loadOrCreateLocalKeys(keysDir);
    await chmod(keysDir, 0o755);
    await loadOrCreateLocalKeys(keysDir);
    expect((await stat(keysDir)).mode & 0o777).toBe(0o700);
  });

  it('yields one key set when several loads race on a fresh directory', async () => {
    const sets = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateLocalKeys(keysDir)));
    const message = bytes('quote');
    const [reference, ...others] = sets;
    if (!reference) throw new Error('no key set');
    const mac = await reference.quoteMac.generateMac(message);
    const ciphertext = await reference.secretsCipher.encrypt(bytes('secret'), {});
    for (const set of others) {
      expect(set.receiptSigner.keyId).toBe(reference.receiptSigner.keyId);
      expect(await set.quoteMac.verifyMac(message, mac)).toBe(true);
      expect(Buffer.from(await set.secretsCipher.decrypt(ciphertext, {})).toString()).toBe('secret');
    }
    expect(await readdir(keysDir)).toHaveLength(Object.keys(KEYS).length);
  });

  it.each([
    [KEYS.receiptSigning.localFile, 'not a pem'],
    [KEYS.receiptSigning.localFile, ''],
    [
      KEYS.receiptSigning.localFile,
      generateKeyPairSync('ec', { namedCurve: 'P-384' })
        .privateKey.export({ format: 'pem', type: 'pkcs8' })
        .toString(),
    ],
    [KEYS.quoteMac.localFile, 'c2hvcnQ=\n'],
    [KEYS.data.localFile, '%%% not base64 %%%'],
  ])('fails on a corrupt %s naming the file, and leaves it untouched', async (name, corrupt) => {
    await loadOrCreateLocalKeys(keysDir);
    const file = join(keysDir, name);
    await writeFile(file, corrupt);
    const error = await loadOrCreateLocalKeys(keysDir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LocalKeyFileError);
    expect((error as LocalKeyFileError).message).toContain(file);
    expect((error as LocalKeyFileError).file).toBe(file);
    expect((error as LocalKeyFileError).cause).toBeDefined();
    expect(await readFile(file, 'utf8')).toBe(corrupt);
  });

  it('fails on an unreadable key file naming it', async () => {
    await loadOrCreateLocalKeys(keysDir);
    const file = join(keysDir, KEYS.data.localFile);
    await rm(file);
    await mkdir(file); // a directory where the key file should be cannot be read as a file
    await expect(loadOrCreateLocalKeys(keysDir)).rejects.toThrow(file);
  });
});

describe('LocalReceiptSigner', () => {
  it('derives keyId from the SPKI DER: local- and 16 hex digits of its SHA-256', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    const expected = `local-${createHash('sha256').update(spki).digest('hex').slice(0, 16)}`;
    expect(new LocalReceiptSigner(privateKey).keyId).toBe(expected);
  });

  it('accepts only P-256 private keys', () => {
    expect(() => new LocalReceiptSigner(generateKeyPairSync('ed25519').privateKey)).toThrow(TypeError);
    expect(
      () => new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey),
    ).toThrow(TypeError);
    expect(
      () => new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey),
    ).toThrow(TypeError);
  });
});

describe('LocalMacSigner', () => {
  it('names the quote key local-quote-mac, never after the secret', async () => {
    const keys = await loadOrCreateLocalKeys(keysDir);
    expect(keys.quoteMac.keyId).toBe(LOCAL_QUOTE_MAC_KEY_ID);
    expect(LOCAL_QUOTE_MAC_KEY_ID).toBe('local-quote-mac');
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new LocalMacSigner(new Uint8Array(16))).toThrow(RangeError);
  });
});

describe('loadOrCreateLocalKeys: the secrets key of an older data directory', () => {
  it('starts as a copy of the data key, so secrets stored before it still decrypt', async () => {
    const legacyDir = await mkdtemp(join(tmpdir(), 'pricing-keys-legacy-'));
    const freshDir = await mkdtemp(join(tmpdir(), 'pricing-keys-fresh-'));
    try {
      const legacyKey = `${Buffer.from(createHash('sha256').update('legacy').digest()).toString('base64')}\n`;
      await writeFile(join(legacyDir, KEYS.data.localFile), legacyKey, { mode: 0o600 });
      await loadOrCreateLocalKeys(legacyDir);
      expect(await readFile(join(legacyDir, KEYS.secrets.localFile), 'utf8')).toBe(legacyKey);
      await loadOrCreateLocalKeys(freshDir);
      expect(await readFile(join(freshDir, KEYS.secrets.localFile), 'utf8')).not.toBe(
        await readFile(join(freshDir, KEYS.data.localFile), 'utf8'),
      );
    } finally {
      await rm(legacyDir, { recursive: true, force: true });
      await rm(freshDir, { recursive: true, force: true });
    }
  });
});
