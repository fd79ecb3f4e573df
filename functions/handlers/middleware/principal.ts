/**
 * The principal of a request and the route's authorization (docs/security.md): a caller key's scopes on
 * `api_key` routes, an operator's roles on `admin` routes. Authentication happens before the function (the
 * caller-key authorizer, IAM, or the local gateway); the principal travels in the proxy event:
 * - caller keys: `requestContext.authorizer` = the authorizer's context (`principal: "caller"`, key id, tenant,
 *   scopes, channels, customer groups), in AWS and locally alike;
 * - operators locally: `requestContext.authorizer` with `principal: "operator"` (set by the local gateway);
 * - operators in AWS: the IAM principal in `requestContext.identity.userArn`, normalised (see
 *   `normaliseAwsOperator`): never the session name of a role the caller can assume under any name.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { RouteDefinition } from '../../definitions';
import {
  type AwsOperatorRole,
  type CallerPrincipal,
  effectiveRoles,
  holdsAny,
  isCallerScope,
  isOperatorRole,
  normaliseAwsOperator,
  notHeld,
  type OperatorPrincipal,
  type Principal,
} from '../../domain/access/principals';
import { HttpError } from './errors';

/** The authorizer context of a caller key (values are strings, as API Gateway passes them on). */
export const callerContext = (principal: CallerPrincipal): Record<string, string> => ({
  principal: 'caller',
  key_id: principal.keyId,
  tenant: principal.tenant,
  scopes: principal.scopes.join(' '),
  channels: principal.channels.join(' '),
  customer_groups: principal.customerGroups.join(' '),
});

/** The context the local gateway gives an operator's request. */
export const operatorContext = (principal: OperatorPrincipal): Record<string, string> => ({
  principal: 'operator',
  operator: principal.identity,
  roles: principal.roles.join(' '),
  machine: String(principal.machine),
});

const words = (value: unknown): string[] =>
  typeof value === 'string' ? value.split(' ').filter((word) => word.length > 0) : [];

const contextOf = (event: APIGatewayProxyEvent): Record<string, unknown> =>
  (event.requestContext?.authorizer as Record<string, unknown> | null | undefined) ?? {};

/** The caller principal of the authorizer's context, or undefined. */
export const callerPrincipalOf = (event: APIGatewayProxyEvent): CallerPrincipal | undefined => {
  const context = contextOf(event);
  if (
    context.principal !== 'caller' ||
    typeof context.key_id !== 'string' ||
    typeof context.tenant !== 'string'
  )
    return undefined;
  return {
    kind: 'caller',
    keyId: context.key_id,
    tenant: context.tenant,
    scopes: words(context.scopes).filter(isCallerScope),
    channels: words(context.channels),
    customerGroups: words(context.customer_groups),
  };
};

/** The operator of an admin request: the local gateway's context, else the normalised IAM principal. */
export const operatorPrincipalOf = (
  event: APIGatewayProxyEvent,
  awsRoles: readonly AwsOperatorRole[],
): OperatorPrincipal | undefined => {
  const context = contextOf(event);
  if (context.principal === 'operator' && typeof context.operator === 'string') {
    const machine = context.machine === 'true';
    return {
      kind: 'operator',
      identity: context.operator,
      roles: effectiveRoles(words(context.roles).filter(isOperatorRole), machine),
      machine,
    };
  }
  const userArn = event.requestContext?.identity?.userArn;
  return userArn ? normaliseAwsOperator(userArn, awsRoles) : undefined;
};

/**
 * The principal of a request on `route`, checked against the route's scopes or roles: 401 without one, 403
 * when it lacks them. `none` and `partner` routes have none here (a partner key is checked by its operation).
 */
export const authorizeRoute = (
  route: RouteDefinition,
  event: APIGatewayProxyEvent,
  awsRoles: readonly AwsOperatorRole[],
): Principal | undefined => {
  if (route.auth === 'api_key') {
    const caller = callerPrincipalOf(event);
    if (!caller) throw new HttpError('unauthorized', 'a valid API key is required in x-api-key');
    const wanted = route.scopes ?? [];
    if (!holdsAny(caller.scopes, wanted))
      throw new HttpError('forbidden', `this key lacks the scope this route needs: ${wanted.join(' or ')}`);
    return caller;
  }
  if (route.auth === 'admin') {
    const operator = operatorPrincipalOf(event, awsRoles);
    if (!operator) throw new HttpError('unauthorized', 'this route needs an operator identity');
    const wanted = route.roles ?? [];
    if (wanted.length === 0 || !holdsAny(operator.roles, wanted))
      throw new HttpError('forbidden', `this route needs the operator role ${wanted.join(' or ')}`);
    return operator;
  }
  return undefined;
};

/** The caller of an `api_key` operation (set by `authorizeRoute`). */
export const callerOf = (principal: Principal | undefined): CallerPrincipal => {
  if (principal?.kind !== 'caller') throw new HttpError('unauthorized', 'a valid API key is required');
  return principal;
};

/**
 * The tenant a caller key acts for (C26), checked against what the request names: another tenant is refused
 * (403, never believed), a key limited to channels must name one of them, and every customer group named (C29)
 * must be one of the key's (a key without groups names none; naming none is always fine). `acting` says what
 * the key does ("reads prices", "quotes"), for the refusal's text.
 */
export const callerTenant = (
  caller: CallerPrincipal,
  asked: {
    readonly tenant?: string | undefined;
    readonly channel?: string | undefined;
    readonly customer_groups?: readonly string[] | undefined;
  },
  acting: string,
): string => {
  if (asked.tenant !== undefined && asked.tenant !== caller.tenant)
    throw new HttpError('forbidden', `this key ${acting} for tenant ${caller.tenant} only`);
  if (caller.channels.length > 0 && (!asked.channel || !caller.channels.includes(asked.channel)))
    throw new HttpError(
      'forbidden',
      `this key ${acting} for the channels ${caller.channels.join(', ')} only`,
    );
  const refused = notHeld(caller.customerGroups, asked.customer_groups ?? []);
  if (refused.length > 0)
    throw new HttpError(
      'forbidden',
      `this key may not name the customer groups ${refused.join(', ')}; ` +
        `it may name ${caller.customerGroups.join(', ') || 'none'}`,
    );
  return caller.tenant;
};

/** The operator of an `admin` operation (set by `authorizeRoute`). */
export const operatorOf = (principal: Principal | undefined): OperatorPrincipal => {
  if (principal?.kind !== 'operator')
    throw new HttpError('unauthorized', 'this route needs an operator identity');
  return principal;
};
