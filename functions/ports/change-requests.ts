import type { DsseEnvelope, ReleaseVersions } from '../domain/audit/dsse';
import type { Approval, ChangeRequestStatus } from '../domain/change-control/approvals';
import type { CatalogDiff } from '../domain/change-control/diff';
import type { GuardrailFinding } from '../domain/change-control/guardrails';
import type { CatalogPartKind } from './catalog';
import type { RequestCompletion } from './idempotency';

/**
 * What a change request changes (C23); each kind replaces its own sections of the import document, except
 * `patch` (C30), whose operations set or remove single entries named by id.
 */
export type ChangeKind =
  | 'catalog'
  | 'pricelist'
  | 'tax_rules'
  | 'promotions'
  | 'fx_rates'
  | 'fx_policy'
  | 'patch';

export const CHANGE_KINDS: readonly ChangeKind[] = [
  'catalog',
  'pricelist',
  'tax_rules',
  'promotions',
  'fx_rates',
  'fx_policy',
  'patch',
];

/** The publication a change request was based on: it may publish only parts nobody changed since. */
export interface ChangeBase {
  readonly revision: number;
  readonly versions: Readonly<Record<CatalogPartKind, number>>;
}

export interface ChangeRequestRecord {
  readonly cr_id: string;
  readonly kind: ChangeKind;
  readonly status: ChangeRequestStatus;
  readonly author: string;
  readonly note?: string;
  /** When the change goes in force once published; absent: at publication. */
  readonly effective_from?: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** `undefined`: nothing was published when the change was requested. */
  readonly base?: ChangeBase;
  /** `sha256:<hex>` of each part's proposed content; a part equal to its base is not changed. */
  readonly proposed_parts: Readonly<Record<CatalogPartKind, string>>;
  /** `sha256:<hex>` of the RFC 8785 bytes of the payload as requested (a patch: `{ "operations": [...] }`). */
  readonly payload_sha256: string;
  readonly approvals: readonly Approval[];
  readonly rejection?: { readonly by: string; readonly at: string; readonly comment: string };
  readonly guardrails: readonly GuardrailFinding[];
  readonly summary: ChangeSummary;
  /** Set once published: the revision and versions it put in force. */
  readonly publication?: {
    readonly revision: number;
    readonly versions: ReleaseVersions;
    readonly effective_from: string;
    readonly published_at: string;
  };
  /** The DSSE-signed release of the publication. */
  readonly release?: DsseEnvelope;
  /** Index of the release's entry in the audit journal. */
  readonly journal_index?: number;
  /** Why the change can no longer be published (a part it changes was changed by another publication). */
  readonly stale_reason?: string;
  /** Optimistic concurrency: every update is conditional on the version read. */
  readonly version: number;
}

export interface ChangeSummary {
  readonly sections_changed: readonly string[];
  readonly prices_added: number;
  readonly prices_removed: number;
  readonly prices_changed: number;
  readonly tax_rates_changed: number;
  readonly fx_rates_changed: number;
}

/** The large parts of a change request, stored once (compressed): the payload, the full document, the diff. */
export interface ChangeRequestContent {
  /** As requested; a patch's is `{ operations }`. */
  readonly payload: unknown;
  /** The whole document the change proposes (payload applied to what was in force). */
  readonly proposed: unknown;
  readonly diff: CatalogDiff;
}

export interface ChangeRequestPage {
  readonly items: readonly ChangeRequestRecord[];
  readonly next_cursor?: string;
}

export interface ChangeRequestStore {
  /** Writes a new change request (with the request's completion in the same transaction); fails if the id exists. */
  create(
    record: ChangeRequestRecord,
    content: ChangeRequestContent,
    completion?: RequestCompletion,
  ): Promise<void>;
  get(crId: string): Promise<ChangeRequestRecord | undefined>;
  content(crId: string): Promise<ChangeRequestContent | undefined>;
  /**
   * Replaces the record if its stored version is still `record.version - 1` (with the request's completion in
   * the same transaction when given).
   */
  update(record: ChangeRequestRecord, completion?: RequestCompletion): Promise<'updated' | 'conflict'>;
  /** Newest first; `status` filters. */
  list(options: {
    readonly status?: ChangeRequestStatus;
    readonly limit: number;
    readonly cursor?: string;
  }): Promise<ChangeRequestPage>;
}
