import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { callerIdentity } from '../../../functions/composition/local/gateway';
import { ROUTES } from '../../../functions/definitions';
import { CALLER_SCOPES, OPERATOR_ROLES } from '../../../functions/domain/access/principals';
import { callerContext, operatorContext } from '../../../functions/handlers/middleware/principal';

/** A minimal Lambda context for handlers under test. */
export const lambdaContext = (overrides: Partial<Context> = {}): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'pricing-test-api',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:pricing-test-api',
  memoryLimitInMB: '512',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  logGroupName: '/aws/lambda/pricing-test-api',
  logStreamName: 'test',
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
  ...overrides,
});

export interface ProxyEventInput {
  readonly method?: string;
  readonly resource: string;
  readonly path?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | null;
  readonly pathParameters?: Record<string, string> | null;
  /**
   * What the authorizer (or, locally, the gateway) passes on. Default: on a route of the route table, a caller
   * key of tenant `demo` with every scope or the operator `admin` with every role, as the route wants; on any
   * other resource, the caller key. `null`: nothing (no credential).
   */
  readonly authorizer?: Record<string, string> | null;
}

/** The default test caller key: tenant `demo`, every scope. */
export const TEST_CALLER = callerContext({
  kind: 'caller',
  keyId: 'ak_test',
  tenant: 'demo',
  scopes: CALLER_SCOPES,
  channels: [],
  customerGroups: [],
});

/** The default test operator: `admin`, every role (a human). */
export const TEST_OPERATOR = operatorContext({
  kind: 'operator',
  identity: 'admin',
  roles: OPERATOR_ROLES,
  machine: false,
});

const defaultAuthorizer = (method: string, resource: string): Record<string, string> => {
  const route = ROUTES.find((candidate) => candidate.method === method && candidate.path === resource);
  return route?.auth === 'admin' ? TEST_OPERATOR : TEST_CALLER;
};

/** An API Gateway REST (v1) proxy event, as the gateway would send it. */
export const proxyEvent = (input: ProxyEventInput): APIGatewayProxyEvent => {
  const method = input.method ?? 'GET';
  const path = input.path ?? input.resource;
  return {
    resource: input.resource,
    path,
    httpMethod: method,
    headers: input.headers ?? {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: input.pathParameters ?? null,
    stageVariables: null,
    body: input.body ?? null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      authorizer:
        input.authorizer === undefined ? defaultAuthorizer(method, input.resource) : input.authorizer,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: callerIdentity({ sourceIp: '127.0.0.1', apiKey: null, userAgent: 'vitest' }),
      path,
      stage: 'test',
      requestId: 'req-1',
      requestTimeEpoch: 0,
      resourceId: 'test',
      resourcePath: input.resource,
    },
  };
};
