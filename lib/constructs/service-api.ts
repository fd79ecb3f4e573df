import { Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  CATALOG_RATE_LIMIT,
  type FunctionId,
  type RouteAuth,
  type RouteDefinition,
} from '../../functions/definitions';
import { acknowledgeApiLoggingRole, SECURE_DEFAULTS } from './defaults';

const METHOD_AUTH: Readonly<
  Record<
    RouteAuth,
    { readonly authorizationType: apigateway.AuthorizationType; readonly apiKeyRequired: boolean }
  >
> = {
  none: { authorizationType: apigateway.AuthorizationType.NONE, apiKeyRequired: false },
  partner: { authorizationType: apigateway.AuthorizationType.NONE, apiKeyRequired: false },
  api_key: { authorizationType: apigateway.AuthorizationType.NONE, apiKeyRequired: true },
  admin: { authorizationType: apigateway.AuthorizationType.IAM, apiKeyRequired: false },
};

/** Why a route is not behind an API Gateway authorizer, per auth kind (cdk-nag APIG4 / COG4). */
const OPEN_ROUTE_REASONS: Readonly<Record<RouteAuth, string | undefined>> = {
  none: 'Route defined with auth "none" in functions/definitions/routes.ts (health): public by design, returns no data.',
  api_key:
    'Catalog callers authenticate with an API key (x-api-key) bound to a throttled usage plan (ARCHITECTURE C7); ' +
    'there is no end-user identity to authorize.',
  admin: undefined,
  partner:
    'Partner routes (resync) authenticate in the function with the partner key issued with the endpoint ' +
    '(Authorization: Bearer, looked up by its SHA-256); a partner has no AWS identity to authorize.',
};

export interface ServiceApiProps {
  /** The route table (`ROUTES`): exactly these resources and methods are created. */
  readonly routes: readonly RouteDefinition[];
  /** The function behind each route's `function`. */
  readonly handlers: Readonly<Record<FunctionId, lambda.IFunction>>;
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
 * The REST API generated from the route table: Lambda proxy integrations, API-key or IAM auth per route, a
 * request validator on every method, a usage plan with an API key (100 req/s, burst 200), JSON access logs,
 * INFO execution logs without request bodies, and X-Ray tracing.
 */
export class ServiceApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly usagePlan: apigateway.UsagePlan;
  readonly apiKey: apigateway.IApiKey;
  readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    const logRetention = props.logRetention ?? SECURE_DEFAULTS.logRetention;
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logRetention,
      removalPolicy: SECURE_DEFAULTS.logRemovalPolicy,
    });
    const manageLoggingRole = props.manageAccountLoggingRole ?? true;
    this.api = new apigateway.RestApi(this, 'Api', {
      restApiName: props.restApiName ?? this.node.path.replaceAll('/', '-'),
      description: 'Pricing service: catalog, quotes, receipts, webhooks and operations',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      cloudWatchRole: manageLoggingRole,
      ...(manageLoggingRole ? { cloudWatchRoleRemovalPolicy: SECURE_DEFAULTS.logRemovalPolicy } : {}),
      deployOptions: {
        stageName: props.stageName ?? 'v1',
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
        authorizationType: auth.authorizationType,
        apiKeyRequired: auth.apiKeyRequired,
        requestValidator: validator,
      });
      const openReason = OPEN_ROUTE_REASONS[route.auth];
      if (openReason) Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason: openReason });
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-COG4',
        reason:
          route.auth === 'admin'
            ? 'Operator routes use IAM (SigV4) authorization (ARCHITECTURE C7); operators are IAM principals, not Cognito users.'
            : `${openReason} No Cognito user pool exists for this service.`,
      });
    }

    this.apiKey = this.api.addApiKey('CatalogApiKey', {
      description: 'Catalog API key (x-api-key); rate limited by the catalog usage plan',
    });
    this.usagePlan = this.api.addUsagePlan('CatalogUsagePlan', {
      description: 'Catalog callers: per-key rate limit (ARCHITECTURE C22)',
      throttle: {
        rateLimit: props.rateLimitRequestsPerSecond ?? CATALOG_RATE_LIMIT.requestsPerSecond,
        burstLimit: props.burstLimitRequests ?? CATALOG_RATE_LIMIT.burst,
      },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
    this.usagePlan.addApiKey(this.apiKey);
  }
}
