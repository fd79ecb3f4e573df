import { Match, Template } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUCKETS,
  CATALOG_RATE_LIMIT,
  consumerOfQueue,
  EVENT_SOURCE_MAPPINGS,
  environmentOf,
  FUNCTION_ACCESS,
  FUNCTIONS,
  type FunctionDefinition,
  KEYS,
  QUEUES,
  ROUTES,
  SCHEDULER,
  TABLES,
  VISIBILITY_TIMEOUT_FACTOR,
} from '../../functions/definitions';
import { API_NAME_ENV_VAR } from '../../functions/definitions/objectives';
import { CALLER_KEY_CACHE_SECONDS } from '../../functions/usecases/access/api-keys';
import { queueEntries } from '../../lib/definition-entries';
import {
  arnOf,
  type CfnResource,
  importedFrom,
  logicalIdOf,
  type PricingAppFixture,
  pricingApp,
  resourceIn,
} from './fixture';

let fixture: PricingAppFixture;
let template: Template;

beforeAll(() => {
  fixture = pricingApp();
  template = Template.fromStack(fixture.stacks.service);
});
afterAll(() => fixture.cleanup());

const resourceOf = (construct: Parameters<typeof logicalIdOf>[0]) => resourceIn(template, construct);

const queues = queueEntries().map(([queueId, definition]) => ({ queueId, definition }));
const queueOf = (queueId: keyof typeof QUEUES) => fixture.stacks.service.queues[queueId].queue;
const functions = Object.entries(FUNCTIONS).map(([functionId, definition]) => ({
  functionId: functionId as keyof typeof FUNCTIONS,
  definition: definition as FunctionDefinition,
}));
const functionOf = (functionId: keyof typeof FUNCTIONS) => fixture.stacks.service.functions[functionId];

describe('queues', () => {
  it('deploys one queue per QUEUES entry', () => {
    template.resourceCountIs('AWS::SQS::Queue', queues.length);
  });

  it.each(queues)('$queueId is encrypted with the data key', ({ queueId }) => {
    expect(resourceOf(queueOf(queueId)).Properties.KmsMasterKeyId).toEqual(
      importedFrom(fixture.stacks.stateful.keys.data),
    );
  });

  it.each(queues)('$queueId refuses requests without TLS', ({ queueId }) => {
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalIdOf(queueOf(queueId)) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sqs:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it.each(queues)('$queueId keeps messages for its definition’s retention', ({ queueId, definition }) => {
    expect(resourceOf(queueOf(queueId)).Properties.MessageRetentionPeriod).toBe(
      definition.retentionDays * 24 * 60 * 60,
    );
  });

  it.each(queues.filter(({ queueId }) => consumerOfQueue(queueId)))(
    '$queueId hides messages for at least 6 × its consumer’s timeout',
    ({ queueId }) => {
      const consumer = consumerOfQueue(queueId) as FunctionDefinition;
      expect(resourceOf(queueOf(queueId)).Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
        VISIBILITY_TIMEOUT_FACTOR * consumer.timeoutSeconds,
      );
    },
  );
});

describe('stream → fanout mapping', () => {
  const mapping = EVENT_SOURCE_MAPPINGS.eventsToFanout;
  const esm = (): Record<string, unknown> => {
    const found = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalIdOf(functionOf(mapping.function).function) } },
    });
    const [resource] = Object.values(found);
    if (!resource) throw new Error('no event source mapping for the fanout function');
    return resource.Properties;
  };

  it('reads the events table stream', () => {
    expect(esm().EventSourceArn).toEqual(importedFrom(fixture.stacks.stateful.tables.events));
  });

  it('bisects a failing batch', () => {
    expect(esm().BisectBatchOnFunctionError).toBe(mapping.bisectBatchOnError);
  });

  it('retries as often as its definition says', () => {
    expect(esm().MaximumRetryAttempts).toBe(mapping.maxRetryAttempts);
  });

  it('sends exhausted batches to the on-failure queue', () => {
    expect(esm().DestinationConfig).toEqual({
      OnFailure: { Destination: arnOf(queueOf(mapping.onFailureQueue)) },
    });
  });

  it('reports batch item failures', () => {
    expect(esm().FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('uses its definition’s batch size and starting position', () => {
    expect({ batch: esm().BatchSize, start: esm().StartingPosition }).toEqual({
      batch: mapping.batchSize,
      start: mapping.startingPosition,
    });
  });
});

describe('delivery queue → deliver mapping', () => {
  const mapping = EVENT_SOURCE_MAPPINGS.deliveryToDeliver;

  it('consumes the delivery queue with its definition’s batching and reports batch item failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(functionOf(mapping.function).function) },
      EventSourceArn: arnOf(queueOf(mapping.queue)),
      BatchSize: mapping.batchSize,
      MaximumBatchingWindowInSeconds: mapping.maxBatchingWindowSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });
});

describe('functions', () => {
  const propertiesOf = (functionId: keyof typeof FUNCTIONS) =>
    resourceOf(functionOf(functionId).function).Properties;
  const variablesOf = (functionId: keyof typeof FUNCTIONS): Record<string, unknown> =>
    (propertiesOf(functionId).Environment as { Variables: Record<string, unknown> }).Variables;

  it("deploys one function per FUNCTIONS entry (and CDK's copy handler of the web site)", () => {
    const all = Object.keys(template.findResources('AWS::Lambda::Function'));
    expect(all.filter((id) => !id.startsWith('CustomCDKBucketDeployment'))).toHaveLength(functions.length);
    expect(all.length - functions.length).toBe(1);
  });

  it.each(functions)('$functionId runs on nodejs24.x', ({ functionId }) => {
    expect(propertiesOf(functionId).Runtime).toBe('nodejs24.x');
  });

  it.each(functions)('$functionId runs on arm64', ({ functionId }) => {
    expect(propertiesOf(functionId).Architectures).toEqual(['arm64']);
  });

  it.each(functions)('$functionId has its definition’s timeout and memory', ({ functionId, definition }) => {
    expect({
      timeout: propertiesOf(functionId).Timeout,
      memory: propertiesOf(functionId).MemorySize,
    }).toEqual({
      timeout: definition.timeoutSeconds,
      memory: definition.memoryMb,
    });
  });

  /** The variables a function should get: what its composition reads (`environmentOf`), as configured here. */
  const expectedVariables = (functionId: keyof typeof FUNCTIONS): string[] =>
    // The fixture configures no retired receipt keys and no allowed ranges; the API's name goes to the
    // objectives' reader. NODE_OPTIONS is the runtime's (source maps).
    [
      'NODE_OPTIONS',
      ...environmentOf(functionId)
        .filter((variable) => variable.required || variable.name === API_NAME_ENV_VAR)
        .filter(
          (variable) => variable.name !== API_NAME_ENV_VAR || FUNCTION_ACCESS[functionId].readsObjectives,
        )
        .map((variable) => variable.name),
    ];

  /** The variables that name a table, queue, bucket or key. */
  const RESOURCE_VARIABLES = new Set<string>([
    ...Object.values(TABLES).map((table) => table.envVar),
    ...Object.values(QUEUES).map((queue) => queue.envVar),
    ...Object.values(BUCKETS).map((bucket) => bucket.envVar),
    ...Object.values(KEYS).map((key) => key.envVar),
  ]);

  /**
   * Everything the function's role is granted, as text: its inline policies in the service stack and the managed
   * policies of the stateful stack attached to it (the buckets' writer and reader policies).
   */
  const grantsOf = (functionId: keyof typeof FUNCTIONS): string => {
    const resources = template.toJSON().Resources as Record<string, CfnResource>;
    const stateful = Template.fromStack(fixture.stacks.stateful).toJSON().Resources as Record<
      string,
      CfnResource
    >;
    const role = logicalIdOf(functionOf(functionId).role);
    const inline = Object.values(resources).filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' &&
        JSON.stringify(resource.Properties.Roles).includes(`"${role}"`),
    );
    const managedArns = JSON.stringify(resources[role]?.Properties.ManagedPolicyArns ?? []);
    const managed = Object.entries(stateful)
      .filter(([id, resource]) => resource.Type === 'AWS::IAM::ManagedPolicy' && managedArns.includes(id))
      .map(([, resource]) => resource);
    return JSON.stringify([...inline, ...managed].map((policy) => policy.Properties.PolicyDocument));
  };

  /** The logical ids (of either stack) a value refers to, directly or through a cross-stack export. */
  const referencedIds = (value: unknown): string[] => {
    const text = JSON.stringify(value);
    const ids = [
      ...Object.keys(template.toJSON().Resources as object),
      ...Object.keys(Template.fromStack(fixture.stacks.stateful).toJSON().Resources as object),
    ];
    return ids.filter((id) => new RegExp(`(^|[^A-Za-z0-9])(ExportsOutput(Ref|FnGetAtt))?${id}`).test(text));
  };

  /**
   * What is wrong with a function's variables: one its composition reads and the template does not set, one the
   * template sets that nothing reads, or one naming a table, queue, bucket or key the function is not granted.
   */
  const environmentProblems = (
    functionId: keyof typeof FUNCTIONS,
    variables: Record<string, unknown>,
  ): string[] => {
    const expected = expectedVariables(functionId);
    const grants = grantsOf(functionId);
    return [
      ...expected.filter((name) => !(name in variables)).map((name) => `${name}: read but not set`),
      ...Object.keys(variables)
        .filter((name) => !expected.includes(name))
        .map((name) => `${name}: set but not read`),
      ...Object.entries(variables)
        .filter(([name]) => RESOURCE_VARIABLES.has(name))
        .filter(([, value]) => {
          const ids = referencedIds(value);
          return ids.length === 0 || !ids.some((id) => grants.includes(id));
        })
        .map(([name]) => `${name}: names a resource the function has no grant for`),
    ];
  };

  it.each(functions)(
    '$functionId gets exactly the variables its composition reads, each naming a resource it is granted',
    ({ functionId }) => {
      expect(environmentProblems(functionId, variablesOf(functionId))).toEqual([]);
    },
  );

  it('reports a planted mismatch: a variable renamed, one too many, one naming an ungranted table', () => {
    const variables = { ...variablesOf('catalog') };
    const quotesTable = variablesOf('checkout')[TABLES.quotes.envVar];
    const { [TABLES.catalog.envVar]: catalogTable, ...renamed } = variables;
    expect(environmentProblems('catalog', { ...renamed, CATALOG_TABLE: catalogTable })).toEqual([
      `${TABLES.catalog.envVar}: read but not set`,
      'CATALOG_TABLE: set but not read',
    ]);
    expect(environmentProblems('catalog', { ...variables, [TABLES.quotes.envVar]: quotesTable })).toEqual([
      `${TABLES.quotes.envVar}: set but not read`,
      `${TABLES.quotes.envVar}: names a resource the function has no grant for`,
    ]);
    expect(environmentProblems('catalog', { ...variables, [TABLES.catalog.envVar]: quotesTable })).toEqual([
      `${TABLES.catalog.envVar}: names a resource the function has no grant for`,
    ]);
  });

  it('gives no function the name of a table, queue, bucket or key it has no grant for', () => {
    const catalog = Object.keys(variablesOf('catalog'));
    expect(catalog).toContain(TABLES.catalog.envVar);
    for (const absent of [
      TABLES.quotes.envVar,
      TABLES.apiKeys.envVar,
      QUEUES.delivery.envVar,
      KEYS.secrets.envVar,
    ])
      expect(catalog).not.toContain(absent);
  });

  it.each(functions)('$functionId does not set the reserved AWS_REGION', ({ functionId }) => {
    expect(variablesOf(functionId)).not.toHaveProperty('AWS_REGION');
  });

  it.each(functions)('$functionId has active X-Ray tracing', ({ functionId }) => {
    expect(propertiesOf(functionId).TracingConfig).toEqual({ Mode: 'Active' });
  });

  it.each(functions)('$functionId logs to its own log group with a retention', ({ functionId }) => {
    const logGroup = resourceOf(functionOf(functionId).logGroup);
    expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it.each(functions)('$functionId uses Resource "*" only for X-Ray and ListStreams', ({ functionId }) => {
    const policy = resourceOf(functionOf(functionId).role.node.findChild('DefaultPolicy')) as CfnResource;
    const statements = (
      policy.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }
    ).Statement;
    const wildcardActions = statements
      .filter((statement) => statement.Resource === '*')
      .flatMap((statement) => [statement.Action].flat());
    expect(
      wildcardActions.filter(
        (action) =>
          !['xray:PutTraceSegments', 'xray:PutTelemetryRecords', 'dynamodb:ListStreams'].includes(
            String(action),
          ),
      ),
    ).toEqual([]);
  });
});

describe('REST API', () => {
  const AUTH = {
    none: { AuthorizationType: 'NONE', ApiKeyRequired: false },
    // The caller-key authorizer, and the usage plan's API key it returns (apiKeySourceType AUTHORIZER).
    api_key: { AuthorizationType: 'CUSTOM', ApiKeyRequired: true },
    admin: { AuthorizationType: 'AWS_IAM', ApiKeyRequired: false },
    // The function checks the partner key itself.
    partner: { AuthorizationType: 'NONE', ApiKeyRequired: false },
  } as const;

  const methodFor = (route: (typeof ROUTES)[number]): apigateway.Method => {
    let resource: apigateway.IResource | undefined = fixture.stacks.service.api.api.root;
    for (const part of route.path.split('/').filter((segment) => segment.length > 0)) {
      resource = resource?.getResource(part);
    }
    const method = resource?.node.tryFindChild(route.method);
    if (!(method instanceof apigateway.Method)) throw new Error(`no ${route.method} ${route.path}`);
    return method;
  };

  it.each(ROUTES.map((route) => ({ ...route })))('$method $path exists with $auth auth', (route) => {
    const properties = resourceOf(methodFor(route)).Properties;
    expect({
      HttpMethod: properties.HttpMethod,
      AuthorizationType: properties.AuthorizationType,
      ApiKeyRequired: properties.ApiKeyRequired ?? false,
    }).toEqual({ HttpMethod: route.method, ...AUTH[route.auth] });
  });

  it.each(ROUTES.map((route) => ({ ...route })))(
    '$method $path proxies to the $function function',
    (route) => {
      const integration = resourceOf(methodFor(route)).Properties.Integration as {
        Type: string;
        Uri: unknown;
      };
      expect({ type: integration.Type, uri: JSON.stringify(integration.Uri) }).toEqual({
        type: 'AWS_PROXY',
        uri: expect.stringContaining(logicalIdOf(functionOf(route.function).function)),
      });
    },
  );

  it('has one method per route', () => {
    template.resourceCountIs('AWS::ApiGateway::Method', ROUTES.length);
  });

  it('throttles the usage plan at 100 req/s with a burst of 200', () => {
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 100, BurstLimit: 200 },
    });
  });

  it('creates no API key of its own: each caller key is registered in the usage plan when issued', () => {
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    template.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 0);
  });

  it('takes the usage identifier from the authorizer, so the usage plan counts per caller key', () => {
    expect(resourceOf(fixture.stacks.service.api.api).Properties.ApiKeySourceType).toBe('AUTHORIZER');
  });

  it('names the usage plan after the API, as the admin function is told (CALLER_USAGE_PLAN_NAME)', () => {
    const plan = resourceOf(fixture.stacks.service.api.usagePlan).Properties;
    const variables = (
      resourceOf(functionOf('admin').function).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect({ plan: plan.UsagePlanName, admin: variables.CALLER_USAGE_PLAN_NAME }).toEqual({
      plan: 'pricing-test-service-api-callers',
      admin: 'pricing-test-service-api-callers',
    });
  });

  it('puts the caller-key authorizer, cached per x-api-key for CALLER_KEY_CACHE_SECONDS, on every api_key route', () => {
    const authorizer = fixture.stacks.service.api.callerKeyAuthorizer;
    expect(resourceOf(authorizer).Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.x-api-key',
      AuthorizerResultTtlInSeconds: CALLER_KEY_CACHE_SECONDS,
      AuthorizerUri: {
        'Fn::Join': ['', expect.arrayContaining([arnOf(functionOf('authorizer').function)])],
      },
    });
    expect(CALLER_KEY_CACHE_SECONDS).toBe(30);
    const callerKeyRoutes = ROUTES.filter((route) => route.auth === 'api_key');
    expect(callerKeyRoutes.length).toBeGreaterThan(0);
    for (const route of ROUTES) {
      const properties = resourceOf(methodFor(route)).Properties;
      expect(properties.AuthorizerId, `${route.method} ${route.path}`).toEqual(
        route.auth === 'api_key' ? { Ref: logicalIdOf(authorizer) } : undefined,
      );
    }
  });

  it('lets API Gateway, for this authorizer only, invoke the authorizer function', () => {
    const permissions = Object.values(
      template.findResources('AWS::Lambda::Permission', {
        Properties: { FunctionName: arnOf(functionOf('authorizer').function) },
      }),
    ) as CfnResource[];
    expect(permissions.map((permission) => permission.Properties)).toEqual([
      expect.objectContaining({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        SourceArn: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':execute-api:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':',
              { Ref: logicalIdOf(fixture.stacks.service.api.api) },
              '/authorizers/',
              { Ref: logicalIdOf(fixture.stacks.service.api.callerKeyAuthorizer) },
            ],
          ],
        },
      }),
    ]);
  });

  it('validates request bodies and parameters', () => {
    template.hasResourceProperties('AWS::ApiGateway::RequestValidator', {
      ValidateRequestBody: true,
      ValidateRequestParameters: true,
    });
  });

  it('writes JSON access logs to its log group', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: {
        DestinationArn: arnOf(fixture.stacks.service.api.accessLogs),
        Format: Match.stringLikeRegexp('^\\{.*"requestId":"\\$context.requestId"'),
      },
    });
  });

  it('traces and logs every method of the stage without request bodies', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      TracingEnabled: true,
      MethodSettings: [
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'INFO',
          DataTraceEnabled: false,
        }),
      ],
    });
  });

  it('is protected by a WAF web ACL', () => {
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      ResourceArn: Match.anyValue(),
      WebACLArn: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] },
    });
  });

  it("blocks an IP address only above twice an API key's sustained rate, so the key's own limit comes first", () => {
    const perKeyIn5Minutes = CATALOG_RATE_LIMIT.requestsPerSecond * 300;
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: Match.arrayWith([
        Match.objectLike({
          Name: 'RequestsPerIp',
          Action: { Block: {} },
          Statement: { RateBasedStatement: { Limit: 2 * perKeyIn5Minutes, AggregateKeyType: 'IP' } },
        }),
      ]),
    });
  });
});

describe('retry scheduler', () => {
  const scheduler = () => fixture.stacks.service.scheduler;

  it('creates the schedule group named in SCHEDULER', () => {
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: SCHEDULER.groupName });
  });

  it('lets EventBridge Scheduler (of this account and group) assume the role', () => {
    expect(resourceOf(scheduler().role).Properties.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            ArnEquals: { 'aws:SourceArn': arnOf(scheduler().scheduleGroup) },
          },
        },
      ],
    });
  });

  it('lets the scheduler role only send to the delivery queue (with the data key, through SQS only)', () => {
    expect(resourceOf(scheduler().role).Properties.Policies).toEqual([
      {
        PolicyName: 'SendToTarget',
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arnOf(queueOf('delivery')) },
            {
              Effect: 'Allow',
              Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
              Resource: importedFrom(fixture.stacks.stateful.keys.data),
              Condition: {
                StringEquals: {
                  'kms:ViaService': { 'Fn::Join': ['', ['sqs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
                },
              },
            },
          ],
        },
      },
    ]);
  });

  it('attaches no other policy to the scheduler role', () => {
    const attached = template.findResources('AWS::IAM::Policy', {
      Properties: { Roles: Match.arrayWith([{ Ref: logicalIdOf(scheduler().role) }]) },
    });
    expect({
      attached: Object.keys(attached),
      managed: resourceOf(scheduler().role).Properties.ManagedPolicyArns,
    }).toEqual({
      attached: [],
      managed: undefined,
    });
  });

  it('lets the deliver function create schedules only in the group (Scheduler deletes them itself)', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: logicalIdOf(functionOf('deliver').role) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: 'scheduler:CreateSchedule',
            Resource: {
              'Fn::Join': [
                '',
                Match.arrayWith([Match.stringLikeRegexp(`:schedule/${SCHEDULER.groupName}/\\*$`)]),
              ],
            },
          },
        ]),
      },
    });
  });

  it('lets the deliver function pass only the scheduler role, only to Scheduler', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: logicalIdOf(functionOf('deliver').role) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: 'iam:PassRole',
            Resource: arnOf(scheduler().role),
            Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
          },
        ]),
      },
    });
  });
});

describe('alarms', () => {
  const terminal = queues.filter(({ definition }) => 'terminal' in definition && definition.terminal);

  it.each(terminal)('alarms when $queueId holds any message', ({ queueId }) => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(queueOf(queueId)), 'QueueName'] } },
      ],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
  });
});
