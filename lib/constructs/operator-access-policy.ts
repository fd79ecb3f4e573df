import * as iam from 'aws-cdk-lib/aws-iam';
import type { RouteDefinition } from '../../functions/definitions';
import { OPERATOR_ROLES, type OperatorRole } from '../../functions/domain/access/principals';

/**
 * The REST API's resource policy, derived from the route table (C7, C27): who may reach which route at API
 * Gateway, before any function runs. Pure: the same routes and principals give the same statements.
 *
 * - Routes that are not `admin` (open, caller-key and partner routes) are allowed to anyone: a resource policy
 *   denies whatever it does not allow, and those routes authenticate in the authorizer or the function.
 * - Each `admin` route is allowed to the operator roles holding one of its `roles`, and denied to every other
 *   principal (an IAM identity policy of the same account cannot open it either): one allow of every admin route
 *   to every operator role, and per set of roles an explicit deny to every principal holding none of them.
 * - Sessions of the human roles are denied every route unless their session name is their source
 *   identity (`aws:userid` = `<role id>:<session name>` ends with `:${aws:SourceIdentity}`) — the session name
 *   is then a person the identity provider named, which is what four-eyes counts — and when they carry no
 *   source identity at all.
 *
 * Resources use API Gateway's short form `execute-api:/<stage>/<METHOD>/<path>`, which it expands to the API's
 * ARN (the policy cannot name its own API). Routes sharing the same principals are covered by one glob per
 * path prefix when no other route under it differs, so the policy stays under API Gateway's 8 192 characters.
 */

/** An IAM role an operator acts through, with the operator roles it holds (C27). */
export interface OperatorPrincipal {
  readonly roleArn: string;
  readonly roles: readonly OperatorRole[];
}

export interface OperatorAccessPolicyProps {
  /** The route table (`ROUTES`). */
  readonly routes: readonly RouteDefinition[];
  /** The API's stage name (the second part of every execute-api resource). */
  readonly stageName: string;
  /** The roles people assume with a source identity (one per operator role). */
  readonly human: readonly OperatorPrincipal[];
  /** Machine roles: identified by the role, never approvers. */
  readonly machine: readonly OperatorPrincipal[];
}

const INVOKE = 'execute-api:Invoke';

const segmentsOf = (path: string): string[] => path.split('/').filter((segment) => segment.length > 0);
const isParameter = (segment: string): boolean => segment.startsWith('{') && segment.endsWith('}');

/** IAM glob match: `*` matches any run of characters, `/` included. */
const globMatches = (glob: string, text: string): boolean =>
  new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(text);

/**
 * Request paths a route answers, enough of them to test a glob against it: each path parameter (one segment)
 * as a placeholder and as every literal segment of the glob.
 */
const samplesOf = (route: RouteDefinition, glob: string): string[] => {
  // A segment ending in `*` after a prefix (`endpoints*`) matches any segment starting with it: a sample of that too.
  const values = [
    'p',
    ...segmentsOf(glob).filter((segment) => !segment.includes('*')),
    ...segmentsOf(glob)
      .filter((segment) => segment.length > 1 && segment.endsWith('*') && !segment.slice(0, -1).includes('*'))
      .map((segment) => `${segment.slice(0, -1)}x`),
  ];
  let samples = [''];
  for (const segment of segmentsOf(route.path)) {
    const options = isParameter(segment) ? values : [segment];
    samples = samples.flatMap((prefix) => options.map((option) => `${prefix}/${option}`));
  }
  return samples.map((sample) => `${route.method}${sample}`);
};

/** The roles a route asks for (an `admin` route naming none asks for any operator role). */
export const rolesOf = (route: RouteDefinition): readonly OperatorRole[] =>
  route.roles && route.roles.length > 0 ? route.roles : OPERATOR_ROLES;

/** One key per set of roles, independent of their order. */
const roleSetKey = (roles: readonly OperatorRole[]): string => [...new Set(roles)].sort().join(',');

/**
 * Globs `<METHOD>/<path>` covering every route of one group and no route of another. For each route, the first
 * of these under which every route is in the same group: a prefix of its path followed by a wildcard (the
 * shortest prefix first), then its whole path (path parameters as wildcards); each with any method, then with
 * the route's own method. `groupOf` answers undefined for routes that are in no group. A glob may also cover
 * requests that match no route: API Gateway refuses those before any policy.
 */
export const routeGlobs = (
  routes: readonly RouteDefinition[],
  groupOf: (route: RouteDefinition) => string | undefined,
): Map<string, string[]> => {
  const globs = new Map<string, string[]>();
  const isolates = (glob: string, group: string): boolean => {
    const method = glob.slice(0, glob.indexOf('/'));
    return routes.every(
      (other) =>
        (method !== '*' && other.method !== method) ||
        groupOf(other) === group ||
        !samplesOf(other, glob).some((sample) => globMatches(glob, sample)),
    );
  };
  for (const route of routes) {
    const group = groupOf(route);
    if (group === undefined) continue;
    const segments = segmentsOf(route.path).map((segment) => (isParameter(segment) ? '*' : segment));
    // From the second segment on, `<prefix>*` (the prefix itself and everything under it) before `<prefix>/*`:
    // one glob then covers a collection and its members (`webhooks/endpoints*`), where its parent holds routes
    // of another group.
    const prefixes = segments.slice(0, -1).flatMap((_, index) => {
      const prefix = segments.slice(0, index + 1).join('/');
      return index === 0 ? [`${prefix}/*`] : [`${prefix}*`, `${prefix}/*`];
    });
    const whole = segments.join('/');
    const candidates = [...prefixes, ...(whole.endsWith('*') ? [] : [`${whole}*`]), whole].flatMap((path) => [
      `*/${path}`,
      `${route.method}/${path}`,
    ]);
    const chosen = candidates.find((glob) => isolates(glob, group));
    if (!chosen) throw new Error(`no resource pattern isolates ${route.method} ${route.path}`);
    const list = globs.get(group) ?? [];
    if (!list.includes(chosen)) list.push(chosen);
    globs.set(group, list);
  }
  return globs;
};

const resourcesOf = (stageName: string, globs: readonly string[]): string[] =>
  globs.map((glob) => `execute-api:/${stageName}/${glob}`);

/** The principals holding any of `roles`: human roles, and machine roles (which never hold `approver`). */
const holdersOf = (props: OperatorAccessPolicyProps, roles: readonly OperatorRole[]): string[] =>
  [...props.human, ...props.machine]
    .filter((principal) => principal.roles.some((role) => roles.includes(role)))
    .map((principal) => principal.roleArn);

/** `approver,author` → `ApproverAuthor`: a statement id (letters and digits only). */
const sidOf = (prefix: string, key: string): string =>
  prefix +
  key
    .split(/[,_]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * The two denies on every `admin` route for sessions of the human operator roles: a session without a source
 * identity, and a session whose name is not its source identity (`aws:userid` is `<role id>:<session name>`).
 */
export const sourceIdentityDenies = (
  humanRoleArns: readonly string[],
  resources: readonly string[],
): iam.PolicyStatement[] => [
  new iam.PolicyStatement({
    sid: 'DenyHumanSessionsWithoutSourceIdentity',
    effect: iam.Effect.DENY,
    principals: [new iam.StarPrincipal()],
    actions: [INVOKE],
    resources: [...resources],
    conditions: {
      ArnEquals: { 'aws:PrincipalArn': [...humanRoleArns] },
      Null: { 'aws:SourceIdentity': 'true' },
    },
  }),
  new iam.PolicyStatement({
    sid: 'DenyHumanSessionsNotNamedBySourceIdentity',
    effect: iam.Effect.DENY,
    principals: [new iam.StarPrincipal()],
    actions: [INVOKE],
    resources: [...resources],
    conditions: {
      ArnEquals: { 'aws:PrincipalArn': [...humanRoleArns] },
      // An IAM policy variable, resolved by IAM at request time (not a template string).
      // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, not a JavaScript placeholder
      StringNotLike: { 'aws:userid': '*:${aws:SourceIdentity}' },
    },
  }),
];

/** The statements of the API's resource policy (see the module comment). */
export const operatorAccessStatements = (props: OperatorAccessPolicyProps): iam.PolicyStatement[] => {
  const isAdmin = (route: RouteDefinition) => route.auth === 'admin';
  const open = routeGlobs(props.routes, (route) => (isAdmin(route) ? undefined : 'open')).get('open') ?? [];
  const admin =
    routeGlobs(props.routes, (route) => (isAdmin(route) ? 'admin' : undefined)).get('admin') ?? [];
  const byRoles = routeGlobs(props.routes, (route) =>
    isAdmin(route) ? roleSetKey(rolesOf(route)) : undefined,
  );

  const statements: iam.PolicyStatement[] = [];
  if (open.length > 0)
    statements.push(
      new iam.PolicyStatement({
        sid: 'OpenRoutes',
        effect: iam.Effect.ALLOW,
        principals: [new iam.StarPrincipal()],
        actions: [INVOKE],
        resources: resourcesOf(props.stageName, open),
      }),
    );
  // One allow of every admin route to every operator principal; what each may reach is cut down by the
  // explicit deny of each role set below (a deny wins), so the effect is per route as before, in fewer characters
  // than one allow per role set repeating its principals and globs.
  const operators = holdersOf(props, OPERATOR_ROLES);
  if (admin.length > 0 && operators.length > 0)
    statements.push(
      new iam.PolicyStatement({
        sid: 'AllowOperators',
        effect: iam.Effect.ALLOW,
        principals: operators.map((arn) => new iam.ArnPrincipal(arn)),
        actions: [INVOKE],
        resources: resourcesOf(props.stageName, admin),
      }),
    );
  for (const [key, globs] of byRoles) {
    const holders = holdersOf(props, key.split(',') as OperatorRole[]);
    if (holders.length === 0) throw new Error(`no operator role holds any of ${key}`);
    const resources = resourcesOf(props.stageName, globs);
    statements.push(
      new iam.PolicyStatement({
        sid: sidOf('DenyAllBut', key),
        effect: iam.Effect.DENY,
        principals: [new iam.StarPrincipal()],
        actions: [INVOKE],
        resources,
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': holders } },
      }),
    );
  }
  if (props.human.length > 0 && admin.length > 0)
    statements.push(
      // Every route, not only the admin ones: a human role's session is a named person or nothing, wherever it
      // signs a request (open routes need no signature at all), and one resource keeps the policy small.
      ...sourceIdentityDenies(
        props.human.map((principal) => principal.roleArn),
        resourcesOf(props.stageName, ['*']),
      ),
    );
  return statements;
};
