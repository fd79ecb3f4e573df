/**
 * Operator roles in AWS (C27): the four human roles and their trust (a source identity is required), the API's
 * resource policy derived from the route table (each admin route reachable only by the roles it names, human
 * sessions only when named by their source identity), machine roles from context, and `OPERATOR_ROLES` on the
 * functions behind admin routes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { operatorRolesFromEnv } from '../../functions/composition/operators';
import { FUNCTIONS, type FunctionId, ROUTES, type RouteDefinition } from '../../functions/definitions';
import {
  normaliseAwsOperator,
  OPERATOR_ROLES,
  type OperatorRole,
} from '../../functions/domain/access/principals';
import { routeGlobs, sourceIdentityDenies } from '../../lib/constructs/operator-access-policy';
import { addPricingStacks, type PricingStacks } from '../../lib/pricing-app';
import { type CfnResource, logicalIdOf, resourceIn, synthesizedApp } from './fixture';

const app = synthesizedApp();
const service = () => app.fixture().stacks.service;

interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Principal: '*' | { readonly AWS: unknown };
  readonly Action: string;
  readonly Resource: string | string[];
  readonly Condition?: Record<string, Record<string, unknown>>;
}

const outdirs: string[] = [];
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});
/** Another app, with context (`operatorTrustAccount`, `machineOperatorRoleArns`…). */
const appWith = (context: Record<string, unknown>): { stacks: PricingStacks; template: Template } => {
  const outdir = mkdtempSync(join(tmpdir(), 'pricing-operators-'));
  outdirs.push(outdir);
  const other = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stacks = addPricingStacks(other, { stage: 'test', nag: false });
  return { stacks, template: Template.fromStack(stacks.service) };
};

/** Role ARNs in the template as labels: `role:author`…; anything else as its JSON. */
const roleLabels = (stacks: PricingStacks): Map<string, string> =>
  new Map(
    OPERATOR_ROLES.map((role) => [
      JSON.stringify({ 'Fn::GetAtt': [logicalIdOf(stacks.service.operatorRoles.human[role]), 'Arn'] }),
      `role:${role}`,
    ]),
  );
const labelOf = (labels: Map<string, string>, value: unknown): string =>
  typeof value === 'string' ? value : (labels.get(JSON.stringify(value)) ?? JSON.stringify(value));

const policyOf = (stacks: PricingStacks, template: Template): PolicyStatement[] =>
  (
    resourceIn(template, stacks.service.api.api).Properties.Policy as {
      Statement: PolicyStatement[];
    }
  ).Statement;

/** IAM glob match (`*`: any characters, `/` included). */
const matches = (glob: string, text: string): boolean =>
  new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(text);

/** The execute-api resource of a request to a route (path parameters filled in), as the policy names it. */
const requestOf = (route: RouteDefinition): string =>
  `execute-api:/v1/${route.method}${route.path.replace(/\{[^}]+\}/g, 'p_1')}`;

interface Caller {
  /** The principal ARN (`aws:PrincipalArn`), as its label; undefined for an anonymous caller. */
  readonly principal?: string;
  /** Whether the session carries a source identity and is named by it (human roles only). */
  readonly session?: 'named-by-source-identity' | 'other-name' | 'no-source-identity';
}

/**
 * API Gateway's verdict from the resource policy alone (the same-account table: an explicit deny wins, then an
 * explicit allow; IAM identity policies aside), for one caller and one route.
 */
const verdict = (
  statements: readonly PolicyStatement[],
  labels: Map<string, string>,
  caller: Caller,
  route: RouteDefinition,
): 'allow' | 'deny' | 'implicit-deny' => {
  const request = requestOf(route);
  const applies = (statement: PolicyStatement): boolean => {
    if (![statement.Resource].flat().some((resource) => matches(resource, request))) return false;
    if (statement.Principal !== '*') {
      const principals = [statement.Principal.AWS].flat().map((value) => labelOf(labels, value));
      if (!caller.principal || !principals.includes(caller.principal)) return false;
    }
    for (const [operator, entries] of Object.entries(statement.Condition ?? {})) {
      for (const [key, value] of Object.entries(entries)) {
        const values = [value].flat().map((item) => labelOf(labels, item));
        if (key === 'aws:PrincipalArn') {
          const listed = caller.principal !== undefined && values.includes(caller.principal);
          if (operator === 'ArnEquals' && !listed) return false;
          if (operator === 'ArnNotEquals' && listed) return false;
        } else if (key === 'aws:SourceIdentity' && operator === 'Null') {
          const absent = caller.session === 'no-source-identity';
          if (String(absent) !== value) return false;
        } else if (key === 'aws:userid' && operator === 'StringNotLike') {
          if (caller.session !== 'other-name') return false;
        } else {
          throw new Error(`the test does not evaluate ${operator} ${key}`);
        }
      }
    }
    return true;
  };
  const applying = statements.filter(applies);
  if (applying.some((statement) => statement.Effect === 'Deny')) return 'deny';
  if (applying.some((statement) => statement.Effect === 'Allow')) return 'allow';
  return 'implicit-deny';
};

const adminRoutes = ROUTES.filter((route) => route.auth === 'admin');
const otherRoutes = ROUTES.filter((route) => route.auth !== 'admin');
const rolesOfRoute = (route: RouteDefinition): readonly OperatorRole[] =>
  route.roles && route.roles.length > 0 ? route.roles : OPERATOR_ROLES;
const named = (role: OperatorRole): Caller => ({
  principal: `role:${role}`,
  session: 'named-by-source-identity',
});

describe('human operator roles', () => {
  it('are one role per operator role, with no policy of their own', () => {
    const roles = service().operatorRoles.human;
    expect(Object.keys(roles).sort()).toEqual([...OPERATOR_ROLES].sort());
    for (const role of OPERATOR_ROLES) {
      const properties = resourceIn(app.service(), roles[role]).Properties;
      expect({ inline: properties.Policies, managed: properties.ManagedPolicyArns }).toEqual({
        inline: undefined,
        managed: undefined,
      });
      const attached = Object.values(app.service().toJSON().Resources as Record<string, CfnResource>).filter(
        (resource) =>
          resource.Type === 'AWS::IAM::Policy' &&
          JSON.stringify(resource.Properties.Roles).includes(`"${logicalIdOf(roles[role])}"`),
      );
      expect(attached, role).toEqual([]);
    }
  });

  it.each([...OPERATOR_ROLES])(
    '%s is assumable from the stack account only with a source identity (AssumeRole + SetSourceIdentity)',
    (role) => {
      expect(resourceIn(app.service(), service().operatorRoles.human[role]).Properties).toMatchObject({
        MaxSessionDuration: 3600,
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Action: ['sts:AssumeRole', 'sts:SetSourceIdentity'],
              Principal: {
                AWS: {
                  'Fn::Join': [
                    '',
                    ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root'],
                  ],
                },
              },
              Condition: { Null: { 'sts:SourceIdentity': 'false' } },
            },
          ],
        },
      });
    },
  );

  it('trusts the account given by context operatorTrustAccount instead', () => {
    const { stacks, template } = appWith({ operatorTrustAccount: '210987654321' });
    const trust = resourceIn(template, stacks.service.operatorRoles.human.approver).Properties
      .AssumeRolePolicyDocument as { Statement: { Principal: unknown; Condition: unknown }[] };
    expect(trust.Statement).toEqual([
      expect.objectContaining({
        Principal: {
          AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::210987654321:root']] },
        },
        Condition: { Null: { 'sts:SourceIdentity': 'false' } },
      }),
    ]);
  });

  it('refuses an operatorTrustAccount that is not an account id', () => {
    expect(() => appWith({ operatorTrustAccount: 'arn:aws:iam::210987654321:root' })).toThrow(
      /operatorTrustAccount must be a 12-digit AWS account id/,
    );
  });

  it('publishes each role ARN as a stack output', () => {
    const outputs = app.service().toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(
      Object.fromEntries(
        Object.entries(outputs)
          .filter(([name]) => name.startsWith('OperatorRole'))
          .map(([name, output]) => [name, output.Value]),
      ),
    ).toEqual({
      OperatorRoleAuthorArn: { 'Fn::GetAtt': [logicalIdOf(service().operatorRoles.human.author), 'Arn'] },
      OperatorRoleApproverArn: { 'Fn::GetAtt': [logicalIdOf(service().operatorRoles.human.approver), 'Arn'] },
      OperatorRoleEndpointAdminArn: {
        'Fn::GetAtt': [logicalIdOf(service().operatorRoles.human.endpoint_admin), 'Arn'],
      },
      OperatorRoleAuditorArn: { 'Fn::GetAtt': [logicalIdOf(service().operatorRoles.human.auditor), 'Arn'] },
    });
  });
});

describe('the API resource policy, derived from the route table', () => {
  const statements = () => policyOf(app.fixture().stacks, app.service());
  const labels = () => roleLabels(app.fixture().stacks);

  it.each(adminRoutes.map((route) => ({ ...route, allowed: [...rolesOfRoute(route)].sort().join(', ') })))(
    '$method $path: only $allowed',
    (route) => {
      const allowed = OPERATOR_ROLES.filter(
        (role) => verdict(statements(), labels(), named(role), route) === 'allow',
      );
      expect([...allowed].sort()).toEqual([...rolesOfRoute(route)].sort());
    },
  );

  it('approving and rejecting: the approver role only; every read route: every role', () => {
    const approve = ROUTES.find((route) => route.operation === 'approveChangeRequest') as RouteDefinition;
    const reads = adminRoutes.filter((route) => route.method === 'GET');
    const allowed = (route: RouteDefinition) =>
      OPERATOR_ROLES.filter((role) => verdict(statements(), labels(), named(role), route) === 'allow');
    expect({
      approve: allowed(approve),
      reads: [...new Set(reads.map((route) => allowed(route).join(',')))],
    }).toEqual({ approve: ['approver'], reads: [OPERATOR_ROLES.join(',')] });
  });

  it.each(adminRoutes.map((route) => ({ ...route })))(
    '$method $path: explicitly denied to any other principal (an identity policy cannot open it)',
    (route) => {
      expect(
        verdict(statements(), labels(), { principal: 'arn:aws:iam::123456789012:role/Admin' }, route),
      ).toBe('deny');
    },
  );

  it.each(adminRoutes.map((route) => ({ ...route, role: rolesOfRoute(route)[0] as OperatorRole })))(
    '$method $path: denied to a $role session not named by its source identity, or without one',
    (route) => {
      expect({
        named: verdict(statements(), labels(), named(route.role), route),
        otherName: verdict(
          statements(),
          labels(),
          { principal: `role:${route.role}`, session: 'other-name' },
          route,
        ),
        none: verdict(
          statements(),
          labels(),
          { principal: `role:${route.role}`, session: 'no-source-identity' },
          route,
        ),
      }).toEqual({ named: 'allow', otherName: 'deny', none: 'deny' });
    },
  );

  it.each(otherRoutes.map((route) => ({ ...route })))(
    '$method $path ($auth): open to anyone at the resource policy (the authorizer or function decides)',
    (route) => {
      expect(verdict(statements(), labels(), {}, route)).toBe('allow');
    },
  );

  it('keeps every admin route behind its own globs: no glob reaches a route of another role set', () => {
    const groups = routeGlobs(ROUTES, (route) =>
      route.auth === 'admin' ? [...rolesOfRoute(route)].sort().join(',') : undefined,
    );
    for (const [group, globs] of groups) {
      for (const route of ROUTES) {
        const reached = globs.some((glob) => matches(`execute-api:/v1/${glob}`, requestOf(route)));
        const inGroup = route.auth === 'admin' && [...rolesOfRoute(route)].sort().join(',') === group;
        expect(reached, `${group} ${route.method} ${route.path}`).toBe(inGroup);
      }
    }
  });

  it('stays under API Gateway 8 192 characters with the longest ARNs (one machine role)', () => {
    const { stacks, template } = appWith({
      machineOperatorRoleArns: JSON.stringify([
        { role_arn: `arn:aws-us-gov:iam::123456789012:role/${'m'.repeat(64)}`, roles: ['author', 'auditor'] },
      ]),
    });
    const longestRole = `arn:aws-us-gov:iam::123456789012:role/${'r'.repeat(64)}`;
    const text = JSON.stringify(resourceIn(template, stacks.service.api.api).Properties.Policy)
      .replace(/\{"Fn::GetAtt":\["[^"]+","Arn"\]\}/g, JSON.stringify(longestRole))
      .replaceAll('execute-api:/', 'arn:aws-us-gov:execute-api:ap-southeast-2:123456789012:abcdefghij/');
    expect(text.length).toBeLessThan(8192);
  });
});

describe('the source-identity denies', () => {
  it('have this shape: human roles by aws:PrincipalArn, no source identity, or a session name other than it', () => {
    const denies = sourceIdentityDenies(
      ['arn:aws:iam::123456789012:role/author', 'arn:aws:iam::123456789012:role/approver'],
      ['execute-api:/v1/*/admin/*'],
    ).map((statement) => Stack.of(new Stack()).resolve(statement.toStatementJson()));
    expect(denies).toEqual([
      {
        Sid: 'DenyHumanSessionsWithoutSourceIdentity',
        Effect: 'Deny',
        Principal: '*',
        Action: 'execute-api:Invoke',
        Resource: 'execute-api:/v1/*/admin/*',
        Condition: {
          ArnEquals: {
            'aws:PrincipalArn': [
              'arn:aws:iam::123456789012:role/author',
              'arn:aws:iam::123456789012:role/approver',
            ],
          },
          Null: { 'aws:SourceIdentity': 'true' },
        },
      },
      {
        Sid: 'DenyHumanSessionsNotNamedBySourceIdentity',
        Effect: 'Deny',
        Principal: '*',
        Action: 'execute-api:Invoke',
        Resource: 'execute-api:/v1/*/admin/*',
        Condition: {
          ArnEquals: {
            'aws:PrincipalArn': [
              'arn:aws:iam::123456789012:role/author',
              'arn:aws:iam::123456789012:role/approver',
            ],
          },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable
          StringNotLike: { 'aws:userid': '*:${aws:SourceIdentity}' },
        },
      },
    ]);
  });

  it('cover every admin route, for the four human roles and no machine role', () => {
    const { stacks, template } = appWith({
      machineOperatorRoleArns: [{ role_arn: 'arn:aws:iam::123456789012:role/ci', roles: ['author'] }],
    });
    const labels = roleLabels(stacks);
    const denies = policyOf(stacks, template).filter((statement) =>
      statement.Sid?.startsWith('DenyHumanSessions'),
    );
    expect(denies).toHaveLength(2);
    for (const deny of denies) {
      expect(
        [deny.Condition?.ArnEquals?.['aws:PrincipalArn']].flat().map((value) => labelOf(labels, value)),
      ).toEqual(OPERATOR_ROLES.map((role) => `role:${role}`));
      for (const route of adminRoutes)
        expect(
          [deny.Resource].flat().some((resource) => matches(resource, requestOf(route))),
          `${route.method} ${route.path}`,
        ).toBe(true);
    }
  });
});

describe('machine operator roles (context machineOperatorRoleArns)', () => {
  const ci = 'arn:aws:iam::123456789012:role/ci-publisher';

  it('are allowed on the routes of their roles, never an approval, and are not asked for a source identity', () => {
    const { stacks, template } = appWith({ machineOperatorRoleArns: [{ role_arn: ci, roles: ['author'] }] });
    const statements = policyOf(stacks, template);
    const labels = roleLabels(stacks);
    const allowed = adminRoutes
      .filter((route) => verdict(statements, labels, { principal: ci }, route) === 'allow')
      .map((route) => route.operation);
    expect(allowed.sort()).toEqual(
      adminRoutes
        .filter((route) => rolesOfRoute(route).includes('author'))
        .map((route) => route.operation)
        .sort(),
    );
    expect(allowed).not.toContain('approveChangeRequest');
  });

  it('refuse a machine role holding approver (C27), at synth', () => {
    expect(() =>
      appWith({ machineOperatorRoleArns: [{ role_arn: ci, roles: ['author', 'approver'] }] }),
    ).toThrow(/a machine principal never approves/);
  });

  it('refuse an entry that is not a role ARN with known roles', () => {
    expect(() =>
      appWith({
        machineOperatorRoleArns: [{ role_arn: 'arn:aws:iam::123456789012:user/ci', roles: ['author'] }],
      }),
    ).toThrow(/is not an IAM role ARN/);
    expect(() => appWith({ machineOperatorRoleArns: [{ role_arn: ci, roles: ['owner'] }] })).toThrow(
      /unknown roles owner/,
    );
    expect(() => appWith({ machineOperatorRoleArns: 'not json' })).toThrow(/JSON list/);
  });
});

describe('OPERATOR_ROLES', () => {
  const variablesOf = (stacks: PricingStacks, template: Template, functionId: FunctionId) =>
    (
      resourceIn(template, stacks.service.functions[functionId].function).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
  /** The variable's value with the role ARNs (tokens) replaced by ARNs in account 123456789012. */
  const operatorRolesValue = (
    stacks: PricingStacks,
    template: Template,
    functionId: FunctionId,
  ): string | undefined => {
    const value = variablesOf(stacks, template, functionId).OPERATOR_ROLES;
    if (value === undefined) return undefined;
    const join = value as { 'Fn::Join': [string, unknown[]] };
    return join['Fn::Join'][1]
      .map((part) => {
        if (typeof part === 'string') return part;
        const label = roleLabels(stacks).get(JSON.stringify(part));
        if (!label) throw new Error(`unexpected token ${JSON.stringify(part)}`);
        return `arn:aws:iam::123456789012:role/pricing-test-${label.slice('role:'.length)}`;
      })
      .join('');
  };

  it('is set on exactly the functions behind admin routes (api, admin, catalog, checkout, webhooks)', () => {
    const behindAdmin = [...new Set(adminRoutes.map((route) => route.function))].sort();
    const set = (Object.keys(FUNCTIONS) as FunctionId[]).filter(
      (functionId) =>
        variablesOf(app.fixture().stacks, app.service(), functionId).OPERATOR_ROLES !== undefined,
    );
    expect({ set: set.sort(), behindAdmin }).toEqual({
      set: ['admin', 'api', 'catalog', 'checkout', 'webhooks'],
      behindAdmin: set,
    });
  });

  it('lists the four human roles, each with its one operator role', () => {
    expect(JSON.parse(operatorRolesValue(app.fixture().stacks, app.service(), 'admin') ?? '')).toEqual(
      OPERATOR_ROLES.map((role) => ({
        role_arn: `arn:aws:iam::123456789012:role/pricing-test-${role}`,
        roles: [role],
        human: true,
      })),
    );
  });

  it('adds the machine roles as non-human, and the functions read it as the roles that exist', () => {
    const { stacks, template } = appWith({
      machineOperatorRoleArns: [
        { role_arn: 'arn:aws:iam::123456789012:role/ci-publisher', roles: ['author', 'auditor'] },
      ],
    });
    const value = operatorRolesValue(stacks, template, 'webhooks') ?? '';
    expect(JSON.parse(value).at(-1)).toEqual({
      role_arn: 'arn:aws:iam::123456789012:role/ci-publisher',
      roles: ['author', 'auditor'],
      human: false,
    });
    const configured = operatorRolesFromEnv({ OPERATOR_ROLES: value });
    expect({
      person: normaliseAwsOperator(
        'arn:aws:sts::123456789012:assumed-role/pricing-test-approver/alice@example.com',
        configured,
      ),
      machine: normaliseAwsOperator('arn:aws:sts::123456789012:assumed-role/ci-publisher/run-42', configured),
    }).toEqual({
      person: { kind: 'operator', identity: 'alice@example.com', roles: ['approver'], machine: false },
      machine: {
        kind: 'operator',
        identity: 'arn:aws:iam::123456789012:role/ci-publisher',
        roles: ['author', 'auditor'],
        machine: true,
      },
    });
  });
});
