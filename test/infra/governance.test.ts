/**
 * The governed-publication slice of the app: the change-request, journal and rate-state tables, the journal
 * bucket under Object Lock (compliance mode), the writer policy that is its only way in, the `rates` function
 * and its schedule, and least-privilege grants.
 */
import type { Construct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { BUCKETS, FUNCTIONS, type FunctionId, RATES_RATE_MINUTES } from '../../functions/definitions';
import { rateExpression } from '../../lib/constructs/rate-schedule-to-function';
import type { ServiceTableId } from '../../lib/definition-entries';
import { arnOf, type CfnResource, importedFrom, logicalIdOf, resourceIn, synthesizedApp } from './fixture';

const app = synthesizedApp();
const tableProperties = (tableId: ServiceTableId) =>
  resourceIn(app.stateful(), app.fixture().stacks.stateful.tables[tableId]).Properties;
const hash = (name: string) => ({ AttributeName: name, KeyType: 'HASH' });
const range = (name: string) => ({ AttributeName: name, KeyType: 'RANGE' });

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Effect: string;
}

const roleOf = (functionId: FunctionId) => app.fixture().stacks.service.functions[functionId].role;

describe('governance tables', () => {
  it('change requests are keyed by (cr_id, sk) with the newest-first by-created index', () => {
    const table = tableProperties('changeRequests');
    expect({ keys: table.KeySchema, indexes: table.GlobalSecondaryIndexes }).toEqual({
      keys: [hash('cr_id'), range('sk')],
      indexes: [
        {
          IndexName: 'by-created',
          KeySchema: [hash('list'), range('created_key')],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('the journal is keyed by (pk, seq) with seq a number, without TTL (nothing expires)', () => {
    const table = tableProperties('journal');
    expect({ keys: table.KeySchema, ttl: table.TimeToLiveSpecification }).toEqual({
      keys: [hash('pk'), range('seq')],
      ttl: undefined,
    });
    expect(table.AttributeDefinitions).toEqual(
      expect.arrayContaining([{ AttributeName: 'seq', AttributeType: 'N' }]),
    );
  });

  it.each(['changeRequests', 'journal', 'rateState'] as const)(
    '%s is encrypted with the data key, has point-in-time recovery and is retained',
    (tableId) => {
      const table = tableProperties(tableId);
      expect(table.SSESpecification).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
      expect(table.PointInTimeRecoverySpecification).toMatchObject({ PointInTimeRecoveryEnabled: true });
      const resource = resourceIn(
        app.stateful(),
        app.fixture().stacks.stateful.tables[tableId],
      ) as unknown as {
        DeletionPolicy?: string;
      };
      expect(resource.DeletionPolicy).toBe('Retain');
    },
  );
});

describe('the journal bucket', () => {
  const bucket = () => resourceIn(app.stateful(), app.fixture().stacks.stateful.buckets.journal).Properties;

  it('is under Object Lock in compliance mode with the defined default retention', () => {
    expect(bucket()).toMatchObject({
      ObjectLockEnabled: true,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: {
          DefaultRetention: { Mode: 'COMPLIANCE', Days: BUCKETS.journal.objectLock.retentionDays },
        },
      },
      VersioningConfiguration: { Status: 'Enabled' },
    });
    expect(BUCKETS.journal.objectLock.retentionDays).toBeGreaterThanOrEqual(3650);
  });

  it('is encrypted with the data key, private, and logs its accesses', () => {
    expect(bucket()).toMatchObject({
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' }, BucketKeyEnabled: true },
        ],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LoggingConfiguration: expect.objectContaining({ LogFilePrefix: 'journal/' }),
    });
  });

  it('has a writer policy that can only put objects (never delete, never change retention)', () => {
    const policy = resourceIn(app.stateful(), app.fixture().stacks.stateful.bucketWriters.journal)
      .Properties as {
      PolicyDocument: { Statement: Statement[] };
    };
    const actions = policy.PolicyDocument.Statement.flatMap((statement) => [statement.Action].flat());
    expect(actions.sort()).toEqual(['kms:GenerateDataKey', 's3:PutObject']);
    const put = policy.PolicyDocument.Statement.find((statement) => statement.Action === 's3:PutObject');
    expect(put?.Resource).toEqual({
      'Fn::Join': ['', [arnOf(app.fixture().stacks.stateful.buckets.journal), '/*']],
    });
  });

  it('is written only by the functions that journal (admin, exporter, rates)', () => {
    const writers = (Object.keys(FUNCTIONS) as FunctionId[]).filter((functionId) => {
      const role = resourceIn(app.service(), roleOf(functionId)).Properties as {
        ManagedPolicyArns?: unknown[];
      };
      const writer = logicalIdOf(app.fixture().stacks.stateful.bucketWriters.journal);
      return (role.ManagedPolicyArns ?? []).some((arn) => JSON.stringify(arn).includes(writer));
    });
    expect(writers.sort()).toEqual(['admin', 'exporter', 'rates']);
  });

  it('every writer of a bucket can read it (a put refused with 412 compares the object already there)', () => {
    const stateful = app.fixture().stacks.stateful;
    const attached = (functionId: FunctionId, policy: Construct) => {
      const role = resourceIn(app.service(), roleOf(functionId)).Properties as {
        ManagedPolicyArns?: unknown[];
      };
      return (role.ManagedPolicyArns ?? []).some((arn) => JSON.stringify(arn).includes(logicalIdOf(policy)));
    };
    let pairs = 0;
    for (const functionId of Object.keys(FUNCTIONS) as FunctionId[]) {
      for (const bucketId of Object.keys(stateful.bucketWriters) as (keyof typeof stateful.bucketWriters)[]) {
        if (!attached(functionId, stateful.bucketWriters[bucketId])) continue;
        pairs += 1;
        expect(
          attached(functionId, stateful.bucketReaders[bucketId]),
          `${functionId} reads ${bucketId}`,
        ).toBe(true);
      }
    }
    expect(pairs).toBe(5);
  });
});

describe('the rates function and its schedule', () => {
  const schedule = () => app.fixture().stacks.service.ratesSchedule;

  it('runs every RATES_RATE_MINUTES (rate(1 minute)), targeting the rates function', () => {
    expect(resourceIn(app.service(), schedule().schedule).Properties).toMatchObject({
      ScheduleExpression: rateExpression(RATES_RATE_MINUTES),
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: arnOf(app.fixture().stacks.service.functions.rates.function),
        RoleArn: arnOf(schedule().role),
      },
    });
    expect(rateExpression(RATES_RATE_MINUTES)).toBe('rate(1 minute)');
  });

  it('signs with the receipt key only (releases and tree heads), and cannot MAC quotes', () => {
    const roleId = logicalIdOf(roleOf('rates'));
    const statements = Object.values(app.service().toJSON().Resources as Record<string, CfnResource>)
      .filter(
        (resource) =>
          resource.Type === 'AWS::IAM::Policy' &&
          JSON.stringify(resource.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
      )
      .flatMap((resource) => (resource.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const signing = statements.filter((statement) => [statement.Action].flat().includes('kms:Sign'));
    expect(signing.map((statement) => statement.Resource)).toEqual([
      importedFrom(app.fixture().stacks.stateful.keys.receiptSigning),
    ]);
    expect(statements.flatMap((statement) => [statement.Action].flat())).not.toContain('kms:GenerateMac');
  });
});
