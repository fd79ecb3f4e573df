import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FUNCTIONS,
  type FunctionId,
  QUEUES,
  SCHEDULER,
  SWEEPER_RATE_MINUTES,
  VISIBILITY_TIMEOUT_FACTOR,
} from '../../functions/definitions';
import { rateExpression } from '../../lib/constructs/rate-schedule-to-function';
import { type ServiceTableId, serviceTableEntries } from '../../lib/definition-entries';
import { addPricingStacks } from '../../lib/pricing-app';
import { PricingServiceStack } from '../../lib/stacks/service-stack';
import { PricingStatefulStack } from '../../lib/stacks/stateful-stack';
import {
  arnOf,
  type CfnResource,
  logicalIdOf,
  type PricingAppFixture,
  pricingApp,
  resourceIn,
} from './fixture';

/** The webhook delivery slice of the app: its tables, functions, routes, schedule, grants, queue and alarm. */
let fixture: PricingAppFixture;
let stateful: Template;
let service: Template;

beforeAll(() => {
  fixture = pricingApp();
  stateful = Template.fromStack(fixture.stacks.stateful);
  service = Template.fromStack(fixture.stacks.service);
});
afterAll(() => fixture.cleanup());

const tableProperties = (tableId: ServiceTableId) =>
  resourceIn(stateful, fixture.stacks.stateful.tables[tableId]).Properties;
const functionOf = (functionId: FunctionId) => fixture.stacks.service.functions[functionId];

const hash = (name: string) => ({ AttributeName: name, KeyType: 'HASH' });
const range = (name: string) => ({ AttributeName: name, KeyType: 'RANGE' });
const index = (name: string, partition: string, sort: string, projection = 'ALL') => ({
  IndexName: name,
  KeySchema: [hash(partition), range(sort)],
  Projection: { ProjectionType: projection },
});

describe('webhook tables', () => {
  it('endpoints is keyed by endpoint_id, without TTL, with the partner-key indexes (current and previous)', () => {
    const table = tableProperties('endpoints');
    expect({
      keys: table.KeySchema,
      ttl: table.TimeToLiveSpecification,
      indexes: table.GlobalSecondaryIndexes,
    }).toEqual({
      keys: [hash('endpoint_id')],
      ttl: undefined,
      indexes: [
        {
          IndexName: 'by-partner-key',
          KeySchema: [hash('partner_key_sha256')],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'by-previous-partner-key',
          KeySchema: [hash('previous_partner_key_sha256')],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('deliveries is keyed by (event_id, endpoint_id) and expires by expires_at', () => {
    const table = tableProperties('deliveries');
    expect({ keys: table.KeySchema, ttl: table.TimeToLiveSpecification }).toEqual({
      keys: [hash('event_id'), range('endpoint_id')],
      ttl: { AttributeName: 'expires_at', Enabled: true },
    });
  });

  it('deliveries has the keys-only by-endpoint-keys and by-status-keys indexes over ts_id (the retired ones gone)', () => {
    expect(tableProperties('deliveries').GlobalSecondaryIndexes).toEqual([
      index('by-endpoint-keys', 'endpoint_shard', 'ts_id', 'KEYS_ONLY'),
      index('by-status-keys', 'status', 'ts_id', 'KEYS_ONLY'),
    ]);
  });

  it('replays is keyed by (replay_id, sk) and expires by expires_at, without indexes', () => {
    const table = tableProperties('replays');
    expect({
      keys: table.KeySchema,
      ttl: table.TimeToLiveSpecification,
      indexes: table.GlobalSecondaryIndexes,
    }).toEqual({
      keys: [hash('replay_id'), range('sk')],
      ttl: { AttributeName: 'expires_at', Enabled: true },
      indexes: undefined,
    });
  });

  it('events has the keys-only by-day-keys and sparse fanout-pending-keys indexes over ts_id', () => {
    expect(tableProperties('events').GlobalSecondaryIndexes).toEqual([
      index('by-day-keys', 'day', 'ts_id', 'KEYS_ONLY'),
      index('fanout-pending-keys', 'fanout_pending', 'ts_id', 'KEYS_ONLY'),
    ]);
  });

  it('events declares the index key attributes as strings', () => {
    expect(tableProperties('events').AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: 'day', AttributeType: 'S' },
        { AttributeName: 'ts_id', AttributeType: 'S' },
        { AttributeName: 'fanout_pending', AttributeType: 'S' },
      ]),
    );
  });
});

describe('webhook functions', () => {
  it.each(['webhooks', 'sweeper', 'replay'] as const)('%s is deployed on nodejs24.x', (functionId) => {
    expect(resourceIn(service, functionOf(functionId).function).Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Timeout: FUNCTIONS[functionId].timeoutSeconds,
    });
  });

  it('the replay function has no trigger: no event source mapping, no resource policy', () => {
    const target = { Ref: logicalIdOf(functionOf('replay').function) };
    const withTarget = (type: string, key: string) =>
      Object.keys(service.findResources(type, { Properties: { [key]: target } }));
    expect({
      mappings: withTarget('AWS::Lambda::EventSourceMapping', 'FunctionName'),
      permissions: [
        ...Object.keys(
          service.findResources('AWS::Lambda::Permission', {
            Properties: { FunctionName: arnOf(functionOf('replay').function) },
          }),
        ),
        ...withTarget('AWS::Lambda::Permission', 'FunctionName'),
      ],
    }).toEqual({ mappings: [], permissions: [] });
  });

  it('tells partners whom to trust: the account to the endpoint registrations, the deliver role as an output', () => {
    const variables = (functionId: FunctionId) =>
      (
        resourceIn(service, functionOf(functionId).function).Properties.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;
    expect(variables('webhooks').PARTNER_TRUST_PRINCIPAL).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']],
    });
    // Only the function that registers endpoints is told; no other reads it.
    expect(variables('deliver').PARTNER_TRUST_PRINCIPAL).toBeUndefined();
    expect(service.findOutputs('WebhookDeliveryRoleArn').WebhookDeliveryRoleArn?.Value).toEqual({
      'Fn::GetAtt': [logicalIdOf(fixture.stacks.service.functions.deliver.role), 'Arn'],
    });
  });

  it('no function sets the WEBHOOK_* settings: the production defaults apply', () => {
    const variables = (Object.keys(FUNCTIONS) as FunctionId[]).flatMap((functionId) =>
      Object.keys(
        (
          resourceIn(service, functionOf(functionId).function).Properties.Environment as {
            Variables: Record<string, unknown>;
          }
        ).Variables,
      ).filter((name) => name.startsWith('WEBHOOK_')),
    );
    expect(variables).toEqual([]);
  });
});

describe('webhook routes', () => {
  const methodOf = (httpMethod: string, path: string): CfnResource => {
    let resource: apigateway.IResource | undefined = fixture.stacks.service.api.api.root;
    for (const part of path.split('/').filter((segment) => segment.length > 0)) {
      resource = resource?.getResource(part);
    }
    const method = resource?.node.tryFindChild(httpMethod);
    if (!(method instanceof apigateway.Method)) throw new Error(`no ${httpMethod} ${path}`);
    return resourceIn(service, method);
  };
  const proxiedTo = (method: CfnResource): string => {
    const uri = JSON.stringify((method.Properties.Integration as { Uri: unknown }).Uri);
    const target = (Object.keys(FUNCTIONS) as FunctionId[]).find((functionId) =>
      uri.includes(logicalIdOf(functionOf(functionId).function)),
    );
    return target ?? uri;
  };

  it.each([
    ['PATCH', '/webhooks/endpoints/{endpoint_id}'],
    ['DELETE', '/webhooks/endpoints/{endpoint_id}'],
    ['POST', '/webhooks/endpoints/{endpoint_id}/rotate-secret'],
  ])('%s %s is IAM-authorized and proxies to the webhooks function', (httpMethod, path) => {
    const method = methodOf(httpMethod, path);
    expect({
      HttpMethod: method.Properties.HttpMethod,
      AuthorizationType: method.Properties.AuthorizationType,
      ApiKeyRequired: method.Properties.ApiKeyRequired ?? false,
      function: proxiedTo(method),
    }).toEqual({
      HttpMethod: httpMethod,
      AuthorizationType: 'AWS_IAM',
      ApiKeyRequired: false,
      function: 'webhooks',
    });
  });

  it('rotate-secret is a resource under the {endpoint_id} path parameter', () => {
    const endpoint = fixture.stacks.service.api.api.root
      .getResource('webhooks')
      ?.getResource('endpoints')
      ?.getResource('{endpoint_id}');
    if (!(endpoint instanceof apigateway.Resource)) throw new Error('no /webhooks/endpoints/{endpoint_id}');
    service.hasResourceProperties('AWS::ApiGateway::Resource', {
      PathPart: 'rotate-secret',
      ParentId: { Ref: logicalIdOf(endpoint) },
    });
  });

  it('GET /changelog is open (no auth, no API key) on the api function', () => {
    const method = methodOf('GET', '/changelog');
    expect({
      AuthorizationType: method.Properties.AuthorizationType,
      ApiKeyRequired: method.Properties.ApiKeyRequired ?? false,
      function: proxiedTo(method),
    }).toEqual({ AuthorizationType: 'NONE', ApiKeyRequired: false, function: 'api' });
  });
});

describe('sweeper schedule', () => {
  const schedule = () => fixture.stacks.service.sweeperSchedule;
  const scheduleProperties = () => resourceIn(service, schedule().schedule).Properties;

  it('runs every SWEEPER_RATE_MINUTES (rate(1 minute)) without a flexible window', () => {
    expect(scheduleProperties()).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
    });
    expect(rateExpression(SWEEPER_RATE_MINUTES)).toBe('rate(1 minute)');
  });

  it('targets the sweeper function with its own role', () => {
    expect(scheduleProperties().Target).toMatchObject({
      Arn: arnOf(functionOf('sweeper').function),
      RoleArn: arnOf(schedule().role),
    });
  });

  it('retries a refused invocation, but never past the next run', () => {
    expect((scheduleProperties().Target as { RetryPolicy: unknown }).RetryPolicy).toEqual({
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: Math.max(60, SWEEPER_RATE_MINUTES * 60),
    });
  });

  it('is not in the retry schedule group (where the deliver function may delete schedules)', () => {
    expect(scheduleProperties().GroupName).not.toBe(SCHEDULER.groupName);
  });

  it('lets only EventBridge Scheduler, for this schedule in this account, assume the role', () => {
    expect(resourceIn(service, schedule().role).Properties.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            ArnEquals: {
              'aws:SourceArn': {
                'Fn::Join': [
                  '',
                  expect.arrayContaining([
                    `:schedule/${scheduleProperties().GroupName}/${scheduleProperties().Name}`,
                  ]),
                ],
              },
            },
          },
        },
      ],
    });
  });

  it('lets the role do nothing but invoke the sweeper function', () => {
    const role = resourceIn(service, schedule().role).Properties;
    const attached = service.findResources('AWS::IAM::Policy', {
      Properties: { Roles: Match.arrayWith([{ Ref: logicalIdOf(schedule().role) }]) },
    });
    expect({
      inline: role.Policies,
      managed: role.ManagedPolicyArns,
      attached: Object.keys(attached),
    }).toEqual({
      inline: [
        {
          PolicyName: 'InvokeTarget',
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Action: 'lambda:InvokeFunction',
                Resource: arnOf(functionOf('sweeper').function),
              },
            ],
          },
        },
      ],
      managed: undefined,
      attached: [],
    });
  });

  it('spells rates as Scheduler accepts them (plural beyond one minute)', () => {
    expect([1, 5].map(rateExpression)).toEqual(['rate(1 minute)', 'rate(5 minutes)']);
  });

  it('refuses a rate below one minute', () => {
    expect(() => rateExpression(0)).toThrow(/whole number of minutes/);
  });
});

/**
 * Each function's permissions as `<action> <resource>` lines, resources named by what they are (`table:events`,
 * `table:events/index/by-day`, `key:data`, `queue:delivery`…), whether or not CDK merged statements.
 */
const permissionsOf = (functionId: FunctionId): string[] => {
  const policy = resourceIn(service, functionOf(functionId).role.node.findChild('DefaultPolicy'));
  const statements = (
    policy.Properties.PolicyDocument as {
      Statement: { Effect: string; Action: unknown; Resource: unknown }[];
    }
  ).Statement.filter((statement) => statement.Effect === 'Allow');
  const labels: [string, string][] = [
    ...serviceTableEntries().map(
      ([tableId]) =>
        [logicalIdOf(fixture.stacks.stateful.tables[tableId]), `table:${tableId}`] as [string, string],
    ),
    ...Object.entries(fixture.stacks.stateful.keys).map(
      ([keyId, key]) => [logicalIdOf(key), `key:${keyId}`] as [string, string],
    ),
    ...Object.entries(fixture.stacks.service.queues).map(
      ([queueId, queue]) => [logicalIdOf(queue.queue), `queue:${queueId}`] as [string, string],
    ),
  ];
  const labelOf = (resource: unknown): string => {
    const text = JSON.stringify(resource);
    const indexName = /\/index\/([\w-]+)/.exec(text)?.[1];
    const found = labels.find(
      ([logicalId]) =>
        text.includes(`ExportsOutputFnGetAtt${logicalId}Arn`) ||
        text === JSON.stringify({ 'Fn::GetAtt': [logicalId, 'Arn'] }),
    );
    if (!found) return text;
    return indexName ? `${found[1]}/index/${indexName}` : found[1];
  };
  return statements.flatMap((statement) =>
    [statement.Action]
      .flat()
      .flatMap((action) =>
        [statement.Resource].flat().map((resource) => `${String(action)} ${labelOf(resource)}`),
      ),
  );
};

const WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
const ITEM_ACTIONS = [
  ...WRITES,
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
];
const tablesWith = (functionId: FunctionId, actions: readonly string[]): string[] =>
  [
    ...new Set(
      permissionsOf(functionId)
        .filter((line) => actions.includes(line.split(' ')[0] ?? ''))
        // An index belongs to its table.
        .map((line) => (line.split(' ')[1] ?? '').replace(/\/index\/.*$/, ''))
        .filter((resource) => resource.startsWith('table:')),
    ),
  ].sort();

/** The deliver function reads and writes the same tables (every one it touches, it also updates). */
const DELIVER_TABLES = [
  'deliveries',
  'deliveryOrder',
  'endpointLimits',
  'endpointStats',
  'endpoints',
  'events',
  'replays',
] as const;

describe('webhook grants', () => {
  const allFunctions = Object.keys(FUNCTIONS) as FunctionId[];

  it.each([
    {
      functionId: 'webhooks',
      writes: ['deliveries', 'deliveryOrder', 'endpoints', 'events', 'idempotency', 'replays', 'senderKeys'],
    },
    { functionId: 'fanout', writes: ['deliveries', 'deliveryOrder', 'events'] },
    {
      functionId: 'deliver',
      writes: DELIVER_TABLES,
    },
    { functionId: 'sweeper', writes: ['deliveries', 'deliveryOrder', 'events'] },
    { functionId: 'replay', writes: ['deliveries', 'deliveryOrder', 'events', 'replays'] },
    {
      functionId: 'admin',
      writes: ['apiKeys', 'catalog', 'changeRequests', 'events', 'idempotency', 'journal', 'priceCache'],
    },
    { functionId: 'rates', writes: ['catalog', 'changeRequests', 'events', 'journal', 'rateState'] },
  ] as const)('$functionId writes exactly the tables $writes', ({ functionId, writes }) => {
    expect(tablesWith(functionId, WRITES)).toEqual(writes.map((tableId) => `table:${tableId}`));
  });

  it.each([
    {
      functionId: 'webhooks',
      reads: [
        'catalog',
        'deliveries',
        'deliveryOrder',
        'endpointStats',
        'endpoints',
        'events',
        'idempotency',
        'replays',
        'senderKeys',
      ],
    },
    { functionId: 'fanout', reads: ['deliveries', 'deliveryOrder', 'endpoints', 'events'] },
    {
      functionId: 'deliver',
      // …and the webhook signing keys, read only (Ed25519 endpoints).
      reads: [...DELIVER_TABLES, 'senderKeys'],
    },
    { functionId: 'sweeper', reads: ['deliveries', 'deliveryOrder', 'endpoints', 'events'] },
    { functionId: 'replay', reads: ['deliveries', 'deliveryOrder', 'endpoints', 'events', 'replays'] },
  ] as const)('$functionId touches exactly the tables $reads', ({ functionId, reads }) => {
    expect(tablesWith(functionId, ITEM_ACTIONS)).toEqual(reads.map((tableId) => `table:${tableId}`));
  });

  it('fanout lists the endpoints (Scan) but cannot read one by key or write any', () => {
    expect(
      permissionsOf('fanout')
        .filter((line) => line.endsWith(' table:endpoints'))
        .map((line) => line.split(' ')[0]),
    ).toEqual(['dynamodb:Scan']);
  });

  it('the api function writes no table item and reads only the webhook signing keys (JWKS); DescribeTable on the events table (health)', () => {
    expect({
      writes: tablesWith('api', WRITES),
      items: tablesWith('api', ITEM_ACTIONS),
      describe: tablesWith('api', ['dynamodb:DescribeTable']),
    }).toEqual({ writes: [], items: ['table:senderKeys'], describe: ['table:events'] });
  });

  it.each([
    {
      functionId: 'webhooks',
      indexes: [
        'deliveries/index/by-endpoint-keys',
        'deliveries/index/by-status-keys',
        'endpoints/index/by-partner-key',
        'endpoints/index/by-previous-partner-key',
        'events/index/by-day-keys',
      ],
    },
    { functionId: 'sweeper', indexes: ['events/index/fanout-pending-keys'] },
    { functionId: 'replay', indexes: ['deliveries/index/by-endpoint-keys', 'events/index/by-day-keys'] },
    { functionId: 'admin', indexes: ['apiKeys/index/by-created', 'changeRequests/index/by-created'] },
    { functionId: 'rates', indexes: ['changeRequests/index/by-created'] },
    ...allFunctions
      .filter((functionId) => !['webhooks', 'sweeper', 'replay', 'admin', 'rates'].includes(functionId))
      .map((functionId) => ({ functionId, indexes: [] as string[] })),
  ] as { functionId: FunctionId; indexes: string[] }[])(
    '$functionId queries exactly the indexes $indexes',
    ({ functionId, indexes }) => {
      expect(
        permissionsOf(functionId)
          .filter((line) => line.includes('/index/'))
          .sort(),
      ).toEqual(indexes.map((name) => `dynamodb:Query table:${name}`));
    },
  );

  it('only the functions that list endpoints may Scan them; the exporter scans receipts (backfill), the sweeper the ordered keys (watchdog); nothing else', () => {
    const scans = Object.fromEntries(
      allFunctions
        .map((functionId): [FunctionId, string[]] => [
          functionId,
          permissionsOf(functionId)
            .filter((line) => line.startsWith('dynamodb:Scan '))
            .map((line) => line.split(' ')[1] ?? ''),
        ])
        .filter(([, resources]) => resources.length > 0),
    );
    expect(scans).toEqual({
      webhooks: ['table:endpoints'],
      fanout: ['table:endpoints'],
      sweeper: ['table:endpoints', 'table:deliveryOrder'],
      exporter: ['table:receipts'],
    });
  });

  it('deliver may decrypt endpoint secrets with the secrets key, never encrypt', () => {
    expect(permissionsOf('deliver').filter((line) => line.endsWith(' key:secrets'))).toEqual([
      'kms:Decrypt key:secrets',
    ]);
  });

  it('webhooks may encrypt (and on rotation decrypt) endpoint secrets with the secrets key', () => {
    expect(
      permissionsOf('webhooks')
        .filter((line) => line.endsWith(' key:secrets'))
        .sort(),
    ).toEqual(['kms:Decrypt key:secrets', 'kms:Encrypt key:secrets']);
  });

  it('deliver schedules retries and sends to the delivery queue and its DLQ', () => {
    expect(permissionsOf('deliver')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^scheduler:CreateSchedule .*schedule\/deliveries\/\*/),
        'sqs:SendMessage queue:delivery',
        'sqs:SendMessage queue:deliveryDlq',
      ]),
    );
  });

  it('only the deliver function may create schedules', () => {
    expect(
      allFunctions.filter((functionId) =>
        permissionsOf(functionId).some((line) => line.startsWith('scheduler:CreateSchedule ')),
      ),
    ).toEqual(['deliver']);
  });

  it('only the deliver function may send to the delivery DLQ', () => {
    expect(
      allFunctions.filter((functionId) =>
        permissionsOf(functionId).includes('sqs:SendMessage queue:deliveryDlq'),
      ),
    ).toEqual(['deliver']);
  });

  it.each(['webhooks', 'fanout', 'deliver', 'sweeper', 'replay'] as const)(
    '%s may send to the delivery queue',
    (functionId) => {
      expect(permissionsOf(functionId)).toContain('sqs:SendMessage queue:delivery');
    },
  );
});

describe('delivery queue', () => {
  const delivery = () => resourceIn(service, fixture.stacks.service.queues.delivery.queue).Properties;

  it('redrives to the delivery DLQ after maxReceiveCount receives', () => {
    expect(delivery().RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(fixture.stacks.service.queues.deliveryDlq.queue),
      maxReceiveCount: QUEUES.delivery.deadLetter.maxReceiveCount,
    });
  });

  it('hides a message for 6 × the deliver function’s timeout (180 s)', () => {
    expect(delivery().VisibilityTimeout).toBe(VISIBILITY_TIMEOUT_FACTOR * FUNCTIONS.deliver.timeoutSeconds);
    expect(delivery().VisibilityTimeout).toBe(180);
  });
});

describe('DeliveryDead alarm', () => {
  const signal = () => fixture.stacks.service.signalAlarms.DeliveryDead;

  it('counts the deliver function’s { "alarm": "DeliveryDead" } log lines', () => {
    expect(resourceIn(service, signal().metricFilter).Properties).toMatchObject({
      LogGroupName: { Ref: logicalIdOf(functionOf('deliver').logGroup) },
      FilterPattern: '{ $.alarm = "DeliveryDead" }',
      MetricTransformations: [
        { MetricName: 'DeliveryDead', MetricNamespace: 'Pricing/test', MetricValue: '1' },
      ],
    });
  });

  it('alarms on the first dead delivery in a minute', () => {
    expect(resourceIn(service, signal().alarm).Properties).toMatchObject({
      Namespace: 'Pricing/test',
      MetricName: 'DeliveryDead',
      Statistic: 'Sum',
      Period: 60,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
    });
  });
});

describe('webhookAllowedCidrs', () => {
  const outdirs: string[] = [];
  afterAll(() => {
    for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
  });
  const serviceWith = (
    webhookAllowedCidrs?: readonly string[],
    tenantRetentionDays?: Readonly<Record<string, number>>,
  ) => {
    const outdir = mkdtempSync(join(tmpdir(), 'pricing-cidrs-'));
    outdirs.push(outdir);
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const data = new PricingStatefulStack(app, 'Stateful', { stage: 'cidrs' });
    return new PricingServiceStack(app, 'Service', {
      stage: 'cidrs',
      tables: data.tables,
      keys: data.keys,
      buckets: data.buckets,
      bucketWriters: data.bucketWriters,
      bucketReaders: data.bucketReaders,
      ...(webhookAllowedCidrs ? { webhookAllowedCidrs } : {}),
      ...(tenantRetentionDays ? { tenantRetentionDays } : {}),
    });
  };
  const valuesOf = (stack: PricingServiceStack, variable: string) => {
    const template = Template.fromStack(stack);
    return (Object.keys(FUNCTIONS) as FunctionId[]).flatMap((functionId) => {
      const value = (
        resourceIn(template, stack.functions[functionId].function).Properties.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables[variable];
      return value === undefined ? [] : [{ functionId, value }];
    });
  };

  it('sets WEBHOOK_ALLOWED_CIDRS on the deliver function only', () => {
    expect(valuesOf(serviceWith(['10.1.0.0/16', ' fd00::/8']), 'WEBHOOK_ALLOWED_CIDRS')).toEqual([
      { functionId: 'deliver', value: '10.1.0.0/16,fd00::/8' },
    ]);
  });

  it('sets WEBHOOK_TENANT_RETENTION_DAYS on every function that writes events, and refuses a bad value', () => {
    const value = '{"eu-1":7}';
    expect(
      valuesOf(serviceWith(undefined, { 'eu-1': 7 }), 'WEBHOOK_TENANT_RETENTION_DAYS').map(
        (set) => set.functionId,
      ),
    ).toEqual(
      (Object.keys(FUNCTIONS) as FunctionId[]).filter((functionId) =>
        permissionsOf(functionId).includes('dynamodb:PutItem table:events'),
      ),
    );
    expect(valuesOf(serviceWith(undefined, { 'eu-1': 7 }), 'WEBHOOK_TENANT_RETENTION_DAYS')[0]?.value).toBe(
      value,
    );
    expect(valuesOf(serviceWith(), 'WEBHOOK_TENANT_RETENTION_DAYS')).toEqual([]);
    expect(() => serviceWith(undefined, { 'eu-1': 0 })).toThrow(/WEBHOOK_TENANT_RETENTION_DAYS/);
  });

  it.each([
    ['on the command line (JSON)', '{"eu-1":7}'],
    ['in cdk.json (an object)', { 'eu-1': 7 }],
  ])('takes tenantRetentionDays from the context %s; refuses what is not an object', (_where, context) => {
    const withContext = (tenantRetentionDays: unknown) => {
      const outdir = mkdtempSync(join(tmpdir(), 'pricing-retention-'));
      outdirs.push(outdir);
      const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], tenantRetentionDays } });
      return addPricingStacks(app, { stage: 'test', nag: false }).service;
    };
    expect(valuesOf(withContext(context), 'WEBHOOK_TENANT_RETENTION_DAYS')[0]?.value).toBe('{"eu-1":7}');
    expect(() => withContext('{eu-1:7}')).toThrow(/context tenantRetentionDays must be a JSON object/);
    expect(() => withContext('[7]')).toThrow(/context tenantRetentionDays must be an object/);
  });

  it('refuses a value that is not a list of CIDR blocks', () => {
    expect(() => serviceWith(['10.0.0.0/8,192.168.0.0/16'])).toThrow(/webhookAllowedCidrs/);
  });
});
