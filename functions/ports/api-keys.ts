import type { CallerScope } from '../domain/access/principals';
import { ServiceError } from '../domain/errors';
import type { RequestCompletion } from './idempotency';

/** A caller key as operators see it (never its secret; the hashes stay in the store). */
export interface ApiKeyRecord {
  readonly key_id: string;
  readonly tenant: string;
  readonly scopes: readonly CallerScope[];
  /** Empty: every channel of the tenant. */
  readonly channels: readonly string[];
  /** The customer groups (C29) requests with the key may name; empty: none. */
  readonly customer_groups: readonly string[];
  readonly description?: string;
  readonly status: 'active' | 'revoked';
  readonly created_at: string;
  readonly created_by: string;
  readonly rotated_at?: string;
  /** Until when the secret before the last rotation still works (absent: it no longer does). */
  readonly previous_valid_until?: string;
  readonly revoked_at?: string;
  readonly revoked_by?: string;
}

/** What the authorizer learns from a secret's hash: the key it belongs to, and until when it works. */
export interface ApiKeyGrant {
  readonly key_id: string;
  readonly tenant: string;
  readonly scopes: readonly CallerScope[];
  readonly channels: readonly string[];
  readonly customer_groups: readonly string[];
  /** Epoch seconds after which this secret no longer works (the old secret of a rotation). */
  readonly valid_until?: number;
}

export interface ApiKeyPage {
  readonly items: readonly ApiKeyRecord[];
  readonly cursor?: string;
}

/** Thrown when the key changed since it was read (a concurrent rotation or revocation). */
export class ApiKeyConflictError extends ServiceError {
  constructor(keyId: string) {
    super('conflict', `the key ${keyId} changed meanwhile; read it again`, { retryAfterSeconds: 1 });
    this.name = 'ApiKeyConflictError';
  }
}

/**
 * A rotation: the key's secret becomes `nextSha256`, conditional on `expectedCurrent` still being the current
 * one; that one keeps working until `previousValidUntil` (epoch seconds), or stops at once when it is
 * undefined. `previousToDrop`, a secret older than the current one, stops at once.
 */
export interface ApiKeyRotation {
  readonly record: ApiKeyRecord;
  readonly expectedCurrent: string;
  readonly nextSha256: string;
  readonly previousToDrop?: string;
  readonly previousValidUntil?: number;
}

/**
 * Caller keys (C26): the record and, per live secret, an item keyed by the secret's SHA-256. Every change is
 * conditional on the record as read, and writes the request's completion with it when given.
 */
export interface ApiKeyStore {
  create(record: ApiKeyRecord, secretSha256: string, completion?: RequestCompletion): Promise<void>;
  get(keyId: string): Promise<{ record: ApiKeyRecord; current: string; previous?: string } | undefined>;
  list(options: { tenant?: string; limit: number; cursor?: string }): Promise<ApiKeyPage>;
  grantOf(secretSha256: string): Promise<ApiKeyGrant | undefined>;
  rotate(change: ApiKeyRotation, completion?: RequestCompletion): Promise<void>;
  /** Marks the key revoked and deletes every secret hash of it. */
  revoke(
    change: { readonly record: ApiKeyRecord; readonly hashes: readonly string[] },
    completion?: RequestCompletion,
  ): Promise<void>;
}
