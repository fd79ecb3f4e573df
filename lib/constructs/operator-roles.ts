import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { OPERATOR_ROLES, type OperatorRole, parseRoleArn } from '../../functions/domain/access/principals';
import type { OperatorPrincipal } from './operator-access-policy';

/** A machine principal (CI, another service) and the operator roles it holds: never `approver` (C27). */
export interface MachineOperatorRole {
  readonly roleArn: string;
  readonly roles: readonly OperatorRole[];
}

export interface OperatorRolesProps {
  /**
   * The account whose principals may assume the human roles (they must also set a source identity).
   * @default this stack's account
   */
  readonly trustAccount?: string;
  /** Roles of machines acting as operators, added to `OPERATOR_ROLES` as non-human. @default none */
  readonly machineRoles?: readonly MachineOperatorRole[];
}

/**
 * A principal whose trust statement allows `sts:AssumeRole` and `sts:SetSourceIdentity` only with a source
 * identity set (`Null sts:SourceIdentity = false`): every session of the role carries the person the identity
 * provider named, which the API's resource policy then requires as the session name.
 */
class SourceIdentityPrincipal extends iam.PrincipalBase {
  constructor(private readonly wrapped: iam.IPrincipal) {
    super();
  }

  get policyFragment(): iam.PrincipalPolicyFragment {
    return this.wrapped.policyFragment;
  }

  override addToAssumeRolePolicy(document: iam.PolicyDocument): void {
    document.addStatements(
      new iam.PolicyStatement({
        actions: ['sts:AssumeRole', 'sts:SetSourceIdentity'],
        principals: [this.wrapped],
        conditions: { Null: { 'sts:SourceIdentity': 'false' } },
      }),
    );
  }

  override toString(): string {
    return `SourceIdentityPrincipal(${this.wrapped.toString()})`;
  }

  /** Not comparable: each role has its own principal, never merged with another statement's. */
  dedupeString(): string | undefined {
    return undefined;
  }
}

/** Refuses a machine role list that is not one: bad ARNs, unknown roles, `approver`, no role, a repeat. */
export const validateMachineRoles = (machineRoles: readonly MachineOperatorRole[]): void => {
  const seen = new Set<string>();
  for (const machine of machineRoles) {
    if (!parseRoleArn(machine.roleArn))
      throw new Error(`machineOperatorRoleArns: ${machine.roleArn} is not an IAM role ARN`);
    if (seen.has(machine.roleArn))
      throw new Error(`machineOperatorRoleArns: ${machine.roleArn} is listed twice`);
    seen.add(machine.roleArn);
    if (machine.roles.length === 0)
      throw new Error(`machineOperatorRoleArns: ${machine.roleArn} holds no operator role`);
    const unknown = machine.roles.filter((role) => !(OPERATOR_ROLES as readonly string[]).includes(role));
    if (unknown.length > 0)
      throw new Error(`machineOperatorRoleArns: ${machine.roleArn}: unknown roles ${unknown.join(', ')}`);
    if (machine.roles.includes('approver'))
      throw new Error(
        `machineOperatorRoleArns: ${machine.roleArn}: a machine principal never approves (C27)`,
      );
  }
};

/**
 * The operator roles (C27) in AWS: one IAM role per operator role (`author`, `approver`, `endpoint_admin`,
 * `auditor`) for people, assumable from the trusted account only with a source identity, with no policy of its
 * own (the API's resource policy is what lets each one reach its routes); plus the machine roles given by
 * configuration. `environmentValue` is what the functions behind admin routes read as `OPERATOR_ROLES`.
 */
export class OperatorRoles extends Construct {
  readonly human: Readonly<Record<OperatorRole, iam.Role>>;
  readonly machine: readonly MachineOperatorRole[];

  constructor(scope: Construct, id: string, props: OperatorRolesProps = {}) {
    super(scope, id);
    const machine = props.machineRoles ?? [];
    validateMachineRoles(machine);
    this.machine = machine;
    const trustAccount = props.trustAccount ?? Stack.of(this).account;
    this.human = Object.fromEntries(
      OPERATOR_ROLES.map((role) => {
        return [
          role,
          new iam.Role(this, role, {
            assumedBy: new SourceIdentityPrincipal(new iam.AccountPrincipal(trustAccount)),
            description:
              `Operator role ${role} (C27) for people: assumed with a source identity, which must also be the ` +
              'session name; grants nothing but what the API resource policy allows this role.',
            maxSessionDuration: Duration.hours(1),
          }),
        ];
      }),
    ) as Record<OperatorRole, iam.Role>;
  }

  /** The human roles and the machine roles as the API's resource policy sees them. */
  principals(): { readonly human: OperatorPrincipal[]; readonly machine: OperatorPrincipal[] } {
    return {
      human: OPERATOR_ROLES.map((role) => ({ roleArn: this.human[role].roleArn, roles: [role] })),
      machine: this.machine.map((entry) => ({ roleArn: entry.roleArn, roles: [...entry.roles] })),
    };
  }

  /**
   * `OPERATOR_ROLES` (functions/composition/operators.ts): `[{ "role_arn", "roles", "human" }, …]`, the human
   * roles first, then the machine roles.
   */
  environmentValue(): string {
    const { human, machine } = this.principals();
    return Stack.of(this).toJsonString([
      ...human.map((entry) => ({ role_arn: entry.roleArn, roles: entry.roles, human: true })),
      ...machine.map((entry) => ({ role_arn: entry.roleArn, roles: entry.roles, human: false })),
    ]);
  }
}
