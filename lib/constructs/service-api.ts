import { Duration, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  CATALOG_RATE_LIMIT,
  type FunctionId,
  type RouteAuth,
  type RouteDefinition,
} from '../../functions/definitions';
import type { ErrorCode } from '../../functions/handlers/middleware/errors';
import { CALLER_KEY_CACHE_SECONDS } from '../../functions/usecases/access/api-keys';
import { acknowledgeApiLoggingRole, SECURE_DEFAULTS } from './defaults';
import { type OperatorPrincipal, operatorAccessStatements } from './operator-access-policy';

/** Whether a route's method needs the caller-key authorizer, IAM, or nothing at API Gateway. */
const METHOD_AUTH: Readonly<Record<RouteAuth, 'none' | 'callerKey' | 'iam'>> = {
  none: 'none',
  // The function checks the partner key itself (a partner has no AWS identity).
  partner: 'none',
  api_key: 'callerKey',
  admin: 'iam',
};

/** Why a route is not behind an API Gateway authorizer (cdk-nag APIG4), for the routes that are not. */
const OPEN_ROUTE_REASONS: Readonly<Record<RouteAuth, string | undefined>> = {
  none: 'Route defined with auth "none" in functions/definitions/routes.ts (health, keys, OpenAPI, changelog): public by design, returns no private data.',
  api_key: undefined,
  admin: undefined,
  partner:
    'Partner routes (resync) authenticate in the function with the partner key issued with the endpoint ' +
    '(Authorization: Bearer, looked up by its SHA-256); a partner has no AWS identity to authorize.',
};

/** Why no route uses a Cognito user pool (cdk-nag COG4), per auth kind. */
const NO_COGNITO_REASONS: Readonly<Record<RouteAuth, string>> = {
  none: `${OPEN_ROUTE_REASONS.none} No Cognito user pool exists for this service.`,
  partner: `${OPEN_ROUTE_REASONS.partner} No Cognito user pool exists for this service.`,
  api_key:
    'Catalog callers authenticate with a caller key (x-api-key) resolved by the caller-key Lambda authorizer ' +
    '(C26) and throttled per key by the usage plan; there is no end-user identity, so no Cognito user pool.',
  admin:
    'Operator routes use IAM (SigV4) authorization (ARCHITECTURE C7) and the API resource policy (C27); ' +
    'operators are IAM roles, not Cognito users.',
};

export interface ServiceApiProps {
  /** The route table (`ROUTES`): exactly these resources and methods are created. */
  readonly routes: readonly RouteDefinition[];
  /** The function behind each route's `function`. */
  readonly handlers: Readonly<Record<FunctionId, lambda.IFunction>>;
  /** The caller-key authorizer (C26) in front of every `api_key` route. */
  readonly authorizer: lambda.IFunction;
  /** The operator roles the resource policy admits to the `admin` routes, per the routes' `roles` (C27). */
  readonly operators: {
    readonly human: readonly OperatorPrincipal[];
    readonly machine: readonly OperatorPrincipal[];
  };
  /**
   * The usage plan's name: the function that registers each caller key's usage identifier finds the plan by it
   * (its id cannot be passed to a function behind this API's routes without a dependency cycle).
   * @default the REST API's name + '-callers'
   */
  readonly usagePlanName?: string;
  /** @default 'v1' */
  readonly stageName?: string;
  /**
   * The REST API's name: API Gateway's metrics (the availability objective) are dimensioned by it, so it must
   * be unique per account and region.
   * @default the construct's path (unique within the app)
   */
  readonly restApiName?: string;
  /** @default CATALOG_RATE_LIMIT.requestsPerSecond (100, functions/definitions/limits.ts) */
  readonly rateLimitRequestsPerSecond?: number;
  /** @default CATALOG_RATE_LIMIT.burst (200, functions/definitions/limits.ts) */
  readonly burstLimitRequests?: number;
  /** @default SECURE_DEFAULTS.logRetention */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Create the account-level role API Gateway uses to write execution logs (needed once per account and
   * region before stage logging works). Set false where the account already has one.
   * @default true
   */
  readonly manageAccountLoggingRole?: boolean;
}

/**
 * The REST API generated from the route table: Lambda proxy integrations; the caller-key authorizer (a cached
 * REQUEST authorizer on `x-api-key`) and a required API key on `api_key` routes, IAM on `admin` routes; a
 * resource policy that admits each admin route only to the operator roles it names; a request validator on
 * every method; a usage plan (100 req/s, burst 200 per caller key, counted by the usage identifier the
 * authorizer returns: `apiKeySourceType` AUTHORIZER); JSON access logs, INFO execution logs without request
 * bodies, and X-Ray tracing.
 */
/**
 * A C6 body (`{ error, error_description, trace_id }`) as a gateway response template: the trace id is API
 * Gateway's request id (also in `X-Trace-Id`), since no function ran to make one.
 */
export const c6Template = (error: ErrorCode, description: string): string =>
  `{"error":"${error}","error_description":"${description}","trace_id":"$context.requestId"}`;

/** API Gateway's refusals in the C6 shape, by gateway response type (status codes as API Gateway sends them). */
export const GATEWAY_REFUSALS: Readonly<
  Record<string, { type: apigateway.ResponseType; statusCode: number; error: ErrorCode; description: string }>
> = {
  Unauthorized: {
    type: apigateway.ResponseType.UNAUTHORIZED,
    statusCode: 401,
    error: 'unauthorized',
    description: 'a valid API key is required in x-api-key',
  },
  AccessDenied: {
    type: apigateway.ResponseType.ACCESS_DENIED,
    statusCode: 403,
    error: 'forbidden',
    description: 'these credentials may not call this route',
  },
  MissingAuthenticationToken: {
    type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: 403,
    error: 'forbidden',
    description: 'no route here, or the route needs a signed (SigV4) request',
  },
  InvalidSignature: {
    type: apigateway.ResponseType.INVALID_SIGNATURE,
    statusCode: 403,
    error: 'forbidden',
    description: 'the request signature does not verify',
  },
  ExpiredToken: {
    type: apigateway.ResponseType.EXPIRED_TOKEN,
    statusCode: 403,
    error: 'forbidden',
    description: 'the security token has expired',
  },
  InvalidApiKey: {
    type: apigateway.ResponseType.INVALID_API_KEY,
    statusCode: 403,
    error: 'forbidden',
    description: 'this key is not registered for the API yet; retry shortly',
  },
  Throttled: {
    type: apigateway.ResponseType.THROTTLED,
    statusCode: 429,
    error: 'rate_limited',
    description: 'too many requests for this API key; slow down and retry later',
  },
  QuotaExceeded: {
    type: apigateway.ResponseType.QUOTA_EXCEEDED,
    statusCode: 429,
    error: 'rate_limited',
    description: 'the request quota of this API key is used up',
  },
  RequestTooLarge: {
    type: apigateway.ResponseType.REQUEST_TOO_LARGE,
    statusCode: 413,
    error: 'payload_too_large',
    description: 'the request is too large',
  },
  IntegrationTimeout: {
    type: apigateway.ResponseType.INTEGRATION_TIMEOUT,
    statusCode: 504,
    error: 'gateway_timeout',
    description: 'the function did not answer in time',
  },
};

/** Refusals a retry may follow (after `Retry-After` seconds), as the local gateway answers them. */
const RETRIED = new Set<ErrorCode>(['rate_limited', 'gateway_timeout']);

export class ServiceApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly usagePlan: apigateway.UsagePlan;
  readonly usagePlanName: string;
  readonly callerKeyAuthorizer: apigateway.RequestAuthorizer;
  readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    const logRetention = props.logRetention ?? SECURE_DEFAULTS.logRetention;
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logRetention,
      removalPolicy: SECURE_DEFAULTS.logRemovalPolicy,
    });
    const manageLoggingRole = props.manageAccountLoggingRole ?? true;
    const stageName = props.stageName ?? 'v1';
    const restApiName = props.restApiName ?? this.node.path.replaceAll('/', '-');
    this.api = new apigateway.RestApi(this, 'Api', {
      restApiName,
      description: 'Pricing service: catalog, quotes, receipts, webhooks and operations',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // The usage plan counts the caller key the authorizer resolved (its usage identifier), not a header.
      apiKeySourceType: apigateway.ApiKeySourceType.AUTHORIZER,
      policy: new iam.PolicyDocument({
        statements: operatorAccessStatements({
          routes: props.routes,
          stageName,
          human: props.operators.human,
          machine: props.operators.machine,
        }),
      }),
      cloudWatchRole: manageLoggingRole,
      ...(manageLoggingRole ? { cloudWatchRoleRemovalPolicy: SECURE_DEFAULTS.logRemovalPolicy } : {}),
      deployOptions: {
        stageName,
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: apigateway.MethodLoggingLevel.INFO,
        // Request and response bodies may carry secrets (endpoint secrets, API keys): never log them.
        dataTraceEnabled: false,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apigateway.AccessLogFormat.jsonWithStandardFields(),
      },
    });
    if (manageLoggingRole) acknowledgeApiLoggingRole(this.api);

    // API Gateway caches each key's answer as long as the resolver does locally: a revocation takes effect
    // within CALLER_KEY_CACHE_SECONDS. The answer allows the whole stage, so one cached answer serves every
    // route the key calls; scopes are checked by each route's function.
    this.callerKeyAuthorizer = new apigateway.RequestAuthorizer(this, 'CallerKeyAuthorizer', {
      handler: props.authorizer,
      identitySources: [apigateway.IdentitySource.header('x-api-key')],
      resultsCacheTtl: Duration.seconds(CALLER_KEY_CACHE_SECONDS),
    });

    const validator = new apigateway.RequestValidator(this, 'RequestValidator', {
      restApi: this.api,
      validateRequestBody: true,
      validateRequestParameters: true,
    });

    const integrations = new Map<FunctionId, apigateway.LambdaIntegration>();
    const integrationFor = (functionId: FunctionId): apigateway.LambdaIntegration => {
      let integration = integrations.get(functionId);
      if (!integration) {
        integration = new apigateway.LambdaIntegration(props.handlers[functionId], {
          proxy: true,
          allowTestInvoke: false,
        });
        integrations.set(functionId, integration);
      }
      return integration;
    };

    for (const route of props.routes) {
      const resource = this.api.root.resourceForPath(route.path);
      const auth = METHOD_AUTH[route.auth];
      const method = resource.addMethod(route.method, integrationFor(route.function), {
        operationName: route.operation,
        ...(auth === 'callerKey'
          ? {
              authorizationType: apigateway.AuthorizationType.CUSTOM,
              authorizer: this.callerKeyAuthorizer,
              apiKeyRequired: true,
            }
          : {
              authorizationType:
                auth === 'iam' ? apigateway.AuthorizationType.IAM : apigateway.AuthorizationType.NONE,
              apiKeyRequired: false,
            }),
        requestValidator: validator,
      });
      const openReason = OPEN_ROUTE_REASONS[route.auth];
      if (openReason) Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason: openReason });
      Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason: NO_COGNITO_REASONS[route.auth] });
    }

    // API Gateway's own refusals (before any function runs) answer in the C6 error shape too.
    for (const [id, refusal] of Object.entries(GATEWAY_REFUSALS)) {
      this.api.addGatewayResponse(id, {
        type: refusal.type,
        statusCode: String(refusal.statusCode),
        responseHeaders: {
          'X-Trace-Id': 'context.requestId',
          'Content-Type': "'application/json'",
          ...(RETRIED.has(refusal.error) ? { 'Retry-After': "'1'" } : {}),
        },
        templates: { 'application/json': c6Template(refusal.error, refusal.description) },
      });
    }

    // No API key is created here: each caller key's usage identifier (its SHA-256) is registered as an API key
    // of this plan when the key is issued, so the throttle counts per caller key.
    this.usagePlanName = props.usagePlanName ?? `${restApiName}-callers`;
    this.usagePlan = this.api.addUsagePlan('CatalogUsagePlan', {
      name: this.usagePlanName,
      description: 'Catalog callers: per-key rate limit (ARCHITECTURE C22), one API key per caller key (C26)',
      throttle: {
        rateLimit: props.rateLimitRequestsPerSecond ?? CATALOG_RATE_LIMIT.requestsPerSecond,
        burstLimit: props.burstLimitRequests ?? CATALOG_RATE_LIMIT.burst,
      },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
  }
}
