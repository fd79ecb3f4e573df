/**
 * The four-eyes rule of change requests (C20, C23): `pending_approval` → `approved` after two approvals by two
 * distinct identities, neither of them the author; `rejected` from `pending_approval`. An approver must
 * acknowledge every guardrail the change trips. Pure: the caller stores the outcome conditionally.
 */
import { codesToAcknowledge, type GuardrailCode, type GuardrailFinding } from './guardrails';

export type ChangeRequestStatus = 'pending_approval' | 'approved' | 'published' | 'rejected' | 'stale';

/** Approvals a change needs before it is published. */
export const REQUIRED_APPROVALS = 2;

export interface Approval {
  readonly by: string;
  readonly at: string;
  readonly comment?: string;
  readonly acknowledged: readonly GuardrailCode[];
}

export interface ReviewState {
  readonly status: ChangeRequestStatus;
  readonly author: string;
  readonly approvals: readonly Approval[];
  readonly guardrails: readonly GuardrailFinding[];
}

export type ReviewRefusal =
  | { readonly refused: 'author_cannot_approve'; readonly message: string }
  | { readonly refused: 'machine_cannot_approve'; readonly message: string }
  | { readonly refused: 'not_pending'; readonly message: string }
  | {
      readonly refused: 'guardrails_not_acknowledged';
      readonly message: string;
      readonly missing: readonly GuardrailCode[];
    };

export type ApprovalOutcome =
  | { readonly outcome: 'recorded'; readonly approvals: readonly Approval[]; readonly approved: boolean }
  /** The same identity approved before: it counts once and nothing changes. */
  | {
      readonly outcome: 'already_approved';
      readonly approvals: readonly Approval[];
      readonly approved: boolean;
    }
  | ReviewRefusal;

const notPending = (state: ReviewState): ReviewRefusal => ({
  refused: 'not_pending',
  message: `the change request is ${state.status}, not pending_approval`,
});

export const decideApproval = (
  state: ReviewState,
  approval: {
    readonly by: string;
    readonly at: string;
    readonly comment?: string;
    readonly acknowledged: readonly GuardrailCode[];
    /** A machine principal (FX ingestion, automation) may author, never approve (C27). */
    readonly machine?: boolean;
  },
): ApprovalOutcome => {
  if (approval.machine) {
    return {
      refused: 'machine_cannot_approve',
      message: 'a machine principal cannot approve a change request',
    };
  }
  if (approval.by === state.author) {
    return { refused: 'author_cannot_approve', message: 'the author of a change request cannot approve it' };
  }
  const distinct = (approvals: readonly Approval[]) => new Set(approvals.map((entry) => entry.by)).size;
  if (state.approvals.some((entry) => entry.by === approval.by)) {
    return {
      outcome: 'already_approved',
      approvals: state.approvals,
      approved: distinct(state.approvals) >= REQUIRED_APPROVALS,
    };
  }
  if (state.status !== 'pending_approval') return notPending(state);
  const missing = codesToAcknowledge(state.guardrails).filter(
    (code) => !approval.acknowledged.includes(code),
  );
  if (missing.length > 0) {
    return {
      refused: 'guardrails_not_acknowledged',
      message: `this change trips guardrails that each approver must acknowledge: ${missing.join(', ')}`,
      missing,
    };
  }
  const approvals = [...state.approvals, approval];
  return { outcome: 'recorded', approvals, approved: distinct(approvals) >= REQUIRED_APPROVALS };
};

export const decideRejection = (state: ReviewState): ReviewRefusal | { readonly outcome: 'rejected' } =>
  state.status === 'pending_approval' ? { outcome: 'rejected' } : notPending(state);
