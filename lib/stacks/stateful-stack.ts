import { Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as cxapi from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import type { BucketId, KeyId } from '../../functions/definitions';
import { BucketWithAccessLogs } from '../constructs/bucket-with-access-logs';
import { ServiceKeys } from '../constructs/service-keys';
import { ServiceTable } from '../constructs/service-table';
import { bucketEntries, type ServiceTableId, serviceTableEntries } from '../definition-entries';

export interface PricingStatefulStackProps extends StackProps {
  /** Deployment stage (`dev`, `prod`…): part of key aliases. */
  readonly stage: string;
}

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

  constructor(scope: Construct, id: string, props: PricingStatefulStackProps) {
    super(scope, id, props);
    // Server access logs are delivered under a bucket policy for logging.s3.amazonaws.com (ACLs are disabled).
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);

    this.keys = new ServiceKeys(this, 'Keys', { aliasPrefix: `pricing/${props.stage}` }).keys;
    const dataKey = this.keys.data;

    this.tables = Object.fromEntries(
      serviceTableEntries().map(([tableId, definition]) => [
        tableId,
        new ServiceTable(this, `${tableId}Table`, { definition, encryptionKey: dataKey }).table,
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
        });
        accessLogBucket = bucket.accessLogBucket;
        return [bucketId, bucket.bucket];
      }),
    ) as Record<BucketId, s3.Bucket>;

    this.bucketWriters = Object.fromEntries(
      bucketEntries().map(([bucketId, definition]) => {
        const bucket = this.buckets[bucketId];
        const policy = new iam.ManagedPolicy(this, `${bucketId}WriterPolicy`, {
          description: `Writes new objects into the ${definition.id} bucket (never deletes, never changes retention).`,
          statements: [
            new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }),
            new iam.PolicyStatement({
              actions: ['kms:GenerateDataKey'],
              resources: [dataKey.keyArn],
              conditions: { StringEquals: { 'kms:ViaService': `s3.${this.region}.amazonaws.com` } },
            }),
          ],
        });
        const bucketLogicalId = this.getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
        Validations.of(policy).acknowledge({
          id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/*]`,
          reason:
            `Objects of the ${definition.id} bucket get new names as they are written (one per entry or signed ` +
            'head); PutObject only, and the bucket is under Object Lock, so nothing written can be changed.',
        });
        return [bucketId, policy];
      }),
    ) as Record<BucketId, iam.ManagedPolicy>;
  }
}
