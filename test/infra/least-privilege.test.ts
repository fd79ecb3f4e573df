/**
 * Least privilege, per function: every IAM action its role is allowed, and on what, from every policy that
 * reaches the role (its default policy, the policies attached to it, the stateful stack's bucket policies). The
 * table below is the whole truth: an action added to a function without being added here fails this test, and
 * so does one removed. Each entry is what the function's code calls (functions/adapters/aws, through its handler
 * and use cases), or what Lambda does with the role (logs, X-Ray, event source mappings).
 */
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionId } from '../../functions/definitions';
import { type CfnResource, logicalIdOf, resourceIn, synthesizedApp } from './fixture';

const app = synthesizedApp();

interface Statement {
  readonly Effect: string;
  readonly Action?: string | string[];
  readonly NotAction?: unknown;
  readonly Resource?: unknown;
  readonly NotResource?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

/** `[logical id, label]` for every resource a grant may name, in either stack. */
const labels = (): [string, string][] => {
  const { stateful, service } = app.fixture().stacks;
  return [
    ...Object.entries(stateful.tables).map(([id, table]): [string, string] => [
      logicalIdOf(table),
      `table:${id}`,
    ]),
    ...Object.entries(stateful.keys).map(([id, key]): [string, string] => [logicalIdOf(key), `key:${id}`]),
    ...Object.entries(stateful.buckets).map(([id, bucket]): [string, string] => [
      logicalIdOf(bucket),
      `bucket:${id}`,
    ]),
    ...Object.entries(service.queues).map(([id, queue]): [string, string] => [
      logicalIdOf(queue.queue),
      `queue:${id}`,
    ]),
    ...Object.entries(service.functions).map(([id, fn]): [string, string] => [
      logicalIdOf(fn.logGroup),
      `logs:${id}`,
    ]),
    [logicalIdOf(service.scheduler.role), 'role:scheduler'],
    [logicalIdOf(service.api.usagePlan), '<usage plan>'],
  ];
};

/** A resource (or condition value) as a readable label: `table:events/index/by-day`, `key:data`, `*`… */
const labelOf = (value: unknown): string => {
  if (typeof value === 'string') return value;
  const node = value as Record<string, unknown>;
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts.map(labelOf).join(separator);
  }
  if ('Ref' in node) {
    const ref = String(node.Ref);
    return ref.startsWith('AWS::') ? `<${ref}>` : (labels().find(([id]) => id === ref)?.[1] ?? `<${ref}>`);
  }
  if ('Fn::GetAtt' in node) {
    const [id, attribute] = node['Fn::GetAtt'] as [string, string];
    const label = labels().find(([logicalId]) => logicalId === id)?.[1] ?? `<${id}>`;
    return attribute === 'Arn' ? label : `${label}.${attribute}`;
  }
  if ('Fn::ImportValue' in node) {
    const name = String(node['Fn::ImportValue']);
    for (const [id, label] of labels()) {
      if (name.includes(`FnGetAtt${id}StreamArn`)) return `${label}/stream`;
      if (name.includes(`FnGetAtt${id}Arn`)) return label;
    }
    return `<import ${name}>`;
  }
  return JSON.stringify(value);
};

/** A condition as `(key=value|value)`, service endpoints shortened to the service (`dynamodb`). */
const conditionLabel = (condition: Statement['Condition']): string => {
  if (!condition) return '';
  const parts = Object.values(condition).flatMap((entries) =>
    Object.entries(entries).map(
      ([key, value]) =>
        `${key}=${[value]
          .flat()
          .map((item) => labelOf(item).replace('.<AWS::Region>.amazonaws.com', ''))
          .join('|')}`,
    ),
  );
  return ` (${parts.join(', ')})`;
};

/** Every statement that reaches a function's role: its policies in the service stack and its managed policies. */
const statementsOf = (functionId: FunctionId): Statement[] => {
  const { stateful, service } = app.fixture().stacks;
  const role = service.functions[functionId].role;
  const roleRef = JSON.stringify({ Ref: logicalIdOf(role) });
  const policies = Object.values(app.service().toJSON().Resources as Record<string, CfnResource>).filter(
    (resource) =>
      resource.Type === 'AWS::IAM::Policy' &&
      (resource.Properties.Roles as unknown[]).some((entry) => JSON.stringify(entry) === roleRef),
  );
  const managed = (
    (resourceIn(app.service(), role).Properties.ManagedPolicyArns as unknown[] | undefined) ?? []
  ).map((arn) => {
    const name = JSON.stringify(arn);
    const policy = [...Object.values(stateful.bucketWriters), ...Object.values(stateful.bucketReaders)].find(
      (candidate) => name.includes(logicalIdOf(candidate)),
    );
    if (!policy) throw new Error(`${functionId}: unknown managed policy ${name}`);
    return resourceIn(app.stateful(), policy);
  });
  const inline = (
    (resourceIn(app.service(), role).Properties.Policies as {
      PolicyDocument: { Statement: Statement[] };
    }[]) ?? []
  ).flatMap((policy) => policy.PolicyDocument.Statement);
  return [
    ...inline,
    ...[...policies, ...managed].flatMap(
      (policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
    ),
  ];
};

/** Action → sorted resource labels (with their conditions), actions sorted. */
const grantsOf = (functionId: FunctionId): Record<string, string[]> => {
  const grants = new Map<string, Set<string>>();
  for (const statement of statementsOf(functionId)) {
    for (const action of [statement.Action ?? []].flat()) {
      const resources = grants.get(action) ?? new Set<string>();
      for (const resource of [statement.Resource].flat())
        resources.add(`${labelOf(resource)}${conditionLabel(statement.Condition)}`);
      grants.set(action, resources);
    }
  }
  return Object.fromEntries(
    [...grants.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([action, set]) => [action, [...set].sort()]),
  );
};

const VIA_DYNAMODB = 'key:data (kms:ViaService=dynamodb)';
const VIA_SQS = 'key:data (kms:ViaService=sqs)';
const VIA_S3 = 'key:data (kms:ViaService=s3)';
const VIA_STREAMS = 'key:data (kms:ViaService=dynamodb|streams.dynamodb)';

/** What every function's role has: its own log group, X-Ray (active tracing). */
const BASE = (functionId: FunctionId): Record<string, string[]> => ({
  'logs:CreateLogStream': [`logs:${functionId}`],
  'logs:PutLogEvents': [`logs:${functionId}`],
  'xray:PutTelemetryRecords': ['*'],
  'xray:PutTraceSegments': ['*'],
});

/** DynamoDB through the data key: any access decrypts; a writer also encrypts. */
const TABLE_KEY_READ = { 'kms:Decrypt': [VIA_DYNAMODB], 'kms:DescribeKey': [VIA_DYNAMODB] };
const TABLE_KEY_WRITE = {
  ...TABLE_KEY_READ,
  'kms:Encrypt': [VIA_DYNAMODB],
  'kms:GenerateDataKey': [VIA_DYNAMODB],
};

/** A bucket's writer and reader policies (stateful stack): put new objects, list, read, the data key via S3. */
const BUCKET_WRITE_READ = (...buckets: string[]) => ({
  's3:GetObject': buckets.map((bucket) => `bucket:${bucket}/*`),
  's3:ListBucket': buckets.map((bucket) => `bucket:${bucket}`),
  's3:PutObject': buckets.map((bucket) => `bucket:${bucket}/*`),
});

/** A bucket read only (its reader policy): list, get, and decrypt through S3. */
const BUCKET_READ = (...buckets: string[]) => ({
  's3:GetObject': buckets.map((bucket) => `bucket:${bucket}/*`),
  's3:ListBucket': buckets.map((bucket) => `bucket:${bucket}`),
  'kms:Decrypt': [VIA_S3],
});

const sorted = (grants: Record<string, string[]>): Record<string, string[]> =>
  Object.fromEntries(
    Object.entries(grants)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([action, resources]) => [action, [...new Set(resources)].sort()]),
  );

/** Merges grant tables, concatenating the resources of an action named twice. */
const merge = (...tables: Record<string, string[]>[]): Record<string, string[]> => {
  const merged: Record<string, string[]> = {};
  for (const table of tables)
    for (const [action, resources] of Object.entries(table))
      merged[action] = [...(merged[action] ?? []), ...resources];
  return sorted(merged);
};

const EXPECTED: Readonly<Record<FunctionId, Record<string, string[]>>> = {
  authorizer: merge(BASE('authorizer'), TABLE_KEY_READ, { 'dynamodb:GetItem': ['table:apiKeys'] }),
  api: merge(BASE('api'), TABLE_KEY_READ, {
    // GET /admin/health: the three probes. GET /keys: the receipt key's public half, never kms:Sign.
    'dynamodb:DescribeTable': ['table:events'],
    // GET /webhooks/jwks.json: the webhook signing keys' public halves (their private halves it cannot decrypt).
    'dynamodb:Query': ['table:senderKeys'],
    'kms:GetPublicKey': ['key:receiptSigning'],
    's3:ListBucket': ['bucket:receipts'],
    'sqs:GetQueueAttributes': ['queue:delivery'],
  }),
  catalog: merge(BASE('catalog'), TABLE_KEY_WRITE, BUCKET_READ('catalogFiles'), {
    'dynamodb:BatchGetItem': ['table:catalog', 'table:priceCache'],
    'dynamodb:BatchWriteItem': ['table:priceCache'],
    'dynamodb:GetItem': ['table:catalog', 'table:priceCache'],
    'dynamodb:PutItem': ['table:priceCache'],
    'dynamodb:Query': ['table:catalog'],
  }),
  checkout: merge(BASE('checkout'), TABLE_KEY_WRITE, BUCKET_READ('catalogFiles'), {
    'dynamodb:BatchGetItem': ['table:catalog'],
    'dynamodb:DeleteItem': ['table:idempotency'],
    'dynamodb:GetItem': ['table:catalog', 'table:idempotency', 'table:quotes', 'table:receipts'],
    'dynamodb:PutItem': ['table:idempotency', 'table:quotes', 'table:receipts'],
    'dynamodb:Query': ['table:catalog'],
    'dynamodb:UpdateItem': ['table:idempotency', 'table:quotes', 'table:receipts'],
    'kms:GenerateMac': ['key:quoteMac'],
    'kms:Sign': ['key:receiptSigning'],
  }),
  admin: merge(BASE('admin'), TABLE_KEY_WRITE, BUCKET_WRITE_READ('journal', 'catalogFiles'), {
    'apigateway:DELETE': ['arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*'],
    'apigateway:GET': [
      'arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys',
      'arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans',
    ],
    'apigateway:POST': [
      'arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys',
      'arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/<usage plan>/keys',
    ],
    'cloudwatch:GetMetricData': ['*'],
    'dynamodb:BatchGetItem': ['table:catalog', 'table:priceCache'],
    'dynamodb:BatchWriteItem': ['table:catalog', 'table:changeRequests', 'table:priceCache'],
    'dynamodb:DeleteItem': ['table:apiKeys', 'table:idempotency'],
    'dynamodb:GetItem': [
      'table:apiKeys',
      'table:catalog',
      'table:changeRequests',
      'table:idempotency',
      'table:journal',
      'table:priceCache',
      'table:rateState',
    ],
    'dynamodb:PutItem': [
      'table:apiKeys',
      'table:catalog',
      'table:changeRequests',
      'table:events',
      'table:idempotency',
      'table:journal',
      'table:priceCache',
    ],
    'dynamodb:Query': [
      'table:apiKeys/index/by-created',
      'table:catalog',
      'table:changeRequests',
      'table:changeRequests/index/by-created',
      'table:journal',
    ],
    'dynamodb:UpdateItem': ['table:idempotency', 'table:journal', 'table:priceCache'],
    'kms:Decrypt': ['key:secrets', VIA_S3],
    'kms:Encrypt': ['key:secrets'],
    'kms:GenerateDataKey': [VIA_S3],
    'kms:Sign': ['key:receiptSigning'],
    // GET /admin/slo: the delivery DLQ's depth.
    'sqs:GetQueueAttributes': ['queue:deliveryDlq'],
  }),
  webhooks: merge(BASE('webhooks'), TABLE_KEY_WRITE, {
    // The catalog; the deliveries and events a listing's keys-only index names.
    'dynamodb:BatchGetItem': ['table:catalog', 'table:deliveries', 'table:events'],
    'dynamodb:BatchWriteItem': ['table:replays'],
    'dynamodb:DeleteItem': ['table:deliveryOrder', 'table:endpoints', 'table:idempotency'],
    'dynamodb:GetItem': [
      'table:catalog',
      'table:deliveries',
      'table:deliveryOrder',
      'table:endpoints',
      'table:events',
      'table:idempotency',
      'table:replays',
    ],
    'dynamodb:PutItem': [
      'table:deliveryOrder',
      'table:endpoints',
      'table:events',
      'table:idempotency',
      'table:senderKeys',
    ],
    'dynamodb:Query': [
      'table:catalog',
      'table:deliveries',
      'table:deliveries/index/by-endpoint-keys',
      'table:deliveries/index/by-status-keys',
      'table:deliveryOrder',
      'table:endpointStats',
      'table:endpoints/index/by-partner-key',
      'table:endpoints/index/by-previous-partner-key',
      'table:events/index/by-day-keys',
      'table:replays',
      'table:senderKeys',
    ],
    'dynamodb:Scan': ['table:endpoints'],
    'dynamodb:UpdateItem': [
      'table:deliveries',
      'table:deliveryOrder',
      'table:endpoints',
      // An expunction removes the body in place.
      'table:events',
      'table:idempotency',
      'table:replays',
    ],
    'kms:Decrypt': ['key:secrets', VIA_SQS],
    'kms:Encrypt': ['key:secrets'],
    'kms:GenerateDataKey': [VIA_SQS],
    'sqs:SendMessage': ['queue:delivery'],
  }),
  fanout: merge(BASE('fanout'), TABLE_KEY_WRITE, {
    // The events stream (event source mapping) and its on-failure destination.
    'dynamodb:DescribeStream': ['table:events/stream'],
    'dynamodb:GetRecords': ['table:events/stream'],
    'dynamodb:GetShardIterator': ['table:events/stream'],
    'dynamodb:ListStreams': ['*'],
    'dynamodb:GetItem': ['table:deliveries', 'table:deliveryOrder', 'table:events'],
    'dynamodb:PutItem': ['table:deliveries', 'table:deliveryOrder'],
    'dynamodb:Query': ['table:deliveryOrder'],
    'dynamodb:Scan': ['table:endpoints'],
    'dynamodb:UpdateItem': ['table:deliveries', 'table:deliveryOrder', 'table:events'],
    'kms:Decrypt': [VIA_STREAMS, VIA_SQS],
    'kms:GenerateDataKey': [VIA_SQS],
    'sqs:SendMessage': ['queue:delivery', 'queue:eventsStreamFailures'],
  }),
  deliver: merge(BASE('deliver'), TABLE_KEY_WRITE, {
    'dynamodb:DeleteItem': ['table:deliveryOrder'],
    'dynamodb:GetItem': ['table:deliveries', 'table:endpoints', 'table:events', 'table:replays'],
    'dynamodb:PutItem': ['table:events'],
    'dynamodb:Query': ['table:deliveryOrder', 'table:senderKeys'],
    'dynamodb:UpdateItem': [
      'table:deliveries',
      'table:endpointLimits',
      'table:endpointStats',
      'table:endpoints',
      'table:replays',
    ],
    'iam:PassRole': ['role:scheduler (iam:PassedToService=scheduler.amazonaws.com)'],
    'kms:Decrypt': ['key:secrets', VIA_SQS],
    'kms:GenerateDataKey': [VIA_SQS],
    'scheduler:CreateSchedule': [
      'arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/deliveries/*',
    ],
    // The delivery queue (event source mapping); the next attempt and the dead-letter queue.
    'sqs:DeleteMessage': ['queue:delivery'],
    'sqs:GetQueueAttributes': ['queue:delivery'],
    'sqs:ReceiveMessage': ['queue:delivery'],
    'sqs:SendMessage': ['queue:delivery', 'queue:deliveryDlq'],
    // SQS and EventBridge destinations: partners' roles, with the service's external ids, never in its own account.
    'sts:AssumeRole': [
      'arn:<AWS::Partition>:iam::*:role/* (sts:ExternalId=pricing-ext-*, aws:ResourceAccount=<AWS::AccountId>)',
    ],
  }),
  sweeper: merge(BASE('sweeper'), TABLE_KEY_WRITE, {
    // The events its keys-only index names as not fanned out.
    'dynamodb:BatchGetItem': ['table:events'],
    'dynamodb:DeleteItem': ['table:deliveryOrder'],
    'dynamodb:GetItem': ['table:deliveries', 'table:deliveryOrder', 'table:endpoints', 'table:events'],
    'dynamodb:PutItem': ['table:deliveries', 'table:deliveryOrder'],
    'dynamodb:Query': ['table:deliveryOrder', 'table:events/index/fanout-pending-keys'],
    'dynamodb:Scan': ['table:deliveryOrder', 'table:endpoints'],
    'dynamodb:UpdateItem': ['table:deliveries', 'table:deliveryOrder', 'table:events'],
    'kms:Decrypt': [VIA_SQS],
    'kms:GenerateDataKey': [VIA_SQS],
    'sqs:SendMessage': ['queue:delivery'],
  }),
  replay: merge(BASE('replay'), TABLE_KEY_WRITE, {
    // A window's events, or an endpoint's deliveries in it: keys-only indexes, then the items by key.
    'dynamodb:BatchGetItem': ['table:deliveries', 'table:events'],
    'dynamodb:BatchWriteItem': ['table:replays'],
    'dynamodb:DeleteItem': ['table:deliveryOrder'],
    'dynamodb:GetItem': [
      'table:deliveries',
      'table:deliveryOrder',
      'table:endpoints',
      'table:events',
      'table:replays',
    ],
    'dynamodb:PutItem': ['table:deliveryOrder', 'table:events'],
    'dynamodb:Query': [
      'table:deliveries',
      'table:deliveries/index/by-endpoint-keys',
      'table:deliveryOrder',
      'table:events/index/by-day-keys',
    ],
    'dynamodb:UpdateItem': ['table:deliveries', 'table:deliveryOrder', 'table:replays'],
    'kms:Decrypt': [VIA_SQS],
    'kms:GenerateDataKey': [VIA_SQS],
    'sqs:SendMessage': ['queue:delivery'],
  }),
  rates: merge(BASE('rates'), TABLE_KEY_WRITE, BUCKET_WRITE_READ('journal'), {
    'dynamodb:BatchGetItem': ['table:catalog'],
    'dynamodb:BatchWriteItem': ['table:catalog', 'table:changeRequests'],
    'dynamodb:GetItem': ['table:catalog', 'table:changeRequests', 'table:journal', 'table:rateState'],
    'dynamodb:PutItem': [
      'table:catalog',
      'table:changeRequests',
      'table:events',
      'table:journal',
      'table:rateState',
    ],
    'dynamodb:Query': [
      'table:catalog',
      'table:changeRequests',
      'table:changeRequests/index/by-created',
      'table:journal',
    ],
    'dynamodb:UpdateItem': ['table:journal'],
    'kms:Decrypt': [VIA_S3],
    'kms:GenerateDataKey': [VIA_S3],
    'kms:Sign': ['key:receiptSigning'],
    // FX provider credentials by reference (rate sources' auth.secret_ref), read-only, under their prefix.
    'secretsmanager:GetSecretValue': [
      'arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:pricing/fx/*',
    ],
  }),
  exporter: merge(BASE('exporter'), TABLE_KEY_WRITE, BUCKET_WRITE_READ('receipts', 'journal'), {
    // The receipts stream (event source mapping) and its on-failure destination.
    'dynamodb:DescribeStream': ['table:receipts/stream'],
    'dynamodb:GetRecords': ['table:receipts/stream'],
    'dynamodb:GetShardIterator': ['table:receipts/stream'],
    'dynamodb:ListStreams': ['*'],
    'dynamodb:GetItem': ['table:journal'],
    'dynamodb:PutItem': ['table:journal'],
    'dynamodb:Query': ['table:journal'],
    'dynamodb:Scan': ['table:receipts'],
    'dynamodb:UpdateItem': ['table:journal'],
    'kms:Decrypt': [VIA_STREAMS, VIA_SQS, VIA_S3],
    'kms:GenerateDataKey': [VIA_SQS, VIA_S3],
    // The key set it writes beside the receipts (keys/jwks-….json) holds the signing key's public half.
    'kms:GetPublicKey': ['key:receiptSigning'],
    'kms:Sign': ['key:receiptSigning'],
    'sqs:SendMessage': ['queue:receiptsStreamFailures'],
  }),
};

describe('least privilege: each function role has exactly the actions its code uses', () => {
  it('covers every function', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(FUNCTIONS).sort());
  });

  it.each(Object.keys(FUNCTIONS) as FunctionId[])(
    '%s: exactly its actions, on exactly their resources',
    (functionId) => {
      expect(grantsOf(functionId)).toEqual(EXPECTED[functionId]);
    },
  );

  it.each(Object.keys(FUNCTIONS) as FunctionId[])(
    '%s: only Allow statements with Action and Resource (no Deny to rely on, no NotAction/NotResource)',
    (functionId) => {
      const statements = statementsOf(functionId);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        expect(statement).toMatchObject({
          Effect: 'Allow',
          Action: expect.anything(),
          Resource: expect.anything(),
        });
        expect(statement.NotAction).toBeUndefined();
        expect(statement.NotResource).toBeUndefined();
      }
    },
  );

  it('uses the data key only through DynamoDB, SQS and S3 (kms:ViaService), in every function', () => {
    const direct = (Object.keys(FUNCTIONS) as FunctionId[]).flatMap((functionId) =>
      Object.entries(grantsOf(functionId)).flatMap(([action, resources]) =>
        resources
          .filter((resource) => resource.startsWith('key:data') && !resource.includes('kms:ViaService='))
          .map((resource) => `${functionId} ${action} ${resource}`),
      ),
    );
    expect(direct).toEqual([]);
  });

  it('lets only the functions that handle endpoint secrets or sealed answers use the secrets key', () => {
    const users = (Object.keys(FUNCTIONS) as FunctionId[]).filter((functionId) =>
      Object.values(grantsOf(functionId)).some((resources) => resources.includes('key:secrets')),
    );
    expect(users.sort()).toEqual(['admin', 'deliver', 'webhooks']);
  });

  it('lets only functions that sign receipts, releases, heads or manifests call kms:Sign; api only reads the public key', () => {
    const signers = (Object.keys(FUNCTIONS) as FunctionId[]).filter(
      (functionId) => 'kms:Sign' in grantsOf(functionId),
    );
    expect({ signers: signers.sort(), api: grantsOf('api')['kms:GetPublicKey'] }).toEqual({
      signers: ['admin', 'checkout', 'exporter', 'rates'],
      api: ['key:receiptSigning'],
    });
  });
});
