/**
 * Caller keys (C26): issued by operators to one tenant with scopes, shown once, stored as SHA-256; rotated with
 * an overlap (or at once, an emergency), revoked. The resolver turns a presented key into the caller principal —
 * the one code path of the AWS REQUEST authorizer and the local gateway.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { CallerPrincipal, CallerScope } from '../../domain/access/principals';
import { ServiceError } from '../../domain/errors';
import type { ApiKeyGrant, ApiKeyRecord, ApiKeyStore } from '../../ports/api-keys';
import type { Clock } from '../../ports/clock';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { CallerUsagePlan } from '../../ports/usage-plan';
import { ulid } from '../../shared/ids';
import { LruMap } from '../../shared/lru';

/** Caller keys this service issues start with this prefix (log redaction and secret scanners know it). */
export const CALLER_KEY_PREFIX = 'mck_';
/** Default overlap of a rotation: the old secret keeps working this long. */
export const DEFAULT_ROTATION_OVERLAP_HOURS = 24;
export const MAX_ROTATION_OVERLAP_HOURS = 168;

export const secretSha256 = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** A fresh secret: the prefix and 32 random bytes, base64url. */
export const newCallerSecret = (): string => `${CALLER_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

export class ApiKeyError extends ServiceError {
  declare readonly code: 'not_found' | 'invalid_state';

  constructor(code: 'not_found' | 'invalid_state', message: string) {
    super(code, message);
    this.name = 'ApiKeyError';
  }
}

export interface ApiKeyDependencies {
  readonly store: ApiKeyStore;
  readonly clock: Clock;
  /** The per-key throttle: every live secret's identifier registered, dropped ones removed. */
  readonly usagePlan?: CallerUsagePlan;
}

export interface IssuedApiKey extends ApiKeyRecord {
  /** The secret, in this answer only. */
  readonly key: string;
}

/** What a new key grants: its tenant, scopes and, when given, channels and customer groups (C29; none: none). */
export interface ApiKeyGrantInput {
  readonly tenant: string;
  readonly scopes: readonly CallerScope[];
  readonly channels?: readonly string[];
  readonly customer_groups?: readonly string[];
  readonly description?: string;
}

/** A new key's record: every list once each, in the order given. */
const newRecord = (keyId: string, input: ApiKeyGrantInput, now: Date, by: string): ApiKeyRecord => ({
  key_id: keyId,
  tenant: input.tenant,
  scopes: [...new Set(input.scopes)],
  channels: [...new Set(input.channels ?? [])],
  customer_groups: [...new Set(input.customer_groups ?? [])],
  ...(input.description ? { description: input.description } : {}),
  status: 'active',
  created_at: now.toISOString(),
  created_by: by,
});

/** `POST /admin/api-keys`. */
export const issueApiKey = async (
  deps: ApiKeyDependencies,
  input: ApiKeyGrantInput,
  by: string,
  once?: ExactlyOnce<IssuedApiKey>,
): Promise<IssuedApiKey> => {
  const now = deps.clock.now();
  const key = newCallerSecret();
  const record = newRecord(`ak_${ulid(now.getTime())}`, input, now, by);
  const issued: IssuedApiKey = { ...record, key };
  const hash = secretSha256(key);
  // Registered before it can be used: a key that works always counts in the throttle.
  await deps.usagePlan?.register(hash);
  await deps.store.create(record, hash, await once?.completion(issued));
  return issued;
};

const activeKey = async (deps: ApiKeyDependencies, keyId: string) => {
  const found = await deps.store.get(keyId);
  if (!found) throw new ApiKeyError('not_found', `no key ${keyId}`);
  return found;
};

/** The key as operators see it: `previous_valid_until` only while the old secret still works. */
const viewOf = (record: ApiKeyRecord, now: Date): ApiKeyRecord => {
  if (!record.previous_valid_until || Date.parse(record.previous_valid_until) > now.getTime()) return record;
  const { previous_valid_until: _ended, ...rest } = record;
  return rest;
};

export const getApiKey = async (deps: ApiKeyDependencies, keyId: string): Promise<ApiKeyRecord> =>
  viewOf((await activeKey(deps, keyId)).record, deps.clock.now());

export const listApiKeys = async (
  deps: ApiKeyDependencies,
  query: { readonly tenant?: string; readonly limit: number; readonly cursor?: string },
) => {
  const page = await deps.store.list(query);
  const now = deps.clock.now();
  return { ...page, items: page.items.map((record) => viewOf(record, now)) };
};

/**
 * `POST /admin/api-keys/{key_id}/rotate`: a new secret; the current one works `overlapHours` longer (0: it stops
 * at once — an emergency rotation of a leaked key). A secret older than the current one stops now.
 */
export const rotateApiKey = async (
  deps: ApiKeyDependencies,
  keyId: string,
  overlapHours: number,
  once?: ExactlyOnce<IssuedApiKey>,
): Promise<IssuedApiKey> => {
  const found = await activeKey(deps, keyId);
  if (found.record.status !== 'active') throw new ApiKeyError('invalid_state', `the key ${keyId} is revoked`);
  const now = deps.clock.now();
  const validUntil = overlapHours > 0 ? new Date(now.getTime() + overlapHours * 3_600_000) : undefined;
  const { previous_valid_until: _previous, ...base } = found.record;
  const record: ApiKeyRecord = {
    ...base,
    rotated_at: now.toISOString(),
    ...(validUntil ? { previous_valid_until: validUntil.toISOString() } : {}),
  };
  const key = newCallerSecret();
  const issued: IssuedApiKey = { ...record, key };
  const next = secretSha256(key);
  await deps.usagePlan?.register(next);
  await deps.store.rotate(
    {
      record,
      expectedCurrent: found.current,
      nextSha256: next,
      ...(found.previous ? { previousToDrop: found.previous } : {}),
      ...(validUntil ? { previousValidUntil: Math.floor(validUntil.getTime() / 1000) } : {}),
    },
    await once?.completion(issued),
  );
  // The secrets that stopped working leave the throttle (an overlapping one stays until the next change).
  const dropped = [...(found.previous ? [found.previous] : []), ...(validUntil ? [] : [found.current])];
  await deps.usagePlan?.remove(dropped);
  return issued;
};

/** `DELETE /admin/api-keys/{key_id}`: revoked for good; revoking a revoked key answers the same record. */
export const revokeApiKey = async (
  deps: ApiKeyDependencies,
  keyId: string,
  by: string,
): Promise<ApiKeyRecord> => {
  const found = await activeKey(deps, keyId);
  if (found.record.status === 'revoked') return found.record;
  const { previous_valid_until: _previous, ...base } = found.record;
  const record: ApiKeyRecord = {
    ...base,
    status: 'revoked',
    revoked_at: deps.clock.now().toISOString(),
    revoked_by: by,
  };
  const hashes = [found.current, ...(found.previous ? [found.previous] : [])];
  await deps.store.revoke({ record, hashes });
  await deps.usagePlan?.remove(hashes);
  return record;
};

/**
 * A key given by configuration (the local stack's demo keys): created on first start under an id derived from
 * its hash, left as it is afterwards (a revoked one stays revoked; one created before customer groups existed
 * keeps none).
 */
export const ensureConfiguredKey = async (
  deps: ApiKeyDependencies,
  input: ApiKeyGrantInput & { readonly key: string; readonly description: string },
): Promise<string> => {
  const hash = secretSha256(input.key);
  const keyId = `ak_cfg_${hash.slice(0, 20)}`;
  if (await deps.store.get(keyId)) return keyId;
  await deps.store
    .create(newRecord(keyId, input, deps.clock.now(), 'configuration'), hash)
    .catch(async (error: unknown) => {
      // Two instances starting at once: the other one created it.
      if (!(await deps.store.get(keyId))) throw error;
    });
  return keyId;
};

/** How long a resolved key is remembered (the AWS authorizer's result cache has the same TTL). */
export const CALLER_KEY_CACHE_SECONDS = 30;
const CACHE_ENTRIES = 10_000;

/**
 * A presented `x-api-key` → the caller principal, or undefined (unknown, revoked, or an overlap that ended).
 * Results, refusals included, are kept `cacheSeconds` per key hash, as API Gateway caches an authorizer's
 * answer per identity source; a revocation takes effect within that time.
 */
export class CallerKeyResolver {
  readonly #cache = new LruMap<{ grant: ApiKeyGrant | undefined; until: number }>(CACHE_ENTRIES);

  constructor(
    private readonly store: Pick<ApiKeyStore, 'grantOf'>,
    private readonly clock: Clock,
    private readonly cacheSeconds: number = CALLER_KEY_CACHE_SECONDS,
  ) {}

  async resolve(presented: string | undefined): Promise<CallerPrincipal | undefined> {
    if (!presented || presented.length < 16 || presented.length > 256) return undefined;
    const hash = secretSha256(presented);
    const nowMs = this.clock.now().getTime();
    let entry = this.#cache.get(hash);
    if (!entry || entry.until <= nowMs) {
      entry = { grant: await this.store.grantOf(hash), until: nowMs + this.cacheSeconds * 1000 };
      if (this.cacheSeconds > 0) {
        this.#cache.set(hash, entry);
      }
    }
    const grant = entry.grant;
    if (!grant) return undefined;
    if (grant.valid_until !== undefined && grant.valid_until * 1000 <= nowMs) return undefined;
    return {
      kind: 'caller',
      keyId: grant.key_id,
      tenant: grant.tenant,
      scopes: grant.scopes,
      channels: grant.channels,
      customerGroups: grant.customer_groups,
    };
  }
}
