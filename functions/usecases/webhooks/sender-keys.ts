import type { KeyObject } from 'node:crypto';
import { ServiceError } from '../../domain/errors';
import {
  DEFAULT_KEY_TIMINGS,
  ed25519KeyOfSeed,
  jwkOf,
  type KeyTimings,
  publishedKeysAt,
  type SenderKey,
  signingKeyAt,
} from '../../domain/webhooks/sender-keys';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { DataCipher } from '../../ports/signing';
import type { SenderKeyStore, StoredSenderKey } from '../../ports/webhooks';

/** What the webhook signing keys' use cases need. */
export interface SenderKeyContext {
  readonly clock: { now(): Date };
  readonly senderKeys: SenderKeyStore;
  readonly cipher: DataCipher;
  readonly randomBytes: (size: number) => Uint8Array;
}

const encryptionContext = (kid: string) => ({ purpose: 'webhook-sender-key', kid });

/** A new key: 32 random bytes as the Ed25519 seed, its public JWK, the seed encrypted with the secrets key. */
const makeKey = async (
  ctx: SenderKeyContext,
  generation: number,
  activatesAt: Date,
  retiresPrevious = false,
): Promise<StoredSenderKey> => {
  const seed = ctx.randomBytes(32);
  const { publicJwk } = ed25519KeyOfSeed(seed);
  const kid = `whk_${generation}_${Buffer.from(ctx.randomBytes(6)).toString('hex')}`;
  return {
    generation,
    kid,
    public_jwk: publicJwk,
    created_at: ctx.clock.now().toISOString(),
    activates_at: activatesAt.toISOString(),
    ...(retiresPrevious ? { retires_previous: true } : {}),
    private_key_ciphertext: await ctx.cipher.encrypt(seed, encryptionContext(kid)),
  };
};

/**
 * Makes sure a signing key exists (the first, active at once), for an endpoint that asks for Ed25519. Concurrent
 * callers create one key: the first generation is a conditional write.
 */
export const ensureSenderKey = async (ctx: SenderKeyContext): Promise<SenderKey> => {
  const keys = await ctx.senderKeys.list();
  const active = signingKeyAt(keys, ctx.clock.now());
  if (active) return active;
  if (keys.length > 0) return keys[0] as SenderKey;
  const first = await makeKey(ctx, 1, ctx.clock.now());
  if (await ctx.senderKeys.add(first)) return first;
  return ((await ctx.senderKeys.list())[0] as SenderKey | undefined) ?? first;
};

export interface RotatedKey {
  readonly kid: string;
  readonly activates_at: string;
  /** Until when the key it supersedes stays in the JWKS. */
  readonly previous_published_until?: string;
  readonly previous_kid?: string;
}

/** A rotation raced another one for the same generation: answered 409. */
export class KeyRotationConflictError extends ServiceError {
  constructor() {
    super('conflict', 'another rotation added the next signing key first; list the keys and retry if needed');
    this.name = 'KeyRotationConflictError';
  }
}

/**
 * `POST /webhooks/signing-keys/rotate`: adds the next key, published at once and signing from `activate_in_seconds`
 * from now (default a day, so receivers' cached JWKS have it before it signs anything).
 */
export const rotateSenderKey = async (
  ctx: SenderKeyContext,
  options: { readonly activateInSeconds?: number; readonly retirePrevious?: boolean } = {},
  once?: ExactlyOnce<RotatedKey>,
  timings: KeyTimings = DEFAULT_KEY_TIMINGS,
): Promise<RotatedKey> => {
  const keys = await ctx.senderKeys.list();
  const now = ctx.clock.now();
  const previous = signingKeyAt(keys, now);
  // Retiring the previous keys at once is an emergency: the new key signs at once too. With no key signing yet
  // (the first key, made by a rotation), the new one signs at once: Ed25519 endpoints must not wait for it.
  const delayMs = options.retirePrevious
    ? 0
    : options.activateInSeconds !== undefined
      ? options.activateInSeconds * 1000
      : timings.activationDelayMs;
  const activatesAt = new Date(now.getTime() + (previous ? delayMs : 0));
  const generation = Math.max(0, ...keys.map((key) => key.generation)) + 1;
  const next = await makeKey(ctx, generation, activatesAt, options.retirePrevious === true);
  const rotated: RotatedKey = {
    kid: next.kid,
    activates_at: next.activates_at,
    ...(previous
      ? {
          previous_kid: previous.kid,
          previous_published_until: new Date(
            activatesAt.getTime() + (options.retirePrevious ? 0 : timings.overlapMs),
          ).toISOString(),
        }
      : {}),
  };
  // The key and the request's answer are one write: a retry after a crash gets this key, never a second one.
  if (!(await ctx.senderKeys.add(next, await once?.completion(rotated))))
    throw new KeyRotationConflictError();
  return rotated;
};

/** `GET /webhooks/jwks.json`: the public keys receivers verify with (RFC 7517), oldest first. */
export const senderJwks = async (
  ctx: Pick<SenderKeyContext, 'clock' | 'senderKeys'>,
  timings: KeyTimings = DEFAULT_KEY_TIMINGS,
) => ({
  keys: publishedKeysAt(await ctx.senderKeys.list(), ctx.clock.now(), timings).map(jwkOf),
});

/** The signing key an instance uses: the list cached `cacheSeconds` (default a minute), each private key decrypted once. */
export const senderKeySigner = (
  ctx: Pick<SenderKeyContext, 'clock' | 'senderKeys' | 'cipher'>,
  cacheSeconds = 60,
) => {
  let listed: { at: number; keys: Promise<StoredSenderKey[]> } | undefined;
  const decrypted = new Map<string, Promise<KeyObject>>();
  return {
    /** The key signing now and its private key; undefined while there is none (no Ed25519 endpoint yet). */
    current: async (): Promise<{ readonly kid: string; readonly privateKey: KeyObject } | undefined> => {
      const nowMs = ctx.clock.now().getTime();
      if (!listed || nowMs - listed.at > cacheSeconds * 1000) {
        const keys = ctx.senderKeys.list();
        listed = { at: nowMs, keys };
        keys.catch(() => {
          listed = undefined;
        });
      }
      const key = signingKeyAt(await listed.keys, ctx.clock.now()) as StoredSenderKey | undefined;
      if (!key) return undefined;
      let privateKey = decrypted.get(key.kid);
      if (!privateKey) {
        privateKey = ctx.cipher
          .decrypt(key.private_key_ciphertext, encryptionContext(key.kid))
          .then((seed) => ed25519KeyOfSeed(seed).privateKey);
        decrypted.set(key.kid, privateKey);
        privateKey.catch(() => decrypted.delete(key.kid));
      }
      return { kid: key.kid, privateKey: await privateKey };
    },
  };
};

export type SenderKeySigner = ReturnType<typeof senderKeySigner>;
