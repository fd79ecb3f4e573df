import { Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as cxapi from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import type { BucketDefinition, BucketId, IndexMigrationStage, KeyId } from '../../functions/definitions';
import { BucketWithAccessLogs } from '../constructs/bucket-with-access-logs';
import { ReceiptsAnalytics } from '../constructs/receipts-analytics';
import { ServiceKeys } from '../constructs/service-keys';
import { ServiceTable } from '../constructs/service-table';
import { bucketEntries, type ServiceTableId, serviceTableEntries } from '../definition-entries';

export interface PricingStatefulStackProps extends StackProps {
  /** Deployment stage (`dev`, `prod`…): part of key aliases. */
  readonly stage: string;
  /**
   * Years every exported receipt, refund and manifest stays write-once (the receipts bucket's Object Lock default
   * retention, compliance mode): a whole number from 7 to 10.
   * @default 7
   */
  readonly receiptRetentionYears?: number;
  /** The stage of a staged index replacement (context `retiredIndexes`); none: the definitions' indexes. */
  readonly indexStage?: IndexMigrationStage;
}

/** The receipts bucket's retention, in years: finance keeps records 7 years, some jurisdictions up to 10. */
export const RECEIPT_RETENTION_YEARS = { min: 7, max: 10, default: 7 } as const;

/**
 * Days of compliance-mode retention for whole years, 365.25 days each, rounded up (7 years: 2557 days, 10 years:
 * 3653), so a leap year never shortens it. Anything but a whole number from 7 to 10 is refused.
 */
export const receiptRetentionDays = (years: number): number => {
  if (
    !Number.isInteger(years) ||
    years < RECEIPT_RETENTION_YEARS.min ||
    years > RECEIPT_RETENTION_YEARS.max
  ) {
    throw new Error(
      `receiptRetentionYears must be a whole number of years from ${RECEIPT_RETENTION_YEARS.min} to ` +
        `${RECEIPT_RETENTION_YEARS.max}, got ${String(years)}`,
    );
  }
  return Math.ceil(years * 365.25);
};

/**
 * Everything that holds data and must outlive deployments (ARCHITECTURE §5.7): the KMS keys, the DynamoDB
 * tables (`serviceTables()`) and the buckets (`BUCKETS`), all retained when the stack goes away.
 */
export class PricingStatefulStack extends Stack {
  readonly keys: Readonly<Record<KeyId, kms.Key>>;
  readonly tables: Readonly<Record<ServiceTableId, dynamodb.Table>>;
  readonly buckets: Readonly<Record<BucketId, s3.Bucket>>;
  /**
   * Per bucket, the managed policy that writes new objects into it (PutObject, and the data key through S3
   * only): functions that write a bucket attach it. It lives here, beside the bucket, so it names the bucket
   * itself rather than a cross-stack import.
   */
  readonly bucketWriters: Readonly<Record<BucketId, iam.ManagedPolicy>>;
  /** Per bucket, the managed policy that lists and reads its objects (and decrypts them through S3 only). */
  readonly bucketReaders: Readonly<Record<BucketId, iam.ManagedPolicy>>;
  /** Glue table and Athena workgroup over the receipts export. */
  readonly receiptsAnalytics: ReceiptsAnalytics;

  constructor(scope: Construct, id: string, props: PricingStatefulStackProps) {
    super(scope, id, props);
    // Server access logs are delivered under a bucket policy for logging.s3.amazonaws.com (ACLs are disabled).
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);

    this.keys = new ServiceKeys(this, 'Keys', { aliasPrefix: `pricing/${props.stage}` }).keys;
    const dataKey = this.keys.data;
    const receiptRetention = receiptRetentionDays(
      props.receiptRetentionYears ?? RECEIPT_RETENTION_YEARS.default,
    );

    this.tables = Object.fromEntries(
      serviceTableEntries().map(([tableId, definition]) => [
        tableId,
        new ServiceTable(this, `${tableId}Table`, {
          definition,
          encryptionKey: dataKey,
          ...(props.indexStage ? { indexStage: props.indexStage } : {}),
        }).table,
      ]),
    ) as Record<ServiceTableId, dynamodb.Table>;

    // One access-log bucket serves every bucket: the first bucket creates it, the others log into it.
    let accessLogBucket: s3.IBucket | undefined;
    this.buckets = Object.fromEntries(
      bucketEntries().map(([bucketId, definition]) => {
        const bucket = new BucketWithAccessLogs(this, `${bucketId}Bucket`, {
          definition,
          encryptionKey: dataKey,
          ...(accessLogBucket ? { accessLogBucket } : {}),
          ...(bucketId === 'receipts' ? { objectLockRetentionDays: receiptRetention } : {}),
        });
        accessLogBucket = bucket.accessLogBucket;
        return [bucketId, bucket.bucket];
      }),
    ) as Record<BucketId, s3.Bucket>;

    const viaS3 = { StringEquals: { 'kms:ViaService': `s3.${this.region}.amazonaws.com` } };
    this.bucketWriters = this.bucketPolicies('Writer', (bucket, definition) => ({
      description: `Writes new objects into the ${definition.id} bucket (never deletes, never changes retention).`,
      statements: [
        new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }),
        new iam.PolicyStatement({
          actions: ['kms:GenerateDataKey'],
          resources: [dataKey.keyArn],
          conditions: viaS3,
        }),
      ],
      objectsReason:
        `Objects of the ${definition.id} bucket get new names as they are written (one per entry or signed ` +
        'head); PutObject only, and the bucket is under Object Lock, so nothing written can be changed.',
    }));
    this.bucketReaders = this.bucketPolicies('Reader', (bucket, definition) => ({
      description: `Lists and reads the objects of the ${definition.id} bucket (never writes, never deletes).`,
      statements: [
        // ListBucket also makes a HeadObject of a missing key answer 404 rather than 403.
        new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
        new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects('*')] }),
        new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [dataKey.keyArn], conditions: viaS3 }),
      ],
      objectsReason:
        `Readers of the ${definition.id} bucket read objects by names they find by listing (one per document or ` +
        'entry, named as written); GetObject only, on this bucket only, decrypting through S3 only.',
    }));

    this.receiptsAnalytics = new ReceiptsAnalytics(this, 'ReceiptsAnalytics', {
      stage: props.stage,
      receiptsBucket: this.buckets.receipts,
      encryptionKey: dataKey,
      accessLogBucket: accessLogBucket as s3.IBucket,
    });
  }

  /**
   * One managed policy per bucket, beside the bucket so it names the bucket itself (a cross-stack import could
   * not be acknowledged); its wildcard over the bucket's objects is acknowledged with the given reason.
   */
  private bucketPolicies(
    role: 'Writer' | 'Reader',
    policyOf: (
      bucket: s3.Bucket,
      definition: BucketDefinition,
    ) => { description: string; statements: iam.PolicyStatement[]; objectsReason: string },
  ): Record<BucketId, iam.ManagedPolicy> {
    return Object.fromEntries(
      bucketEntries().map(([bucketId, definition]) => {
        const bucket = this.buckets[bucketId];
        const { description, statements, objectsReason } = policyOf(bucket, definition);
        const policy = new iam.ManagedPolicy(this, `${bucketId}${role}Policy`, { description, statements });
        const bucketLogicalId = this.getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
        Validations.of(policy).acknowledge({
          id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/*]`,
          reason: objectsReason,
        });
        return [bucketId, policy];
      }),
    ) as Record<BucketId, iam.ManagedPolicy>;
  }
}
