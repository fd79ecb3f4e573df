import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  isSecretRef,
  SecretUnavailableError,
  type SecretUnavailableReason,
  type SecretValues,
  usableSecretValue,
} from '../../ports/secrets';

/** Where FX provider credentials live in Secrets Manager unless `FX_SECRETS_PREFIX` says otherwise. */
export const DEFAULT_FX_SECRETS_PREFIX = 'pricing/fx/';
/** How long a value read from Secrets Manager is reused (a rotation is seen within this time). */
export const SECRET_CACHE_TTL_MS = 5 * 60_000;
/** Bound on one `GetSecretValue` call, retries included. */
export const SECRET_READ_TIMEOUT_MS = 5_000;

export const createSecretsManagerClient = (region: string): SecretsManagerClient =>
  new SecretsManagerClient({ region });

/** What the adapter needs of the client (tests pass a mock). */
export type SecretsManagerSender = Pick<SecretsManagerClient, 'send'>;

export interface SecretsManagerValuesOptions {
  /** The client, or how to create it on the first read (functions that never read a secret never create one). */
  readonly client: SecretsManagerSender | (() => SecretsManagerSender);
  /** Prepended to every reference: `SecretId` = `<prefix><ref>`. Default `DEFAULT_FX_SECRETS_PREFIX`. */
  readonly prefix?: string;
  readonly ttlMs?: number;
  readonly timeoutMs?: number;
  /** Milliseconds since the epoch (tests move it). */
  readonly now?: () => number;
}

const REASONS: Readonly<Record<string, SecretUnavailableReason>> = {
  ResourceNotFoundException: 'not_found',
  AccessDeniedException: 'access_denied',
  DecryptionFailure: 'access_denied',
  InvalidRequestException: 'unreadable',
  InvalidParameterException: 'invalid_reference',
};

/** The SDK error's name when it is a plain identifier (its message is never kept). */
const errorName = (error: unknown): string | undefined => {
  const name = (error as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && /^[A-Za-z]{1,64}$/.test(name) ? name : undefined;
};

/**
 * `SecretValues` over Secrets Manager: `GetSecretValue` with `SecretId` = `<prefix><ref>`, its `SecretString`
 * (a binary secret is `invalid_value`). Values are cached in memory for `ttlMs` (default five minutes) and
 * concurrent reads of one reference share one call; a failure is not cached. Errors name the reference and a
 * reason (with the SDK error's name), never the value nor the SDK's message.
 */
export class SecretsManagerSecretValues implements SecretValues {
  private readonly cache = new Map<string, { readonly value: Promise<string>; readonly expiresAt: number }>();
  private client: SecretsManagerSender | undefined;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(private readonly options: SecretsManagerValuesOptions) {
    this.prefix = options.prefix ?? DEFAULT_FX_SECRETS_PREFIX;
    this.ttlMs = options.ttlMs ?? SECRET_CACHE_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  value(ref: string): Promise<string> {
    if (!isSecretRef(ref))
      return Promise.reject(new SecretUnavailableError('(invalid)', 'invalid_reference'));
    const now = this.now();
    const cached = this.cache.get(ref);
    if (cached && cached.expiresAt > now) return cached.value;
    const value = this.read(ref);
    this.cache.set(ref, { value, expiresAt: now + this.ttlMs });
    value.catch(() => {
      if (this.cache.get(ref)?.value === value) this.cache.delete(ref);
    });
    return value;
  }

  private sender(): SecretsManagerSender {
    if (!this.client) {
      const { client } = this.options;
      this.client = typeof client === 'function' ? client() : client;
    }
    return this.client;
  }

  private async read(ref: string): Promise<string> {
    let text: string | undefined;
    try {
      const answer = await this.sender().send(
        new GetSecretValueCommand({ SecretId: `${this.prefix}${ref}` }),
        {
          abortSignal: AbortSignal.timeout(this.options.timeoutMs ?? SECRET_READ_TIMEOUT_MS),
        },
      );
      text = answer.SecretString;
    } catch (error) {
      const name = errorName(error);
      throw new SecretUnavailableError(ref, (name && REASONS[name]) || 'unreadable', name);
    }
    const value = text === undefined ? undefined : usableSecretValue(text);
    if (value === undefined) throw new SecretUnavailableError(ref, 'invalid_value');
    return value;
  }
}
