import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, serviceTables, type TableDefinition } from '../../functions/definitions';
import { keyEntries, serviceTableEntries } from '../../lib/definition-entries';
import { arnOf, logicalIdOf, type PricingAppFixture, pricingApp, resourceIn } from './fixture';

let fixture: PricingAppFixture;
let template: Template;

beforeAll(() => {
  fixture = pricingApp();
  template = Template.fromStack(fixture.stacks.stateful);
});
afterAll(() => fixture.cleanup());

const resourceOf = (construct: Parameters<typeof logicalIdOf>[0]) => resourceIn(template, construct);

const tables = serviceTableEntries().map(([tableId, definition]) => ({ tableId, definition }));
const tableOf = (tableId: (typeof tables)[number]['tableId']) => fixture.stacks.stateful.tables[tableId];

describe('tables', () => {
  it('deploys exactly the service tables', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', serviceTables().length);
  });

  it.each(tables)('$tableId is on-demand', ({ tableId }) => {
    expect(resourceOf(tableOf(tableId)).Properties.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it.each(tables)('$tableId has point-in-time recovery', ({ tableId }) => {
    expect(resourceOf(tableOf(tableId)).Properties.PointInTimeRecoverySpecification).toEqual({
      PointInTimeRecoveryEnabled: true,
    });
  });

  it.each(tables)('$tableId is encrypted with the customer-managed data key', ({ tableId }) => {
    expect(resourceOf(tableOf(tableId)).Properties.SSESpecification).toEqual({
      SSEEnabled: true,
      SSEType: 'KMS',
      KMSMasterKeyId: arnOf(fixture.stacks.stateful.keys.data),
    });
  });

  it.each(tables)('$tableId has the stream its definition names', ({ tableId, definition }) => {
    const expected = (definition as TableDefinition).stream;
    expect(resourceOf(tableOf(tableId)).Properties.StreamSpecification).toEqual(
      expected ? { StreamViewType: expected } : undefined,
    );
  });

  it.each(tables)('$tableId has the TTL attribute its definition names', ({ tableId, definition }) => {
    const expected = (definition as TableDefinition).timeToLiveAttribute;
    expect(resourceOf(tableOf(tableId)).Properties.TimeToLiveSpecification).toEqual(
      expected ? { AttributeName: expected, Enabled: true } : undefined,
    );
  });

  it.each(tables)('$tableId is retained when the stack goes away', ({ tableId }) => {
    const resource = template.toJSON().Resources[logicalIdOf(tableOf(tableId))];
    expect({ deletion: resource.DeletionPolicy, replace: resource.UpdateReplacePolicy }).toEqual({
      deletion: 'Retain',
      replace: 'Retain',
    });
  });
});

describe('keys', () => {
  it('the receipt signing key is ECC P-256 for sign/verify', () => {
    expect(resourceOf(fixture.stacks.stateful.keys.receiptSigning).Properties).toMatchObject({
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
    });
  });

  it('the quote MAC key is HMAC-256 for generate/verify MAC', () => {
    expect(resourceOf(fixture.stacks.stateful.keys.quoteMac).Properties).toMatchObject({
      KeySpec: 'HMAC_256',
      KeyUsage: 'GENERATE_VERIFY_MAC',
    });
  });

  it('the data key is symmetric with automatic rotation', () => {
    expect(resourceOf(fixture.stacks.stateful.keys.data).Properties).toMatchObject({
      EnableKeyRotation: true,
    });
  });

  it.each(keyEntries().map(([keyId, definition]) => ({ keyId, definition })))(
    '$keyId has an alias ending in its definition id',
    ({ keyId, definition }) => {
      template.hasResourceProperties('AWS::KMS::Alias', {
        AliasName: `alias/pricing/test/${definition.id}`,
        TargetKeyId: arnOf(fixture.stacks.stateful.keys[keyId]),
      });
    },
  );

  it('every key is retained when the stack goes away', () => {
    const policies = Object.values(template.findResources('AWS::KMS::Key')).map((key) => key.DeletionPolicy);
    expect(policies).toEqual(Object.keys(KEYS).map(() => 'Retain'));
  });
});

describe('receipts bucket', () => {
  const receipts = () => resourceOf(fixture.stacks.stateful.buckets.receipts).Properties;

  it('is encrypted with the data key', () => {
    expect(receipts().BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: {
            SSEAlgorithm: 'aws:kms',
            KMSMasterKeyID: arnOf(fixture.stacks.stateful.keys.data),
          },
        },
      ],
    });
  });

  it('is versioned', () => {
    expect(receipts().VersioningConfiguration).toEqual({ Status: 'Enabled' });
  });

  it('blocks all public access', () => {
    expect(receipts().PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });

  it('denies requests without TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalIdOf(fixture.stacks.stateful.buckets.receipts) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('writes server access logs into a separate bucket', () => {
    const logging = receipts().LoggingConfiguration as { DestinationBucketName: { Ref: string } };
    expect(logging.DestinationBucketName.Ref).not.toBe(logicalIdOf(fixture.stacks.stateful.buckets.receipts));
  });

  it('is retained when the stack goes away', () => {
    const resource = template.toJSON().Resources[logicalIdOf(fixture.stacks.stateful.buckets.receipts)];
    expect(resource.DeletionPolicy).toBe('Retain');
  });
});

describe('catalog files bucket', () => {
  const bucket = () => resourceOf(fixture.stacks.stateful.buckets.catalogFiles).Properties;

  it('expires exports after 7 days and uploads after a day (older versions a day later), with no retention lock', () => {
    expect(bucket().LifecycleConfiguration).toEqual({
      Rules: [
        {
          Prefix: 'exports/',
          ExpirationInDays: 7,
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: 'Enabled',
        },
        {
          Prefix: 'uploads/',
          ExpirationInDays: 1,
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: 'Enabled',
        },
      ],
    });
    expect((bucket().ObjectLockConfiguration as { Rule?: unknown } | undefined)?.Rule).toBeUndefined();
  });

  it('is encrypted with the data key and blocks public access, as every bucket', () => {
    expect(bucket().BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: {
            KMSMasterKeyID: arnOf(fixture.stacks.stateful.keys.data),
            SSEAlgorithm: 'aws:kms',
          },
        },
      ],
    });
    expect(bucket().PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });
});
