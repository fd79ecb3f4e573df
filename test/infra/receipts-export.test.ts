/**
 * The finance export's slice of the app: the receipts bucket under Object Lock (compliance mode, 7 years by
 * default, 7 to 10 by configuration), its reader policy, the Glue table and Athena workgroup over it, the
 * exporter function with its stream mapping, schedule and grants.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUCKETS,
  EVENT_SOURCE_MAPPINGS,
  EXPORTER_RATE_MINUTES,
  FUNCTIONS,
  type FunctionId,
} from '../../functions/definitions';
import { rateExpression } from '../../lib/constructs/rate-schedule-to-function';
import { RECEIPT_COLUMNS } from '../../lib/constructs/receipts-analytics';
import { addPricingStacks } from '../../lib/pricing-app';
import { PricingStatefulStack, receiptRetentionDays } from '../../lib/stacks/stateful-stack';
import { arnOf, type CfnResource, importedFrom, logicalIdOf, resourceIn, synthesizedApp } from './fixture';

const app = synthesizedApp();
const stateful = () => app.fixture().stacks.stateful;
const service = () => app.fixture().stacks.service;
const receiptsBucket = () => resourceIn(app.stateful(), stateful().buckets.receipts).Properties;

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

const statementsOf = (resource: CfnResource): Statement[] =>
  (resource.Properties.PolicyDocument as { Statement: Statement[] }).Statement;

const outdirs: string[] = [];
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});
const appWith = (context: Record<string, unknown>) => {
  const outdir = mkdtempSync(join(tmpdir(), 'pricing-receipts-'));
  outdirs.push(outdir);
  return new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], ...context } });
};

describe('the receipts bucket', () => {
  it('is under Object Lock in compliance mode for 7 years by default (2557 days)', () => {
    expect(receiptsBucket()).toMatchObject({
      ObjectLockEnabled: true,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 2557 } },
      },
    });
    expect(BUCKETS.receipts.objectLock).toEqual({ mode: 'COMPLIANCE', retentionDays: 2557 });
    expect(receiptRetentionDays(7)).toBeGreaterThanOrEqual(7 * 365 + 1);
  });

  it('is versioned, encrypted with the data key and private', () => {
    expect(receiptsBucket()).toMatchObject({
      VersioningConfiguration: { Status: 'Enabled' },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: {
              SSEAlgorithm: 'aws:kms',
              KMSMasterKeyID: arnOf(stateful().keys.data),
            },
          },
        ],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  it('refuses requests without TLS (and below TLS 1.2)', () => {
    app.stateful().hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalIdOf(stateful().buckets.receipts) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
          }),
        ]),
      },
    });
  });

  it('logs its accesses into the separate access-log bucket', () => {
    const logging = receiptsBucket().LoggingConfiguration as {
      DestinationBucketName: { Ref: string };
      LogFilePrefix: string;
    };
    expect(logging.LogFilePrefix).toBe('receipts/');
    expect(logging.DestinationBucketName.Ref).not.toBe(logicalIdOf(stateful().buckets.receipts));
  });

  it('keeps 10 years when configured (CDK context receiptRetentionYears)', () => {
    const stacks = addPricingStacks(appWith({ receiptRetentionYears: '10' }), { stage: 'ten', nag: false });
    const bucket = resourceIn(
      Template.fromStack(stacks.stateful),
      stacks.stateful.buckets.receipts,
    ).Properties;
    expect(bucket.ObjectLockConfiguration).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 3653 } },
    });
  });

  it.each([11, 6, 7.5])('refuses %s years at synth', (years) => {
    expect(() =>
      addPricingStacks(appWith({ receiptRetentionYears: years }), { stage: 'bad', nag: false }),
    ).toThrow(/receiptRetentionYears must be a whole number/);
    expect(
      () => new PricingStatefulStack(appWith({}), 'Stateful', { stage: 'bad', receiptRetentionYears: years }),
    ).toThrow(/receiptRetentionYears/);
  });

  it('refuses a context value that is not a number', () => {
    expect(() =>
      addPricingStacks(appWith({ receiptRetentionYears: 'ten' }), { stage: 'bad', nag: false }),
    ).toThrow(/context receiptRetentionYears must be a whole number/);
  });

  it('has a reader policy that lists and reads only (decrypting through S3 only)', () => {
    const statements = statementsOf(resourceIn(app.stateful(), stateful().bucketReaders.receipts));
    const bucketArn = arnOf(stateful().buckets.receipts);
    expect(statements).toEqual([
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: bucketArn },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: { 'Fn::Join': ['', [bucketArn, '/*']] } },
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: arnOf(stateful().keys.data),
        Condition: {
          StringEquals: {
            'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
          },
        },
      },
    ]);
  });
});

describe('Glue and Athena over the export', () => {
  const analytics = () => stateful().receiptsAnalytics;

  it('a Glue table over receipts/ with the JSON SerDe and the columns finance needs', () => {
    const table = resourceIn(app.stateful(), analytics().table).Properties as {
      DatabaseName: string;
      TableInput: {
        Name: string;
        TableType: string;
        PartitionKeys: unknown;
        Parameters: Record<string, unknown>;
        StorageDescriptor: {
          Location: unknown;
          SerdeInfo: unknown;
          Columns: { Name: string; Type: string }[];
        };
      };
    };
    expect(table.DatabaseName).toBe('pricing_test_finance');
    expect(table.TableInput).toMatchObject({ Name: 'receipts', TableType: 'EXTERNAL_TABLE' });
    expect(table.TableInput.StorageDescriptor.Location).toEqual({
      'Fn::Join': ['', ['s3://', { Ref: logicalIdOf(stateful().buckets.receipts) }, '/receipts/']],
    });
    expect(table.TableInput.StorageDescriptor.SerdeInfo).toMatchObject({
      SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
    });
    const columns = Object.fromEntries(
      table.TableInput.StorageDescriptor.Columns.map((column) => [column.Name, column.Type]),
    );
    expect(columns).toMatchObject({
      receipt_id: 'string',
      refund_id: 'string',
      kind: 'string',
      issued_at: 'string',
      created_at: 'string',
      computed_totals: 'struct<currency:string,subtotal:string,discounts:string,total:string>',
      currency: 'string',
      amount: 'string',
      fee: 'string',
      net: 'string',
      pricelist_version: 'int',
      fx_version: 'string',
      tax_rule_version: 'int',
      key_id: 'string',
      hash: 'string',
      signature: 'string',
    });
    expect(Object.keys(columns)).toHaveLength(RECEIPT_COLUMNS.length);
  });

  it('partitions by day with partition projection (no crawler)', () => {
    const table = resourceIn(app.stateful(), analytics().table).Properties as {
      TableInput: { PartitionKeys: unknown; Parameters: Record<string, unknown> };
    };
    expect(table.TableInput.PartitionKeys).toEqual([
      { Name: 'dt', Type: 'string', Comment: 'UTC day (YYYY-MM-DD)' },
    ]);
    expect(table.TableInput.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.dt.type': 'date',
      'projection.dt.format': 'yyyy-MM-dd',
      'projection.dt.range': '2024-01-01,NOW',
      'projection.dt.interval': '1',
      'projection.dt.interval.unit': 'DAYS',
      'storage.location.template': {
        'Fn::Join': [
          '',
          ['s3://', { Ref: logicalIdOf(stateful().buckets.receipts) }, `/receipts/dt=\${dt}/`],
        ],
      },
    });
    app.stateful().resourceCountIs('AWS::Glue::Crawler', 0);
  });

  it('an Athena workgroup whose configuration is enforced, results encrypted with the data key', () => {
    expect(resourceIn(app.stateful(), analytics().workGroup).Properties).toMatchObject({
      Name: 'pricing-test-finance',
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        PublishCloudWatchMetricsEnabled: true,
        ResultConfiguration: {
          EncryptionConfiguration: { EncryptionOption: 'SSE_KMS', KmsKey: arnOf(stateful().keys.data) },
          OutputLocation: {
            'Fn::Join': ['', ['s3://', { Ref: logicalIdOf(analytics().resultsBucket) }, '/results/']],
          },
        },
      },
    });
  });

  it('results go to their own private, encrypted, SSL-only bucket that logs and expires them', () => {
    const bucket = resourceIn(app.stateful(), analytics().resultsBucket).Properties;
    expect(bucket).toMatchObject({
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            ServerSideEncryptionByDefault: {
              SSEAlgorithm: 'aws:kms',
              KMSMasterKeyID: arnOf(stateful().keys.data),
            },
          },
        ],
      },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
      LoggingConfiguration: expect.objectContaining({ LogFilePrefix: 'athena-results/' }),
      LifecycleConfiguration: {
        Rules: expect.arrayContaining([expect.objectContaining({ ExpirationInDays: 30 })]),
      },
    });
    app.stateful().hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalIdOf(analytics().resultsBucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('the exporter function', () => {
  const exporter = () => service().functions.exporter;
  const role = () =>
    resourceIn(app.service(), exporter().role).Properties as { ManagedPolicyArns?: unknown[] };

  it('is deployed from its definition', () => {
    expect(resourceIn(app.service(), exporter().function).Properties).toMatchObject({
      Timeout: FUNCTIONS.exporter.timeoutSeconds,
      MemorySize: FUNCTIONS.exporter.memoryMb,
      Runtime: 'nodejs24.x',
    });
  });

  it("consumes the receipts table's stream from the start, bisecting, retrying, reporting item failures", () => {
    const mapping = EVENT_SOURCE_MAPPINGS.receiptsToExporter;
    app.service().hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(exporter().function) },
      EventSourceArn: {
        'Fn::ImportValue': Match.stringLikeRegexp(
          `ExportsOutputFnGetAtt${logicalIdOf(stateful().tables.receipts)}StreamArn`,
        ),
      },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: mapping.maxRetryAttempts,
      BatchSize: mapping.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: arnOf(service().queues.receiptsStreamFailures.queue) } },
    });
  });

  it('the on-failure queue is terminal, kept 14 days, and alarms on its first message', () => {
    expect(resourceIn(app.service(), service().queues.receiptsStreamFailures.queue).Properties).toMatchObject(
      {
        MessageRetentionPeriod: 14 * 86_400,
      },
    );
    expect(service().alarms.receiptsStreamFailures).toBeDefined();
  });

  it('runs hourly on an EventBridge Scheduler rate schedule that may only invoke it', () => {
    const schedule = service().exporterSchedule;
    expect(EXPORTER_RATE_MINUTES).toBe(60);
    expect(resourceIn(app.service(), schedule.schedule).Properties).toMatchObject({
      ScheduleExpression: rateExpression(EXPORTER_RATE_MINUTES),
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: { Arn: arnOf(exporter().function), RoleArn: arnOf(schedule.role) },
    });
    expect(resourceIn(app.service(), schedule.role).Properties.Policies).toEqual([
      {
        PolicyName: 'InvokeTarget',
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: arnOf(exporter().function) },
          ],
        },
      },
    ]);
  });

  it('writes and reads through the bucket policies (receipts, journal mirror), nothing else on S3', () => {
    expect(role().ManagedPolicyArns).toEqual(
      expect.arrayContaining([
        importedFrom(stateful().bucketWriters.receipts),
        importedFrom(stateful().bucketWriters.journal),
        importedFrom(stateful().bucketReaders.receipts),
        importedFrom(stateful().bucketReaders.journal),
      ]),
    );
  });

  it('is the only function that writes or reads the receipts bucket', () => {
    const users = (Object.keys(FUNCTIONS) as FunctionId[]).filter((functionId) => {
      const arns = (resourceIn(app.service(), service().functions[functionId].role).Properties
        .ManagedPolicyArns ?? []) as unknown[];
      const names = [stateful().bucketWriters.receipts, stateful().bucketReaders.receipts].map(logicalIdOf);
      return arns.some((arn) => names.some((name) => JSON.stringify(arn).includes(name)));
    });
    expect(users).toEqual(['exporter']);
  });

  it('may never delete objects or change their retention', () => {
    const actions = [
      ...statementsOf(resourceIn(app.service(), exporter().role.node.findChild('DefaultPolicy'))),
      ...statementsOf(resourceIn(app.stateful(), stateful().bucketWriters.receipts)),
      ...statementsOf(resourceIn(app.stateful(), stateful().bucketReaders.receipts)),
    ].flatMap((statement) => [statement.Action].flat());
    expect(
      actions.filter((action) =>
        /^s3:(Delete|PutObjectRetention|PutObjectLegalHold|BypassGovernance|\*)/.test(action),
      ),
    ).toEqual([]);
  });

  it('journals with the receipt key: the journal table read/write and kms:Sign', () => {
    const actions = statementsOf(
      resourceIn(app.service(), exporter().role.node.findChild('DefaultPolicy')),
    ).flatMap((statement) =>
      [statement.Action].flat().map((action) => `${action} ${JSON.stringify(statement.Resource)}`),
    );
    expect(actions).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^dynamodb:PutItem .*${logicalIdOf(stateful().tables.journal)}Arn`)),
        expect.stringMatching(new RegExp(`^kms:Sign .*${logicalIdOf(stateful().keys.receiptSigning)}Arn`)),
        expect.stringMatching(
          new RegExp(`^dynamodb:GetRecords .*${logicalIdOf(stateful().tables.receipts)}StreamArn`),
        ),
      ]),
    );
    expect(
      actions.filter(
        (action) =>
          /^dynamodb:(PutItem|UpdateItem|DeleteItem) /.test(action) && action.includes('receiptsTable'),
      ),
    ).toEqual([]);
  });

  it('scans the receipts table for a backfill, and can never write it', () => {
    const actions = statementsOf(
      resourceIn(app.service(), exporter().role.node.findChild('DefaultPolicy')),
    ).flatMap((statement) =>
      [statement.Action].flat().map((action) => `${action} ${JSON.stringify(statement.Resource)}`),
    );
    const receipts = logicalIdOf(stateful().tables.receipts);
    expect(actions).toEqual(
      expect.arrayContaining([expect.stringMatching(new RegExp(`^dynamodb:Scan .*${receipts}Arn`))]),
    );
    expect(
      actions.filter(
        (action) =>
          /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems) /.test(action) &&
          action.includes(receipts),
      ),
    ).toEqual([]);
  });

  it('alarms on the export signals it logs', () => {
    expect(Object.keys(service().signalAlarms).sort()).toEqual([
      'DeliveryDead',
      'ReceiptExportFailed',
      'ReceiptExportLate',
    ]);
    app.service().hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalIdOf(exporter().logGroup) },
      FilterPattern: '{ $.alarm = "ReceiptExportLate" }',
    });
  });
});
