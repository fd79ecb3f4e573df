/**
 * Who may call what (C26, C27): the scopes of caller keys, the roles of operators, and how an AWS IAM principal
 * becomes the identity four-eyes counts. Pure: no SDK, no environment.
 */

/** What a caller key (`x-api-key`) may do; each key holds one or more, for one tenant. */
export const CALLER_SCOPES = [
  'prices:read',
  'quotes:write',
  'receipts:read',
  'refunds:write',
  'chargebacks:write',
] as const;
export type CallerScope = (typeof CALLER_SCOPES)[number];

/** What an operator may do; machine principals may hold any role but `approver`. */
export const OPERATOR_ROLES = ['author', 'approver', 'endpoint_admin', 'auditor'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** A storefront's default key: everything but chargebacks, which only a payment provider's key records. */
export const STOREFRONT_SCOPES: readonly CallerScope[] = [
  'prices:read',
  'quotes:write',
  'receipts:read',
  'refunds:write',
];

/**
 * A caller key resolved: the tenant it was issued to, its scopes, when limited its channels, and the customer
 * groups (C29) its requests may name.
 */
export interface CallerPrincipal {
  readonly kind: 'caller';
  readonly keyId: string;
  readonly tenant: string;
  readonly scopes: readonly CallerScope[];
  /** Empty: every channel of the tenant. */
  readonly channels: readonly string[];
  /** The customer groups a request may name for its buyer; empty: none. */
  readonly customerGroups: readonly string[];
}

/** An operator: `identity` is what four-eyes counts (a human, or a machine that never approves). */
export interface OperatorPrincipal {
  readonly kind: 'operator';
  readonly identity: string;
  readonly roles: readonly OperatorRole[];
  readonly machine: boolean;
}

export type Principal = CallerPrincipal | OperatorPrincipal;

export const isCallerScope = (value: string): value is CallerScope =>
  (CALLER_SCOPES as readonly string[]).includes(value);

export const isOperatorRole = (value: string): value is OperatorRole =>
  (OPERATOR_ROLES as readonly string[]).includes(value);

/** A machine principal never holds `approver`, whatever its configuration says. */
export const effectiveRoles = (roles: readonly OperatorRole[], machine: boolean): OperatorRole[] =>
  [...new Set(roles)].filter((role) => !(machine && role === 'approver'));

/** What of `named` is not in `held`, in the order named, once each. */
export const notHeld = <T extends string>(held: readonly T[], named: readonly T[]): T[] =>
  [...new Set(named)].filter((item) => !held.includes(item));

/** Any of `wanted` (an empty list asks for nothing). */
export const holdsAny = <T extends string>(held: readonly T[], wanted: readonly T[]): boolean =>
  wanted.length === 0 || wanted.some((item) => held.includes(item));

/**
 * How the service's IAM roles for operators are described to the functions (`OPERATOR_ROLES` in AWS):
 * by role name within the account, with the operator roles each grants and whether its sessions are people.
 * A `human` role's trust policy requires `sts:SourceIdentity` and the API's resource policy admits only
 * sessions whose name is that source identity, so the session name of such a role is a person the identity
 * provider named — not a name the caller chose.
 */
export interface AwsOperatorRole {
  readonly account: string;
  readonly roleName: string;
  readonly roles: readonly OperatorRole[];
  readonly human: boolean;
}

const ASSUMED_ROLE = /^arn:aws[a-z-]*:sts::(\d{12}):assumed-role\/([\w+=,.@-]+)\/([\w+=,.@-]+)$/;
const IAM_ROLE = /^arn:aws[a-z-]*:iam::(\d{12}):role\/(?:[\w+=,.@/-]*\/)?([\w+=,.@-]+)$/;

/** The account and name of an IAM role ARN (with or without a path), or undefined. */
export const parseRoleArn = (arn: string): { account: string; roleName: string } | undefined => {
  const match = IAM_ROLE.exec(arn);
  return match?.[1] && match[2] ? { account: match[1], roleName: match[2] } : undefined;
};

/**
 * The operator behind an IAM principal (`requestContext.identity.userArn`). A session of a human role is the
 * person its session name names (the source identity, see AwsOperatorRole); a session of any other configured
 * role is that role, a machine, whatever its session name: two sessions of it are one principal, and it never
 * approves. IAM users and unconfigured roles have no roles at all.
 */
export const normaliseAwsOperator = (
  userArn: string,
  configured: readonly AwsOperatorRole[],
): OperatorPrincipal => {
  const session = ASSUMED_ROLE.exec(userArn);
  const role = session
    ? configured.find((entry) => entry.account === session[1] && entry.roleName === session[2])
    : undefined;
  if (!session || !role) {
    // Not one of the operator roles: the principal without its session name, with no roles.
    const identity = session ? `arn:aws:iam::${session[1]}:role/${session[2]}` : userArn;
    return { kind: 'operator', identity, roles: [], machine: true };
  }
  if (role.human) {
    return {
      kind: 'operator',
      identity: session[3] ?? '',
      roles: effectiveRoles(role.roles, false),
      machine: false,
    };
  }
  return {
    kind: 'operator',
    identity: `arn:aws:iam::${role.account}:role/${role.roleName}`,
    roles: effectiveRoles(role.roles, true),
    machine: true,
  };
};
