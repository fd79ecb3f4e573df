import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Approval,
  type ChangeRequestStatus,
  decideApproval,
  decideRejection,
  REQUIRED_APPROVALS,
  type ReviewState,
} from '../../../functions/domain/change-control/approvals';
import {
  GUARDRAIL_CODES,
  type GuardrailCode,
  type GuardrailFinding,
} from '../../../functions/domain/change-control/guardrails';

const AT = '2026-03-01T12:00:00.000Z';

const pending = (overrides: Partial<ReviewState> = {}): ReviewState => ({
  status: 'pending_approval',
  author: 'alice',
  approvals: [],
  guardrails: [],
  ...overrides,
});

const approval = (by: string, acknowledged: readonly GuardrailCode[] = [], comment?: string): Approval => ({
  by,
  at: AT,
  acknowledged,
  ...(comment === undefined ? {} : { comment }),
});

const finding = (code: GuardrailCode, path = '$'): GuardrailFinding => ({
  code,
  path,
  message: `${code} at ${path}`,
});

const NOT_PENDING: readonly ChangeRequestStatus[] = ['approved', 'published', 'rejected', 'stale'];

describe('decideApproval', () => {
  it('needs two approvals', () => {
    expect(REQUIRED_APPROVALS).toBe(2);
  });

  it('refuses the author, in any status and whatever they acknowledge', () => {
    const refusal = {
      refused: 'author_cannot_approve',
      message: 'the author of a change request cannot approve it',
    };
    expect(decideApproval(pending(), approval('alice'))).toEqual(refusal);
    expect(decideApproval(pending({ approvals: [approval('bob')] }), approval('alice'))).toEqual(refusal);
    expect(
      decideApproval(pending({ guardrails: [finding('price_move')] }), approval('alice', ['price_move'])),
    ).toEqual(refusal);
    for (const status of NOT_PENDING)
      expect(decideApproval(pending({ status }), approval('alice'))).toEqual(refusal);
  });

  it('records a first approval without approving the change', () => {
    const bob = approval('bob', [], 'looks right');
    const outcome = decideApproval(pending(), bob);
    expect(outcome).toEqual({ outcome: 'recorded', approvals: [bob], approved: false });
  });

  it('approves on a second approval by another identity', () => {
    const bob = approval('bob');
    const carol = approval('carol');
    const outcome = decideApproval(pending({ approvals: [bob] }), carol);
    expect(outcome).toEqual({ outcome: 'recorded', approvals: [bob, carol], approved: true });
  });

  it('does not change the state it is given', () => {
    const state = pending({ approvals: [approval('bob')] });
    const copy = structuredClone(state);
    decideApproval(state, approval('carol'));
    expect(state).toEqual(copy);
  });

  it('counts the same approver once: already_approved, nothing changes', () => {
    const bob = approval('bob');
    const state = pending({ approvals: [bob] });
    const outcome = decideApproval(state, approval('bob', [], 'again'));
    expect(outcome).toEqual({ outcome: 'already_approved', approvals: [bob], approved: false });
    expect('approvals' in outcome && outcome.approvals).toBe(state.approvals);
  });

  it('answers a repeated approval after approval (a retry) with already_approved and approved', () => {
    const approvals = [approval('bob'), approval('carol')];
    for (const status of ['approved', 'published'] as const) {
      expect(decideApproval(pending({ status, approvals }), approval('carol'))).toEqual({
        outcome: 'already_approved',
        approvals,
        approved: true,
      });
    }
  });

  it('does not ask a repeated approver for acknowledgements again', () => {
    const state = pending({
      approvals: [approval('bob', ['tax_rate_change'])],
      guardrails: [finding('tax_rate_change')],
    });
    expect(decideApproval(state, approval('bob'))).toMatchObject({ outcome: 'already_approved' });
  });

  it('refuses a new approver unless the request is pending_approval', () => {
    for (const status of NOT_PENDING) {
      expect(decideApproval(pending({ status, approvals: [approval('bob')] }), approval('carol'))).toEqual({
        refused: 'not_pending',
        message: `the change request is ${status}, not pending_approval`,
      });
    }
  });

  it('lists the guardrail codes the approver did not acknowledge, once each', () => {
    const state = pending({
      guardrails: [finding('tax_rate_change', 'a'), finding('price_move', 'b'), finding('price_move', 'c')],
    });
    expect(decideApproval(state, approval('bob'))).toEqual({
      refused: 'guardrails_not_acknowledged',
      message:
        'this change trips guardrails that each approver must acknowledge: price_move, tax_rate_change',
      missing: ['price_move', 'tax_rate_change'],
    });
    expect(decideApproval(state, approval('bob', ['tax_rate_change', 'rate_move']))).toEqual({
      refused: 'guardrails_not_acknowledged',
      message: 'this change trips guardrails that each approver must acknowledge: price_move',
      missing: ['price_move'],
    });
  });

  it('records an approval that acknowledges every tripped guardrail (extra acknowledgements are harmless)', () => {
    const state = pending({ guardrails: [finding('below_min_price'), finding('rate_move')] });
    const bob = approval('bob', ['rate_move', 'below_min_price', 'tax_rate_change']);
    expect(decideApproval(state, bob)).toEqual({ outcome: 'recorded', approvals: [bob], approved: false });
  });

  it('asks each approver, the second one too, for the acknowledgements', () => {
    const state = pending({
      guardrails: [finding('price_move')],
      approvals: [approval('bob', ['price_move'])],
    });
    expect(decideApproval(state, approval('carol'))).toMatchObject({
      refused: 'guardrails_not_acknowledged',
      missing: ['price_move'],
    });
    expect(decideApproval(state, approval('carol', ['price_move']))).toMatchObject({
      outcome: 'recorded',
      approved: true,
    });
  });
});

describe('decideRejection', () => {
  it('rejects a pending request', () => {
    expect(decideRejection(pending())).toEqual({ outcome: 'rejected' });
    expect(decideRejection(pending({ approvals: [approval('bob')] }))).toEqual({ outcome: 'rejected' });
  });

  it('refuses any other status', () => {
    for (const status of NOT_PENDING) {
      expect(decideRejection(pending({ status }))).toEqual({
        refused: 'not_pending',
        message: `the change request is ${status}, not pending_approval`,
      });
    }
  });
});

describe('the four-eyes rule (properties)', () => {
  const identities = ['alice', 'bob', 'carol', 'dave'] as const;
  const attemptArb = fc.record({
    by: fc.constantFrom(...identities),
    acknowledged: fc.subarray([...GUARDRAIL_CODES]),
  });
  const findingsArb = fc.array(
    fc.constantFrom(...GUARDRAIL_CODES).map((code) => finding(code)),
    { maxLength: 3 },
  );

  /** Applies attempts as the use case does: a recorded approval that approves moves the request to `approved`. */
  const run = (author: string, guardrails: readonly GuardrailFinding[], attempts: readonly Approval[]) => {
    let state: ReviewState = { status: 'pending_approval', author, approvals: [], guardrails };
    const outcomes = attempts.map((attempt) => {
      const outcome = decideApproval(state, attempt);
      if ('outcome' in outcome && outcome.outcome === 'recorded') {
        state = {
          ...state,
          approvals: outcome.approvals,
          status: outcome.approved ? 'approved' : state.status,
        };
      }
      return { attempt, outcome, state };
    });
    return { outcomes, state };
  };

  it('never lets the author approve, and approved means two distinct identities other than the author', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...identities),
        findingsArb,
        fc.array(
          attemptArb.map(({ by, acknowledged }) => approval(by, acknowledged)),
          { maxLength: 8 },
        ),
        (author, guardrails, attempts) => {
          const { outcomes, state } = run(author, guardrails, attempts);
          for (const { attempt, outcome } of outcomes) {
            if (attempt.by === author) expect(outcome).toMatchObject({ refused: 'author_cannot_approve' });
            if ('outcome' in outcome) {
              const approvers = new Set(outcome.approvals.map((entry) => entry.by));
              expect(approvers.has(author)).toBe(false);
              expect(outcome.approved).toBe(approvers.size >= REQUIRED_APPROVALS);
              if (outcome.approved) expect(approvers.size).toBeGreaterThanOrEqual(2);
            }
          }
          const approvers = state.approvals.map((entry) => entry.by);
          expect(new Set(approvers).size).toBe(approvers.length);
          expect(approvers).not.toContain(author);
          expect(state.approvals.length).toBeLessThanOrEqual(REQUIRED_APPROVALS);
          expect(state.status === 'approved').toBe(state.approvals.length === REQUIRED_APPROVALS);
          const needed = new Set(guardrails.map((entry) => entry.code));
          for (const entry of state.approvals) {
            for (const code of needed) expect(entry.acknowledged).toContain(code);
          }
        },
      ),
    );
  });

  it('approves over any stored approvals only with two distinct non-author approvers', () => {
    const nonAuthor = fc.constantFrom('bob', 'carol', 'dave');
    fc.assert(
      fc.property(
        fc.array(nonAuthor, { maxLength: 4 }),
        fc.constantFrom(...identities),
        fc.constantFrom<ChangeRequestStatus>('pending_approval', ...NOT_PENDING),
        (stored, by, status) => {
          const outcome = decideApproval(
            pending({ status, approvals: stored.map((name) => approval(name)) }),
            approval(by),
          );
          if (by === 'alice') expect(outcome).toMatchObject({ refused: 'author_cannot_approve' });
          if ('outcome' in outcome && outcome.approved) {
            const approvers = new Set(outcome.approvals.map((entry) => entry.by));
            approvers.delete('alice');
            expect(approvers.size).toBeGreaterThanOrEqual(REQUIRED_APPROVALS);
          }
        },
      ),
    );
  });
});
