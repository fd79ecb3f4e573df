import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, type WebhookReceiverProps } from '../../lib/constructs/webhook-receiver';
import { type CfnResource, logicalIdOf, resourceIn } from './fixture';

const PARAMETER = '/partner/webhooks/pricing-secrets';
const outdirs: string[] = [];
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

interface Built {
  readonly app: App;
  readonly stack: Stack;
  readonly receiver: WebhookReceiver;
  readonly template: Template;
}

/** One receiver in a test stack, bundling skipped (TOOLCHAIN gotcha 6), its assembly in a temporary directory. */
const build = (props: Partial<WebhookReceiverProps> = {}): Built => {
  const outdir = mkdtempSync(join(tmpdir(), 'receiver-infra-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'PartnerStack', { env: { account: '123456789012', region: 'eu-west-1' } });
  const receiver = new WebhookReceiver(stack, 'Receiver', { secretsParameterName: PARAMETER, ...props });
  return { app, stack, receiver, template: Template.fromStack(stack) };
};

const resourcesOf = (template: Template, type: string): CfnResource[] =>
  Object.values(template.toJSON().Resources as Record<string, CfnResource>).filter(
    (resource) => resource.Type === type,
  );

const statementsOf = (built: Built): { Action: string | string[]; Resource: unknown }[] =>
  resourcesOf(built.template, 'AWS::IAM::Policy').flatMap(
    (policy) =>
      (policy.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
        .Statement,
  );

const actionsOf = (statement: { Action: string | string[] }): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

const defaults = build();

describe('WebhookReceiver table', () => {
  const table = () => resourceIn(defaults.template, defaults.receiver.table);

  it('is keyed by event_id (string) and expires items by expires_at', () => {
    expect({
      keys: table().Properties.KeySchema,
      attributes: table().Properties.AttributeDefinitions,
      ttl: table().Properties.TimeToLiveSpecification,
    }).toEqual({
      keys: [{ AttributeName: 'event_id', KeyType: 'HASH' }],
      attributes: [{ AttributeName: 'event_id', AttributeType: 'S' }],
      ttl: { AttributeName: 'expires_at', Enabled: true },
    });
  });

  it('has point-in-time recovery and on-demand billing', () => {
    expect(table().Properties).toMatchObject({
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('is encrypted with the AWS managed key by default', () => {
    expect(table().Properties.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('is encrypted with a customer key when one is given, and the function may use it', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Keyed');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const receiver = new WebhookReceiver(stack, 'Receiver', {
      secretsParameterName: PARAMETER,
      tableEncryptionKey: key,
    });
    const template = Template.fromStack(stack);
    expect(resourceIn(template, receiver.table).Properties.SSESpecification).toEqual({
      SSEEnabled: true,
      SSEType: 'KMS',
      KMSMasterKeyId: { 'Fn::GetAtt': [logicalIdOf(key), 'Arn'] },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
            Resource: { 'Fn::GetAtt': [logicalIdOf(key), 'Arn'] },
          }),
        ]),
      },
    });
  });

  it('is retained with deletion protection by default', () => {
    const resource = defaults.template.toJSON().Resources[logicalIdOf(defaults.receiver.table)];
    expect({
      deletion: resource.DeletionPolicy,
      protection: resource.Properties.DeletionProtectionEnabled,
    }).toEqual({ deletion: 'Retain', protection: true });
  });

  it('is deleted without protection when the removal policy says DESTROY', () => {
    const built = build({ removalPolicy: RemovalPolicy.DESTROY });
    const resource = built.template.toJSON().Resources[logicalIdOf(built.receiver.table)];
    expect({
      deletion: resource.DeletionPolicy,
      protection: resource.Properties.DeletionProtectionEnabled,
    }).toEqual({ deletion: 'Delete', protection: false });
  });
});

describe('WebhookReceiver function', () => {
  const fn = () => resourceIn(defaults.template, defaults.receiver.function);
  const environment = (built: Built) =>
    (
      resourceIn(built.template, built.receiver.function).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;

  it('runs Node.js 24 on ARM64 with active tracing and a 10 s timeout', () => {
    expect(fn().Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      Timeout: 10,
      Handler: 'index.handler',
    });
  });

  it('is configured with the table, the secrets parameter name, the handler version and 7 dedup days', () => {
    expect(environment(defaults)).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      RECEIVER_TABLE_NAME: { Ref: logicalIdOf(defaults.receiver.table) },
      WEBHOOK_SECRETS_PARAMETER: PARAMETER,
      SECRETS_CACHE_SECONDS: '300',
      HANDLER_VERSION: 'reference-1',
      DEDUP_DAYS: '7',
    });
  });

  it('never carries secrets in its environment', () => {
    const variables = environment(defaults);
    expect(Object.keys(variables)).not.toContain('WEBHOOK_SECRETS');
    expect(JSON.stringify(defaults.template.toJSON())).not.toMatch(/whsec_/);
  });

  it('takes the handler version, dedup days, memory and timeout from its props', () => {
    const built = build({
      handlerVersion: 'orders-2',
      dedupDays: 10,
      memorySize: 1024,
      timeout: Duration.seconds(8),
    });
    expect(environment(built)).toMatchObject({ HANDLER_VERSION: 'orders-2', DEDUP_DAYS: '10' });
    expect(resourceIn(built.template, built.receiver.function).Properties).toMatchObject({
      MemorySize: 1024,
      Timeout: 8,
    });
  });

  it('writes to its own log group with a retention', () => {
    expect(fn().Properties.LoggingConfig).toEqual({
      LogGroup: { Ref: logicalIdOf(defaults.receiver.functionLogs) },
    });
    expect(resourceIn(defaults.template, defaults.receiver.functionLogs).Properties.RetentionInDays).toBe(90);
  });

  it('refuses a dedup memory under one day or in fractions of a day', () => {
    expect(() => build({ dedupDays: 0 })).toThrow(/dedupDays/);
    expect(() => build({ dedupDays: 1.5 })).toThrow(/dedupDays/);
  });

  it('warns when the dedup memory is shorter than the sender retry horizon', () => {
    const warnings = (built: Built) =>
      Annotations.fromStack(built.stack).findWarning('*', Match.stringLikeRegexp('retry horizon'));
    expect(warnings(build({ dedupDays: 3 }))).toHaveLength(1);
    expect(warnings(defaults)).toHaveLength(0);
  });

  it('refuses an empty parameter name', () => {
    expect(() => build({ secretsParameterName: '  ' })).toThrow(/secretsParameterName/);
  });
});

describe('WebhookReceiver grants', () => {
  it('may read and write items of its table and nothing else in DynamoDB', () => {
    const dynamo = statementsOf(defaults).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('dynamodb:')),
    );
    expect(dynamo).toEqual([
      expect.objectContaining({
        Action: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:Query',
          'dynamodb:DescribeTable',
        ],
        Resource: { 'Fn::GetAtt': [logicalIdOf(defaults.receiver.table), 'Arn'] },
      }),
    ]);
  });

  it('may read exactly the secrets parameter', () => {
    const ssm = statementsOf(defaults).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('ssm:')),
    );
    expect(ssm).toEqual([
      expect.objectContaining({
        Action: 'ssm:GetParameter',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':ssm:eu-west-1:123456789012:parameter/partner/webhooks/pricing-secrets',
            ],
          ],
        },
      }),
    ]);
  });

  it('may decrypt with the parameter key when one is given', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'ParameterKey');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    new WebhookReceiver(stack, 'Receiver', { secretsParameterName: PARAMETER, secretsParameterKey: key });
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': [logicalIdOf(key), 'Arn'] } }),
        ]),
      },
    });
  });

  it('uses the wildcard resource only for X-Ray', () => {
    const wildcard = statementsOf(defaults).filter((statement) => statement.Resource === '*');
    expect(wildcard.flatMap(actionsOf).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });
});

describe('WebhookReceiver API', () => {
  const methods = () =>
    resourcesOf(defaults.template, 'AWS::ApiGateway::Method').map((method) => method.Properties);
  const pathOf = (resourceRef: unknown): string => {
    const resources = defaults.template.toJSON().Resources as Record<string, CfnResource>;
    const parts: string[] = [];
    let ref = resourceRef as { Ref?: string } | { 'Fn::GetAtt': [string, string] };
    for (;;) {
      if (!('Ref' in ref) || !ref.Ref) break;
      const resource = resources[ref.Ref];
      if (resource?.Type !== 'AWS::ApiGateway::Resource') break;
      parts.unshift(resource.Properties.PathPart as string);
      ref = resource.Properties.ParentId as typeof ref;
    }
    return `/${parts.join('/')}`;
  };

  it('serves exactly the three receiver routes: delivery open, status and ack behind IAM', () => {
    const routes = methods()
      .map((method) => ({
        route: `${method.HttpMethod as string} ${pathOf(method.ResourceId)}`,
        auth: method.AuthorizationType,
      }))
      .sort((a, b) => a.route.localeCompare(b.route));
    expect(routes).toEqual([
      { route: 'GET /webhooks/status/{event_id}', auth: 'AWS_IAM' },
      { route: 'POST /webhooks/ack', auth: 'AWS_IAM' },
      { route: 'POST /webhooks/v1/{topic}', auth: 'NONE' },
    ]);
  });

  it('proxies every route to the receiver function with a request validator', () => {
    for (const method of methods()) {
      expect(method.Integration).toMatchObject({ Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' });
      expect(method.RequestValidatorId).toBeDefined();
    }
  });

  it('passes bodies as raw bytes (every media type binary)', () => {
    defaults.template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*/*'] });
  });

  it('logs access as JSON, executes with INFO logs without bodies, traces, and throttles 50/s burst 100', () => {
    defaults.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'live',
      TracingEnabled: true,
      AccessLogSetting: {
        DestinationArn: { 'Fn::GetAtt': [logicalIdOf(defaults.receiver.accessLogs), 'Arn'] },
        Format: Match.stringLikeRegexp('requestId'),
      },
      MethodSettings: [
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'INFO',
          DataTraceEnabled: false,
          MetricsEnabled: true,
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
        },
      ],
    });
  });

  it('takes throttling and stage name from its props', () => {
    const built = build({ rateLimitRequestsPerSecond: 5, burstLimitRequests: 10, stageName: 'prod' });
    built.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 })],
    });
  });

  it('answers throttling with 429, Retry-After and a C6 body', () => {
    defaults.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'THROTTLED',
      StatusCode: '429',
      ResponseParameters: {
        'gatewayresponse.header.Retry-After': "'1'",
        'gatewayresponse.header.Content-Type': "'application/json'",
      },
      ResponseTemplates: {
        'application/json': Match.stringLikeRegexp(
          '"error":"rate_limited".*"trace_id":"\\$context.requestId"',
        ),
      },
    });
  });

  it('answers its own 5xx with Retry-After in the C6 shape', () => {
    defaults.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'DEFAULT_5XX',
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': "'5'" }),
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"error":"unavailable"') },
    });
  });

  it('outputs the base URL to register, ending /webhooks/v1', () => {
    const outputs = Object.entries(defaults.template.findOutputs('*')).filter(([id]) =>
      id.startsWith('ReceiverWebhookBaseUrl'),
    );
    expect(outputs).toHaveLength(1);
    expect(JSON.stringify(outputs[0]?.[1].Value)).toMatch(/webhooks\/v1"\]\]\}$/);
  });

  it('adds no base URL output when asked not to', () => {
    const outputs = Object.keys(build({ output: false }).template.findOutputs('*'));
    expect(outputs.filter((id) => id.startsWith('ReceiverWebhookBaseUrl'))).toEqual([]);
  });
});

interface Violation {
  readonly ruleName: string;
  readonly violatingConstructs: readonly { readonly constructPath: string }[];
}

interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName?: string;
    readonly violations?: readonly Violation[];
  }[];
}

describe('WebhookReceiver under cdk-nag (AWS Solutions)', () => {
  const synthClean = (
    props: Partial<WebhookReceiverProps> = {},
    extra?: (stack: Stack) => Partial<WebhookReceiverProps>,
  ) => {
    const outdir = mkdtempSync(join(tmpdir(), 'receiver-nag-'));
    outdirs.push(outdir);
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'PartnerStack');
    new WebhookReceiver(stack, 'Receiver', { secretsParameterName: PARAMETER, ...props, ...extra?.(stack) });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    let error: unknown;
    try {
      app.synth();
    } catch (thrown) {
      error = thrown;
    }
    const report = JSON.parse(
      readFileSync(join(outdir, 'validation-report.json'), 'utf8'),
    ) as ValidationReport;
    return { error, violations: report.pluginReports.flatMap((plugin) => plugin.violations ?? []) };
  };

  it('reports findings in the same stack (the checks are live), none of them in the receiver', () => {
    const result = synthClean({}, (stack) => {
      new sqs.Queue(stack, 'PlainQueue');
      return {};
    });
    const paths = result.violations.flatMap((violation) =>
      violation.violatingConstructs.map((construct) => construct.constructPath),
    );
    expect(result.error).toMatchObject({ name: 'ValidationFailed' });
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((path) => !path.startsWith('PartnerStack/PlainQueue'))).toEqual([]);
  });

  it('has zero unacknowledged findings with the defaults', () => {
    expect(synthClean()).toEqual({ error: undefined, violations: [] });
  });

  it('has zero unacknowledged findings with customer keys and no account logging role', () => {
    const result = synthClean({ manageAccountLoggingRole: false }, (stack) => ({
      tableEncryptionKey: new kms.Key(stack, 'TableKey', { enableKeyRotation: true }),
      secretsParameterKey: new kms.Key(stack, 'ParameterKey', { enableKeyRotation: true }),
    }));
    expect(result).toEqual({ error: undefined, violations: [] });
  });
});
