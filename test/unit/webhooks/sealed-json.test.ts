import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LocalDataCipher } from '../../../functions/adapters/local/local-signing';
import { sealedJson } from '../../../functions/usecases/webhooks/sealed-json';

describe('values sealed for one endpoint', () => {
  it('open for that endpoint (once per ciphertext), and never for another, even once opened', async () => {
    const cipher = new LocalDataCipher(randomBytes(32));
    let decrypts = 0;
    const ctx = {
      cipher: {
        encrypt: cipher.encrypt.bind(cipher),
        decrypt: (...args: Parameters<LocalDataCipher['decrypt']>) => {
          decrypts += 1;
          return cipher.decrypt(...args);
        },
      },
    };
    const sealed = sealedJson<{ token: string }>('test-value', 10);
    const ciphertext = await sealed.seal(ctx, 'ep_a', { token: 't' });
    expect(await sealed.open(ctx, 'ep_a', ciphertext)).toEqual({ token: 't' });
    expect(await sealed.open(ctx, 'ep_a', ciphertext)).toEqual({ token: 't' });
    expect(decrypts).toBe(1);
    // The same ciphertext copied onto another endpoint: decrypted under that endpoint's context, refused.
    await expect(sealed.open(ctx, 'ep_b', ciphertext)).rejects.toThrow();
  });
});
