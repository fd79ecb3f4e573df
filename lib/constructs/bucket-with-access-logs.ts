import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { BucketDefinition } from '../../functions/definitions';
import { SECURE_DEFAULTS } from './defaults';

export interface BucketWithAccessLogsProps {
  /** The bucket's definition from `functions/definitions`. */
  readonly definition: BucketDefinition;
  /** Customer-managed key that encrypts every object (SSE-KMS with an S3 Bucket Key). */
  readonly encryptionKey: kms.IKey;
  /**
   * Bucket that receives the server access logs. Access logs cannot be delivered to an SSE-KMS bucket, so the
   * log bucket is SSE-S3.
   * @default a new access-log bucket (SSE-S3, SSL only, no public access, logs expire after
   * SECURE_DEFAULTS.accessLogRetentionDays)
   */
  readonly accessLogBucket?: s3.IBucket;
  /**
   * Enable S3 Object Lock so objects can be made immutable. Buckets whose definition has `objectLock` get its
   * default retention in compliance mode: every object is write-once for that long.
   * @default true
   */
  readonly objectLock?: boolean;
  /**
   * Default retention in days, instead of the definition's `objectLock.retentionDays` (a deployment may keep
   * longer than the definition's minimum, e.g. receipts 7 to 10 years).
   * @default the definition's
   */
  readonly objectLockRetentionDays?: number;
  /** @default SECURE_DEFAULTS.statefulRemovalPolicy (RETAIN) */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * A private, versioned, SSL-only S3 bucket encrypted with the customer-managed data key, whose server access
 * logs go to a separate access-log bucket.
 */
export class BucketWithAccessLogs extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogBucket: s3.IBucket;

  constructor(scope: Construct, id: string, props: BucketWithAccessLogsProps) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? SECURE_DEFAULTS.statefulRemovalPolicy;
    this.accessLogBucket = props.accessLogBucket ?? accessLogBucket(this, 'AccessLogs', { removalPolicy });
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: props.encryptionKey,
      bucketKeyEnabled: true,
      versioned: true,
      objectLockEnabled: props.objectLock ?? true,
      // Write-once buckets (receipts, the audit journal): every object is under compliance-mode retention.
      ...(props.definition.objectLock
        ? {
            objectLockDefaultRetention: s3.ObjectLockRetention.compliance(
              Duration.days(props.objectLockRetentionDays ?? props.definition.objectLock.retentionDays),
            ),
          }
        : {}),
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: `${props.definition.id}/`,
      // Objects made again on demand (exports) or used once (uploads) expire, older versions a day later.
      ...(props.definition.expiration?.length
        ? {
            lifecycleRules: props.definition.expiration.map((rule) => ({
              prefix: rule.prefix,
              expiration: Duration.days(rule.days),
              noncurrentVersionExpiration: Duration.days(1),
              abortIncompleteMultipartUploadAfter: Duration.days(1),
            })),
          }
        : {}),
      removalPolicy,
    });
  }
}

/**
 * A bucket that receives access logs: private, encrypted, TLS 1.2+ only, versioned, each log kept
 * `accessLogRetentionDays`. CloudFront's standard logs are written with an ACL (`objectOwnership:
 * OBJECT_WRITER`); S3's server access logs need none.
 */
export const accessLogBucket = (
  scope: Construct,
  id: string,
  props: { readonly removalPolicy: RemovalPolicy; readonly objectOwnership?: s3.ObjectOwnership },
): s3.Bucket => {
  const bucket = new s3.Bucket(scope, id, {
    encryption: s3.BucketEncryption.S3_MANAGED,
    versioned: true,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: props.objectOwnership ?? s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [
      {
        expiration: Duration.days(SECURE_DEFAULTS.accessLogRetentionDays),
        noncurrentVersionExpiration: Duration.days(1),
      },
    ],
    removalPolicy: props.removalPolicy,
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      'This is an access log destination itself; logging its own accesses into itself would loop, and the ' +
      'services deliver their logs with their own principals.',
  });
  return bucket;
};
