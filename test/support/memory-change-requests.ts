import { createHash } from 'node:crypto';
import type { DsseSigner } from '../../functions/domain/audit/dsse';
import type { ChangeRequestStatus } from '../../functions/domain/change-control/approvals';
import { DEFAULT_GUARDRAILS } from '../../functions/domain/change-control/guardrails';
import type { CatalogRepository } from '../../functions/ports/catalog';
import type {
  ChangeRequestContent,
  ChangeRequestPage,
  ChangeRequestRecord,
  ChangeRequestStore,
} from '../../functions/ports/change-requests';
import type { Clock } from '../../functions/ports/clock';
import type {
  ChangeRequestDependencies,
  ReleaseJournal,
} from '../../functions/usecases/change-requests/change-requests';

/** Change requests in memory, with the DynamoDB store's conditions (create once, update on the version read). */
export class MemoryChangeRequestStore implements ChangeRequestStore {
  readonly records = new Map<string, ChangeRequestRecord>();
  readonly contents = new Map<string, ChangeRequestContent>();

  async create(record: ChangeRequestRecord, content: ChangeRequestContent): Promise<void> {
    if (this.records.has(record.cr_id)) throw new Error(`change request ${record.cr_id} exists`);
    this.records.set(record.cr_id, structuredClone(record));
    this.contents.set(record.cr_id, structuredClone(content));
  }

  async get(crId: string): Promise<ChangeRequestRecord | undefined> {
    const record = this.records.get(crId);
    return record && structuredClone(record);
  }

  async content(crId: string): Promise<ChangeRequestContent | undefined> {
    const content = this.contents.get(crId);
    return content && structuredClone(content);
  }

  async update(record: ChangeRequestRecord): Promise<'updated' | 'conflict'> {
    const stored = this.records.get(record.cr_id);
    if (!stored || stored.version !== record.version - 1) return 'conflict';
    this.records.set(record.cr_id, structuredClone(record));
    return 'updated';
  }

  async list(options: {
    readonly status?: ChangeRequestStatus;
    readonly limit: number;
  }): Promise<ChangeRequestPage> {
    const items = [...this.records.values()]
      .filter((record) => options.status === undefined || record.status === options.status)
      .reverse()
      .slice(0, options.limit);
    return { items };
  }
}

/** A journal that numbers appends (idempotent by entry id). */
export class MemoryReleaseJournal implements ReleaseJournal {
  readonly entries = new Map<string, number>();

  async append(input: { entry_id: string }): Promise<{ index: number; created: boolean }> {
    const known = this.entries.get(input.entry_id);
    if (known !== undefined) return { index: known, created: false };
    this.entries.set(input.entry_id, this.entries.size);
    return { index: this.entries.size - 1, created: true };
  }
}

/** Signs with a digest: enough for the use cases, which only wrap the signature. */
export const digestSigner: DsseSigner = {
  keyId: 'test-digest',
  sign: async (message) => new Uint8Array(createHash('sha256').update(message).digest()),
};

/** Change-request dependencies over the in-memory stores. */
export const memoryChangeRequestDependencies = (
  repository: CatalogRepository,
  clock: Clock,
): ChangeRequestDependencies & { readonly store: MemoryChangeRequestStore } => ({
  store: new MemoryChangeRequestStore(),
  repository,
  clock,
  signer: digestSigner,
  journal: new MemoryReleaseJournal(),
  guardrails: DEFAULT_GUARDRAILS,
});
