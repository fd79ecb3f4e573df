import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { CALLER_KEY_CACHE_SECONDS, CallerKeyResolver, secretSha256 } from '../usecases/access/api-keys';
import { lazyHandler } from './lazy';
import { callerContext } from './middleware/principal';

export type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEvent,
) => Promise<APIGatewayAuthorizerResult>;

/** Thrown (as API Gateway expects, by this exact message) for a missing, unknown or revoked key: a 401. */
export const UNAUTHORIZED = 'Unauthorized';

const headerOf = (event: APIGatewayRequestAuthorizerEvent, name: string): string | undefined => {
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
};

/**
 * Every method of the API's stage: API Gateway caches the answer per key, so the policy must cover every route
 * the key may reach. Scopes are checked by each route's function, from the context (`authorizeRoute`).
 */
const stageWide = (methodArn: string): string => {
  const [prefix = '', stage = '*'] = methodArn.split('/');
  return `${prefix}/${stage}/*/*`;
};

/**
 * The caller-key authorizer (C26): `x-api-key` → the key's tenant, scopes, channels and customer groups (C29)
 * as the request's context, or 401. In AWS a cached REQUEST authorizer; the local gateway calls this same
 * handler. The usage identifier (the key's SHA-256, registered as the usage plan's API key value) keeps per-key
 * throttling.
 */
export const createAuthorizerHandler = (
  deps: Pick<ServiceDependencies, 'apiKeys' | 'clock'>,
  options: { readonly cacheSeconds?: number } = {},
): AuthorizerHandler => {
  const resolver = new CallerKeyResolver(
    deps.apiKeys,
    deps.clock,
    options.cacheSeconds ?? CALLER_KEY_CACHE_SECONDS,
  );
  return async (event) => {
    const presented = headerOf(event, 'x-api-key');
    const caller = await resolver.resolve(presented);
    if (!caller || !presented) throw new Error(UNAUTHORIZED);
    return {
      principalId: caller.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageWide(event.methodArn) }],
      },
      context: callerContext(caller),
      usageIdentifierKey: secretSha256(presented),
    };
  };
};

// API Gateway caches each key's answer (CALLER_KEY_CACHE_SECONDS): a second cache here would only lengthen the
// time a revocation takes.
export const handler = lazyHandler(() =>
  createAuthorizerHandler(awsDependencies('authorizer'), { cacheSeconds: 0 }),
);
