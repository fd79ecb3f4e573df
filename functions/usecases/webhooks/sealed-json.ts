import { LruMap } from '../../shared/lru';
import type { WebhookContext } from './context';

/**
 * An endpoint's value stored encrypted with the secrets key (C12 secrets, C34 outbound auth): JSON, under an
 * encryption context naming its purpose and endpoint, so a ciphertext cannot be moved to another endpoint or
 * read as another kind of value. Opened values are kept by endpoint and ciphertext, per function instance: a
 * ciphertext never changes meaning (a change writes a new one), so each is decrypted once (one KMS call), not once per
 * attempt — and a ciphertext copied onto another endpoint is still decrypted, under that endpoint's context, and refused.
 */
export const sealedJson = <T>(purpose: string, cached: number) => {
  const opened = new LruMap<T>(cached);
  const context = (endpointId: string) => ({ purpose, endpoint_id: endpointId });
  return {
    seal: (ctx: Pick<WebhookContext, 'cipher'>, endpointId: string, value: T): Promise<string> =>
      ctx.cipher.encrypt(new TextEncoder().encode(JSON.stringify(value)), context(endpointId)),
    open: async (ctx: Pick<WebhookContext, 'cipher'>, endpointId: string, ciphertext: string): Promise<T> => {
      const key = `${endpointId}\n${ciphertext}`;
      const known = opened.get(key);
      if (known) return known;
      const plain = await ctx.cipher.decrypt(ciphertext, context(endpointId));
      const value = JSON.parse(new TextDecoder().decode(plain)) as T;
      opened.set(key, value);
      return value;
    },
  };
};
