import * as path from 'node:path';
import { Duration, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambdaNodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { FunctionDefinition, KeyKind } from '../../functions/definitions';
import { functionBundling, PROJECT_ROOT, SECURE_DEFAULTS } from './defaults';
import type { EncryptedQueue } from './encrypted-queue';
import { KEY_USE_ACTIONS } from './service-keys';

/** Variables Lambda sets itself; setting one is a deployment error. */
const RESERVED_ENVIRONMENT = new Set(['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_LAMBDA_FUNCTION_NAME']);

const TABLE_ACTIONS = {
  read: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:ConditionCheckItem',
    'dynamodb:DescribeTable',
  ],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
} as const;

/** KMS actions DynamoDB performs with the caller's credentials on a table encrypted with a customer key. */
const TABLE_KEY_ACTIONS = {
  read: ['kms:Decrypt', 'kms:DescribeKey'],
  write: ['kms:Encrypt', 'kms:GenerateDataKey'],
} as const;

/** KMS actions SendMessage needs on a queue encrypted with a customer key. */
const QUEUE_SEND_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'] as const;

export type TableAccess = 'read' | 'readWrite';

/** What a function may do beyond item access on one table. */
export interface TableGrantOptions {
  /**
   * Global secondary indexes it may Query. An index is authorized on its own ARN
   * (`<table ARN>/index/<name>`), so each index is named exactly.
   * @default none
   */
  readonly indexes?: readonly string[];
  /**
   * Also `dynamodb:Scan` on the table itself (not its indexes): for small tables listed whole.
   * @default false
   */
  readonly scan?: boolean;
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

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Resource "*" appears only for actions that have no resource-level permissions: ' +
        'xray:PutTraceSegments/xray:PutTelemetryRecords (active tracing) and, for stream consumers, ' +
        'dynamodb:ListStreams (added by the DynamoDB event source mapping). Every other statement names exact ARNs.',
    });
  }

  /**
   * Item reads (and writes) on one table, plus the data-key actions DynamoDB needs for a CMK table; optionally
   * Query on named indexes and Scan on the table.
   */
  grantTableData(
    table: dynamodb.ITable,
    access: TableAccess,
    tableKey: kms.IKey,
    options: TableGrantOptions = {},
  ): void {
    const actions: string[] = [...TABLE_ACTIONS.read, ...(options.scan ? ['dynamodb:Scan'] : [])];
    const keyActions: string[] = [...TABLE_KEY_ACTIONS.read];
    if (access === 'readWrite') {
      actions.push(...TABLE_ACTIONS.write);
      keyActions.push(...TABLE_KEY_ACTIONS.write);
    }
    this.addToRolePolicy(actions, [table.tableArn]);
    const indexes = options.indexes ?? [];
    if (indexes.length > 0) {
      this.addToRolePolicy(
        ['dynamodb:Query'],
        indexes.map((index) => `${table.tableArn}/index/${index}`),
      );
    }
    this.addToRolePolicy(keyActions, [tableKey.keyArn]);
  }

  /** SendMessage (and GetQueueAttributes, which the health probe uses) on one encrypted queue. */
  grantSendMessages(target: EncryptedQueue): void {
    this.addToRolePolicy(['sqs:SendMessage', 'sqs:GetQueueAttributes'], [target.queue.queueArn]);
    this.addToRolePolicy([...QUEUE_SEND_KEY_ACTIONS], [target.encryptionKey.keyArn]);
  }

  /** Use (never administer) a key: sign, MAC or encrypt/decrypt depending on its kind. */
  grantKeyUse(key: kms.IKey, kind: KeyKind): void {
    this.addToRolePolicy([...KEY_USE_ACTIONS[kind]], [key.keyArn]);
  }

  /** `s3:ListBucket` on the bucket itself: what HeadBucket (the health probe) needs, and nothing else. */
  grantBucketProbe(bucket: s3.IBucket): void {
    this.addToRolePolicy(['s3:ListBucket'], [bucket.bucketArn]);
  }

  addToRolePolicy(actions: string[], resources: string[], conditions?: Record<string, unknown>): void {
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }),
    );
  }
}
