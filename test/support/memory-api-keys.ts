import type { CallerScope } from '../../functions/domain/access/principals';
import {
  ApiKeyConflictError,
  type ApiKeyGrant,
  type ApiKeyPage,
  type ApiKeyRecord,
  type ApiKeyRotation,
  type ApiKeyStore,
} from '../../functions/ports/api-keys';
import type { RequestCompletion } from '../../functions/ports/idempotency';
import { secretSha256 } from '../../functions/usecases/access/api-keys';

/** Caller keys in memory, with the DynamoDB store's conditions, for unit tests of the use cases and gateway. */
export class MemoryApiKeyStore implements ApiKeyStore {
  readonly keys = new Map<string, { record: ApiKeyRecord; current: string; previous?: string }>();
  readonly hashes = new Map<string, ApiKeyGrant>();

  async create(record: ApiKeyRecord, hash: string, completion?: RequestCompletion): Promise<void> {
    if (this.keys.has(record.key_id) || this.hashes.has(hash)) throw new ApiKeyConflictError(record.key_id);
    this.keys.set(record.key_id, { record, current: hash });
    this.hashes.set(hash, this.grant(record));
    completion?.committed();
  }

  private grant(record: ApiKeyRecord, validUntil?: number): ApiKeyGrant {
    return {
      key_id: record.key_id,
      tenant: record.tenant,
      scopes: record.scopes,
      channels: record.channels,
      customer_groups: record.customer_groups,
      ...(validUntil === undefined ? {} : { valid_until: validUntil }),
    };
  }

  async get(keyId: string) {
    return this.keys.get(keyId);
  }

  async list(options: { tenant?: string; limit: number; cursor?: string }): Promise<ApiKeyPage> {
    const all = [...this.keys.values()]
      .map((entry) => entry.record)
      .filter((record) => !options.tenant || record.tenant === options.tenant)
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    return { items: all.slice(0, options.limit) };
  }

  async grantOf(hash: string): Promise<ApiKeyGrant | undefined> {
    return this.hashes.get(hash);
  }

  async rotate(change: ApiKeyRotation): Promise<void> {
    const found = this.keys.get(change.record.key_id);
    if (!found || found.current !== change.expectedCurrent)
      throw new ApiKeyConflictError(change.record.key_id);
    if (change.previousToDrop) this.hashes.delete(change.previousToDrop);
    if (change.previousValidUntil === undefined) this.hashes.delete(change.expectedCurrent);
    else this.hashes.set(change.expectedCurrent, this.grant(change.record, change.previousValidUntil));
    this.hashes.set(change.nextSha256, this.grant(change.record));
    this.keys.set(change.record.key_id, {
      record: change.record,
      current: change.nextSha256,
      ...(change.previousValidUntil === undefined ? {} : { previous: change.expectedCurrent }),
    });
  }

  async revoke(change: { readonly record: ApiKeyRecord; readonly hashes: readonly string[] }): Promise<void> {
    const found = this.keys.get(change.record.key_id);
    if (!found) throw new ApiKeyConflictError(change.record.key_id);
    for (const hash of change.hashes) this.hashes.delete(hash);
    this.keys.set(change.record.key_id, { record: change.record, current: found.current });
  }

  /** A key with this secret, as configuration creates one. */
  seed(secret: string, tenant: string, scopes: readonly CallerScope[], keyId = `ak_${tenant}`): void {
    const record: ApiKeyRecord = {
      key_id: keyId,
      tenant,
      scopes,
      channels: [],
      customer_groups: [],
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      created_by: 'test',
    };
    const hash = secretSha256(secret);
    this.keys.set(keyId, { record, current: hash });
    this.hashes.set(hash, this.grant(record));
  }
}
