/**
 * Change requests (C20, C23): the only way catalog data is written. A request carries a payload in the import
 * format; it is validated whole, diffed against what is in force and checked against guardrails, then waits for
 * two approvals by two identities other than its author. The second approval publishes it (three-way merged onto
 * what is in force by then), signs the release (DSSE) and appends it to the audit journal.
 */
import {
  type DsseEnvelope,
  type DsseSigner,
  RELEASE_PAYLOAD_TYPE,
  releasePayload,
  signEnvelope,
} from '../../domain/audit/dsse';
import {
  type Approval,
  type ChangeRequestStatus,
  decideApproval,
  decideRejection,
  type ReviewRefusal,
} from '../../domain/change-control/approvals';
import { type CatalogDiff, type DiffableDocument, diffCatalog } from '../../domain/change-control/diff';
import {
  type GuardrailCode,
  type GuardrailSettings,
  guardrailFindings,
} from '../../domain/change-control/guardrails';
import { mergeChange } from '../../domain/change-control/merge';
import { ServiceError, type ServiceErrorCode } from '../../domain/errors';
import type { Json } from '../../domain/money/canonical';
import { CATALOG_PART_KINDS, type CatalogPartKind, type CatalogRepository } from '../../ports/catalog';
import type {
  ChangeBase,
  ChangeKind,
  ChangeRequestContent,
  ChangeRequestPage,
  ChangeRequestRecord,
  ChangeRequestStore,
} from '../../ports/change-requests';
import type { Clock } from '../../ports/clock';
import type { ExactlyOnce, RequestCompletion } from '../../ports/idempotency';
import type { CatalogDocument } from '../../schemas/catalog-document';
import { newId } from '../../shared/ids';
import { CONFLICT, type RetryPolicy, retryOnConflict } from '../../shared/retry';
import { type CurrentCatalog, contentHash, currentCatalog, publishCatalogChange } from '../catalog/import';
import { splitDocument } from '../catalog/release';
import { CatalogValidationError, validateCatalogDocument } from '../catalog/validate';
import type { OperationalSignals } from '../webhooks/operational-events';
import { expiredOverrideProblems, proposedDocument } from './kinds';
import { patchOperationsOf, rebasePatch } from './patch';

/** Appends to the audit journal; idempotent by `entry_id`. */
export interface ReleaseJournal {
  append(input: { entry_id: string; type: string; data: Json }): Promise<{ index: number; created: boolean }>;
}

export interface ChangeRequestDependencies {
  readonly store: ChangeRequestStore;
  readonly repository: CatalogRepository;
  readonly clock: Clock;
  /** Signs releases (the receipt key: its public half is in `GET /keys`). */
  readonly signer: DsseSigner;
  readonly journal: ReleaseJournal;
  readonly guardrails: GuardrailSettings;
  /** Carried by the catalog events of a publication. */
  readonly traceId?: string;
  /** Announces a change request waiting for review (`operations.change_request_pending`, C32). */
  readonly operations?: OperationalSignals;
}

export type ChangeRequestErrorCode = ReviewRefusal['refused'] | 'not_found' | 'no_release';

/** The C6 error of each refusal. */
const CODE_OF_REFUSAL: Readonly<Record<ChangeRequestErrorCode, ServiceErrorCode>> = {
  author_cannot_approve: 'forbidden',
  machine_cannot_approve: 'forbidden',
  not_pending: 'conflict',
  guardrails_not_acknowledged: 'invalid_state',
  not_found: 'not_found',
  no_release: 'not_found',
};

/** A refused action on a change request: `reason` says which, `code` is its C6 error. */
export class ChangeRequestError extends ServiceError {
  constructor(
    readonly reason: ChangeRequestErrorCode,
    message: string,
    details?: Readonly<Record<string, unknown>>,
  ) {
    super(CODE_OF_REFUSAL[reason], message, { details });
    this.name = 'ChangeRequestError';
  }
}

export interface ChangeRequestInput {
  readonly kind: ChangeKind;
  /** In the import format; for a `patch`, `{ operations }`. */
  readonly payload: unknown;
  readonly effective_from?: string;
  readonly note?: string;
}

export interface ChangeRequestView extends ChangeRequestRecord {
  readonly diff?: CatalogDiff;
}

/** An update that lost a race re-reads and tries again: 8 attempts, 5 ms doubling to 100 ms. */
const UPDATE_RETRY: RetryPolicy = { attempts: 8, baseMs: 5, capMs: 100 };

const documentOf = (catalog: Pick<CurrentCatalog, 'parts'>): Record<string, unknown> => ({
  ...(catalog.parts.commercial.content as object),
  ...(catalog.parts.fx.content as object),
  ...(catalog.parts.tax.content as object),
});

const partHashes = (document: CatalogDocument): Record<CatalogPartKind, string> => {
  const parts = splitDocument(document);
  return {
    commercial: contentHash(parts.commercial),
    fx: contentHash(parts.fx),
    tax: contentHash(parts.tax),
  };
};

/** Opens a change request: validated whole, diffed and checked against guardrails; `pending_approval`. */
export const createChangeRequest = async (
  deps: ChangeRequestDependencies,
  input: ChangeRequestInput,
  author: string,
  once?: ExactlyOnce<ChangeRequestView>,
): Promise<ChangeRequestView> => {
  const now = deps.clock.now();
  const current = await currentCatalog(deps.repository);
  const currentDocument = current ? documentOf(current) : undefined;
  const candidate = proposedDocument(input.kind, input.payload, currentDocument, now);
  if (typeof candidate === 'object' && candidate !== null && 'effective_from' in candidate) {
    throw new CatalogValidationError([
      {
        path: '$.payload.effective_from',
        message: 'give effective_from on the change request, not in its payload',
      },
    ]);
  }
  const document = validateCatalogDocument(candidate);
  const expired = expiredOverrideProblems(currentDocument, document, now);
  if (expired.length > 0) throw new CatalogValidationError(expired);
  const diff = diffCatalog(currentDocument as DiffableDocument | undefined, document as DiffableDocument);
  const base: ChangeBase | undefined = current
    ? { revision: current.publication.revision, versions: current.publication.versions }
    : undefined;
  const record: ChangeRequestRecord = {
    cr_id: newId('cr', now),
    kind: input.kind,
    status: 'pending_approval',
    author,
    ...(input.note ? { note: input.note } : {}),
    ...(input.effective_from ? { effective_from: input.effective_from } : {}),
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    ...(base ? { base } : {}),
    proposed_parts: partHashes(document),
    payload_sha256: contentHash(input.payload),
    approvals: [],
    guardrails: guardrailFindings(document as DiffableDocument, diff, deps.guardrails),
    summary: {
      sections_changed: diff.sections_changed,
      prices_added: diff.prices.added.length,
      prices_removed: diff.prices.removed.length,
      prices_changed: diff.prices.changed.length,
      tax_rates_changed: diff.tax_rates.length,
      fx_rates_changed: diff.fx_rates.length,
    },
    version: 1,
  };
  const content: ChangeRequestContent = { payload: input.payload, proposed: document, diff };
  const view: ChangeRequestView = { ...record, diff };
  await deps.store.create(record, content, await once?.completion(view));
  // After the write (an announcement of a request that does not exist would be worse than a late one); its key
  // is the request, so announcing it again publishes nothing twice.
  await deps.operations?.emit({
    type: 'operations.change_request_pending',
    key: `change_request_pending:${record.cr_id}`,
    data: {
      cr_id: record.cr_id,
      kind: record.kind,
      guardrail_findings: record.guardrails.length,
      ...(record.effective_from ? { effective_from: record.effective_from } : {}),
    },
    traceId: deps.traceId ?? record.cr_id,
  });
  return view;
};

const load = async (store: ChangeRequestStore, crId: string): Promise<ChangeRequestRecord> => {
  const record = await store.get(crId);
  if (!record) throw new ChangeRequestError('not_found', `no change request ${crId}`);
  return record;
};

const refuse = (refusal: ReviewRefusal): never => {
  throw new ChangeRequestError(
    refusal.refused,
    refusal.message,
    'missing' in refusal ? { missing_acknowledgements: refusal.missing } : undefined,
  );
};

/** The request's completion for a record about to be written, when that write is the request's last. */
type CompletionOf = (record: ChangeRequestRecord) => Promise<RequestCompletion | undefined>;

/**
 * Applies `change` to the stored record, re-reading and retrying when another writer got there first; the
 * request's completion (`completionOf`) goes in the same write.
 */
const updateRecord = async (
  store: ChangeRequestStore,
  crId: string,
  change: (record: ChangeRequestRecord) => ChangeRequestRecord | undefined,
  completionOf?: CompletionOf,
): Promise<ChangeRequestRecord> =>
  retryOnConflict(
    UPDATE_RETRY,
    async () => {
      const record = await load(store, crId);
      const next = change(record);
      if (!next) return record;
      const updated = { ...next, version: record.version + 1 };
      return (await store.update(updated, await completionOf?.(updated))) === 'updated' ? updated : CONFLICT;
    },
    () => new Error(`change request ${crId} kept changing while being updated`),
  );

/**
 * Records an approval. The author is refused; the same approver twice counts once; each approver acknowledges
 * every guardrail the change trips. The second distinct approval publishes the change. Exactly once (C25): a
 * first approval is written with the request's answer; a second one's answer goes with the last step of its
 * publication, and a retry after a crash between the two finds the approval counted and resumes the publication.
 */
export const approveChangeRequest = async (
  deps: ChangeRequestDependencies,
  crId: string,
  approval: {
    readonly by: string;
    readonly machine?: boolean;
    readonly comment?: string;
    readonly acknowledge?: readonly GuardrailCode[];
  },
  once?: ExactlyOnce<ChangeRequestRecord>,
): Promise<ChangeRequestRecord> => {
  const at = deps.clock.now().toISOString();
  const record = await updateRecord(
    deps.store,
    crId,
    (current) => {
      const outcome = decideApproval(current, {
        by: approval.by,
        at,
        ...(approval.machine ? { machine: true } : {}),
        ...(approval.comment ? { comment: approval.comment } : {}),
        acknowledged: approval.acknowledge ?? [],
      });
      if ('refused' in outcome) return refuse(outcome);
      if (outcome.outcome === 'already_approved') return undefined;
      const status: ChangeRequestStatus = outcome.approved ? 'approved' : 'pending_approval';
      return { ...current, approvals: outcome.approvals, status, updated_at: at };
    },
    async (updated) => (updated.status === 'pending_approval' ? once?.completion(updated) : undefined),
  );
  if (record.status !== 'approved' && record.status !== 'published') return record;
  once?.checkpoint('after-approval');
  return completeChangeRequest(deps, crId, once);
};

/** Rejects a pending change request with a comment; it never publishes. */
export const rejectChangeRequest = async (
  deps: ChangeRequestDependencies,
  crId: string,
  rejection: { readonly by: string; readonly comment: string },
  once?: ExactlyOnce<ChangeRequestRecord>,
): Promise<ChangeRequestRecord> => {
  const at = deps.clock.now().toISOString();
  return updateRecord(
    deps.store,
    crId,
    (current) => {
      const outcome = decideRejection(current);
      if ('refused' in outcome) return refuse(outcome);
      return { ...current, status: 'rejected', rejection: { ...rejection, at }, updated_at: at };
    },
    async (updated) => once?.completion(updated),
  );
};

/** Thrown inside the publication plan when the change conflicts with what was published since its base. */
class StaleChangeError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'StaleChangeError';
  }
}

/**
 * The publication plan of an approved change, validated again: three-way merged onto what is current by
 * section, or for a patch its operations rebased onto what is current (stale when others changed an entry it
 * names).
 */
const planOf =
  (
    record: ChangeRequestRecord,
    content: ChangeRequestContent,
    baseDocument: Record<string, unknown> | undefined,
  ) =>
  (current: CurrentCatalog | undefined) => {
    const proposed = content.proposed as Record<string, unknown>;
    let document: unknown = proposed;
    if (current && current.publication.revision !== record.base?.revision) {
      if (!baseDocument) {
        throw new StaleChangeError('a catalog was published after this change was requested against none');
      }
      if (record.kind === 'patch') {
        const rebased = rebasePatch(patchOperationsOf(content.payload), baseDocument, documentOf(current));
        if ('stale' in rebased) throw new StaleChangeError(rebased.stale);
        document = rebased.document;
      } else {
        const result = mergeChange(baseDocument, proposed, documentOf(current));
        if ('conflicts' in result) {
          throw new StaleChangeError(
            `sections changed since this request by another publication: ${result.conflicts.join(', ')}`,
          );
        }
        document = result.merged;
      }
    }
    try {
      return splitDocument(validateCatalogDocument(document));
    } catch (error) {
      if (error instanceof CatalogValidationError) {
        throw new StaleChangeError(
          `merged with what is in force now, the change is invalid: ${error.problems
            .slice(0, 3)
            .map((problem) => `${problem.path}: ${problem.message}`)
            .join('; ')}`,
        );
      }
      throw error;
    }
  };

const baseDocumentOf = async (
  repository: CatalogRepository,
  base: ChangeBase | undefined,
): Promise<Record<string, unknown> | undefined> => {
  if (!base) return undefined;
  const parts = await Promise.all(
    CATALOG_PART_KINDS.map(async (kind) => {
      const part = await repository.part(kind, base.versions[kind]);
      if (!part) throw new Error(`base part ${kind} v${base.versions[kind]} is missing`);
      return [kind, part] as const;
    }),
  );
  return documentOf({ parts: Object.fromEntries(parts) as CurrentCatalog['parts'] });
};

/** Publishes an approved change once (a retried completion finds the publication it made). */
const publish = async (
  deps: ChangeRequestDependencies,
  record: ChangeRequestRecord,
): Promise<ChangeRequestRecord> => {
  const existing = (
    await deps.repository.publications(record.base ? { afterRevision: record.base.revision } : {})
  ).find((publication) => publication.change_request_id === record.cr_id);
  let publication: ChangeRequestRecord['publication'];
  if (existing) {
    publication = {
      revision: existing.revision,
      versions: {
        pricelist_version: existing.versions.commercial,
        fx_version: `fx-${existing.versions.fx}`,
        tax_rule_version: existing.versions.tax,
      },
      effective_from: existing.effective_from,
      published_at: existing.published_at,
    };
  } else {
    const content = await deps.store.content(record.cr_id);
    if (!content) throw new Error(`change request ${record.cr_id} has no stored content`);
    const baseDocument = await baseDocumentOf(deps.repository, record.base);
    try {
      const result = await publishCatalogChange(
        {
          repository: deps.repository,
          clock: deps.clock,
          ...(deps.traceId ? { traceId: deps.traceId } : {}),
        },
        {
          plan: planOf(record, content, baseDocument),
          ...(record.effective_from ? { effectiveFrom: record.effective_from } : {}),
          changeRequestId: record.cr_id,
        },
      );
      publication = {
        revision: result.revision,
        versions: result.versions,
        effective_from: result.effective_from,
        published_at: deps.clock.now().toISOString(),
      };
    } catch (error) {
      if (!(error instanceof StaleChangeError)) throw error;
      const at = deps.clock.now().toISOString();
      return updateRecord(deps.store, record.cr_id, (current) =>
        current.status === 'approved'
          ? { ...current, status: 'stale', stale_reason: error.reason, updated_at: at }
          : undefined,
      );
    }
  }
  return updateRecord(deps.store, record.cr_id, (current) =>
    current.publication
      ? undefined
      : { ...current, status: 'published', publication, updated_at: publication.published_at },
  );
};

/** The signed content of a release: what was put in force, by whom, approved by whom. */
const releaseOfRecord = async (
  deps: ChangeRequestDependencies,
  record: ChangeRequestRecord,
): Promise<DsseEnvelope> => {
  const publication = record.publication;
  if (!publication) throw new Error(`change request ${record.cr_id} is not published`);
  return signEnvelope(
    RELEASE_PAYLOAD_TYPE,
    releasePayload({
      cr_id: record.cr_id,
      kind: record.kind,
      versions: publication.versions,
      content_sha256: record.payload_sha256,
      author: record.author,
      approvers: record.approvals.map((approval) => approval.by),
      effective_from: publication.effective_from,
    }),
    deps.signer,
  );
};

/**
 * Takes an approved change through the rest of its way: publication, release signature, journal entry. Each
 * step is recorded, so calling it again (a retried approval, the scheduled sweep) finishes what a crash left.
 */
export const completeChangeRequest = async (
  deps: ChangeRequestDependencies,
  crId: string,
  once?: ExactlyOnce<ChangeRequestRecord>,
): Promise<ChangeRequestRecord> => {
  let record = await load(deps.store, crId);
  if (record.status === 'approved') record = await publish(deps, record);
  if (record.status !== 'published') return record;
  if (!record.release) {
    const envelope = await releaseOfRecord(deps, record);
    record = await updateRecord(deps.store, crId, (current) =>
      current.release ? undefined : { ...current, release: envelope },
    );
  }
  if (record.journal_index === undefined && record.release && record.publication) {
    const appended = await deps.journal.append({
      entry_id: `release:${record.cr_id}`,
      type: 'release',
      data: {
        cr_id: record.cr_id,
        kind: record.kind,
        versions: { ...record.publication.versions },
        effective_from: record.publication.effective_from,
        content_sha256: record.payload_sha256,
        release_sha256: contentHash(record.release),
      },
    });
    // The last step: the approval that led here is answered in the same write.
    record = await updateRecord(
      deps.store,
      crId,
      (current) =>
        current.journal_index === undefined ? { ...current, journal_index: appended.index } : undefined,
      async (updated) => once?.completion(updated),
    );
  }
  return record;
};

/** Finishes every approved change a crash left half-way (run by the scheduled function). */
export const completePendingChangeRequests = async (deps: ChangeRequestDependencies): Promise<number> => {
  let finished = 0;
  for (const status of ['approved', 'published'] as const) {
    const page = await deps.store.list({ status, limit: 50 });
    for (const record of page.items) {
      if (status === 'published' && record.release && record.journal_index !== undefined) continue;
      await completeChangeRequest(deps, record.cr_id);
      finished += 1;
    }
  }
  return finished;
};

export const getChangeRequest = async (
  store: ChangeRequestStore,
  crId: string,
): Promise<ChangeRequestView> => {
  const record = await load(store, crId);
  const content = await store.content(crId);
  return content ? { ...record, diff: content.diff } : record;
};

export const listChangeRequests = (
  store: ChangeRequestStore,
  options: { readonly status?: ChangeRequestStatus; readonly limit: number; readonly cursor?: string },
): Promise<ChangeRequestPage> => store.list(options);

/** The DSSE-signed release of a published change request. */
export const releaseOf = async (store: ChangeRequestStore, crId: string): Promise<DsseEnvelope> => {
  const record = await load(store, crId);
  if (!record.release) {
    throw new ChangeRequestError('no_release', `change request ${crId} is ${record.status}: no release yet`);
  }
  return record.release;
};

export type { Approval };
