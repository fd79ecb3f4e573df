import * as path from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambdaNodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { FunctionDefinition } from '../../functions/definitions';
import { functionBundling, PROJECT_ROOT, SECURE_DEFAULTS } from './defaults';
import type { EncryptedQueue } from './encrypted-queue';

/** Variables Lambda sets itself; setting one is a deployment error. */
const RESERVED_ENVIRONMENT = new Set(['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_LAMBDA_FUNCTION_NAME']);

import type { TableItemAction } from '../../functions/definitions';

export type { TableItemAction };

const WRITE_ITEM_ACTIONS: ReadonlySet<TableItemAction> = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
]);

/**
 * KMS actions DynamoDB performs with the caller's credentials on a table encrypted with a customer key (as CDK's
 * `grantReadData`/`grantWriteData`), always through DynamoDB only (`kms:ViaService`).
 */
const TABLE_KEY_ACTIONS = {
  read: ['kms:Decrypt', 'kms:DescribeKey'],
  write: ['kms:Encrypt', 'kms:GenerateDataKey'],
} as const;

/** KMS actions SendMessage needs on a queue encrypted with a customer key (through SQS only). */
const QUEUE_SEND_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'] as const;

/**
 * What Lambda's SQS poller does with the function's role (the AWSLambdaSQSQueueExecutionRole actions): receive,
 * delete what succeeded, read the queue's attributes. Failed messages come back when their visibility ends.
 */
const QUEUE_CONSUME_ACTIONS = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'] as const;

/** What Lambda's DynamoDB stream poller does with the function's role, on the stream itself. */
const STREAM_READ_ACTIONS = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];

/** A `kms:ViaService` condition: the key is usable only by these services on the caller's behalf. */
export const viaService = (
  scope: Construct,
  ...services: readonly ('dynamodb' | 'streams.dynamodb' | 'sqs' | 's3')[]
): Record<string, unknown> => {
  const region = Stack.of(scope).region;
  const names = services.map((service) => `${service}.${region}.amazonaws.com`);
  return { StringEquals: { 'kms:ViaService': names.length === 1 ? names[0] : names } };
};

/** What a function may do on one table: item actions on the table itself, Query on named indexes. */
export interface TableGrant {
  /** Item actions on the table (a function that only queries an index may have none). */
  readonly actions: readonly TableItemAction[];
  /**
   * Global secondary indexes it may Query. An index is authorized on its own ARN (`<table ARN>/index/<name>`),
   * so each index is named exactly.
   * @default none
   */
  readonly indexes?: readonly string[];
}

/** Where a function in a VPC runs: its subnets and security groups (see `StaticEgress`). */
export interface FunctionNetwork {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.SubnetSelection;
  readonly securityGroups: readonly ec2.ISecurityGroup[];
}

export interface ServiceFunctionProps {
  /** The function's definition from `functions/definitions`: entry, timeout, memory and description. */
  readonly definition: FunctionDefinition;
  /** Environment the composition root reads (names of tables, queues, buckets, keys, scheduler). */
  readonly environment: Readonly<Record<string, string>>;
  /** @default SECURE_DEFAULTS.logRetention */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Directory the definition's `entry` is relative to; it holds `package-lock.json`.
   * @default PROJECT_ROOT (the repository root)
   */
  readonly projectRoot?: string;
  /**
   * Runs the function in these subnets; its role then needs the network-interface actions
   * (`StaticEgress.grantNetworkInterfaces`). @default not in a VPC
   */
  readonly network?: FunctionNetwork;
}

/**
 * A Lambda function built from a `FUNCTIONS` definition with the secure defaults: Node.js 24 on ARM64, an
 * ESM bundle (minified, with source maps), X-Ray active tracing, its own log group with a retention, and its
 * own role that starts with nothing but writing to that log group. Access is added with the `grant*` methods,
 * which name exact actions and ARNs.
 */
export class ServiceFunction extends Construct {
  readonly function: lambdaNodejs.NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly definition: FunctionDefinition;
  /** The statements `addToRolePolicy` added, by resources and conditions. */
  private readonly statements = new Map<string, iam.PolicyStatement>();
  /** Why each `Resource: "*"` statement of the default policy has to be one (for cdk-nag's IAM5). */
  private readonly wildcardReasons = new Set<string>([
    'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing)',
  ]);

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { definition } = props;
    this.definition = definition;
    const reserved = Object.keys(props.environment).filter((name) => RESERVED_ENVIRONMENT.has(name));
    if (reserved.length > 0) throw new Error(`reserved Lambda environment variables: ${reserved.join(', ')}`);
    const projectRoot = props.projectRoot ?? PROJECT_ROOT;

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? SECURE_DEFAULTS.logRetention,
      removalPolicy: SECURE_DEFAULTS.logRemovalPolicy,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${definition.id} function`,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new lambdaNodejs.NodejsFunction(this, 'Function', {
      description: definition.description,
      entry: path.join(projectRoot, definition.entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: path.join(projectRoot, 'package-lock.json'),
      runtime: SECURE_DEFAULTS.lambdaRuntime,
      architecture: SECURE_DEFAULTS.lambdaArchitecture,
      timeout: Duration.seconds(definition.timeoutSeconds),
      memorySize: definition.memoryMb,
      tracing: SECURE_DEFAULTS.lambdaTracing,
      logGroup: this.logGroup,
      role: this.role,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: functionBundling(),
      ...(props.network
        ? {
            vpc: props.network.vpc,
            vpcSubnets: props.network.subnets,
            securityGroups: [...props.network.securityGroups],
          }
        : {}),
    });
    this.function.node.addDependency(this.role);

    // Active tracing put the X-Ray statement (Resource "*") into the default policy.
    this.acknowledgeWildcards();
  }

  /**
   * Exactly these item actions on one table (and Query on the named indexes), plus the data-key actions
   * DynamoDB needs for a customer-key table, through DynamoDB only: Decrypt and DescribeKey for any access,
   * Encrypt and GenerateDataKey besides for a writer.
   */
  grantTableItems(table: dynamodb.ITable, tableKey: kms.IKey, grant: TableGrant): void {
    const actions = [...new Set(grant.actions)].sort();
    const indexes = [...new Set(grant.indexes ?? [])].sort();
    if (actions.length === 0 && indexes.length === 0)
      throw new Error(`${this.definition.id}: a table grant needs an action or an index`);
    if (actions.length > 0)
      this.addToRolePolicy(
        actions.map((action) => `dynamodb:${action}`),
        [table.tableArn],
      );
    if (indexes.length > 0)
      this.addToRolePolicy(
        ['dynamodb:Query'],
        indexes.map((index) => `${table.tableArn}/index/${index}`),
      );
    const writes = actions.some((action) => WRITE_ITEM_ACTIONS.has(action));
    this.addToRolePolicy(
      [...TABLE_KEY_ACTIONS.read, ...(writes ? TABLE_KEY_ACTIONS.write : [])],
      [tableKey.keyArn],
      viaService(this, 'dynamodb'),
    );
  }

  /** `dynamodb:DescribeTable` on one table, and nothing else: the deep health probe. */
  grantDescribeTable(table: dynamodb.ITable): void {
    this.addToRolePolicy(['dynamodb:DescribeTable'], [table.tableArn]);
  }

  /** SendMessage on one encrypted queue, with the two KMS actions that needs, through SQS only. */
  grantSendMessages(target: EncryptedQueue): void {
    this.addToRolePolicy(['sqs:SendMessage'], [target.queue.queueArn]);
    this.addToRolePolicy([...QUEUE_SEND_KEY_ACTIONS], [target.encryptionKey.keyArn], viaService(this, 'sqs'));
  }

  /** `sqs:GetQueueAttributes` on one queue: a health probe or a depth reading (no message is read). */
  grantQueueAttributes(target: EncryptedQueue): void {
    this.addToRolePolicy(['sqs:GetQueueAttributes'], [target.queue.queueArn]);
  }

  /** What an SQS event source mapping polls with: receive, delete, attributes, and decrypt through SQS only. */
  grantConsumeMessages(source: EncryptedQueue): void {
    this.addToRolePolicy([...QUEUE_CONSUME_ACTIONS], [source.queue.queueArn]);
    this.addToRolePolicy(['kms:Decrypt'], [source.encryptionKey.keyArn], viaService(this, 'sqs'));
  }

  /**
   * What a DynamoDB stream event source mapping polls with: the stream actions on the table's stream,
   * `dynamodb:ListStreams` (no resource-level permission) and Decrypt of the table's key through DynamoDB only
   * (records are read from DynamoDB Streams' own endpoint, so either service name is accepted).
   */
  grantStreamRead(table: dynamodb.ITable, tableKey: kms.IKey): void {
    if (!table.tableStreamArn) throw new Error(`${this.definition.id}: ${table.node.path} has no stream`);
    this.addToRolePolicy([...STREAM_READ_ACTIONS], [table.tableStreamArn]);
    this.addToRolePolicy(['dynamodb:ListStreams'], ['*']);
    this.addToRolePolicy(
      ['kms:Decrypt'],
      [tableKey.keyArn],
      viaService(this, 'dynamodb', 'streams.dynamodb'),
    );
    this.wildcardReasons.add(
      'dynamodb:ListStreams (the stream event source mapping lists the streams of the table)',
    );
    this.acknowledgeWildcards();
  }

  /** Use (never administer) a key: exactly these KMS actions (see `KEY_USES`). */
  grantKeyUse(key: kms.IKey, actions: readonly string[]): void {
    if (actions.length === 0) throw new Error(`${this.definition.id}: a key grant needs an action`);
    this.addToRolePolicy([...actions], [key.keyArn]);
  }

  /** `s3:ListBucket` on the bucket itself: what HeadBucket (the health probe) needs, and nothing else. */
  grantBucketProbe(bucket: s3.IBucket): void {
    this.addToRolePolicy(['s3:ListBucket'], [bucket.bucketArn]);
  }

  /** The policy every `grant*` and `addToRolePolicy` statement lands in (the role's default policy). */
  get defaultPolicy(): iam.Policy {
    const policy = this.role.node.tryFindChild('DefaultPolicy');
    if (!(policy instanceof iam.Policy)) throw new Error(`${this.definition.id}: no default policy yet`);
    return policy;
  }

  /**
   * cdk-nag's IAM5 on `Resource::*`, acknowledged on the default policy (never the whole role) and only for
   * the actions that have no resource-level permissions, each named in the reason.
   */
  private acknowledgeWildcards(): void {
    Validations.of(this.defaultPolicy).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        `Resource "*" appears only for actions without resource-level permissions: ${[...this.wildcardReasons].join('; ')}. ` +
        'Every other statement names exact ARNs.',
    });
  }

  /**
   * Allows `actions` on `resources` (under `conditions`) in the role's default policy. Grants on the same
   * resources under the same conditions share one statement, so the policy stays small (a role's inline
   * policies are limited to 10 240 characters).
   */
  addToRolePolicy(
    actions: readonly string[],
    resources: readonly string[],
    conditions?: Record<string, unknown>,
  ): void {
    const key = JSON.stringify({ resources: [...resources].sort(), conditions: conditions ?? null });
    const existing = this.statements.get(key);
    if (existing) {
      const missing = actions.filter((action) => !existing.actions.includes(action));
      if (missing.length > 0) existing.addActions(...missing);
      return;
    }
    const statement = new iam.PolicyStatement({
      actions: [...actions],
      resources: [...resources],
      ...(conditions ? { conditions } : {}),
    });
    this.statements.set(key, statement);
    this.role.addToPrincipalPolicy(statement);
  }
}
