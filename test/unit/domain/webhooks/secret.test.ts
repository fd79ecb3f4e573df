import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  generateSecret,
  InvalidSecretError,
  SECRET_BYTES,
  SECRET_PREFIX,
  secretBytes,
} from '../../../../functions/domain/webhooks/secret';

const fixedBytes = (fill: number) => (size: number) => new Uint8Array(size).fill(fill);

const codeOf = (secret: string): string | undefined => {
  try {
    secretBytes(secret);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidSecretError);
    return (error as InvalidSecretError).code;
  }
};

describe('generateSecret', () => {
  it('is whsec_ + padded standard base64 of 32 bytes from the injected source', () => {
    const asked: number[] = [];
    const secret = generateSecret((size) => {
      asked.push(size);
      return fixedBytes(0xfb)(size);
    });
    expect(asked).toEqual([SECRET_BYTES]);
    expect(SECRET_PREFIX).toBe('whsec_');
    expect(SECRET_BYTES).toBe(32);
    expect(secret).toBe(`whsec_${Buffer.alloc(32, 0xfb).toString('base64')}`);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it('encodes only the view a source returns, not the whole underlying buffer', () => {
    const backing = new Uint8Array(64).fill(7);
    backing.fill(1, 16, 48);
    const secret = generateSecret(() => backing.subarray(16, 48));
    expect([...secretBytes(secret)]).toEqual(new Array(32).fill(1));
  });

  it('refuses a random source that returns the wrong number of bytes', () => {
    expect(() => generateSecret(() => new Uint8Array(31))).toThrow(InvalidSecretError);
    expect(() => generateSecret(() => new Uint8Array(31))).toThrow('random_source_wrong_length');
  });

  it('gives different secrets for different randomness (crypto.randomBytes)', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => generateSecret((size) => randomBytes(size))));
    expect(secrets.size).toBe(50);
  });
});

describe('secretBytes', () => {
  it('decodes the HMAC key bytes of a secret', () => {
    const key = Uint8Array.from({ length: 32 }, (_, index) => index);
    expect([...secretBytes(`whsec_${Buffer.from(key).toString('base64')}`)]).toEqual([...key]);
  });

  it.each([
    ['no prefix', Buffer.alloc(32).toString('base64'), 'secret_prefix_missing'],
    ['another prefix', `wh_${Buffer.alloc(32).toString('base64')}`, 'secret_prefix_missing'],
    ['prefix in upper case', `WHSEC_${Buffer.alloc(32).toString('base64')}`, 'secret_prefix_missing'],
    ['empty after the prefix', 'whsec_', 'secret_wrong_length'],
    ['16 bytes', `whsec_${Buffer.alloc(16).toString('base64')}`, 'secret_wrong_length'],
    ['33 bytes', `whsec_${Buffer.alloc(33).toString('base64')}`, 'secret_wrong_length'],
    ['64 bytes', `whsec_${Buffer.alloc(64).toString('base64')}`, 'secret_wrong_length'],
    ['unpadded', `whsec_${Buffer.alloc(32).toString('base64').replace(/=+$/, '')}`, 'secret_not_base64'],
    ['base64url alphabet', `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}=`, 'secret_not_base64'],
    [
      'whitespace inside',
      `whsec_${Buffer.alloc(32).toString('base64').replace('AAAA', 'AA AA')}`,
      'secret_not_base64',
    ],
    ['trailing newline', `whsec_${Buffer.alloc(32).toString('base64')}\n`, 'secret_not_base64'],
    ['non-canonical last character', `whsec_${'A'.repeat(42)}B=`, 'secret_not_base64'],
  ])('refuses %s', (_name, secret, code) => {
    expect(codeOf(secret)).toBe(code);
  });

  it('never echoes the secret in the error', () => {
    const secret = `whsec_${'Zm9v'.repeat(4)}`;
    try {
      secretBytes(secret);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSecretError);
      expect((error as Error).message).toBe('secret_wrong_length');
      expect((error as Error).name).toBe('InvalidSecretError');
      expect(String(error)).not.toContain('Zm9v');
    }
  });

  it('round-trips every generated secret (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const secret = generateSecret(() => bytes);
        expect(secret.startsWith(SECRET_PREFIX)).toBe(true);
        expect([...secretBytes(secret)]).toEqual([...bytes]);
      }),
      { numRuns: 500 },
    );
  });

  it('accepts only 32-byte keys (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 80 }), (bytes) => {
        const secret = `whsec_${Buffer.from(bytes).toString('base64')}`;
        if (bytes.length === SECRET_BYTES) expect([...secretBytes(secret)]).toEqual([...bytes]);
        else expect(() => secretBytes(secret)).toThrow(InvalidSecretError);
      }),
      { numRuns: 500 },
    );
  });
});
