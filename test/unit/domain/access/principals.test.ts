import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AwsOperatorRole,
  effectiveRoles,
  normaliseAwsOperator,
  OPERATOR_ROLES,
  parseRoleArn,
} from '../../../../functions/domain/access/principals';
import { decideApproval } from '../../../../functions/domain/change-control/approvals';

const ACCOUNT = '123456789012';
const CONFIGURED: readonly AwsOperatorRole[] = [
  { account: ACCOUNT, roleName: 'PricingApprover', roles: ['approver', 'auditor'], human: true },
  { account: ACCOUNT, roleName: 'PricingAuthor', roles: ['author'], human: true },
  // A machine role configured with approver: it still never approves.
  { account: ACCOUNT, roleName: 'FxAutomation', roles: ['author', 'approver'], human: false },
];
const session = (role: string, name: string, account = ACCOUNT) =>
  `arn:aws:sts::${account}:assumed-role/${role}/${name}`;

describe('normaliseAwsOperator (C27)', () => {
  it('makes two sessions of one machine role one principal, whatever their names, without approver', () => {
    const a = normaliseAwsOperator(session('FxAutomation', 'a'), CONFIGURED);
    const b = normaliseAwsOperator(session('FxAutomation', 'b'), CONFIGURED);
    expect(a).toEqual(b);
    expect(a).toEqual({
      kind: 'operator',
      identity: `arn:aws:iam::${ACCOUNT}:role/FxAutomation`,
      roles: ['author'],
      machine: true,
    });
  });

  it('names a session of a human role by its session name (the source identity the API admits)', () => {
    expect(normaliseAwsOperator(session('PricingApprover', 'alice@example.com'), CONFIGURED)).toEqual({
      kind: 'operator',
      identity: 'alice@example.com',
      roles: ['approver', 'auditor'],
      machine: false,
    });
  });

  it('sees one person through any of the human roles: the author cannot approve as the approver role', () => {
    const author = normaliseAwsOperator(session('PricingAuthor', 'alice'), CONFIGURED);
    const approver = normaliseAwsOperator(session('PricingApprover', 'alice'), CONFIGURED);
    expect(author.identity).toBe(approver.identity);
    const outcome = decideApproval(
      { status: 'pending_approval', author: author.identity, approvals: [], guardrails: [] },
      { by: approver.identity, at: '2026-11-25T00:00:00Z', acknowledged: [] },
    );
    expect(outcome).toMatchObject({ refused: 'author_cannot_approve' });
  });

  it('gives no role to unconfigured roles, other accounts and IAM users (a machine without roles)', () => {
    for (const arn of [
      session('SomeOtherRole', 'alice'),
      session('PricingApprover', 'alice', '999999999999'),
      `arn:aws:iam::${ACCOUNT}:user/alice`,
      'not an arn',
    ]) {
      const principal = normaliseAwsOperator(arn, CONFIGURED);
      expect(principal.roles, arn).toEqual([]);
      expect(principal.machine, arn).toBe(true);
    }
    expect(normaliseAwsOperator(session('SomeOtherRole', 'x'), CONFIGURED).identity).toBe(
      `arn:aws:iam::${ACCOUNT}:role/SomeOtherRole`,
    );
  });

  it('never lets a machine principal approve, for any configured roles (property)', () => {
    fc.assert(
      fc.property(
        fc.subarray([...OPERATOR_ROLES]),
        fc.stringMatching(/^[\w+=,.@-]{2,32}$/),
        (roles, name) => {
          const principal = normaliseAwsOperator(session('Bot', name), [
            { account: ACCOUNT, roleName: 'Bot', roles, human: false },
          ]);
          expect(principal.roles).not.toContain('approver');
          expect(principal.identity).toBe(`arn:aws:iam::${ACCOUNT}:role/Bot`);
        },
      ),
    );
  });

  it('reads role ARNs with and without a path', () => {
    expect(parseRoleArn(`arn:aws:iam::${ACCOUNT}:role/ops/teams/PricingApprover`)).toEqual({
      account: ACCOUNT,
      roleName: 'PricingApprover',
    });
    expect(parseRoleArn(`arn:aws:iam::${ACCOUNT}:role/PricingApprover`)?.roleName).toBe('PricingApprover');
    expect(parseRoleArn(`arn:aws:iam::${ACCOUNT}:user/alice`)).toBeUndefined();
    expect(effectiveRoles(['approver', 'author', 'author'], true)).toEqual(['author']);
  });
});

describe('decideApproval: machine principals', () => {
  it('refuses a machine approval before anything else', () => {
    expect(
      decideApproval(
        { status: 'pending_approval', author: 'alice', approvals: [], guardrails: [] },
        { by: 'system:fx-ingestion', at: '2026-11-25T00:00:00Z', acknowledged: [], machine: true },
      ),
    ).toMatchObject({ refused: 'machine_cannot_approve' });
  });
});
