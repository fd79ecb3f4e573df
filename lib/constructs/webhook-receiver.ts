import * as path from 'node:path';
import {
  Annotations,
  Arn,
  ArnFormat,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambdaNodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { RECEIVER_TABLE } from '../../functions/receiver/table';
import { acknowledgeApiLoggingRole, functionBundling, PROJECT_ROOT, SECURE_DEFAULTS } from './defaults';

/** The sender's longest retry horizon (ARCHITECTURE C14: ≈ 5.9 days with jitter), rounded up to whole days. */
const SENDER_RETRY_HORIZON_DAYS = 6;

/** Item actions the kit's transactions and reads need on the receiver table, and nothing else. */
const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:Query',
  'dynamodb:DescribeTable',
];

/** Default entry point: the reference receiver (functions/receiver/reference/lambda.ts). */
export const REFERENCE_RECEIVER_ENTRY = 'functions/receiver/reference/lambda.ts';

export interface WebhookReceiverProps {
  /**
   * Name of an SSM Parameter Store **SecureString** parameter holding the endpoint's signing secret(s):
   * `whsec_…` values separated by commas or whitespace (during a rotation, both the new and the old one). The
   * function reads it at start (SigV4 `GetParameter` with decryption) and again at most every
   * `secretsCacheSeconds`, so a rotation needs no deployment. CloudFormation cannot create SecureString
   * parameters; create it once with
   * `aws ssm put-parameter --type SecureString --name <name> --value whsec_…`. The secrets never appear in
   * the template or in the function's environment.
   */
  readonly secretsParameterName: string;
  /**
   * Customer-managed key the SecureString parameter is encrypted with; the function is granted `kms:Decrypt`
   * on it.
   * @default the AWS managed key `alias/aws/ssm` (no grant needed)
   */
  readonly secretsParameterKey?: kms.IKey;
  /**
   * How long the function keeps the secrets it read before reading the parameter again, in seconds.
   * @default 300
   */
  readonly secretsCacheSeconds?: number;
  /**
   * Recorded with every processed event (`handler_version` of the status record). Change it when the
   * handler's behaviour changes.
   * @default 'reference-1'
   */
  readonly handlerVersion?: string;
  /**
   * Dedup memory in whole days: how long a processed `event_id` is remembered (DynamoDB TTL) and the age of
   * `ts` beyond which an event is refused with 422 `event_too_old`. At least 1; below the sender's retry
   * horizon (≈ 5.9 days, ARCHITECTURE C14) a synth warning is added.
   * @default 7
   */
  readonly dedupDays?: number;
  /**
   * The Lambda entry point (a file exporting `handler`), relative to `projectRoot` or absolute.
   * @default 'functions/receiver/reference/lambda.ts'
   */
  readonly entry?: string;
  /**
   * Directory holding `package-lock.json` that the entry is bundled from.
   * @default the repository root of this project
   */
  readonly projectRoot?: string;
  /**
   * Customer-managed key for the table.
   * @default the AWS managed key of DynamoDB (`alias/aws/dynamodb`)
   */
  readonly tableEncryptionKey?: kms.IKey;
  /**
   * What happens to the table when the stack is deleted. With RETAIN the table also gets deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Stage of the REST API; the webhook base URL is `https://<api>/<stage>/webhooks/v1`.
   * @default 'live'
   */
  readonly stageName?: string;
  /**
   * Steady-state request rate of the stage, requests per second. Above it API Gateway answers 429 with
   * `Retry-After`, which the sender honours.
   * @default 50
   */
  readonly rateLimitRequestsPerSecond?: number;
  /** @default 100 */
  readonly burstLimitRequests?: number;
  /** @default 512 */
  readonly memorySize?: number;
  /**
   * Function timeout. The sender waits 10 s per attempt (ARCHITECTURE C14); a longer timeout only makes a late
   * commit that the sender already counted as failed (harmless: the retry is a duplicate).
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
  /** @default SECURE_DEFAULTS.logRetention */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Create the account-level role API Gateway writes execution logs with (needed once per account and region).
   * Set false where the account already has one.
   * @default true
   */
  readonly manageAccountLoggingRole?: boolean;
  /**
   * Add a stack output with the base URL to register with the sender.
   * @default true
   */
  readonly output?: boolean;
}

/**
 * A partner's webhook receiver, ready to deploy: a DynamoDB table for the receiver kit (partition key
 * `event_id`, TTL `expires_at`, point-in-time recovery, encryption), the reference receiver as a Node.js 24
 * Lambda function that reads its signing secrets from an SSM SecureString parameter, and a REST API with
 * - `POST /webhooks/v1/{topic}` — open at the gateway: every request is authenticated by its HMAC signature
 *   in the function (bodies pass through as raw bytes: `binaryMediaTypes: ['*\/*']`, so the signed bytes are
 *   the bytes checked);
 * - `GET /webhooks/status/{event_id}` and `POST /webhooks/ack` — IAM (SigV4) only: they are operator routes;
 * with JSON access logs, execution logs without bodies, X-Ray tracing, stage throttling, and gateway answers in
 * the C6 error shape (429 with `Retry-After`).
 */
export class WebhookReceiver extends Construct {
  readonly table: dynamodb.Table;
  readonly function: lambdaNodejs.NodejsFunction;
  readonly role: iam.Role;
  readonly api: apigateway.RestApi;
  readonly accessLogs: logs.LogGroup;
  readonly functionLogs: logs.LogGroup;
  /** The URL to register with the sender: `https://<api>/<stage>/webhooks/v1`. */
  readonly webhookBaseUrl: string;

  constructor(scope: Construct, id: string, props: WebhookReceiverProps) {
    super(scope, id);
    const dedupDays = props.dedupDays ?? 7;
    if (!Number.isInteger(dedupDays) || dedupDays < 1) {
      throw new Error(`dedupDays must be a whole number of days, at least 1 (got ${dedupDays})`);
    }
    if (dedupDays < SENDER_RETRY_HORIZON_DAYS) {
      Annotations.of(this).addWarningV2(
        'webhook-receiver:dedup-below-retry-horizon',
        `dedupDays ${dedupDays} is below the sender's retry horizon (≈ 5.9 days): a late retry of an event ` +
          'older than the dedup memory is refused with 422 event_too_old instead of being recognised.',
      );
    }
    const parameterName = props.secretsParameterName.trim();
    if (parameterName.length === 0) throw new Error('secretsParameterName must name an SSM parameter');
    const secretsCacheSeconds = props.secretsCacheSeconds ?? 300;
    if (!Number.isInteger(secretsCacheSeconds) || secretsCacheSeconds < 0) {
      throw new Error('secretsCacheSeconds must be a whole number of seconds, at least 0');
    }
    const removalPolicy = props.removalPolicy ?? SECURE_DEFAULTS.statefulRemovalPolicy;
    const logRetention = props.logRetention ?? SECURE_DEFAULTS.logRetention;
    const projectRoot = props.projectRoot ?? PROJECT_ROOT;
    const entry = props.entry ?? REFERENCE_RECEIVER_ENTRY;

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: RECEIVER_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: RECEIVER_TABLE.timeToLiveAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(props.tableEncryptionKey
        ? {
            encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
            encryptionKey: props.tableEncryptionKey,
          }
        : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
      removalPolicy,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    });

    this.functionLogs = new logs.LogGroup(this, 'FunctionLogs', {
      retention: logRetention,
      removalPolicy: SECURE_DEFAULTS.logRemovalPolicy,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Execution role of the webhook receiver function',
    });
    this.functionLogs.grantWrite(this.role);

    this.function = new lambdaNodejs.NodejsFunction(this, 'Function', {
      description: 'Webhook receiver: verifies signatures and applies each event once',
      entry: path.isAbsolute(entry) ? entry : path.join(projectRoot, entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: path.join(projectRoot, 'package-lock.json'),
      runtime: SECURE_DEFAULTS.lambdaRuntime,
      architecture: SECURE_DEFAULTS.lambdaArchitecture,
      timeout: props.timeout ?? Duration.seconds(10),
      memorySize: props.memorySize ?? 512,
      tracing: SECURE_DEFAULTS.lambdaTracing,
      logGroup: this.functionLogs,
      role: this.role,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        RECEIVER_TABLE_NAME: this.table.tableName,
        WEBHOOK_SECRETS_PARAMETER: parameterName,
        SECRETS_CACHE_SECONDS: String(secretsCacheSeconds),
        HANDLER_VERSION: props.handlerVersion ?? 'reference-1',
        DEDUP_DAYS: String(dedupDays),
      },
      bundling: functionBundling(),
    });
    this.function.node.addDependency(this.role);

    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: TABLE_ACTIONS, resources: [this.table.tableArn] }),
    );
    if (props.tableEncryptionKey) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
          resources: [props.tableEncryptionKey.keyArn],
        }),
      );
    }
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ssm:GetParameter'],
        resources: [
          Arn.format(
            {
              service: 'ssm',
              resource: 'parameter',
              resourceName: parameterName.replace(/^\/+/, ''),
              arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
            },
            Stack.of(this),
          ),
        ],
      }),
    );
    if (props.secretsParameterKey) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [props.secretsParameterKey.keyArn] }),
      );
    }
    // On the role's default policy, where the statement is, not on the whole role.
    Validations.of(this.role.node.findChild('DefaultPolicy')).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Resource "*" appears only for xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing), ' +
        'which have no resource-level permissions. Table, parameter and key statements name exact ARNs.',
    });

    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logRetention,
      removalPolicy: SECURE_DEFAULTS.logRemovalPolicy,
    });
    const manageLoggingRole = props.manageAccountLoggingRole ?? true;
    this.api = new apigateway.RestApi(this, 'Api', {
      description: 'Webhook receiver: signed deliveries, processing status and manual acknowledgement',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // Every body reaches the function base64-encoded: the HMAC is checked over exactly the bytes sent.
      binaryMediaTypes: ['*/*'],
      cloudWatchRole: manageLoggingRole,
      ...(manageLoggingRole ? { cloudWatchRoleRemovalPolicy: SECURE_DEFAULTS.logRemovalPolicy } : {}),
      deployOptions: {
        stageName: props.stageName ?? 'live',
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: apigateway.MethodLoggingLevel.INFO,
        // Bodies are partner data and status records: never in execution logs.
        dataTraceEnabled: false,
        throttlingRateLimit: props.rateLimitRequestsPerSecond ?? 50,
        throttlingBurstLimit: props.burstLimitRequests ?? 100,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apigateway.AccessLogFormat.jsonWithStandardFields(),
      },
    });
    if (manageLoggingRole) acknowledgeApiLoggingRole(this.api);
    Validations.of(this.api.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'No WAF in front of a webhook receiver: every delivery is authenticated by its HMAC signature in the ' +
        'function, and a WAF body rule answering 403 to a genuine signed event would stop its delivery for good ' +
        '(the sender treats 403 as a client error, ARCHITECTURE C14). Stage throttling bounds the request rate.',
    });
    this.#addGatewayResponses();

    const validator = new apigateway.RequestValidator(this, 'RequestValidator', {
      restApi: this.api,
      validateRequestBody: true,
      validateRequestParameters: true,
    });
    const integration = new apigateway.LambdaIntegration(this.function, {
      proxy: true,
      allowTestInvoke: false,
    });
    const webhooks = this.api.root.addResource('webhooks');

    const deliver = webhooks
      .addResource('v1')
      .addResource('{topic}')
      .addMethod('POST', integration, {
        operationName: 'receiveWebhook',
        authorizationType: apigateway.AuthorizationType.NONE,
        requestParameters: { 'method.request.path.topic': true },
        requestValidator: validator,
      });
    Validations.of(deliver).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Webhook deliveries are authenticated by the HMAC-SHA-256 X-Signature over timestamp, method, path and ' +
        'body (ARCHITECTURE C13), checked in constant time by the function before anything is read or written.',
    });
    Validations.of(deliver).acknowledge({
      id: 'AwsSolutions-COG4',
      reason: 'The sender is a service authenticated by its request signature; there is no Cognito user.',
    });

    const status = webhooks
      .addResource('status')
      .addResource('{event_id}')
      .addMethod('GET', integration, {
        operationName: 'webhookStatus',
        authorizationType: apigateway.AuthorizationType.IAM,
        requestParameters: { 'method.request.path.event_id': true },
        requestValidator: validator,
      });
    const ack = webhooks.addResource('ack').addMethod('POST', integration, {
      operationName: 'acknowledgeWebhook',
      authorizationType: apigateway.AuthorizationType.IAM,
      requestValidator: validator,
    });
    for (const method of [status, ack]) {
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-COG4',
        reason:
          'Operator routes use IAM (SigV4) authorization; operators are IAM principals, not Cognito users.',
      });
    }

    this.webhookBaseUrl = `${this.api.url}webhooks/v1`;
    if (props.output ?? true) {
      new CfnOutput(this, 'WebhookBaseUrl', {
        value: this.webhookBaseUrl,
        description: 'Register this URL with the sender; events arrive at <url>/<topic>',
      });
    }
  }

  /** Answers API Gateway gives itself (throttling, oversized bodies, denied or failed calls) in the C6 shape. */
  #addGatewayResponses(): void {
    const c6 = (error: string, description: string) =>
      `{"error":"${error}","error_description":"${description}","trace_id":"$context.requestId"}`;
    // Gateway response headers take only literals and request parameters, not context variables: the trace id
    // is in the body, equal to the `x-amzn-RequestId` header API Gateway adds to every answer.
    const headers = (extra: Record<string, string> = {}) => ({
      'Content-Type': "'application/json'",
      ...extra,
    });
    this.api.addGatewayResponse('Throttled', {
      type: apigateway.ResponseType.THROTTLED,
      statusCode: '429',
      responseHeaders: headers({ 'Retry-After': "'1'" }),
      templates: { 'application/json': c6('rate_limited', 'too many requests; retry later') },
    });
    this.api.addGatewayResponse('RequestTooLarge', {
      type: apigateway.ResponseType.REQUEST_TOO_LARGE,
      statusCode: '413',
      responseHeaders: headers(),
      templates: { 'application/json': c6('payload_too_large', 'the body is too large') },
    });
    const refusals: readonly [string, apigateway.ResponseType, string, string][] = [
      ['AccessDenied', apigateway.ResponseType.ACCESS_DENIED, 'forbidden', 'the request was refused'],
      [
        'MissingToken',
        apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN,
        'forbidden',
        'the request was refused',
      ],
      ['BadSigV4', apigateway.ResponseType.INVALID_SIGNATURE, 'forbidden', 'the request was refused'],
      ['ExpiredToken', apigateway.ResponseType.EXPIRED_TOKEN, 'forbidden', 'the request was refused'],
      [
        'BadParameters',
        apigateway.ResponseType.BAD_REQUEST_PARAMETERS,
        'invalid_request',
        'the request is not valid',
      ],
      ['BadBody', apigateway.ResponseType.BAD_REQUEST_BODY, 'invalid_request', 'the request is not valid'],
    ];
    for (const [id, type, error, description] of refusals) {
      this.api.addGatewayResponse(id, {
        type,
        responseHeaders: headers(),
        templates: { 'application/json': c6(error, description) },
      });
    }
    this.api.addGatewayResponse('Default5xx', {
      type: apigateway.ResponseType.DEFAULT_5XX,
      responseHeaders: headers({ 'Retry-After': "'5'" }),
      templates: { 'application/json': c6('unavailable', 'the receiver is unavailable; retry later') },
    });
  }
}
