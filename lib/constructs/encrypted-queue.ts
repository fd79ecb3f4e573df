import { Duration } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  QUEUES,
  type QueueDefinition,
  type QueueId,
  visibilityTimeoutSeconds,
} from '../../functions/definitions';

export interface EncryptedQueueProps {
  /** The `QUEUES` key: retention, dead-letter settings and visibility timeout come from its definition. */
  readonly queueId: QueueId;
  /** Customer-managed key for SSE-KMS. */
  readonly encryptionKey: kms.IKey;
  /**
   * The queue messages move to after `deadLetter.maxReceiveCount` receives. Required exactly when the
   * definition names a `deadLetter`.
   * @default no redrive (a terminal queue)
   */
  readonly deadLetterQueue?: EncryptedQueue;
  /**
   * How long the data key is cached by SQS before it asks KMS again.
   * @default 5 minutes (SQS default)
   */
  readonly dataKeyReuse?: Duration;
}

/**
 * An SQS queue encrypted with a customer-managed key that refuses non-TLS requests, keeps messages as long as
 * its definition says, hides in-flight messages for `visibilityTimeoutSeconds(queueId)` (≥ 6 × its consumer's
 * timeout) and, for work queues, redrives to its dead-letter queue after `maxReceiveCount` receives.
 */
export class EncryptedQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly definition: QueueDefinition;
  readonly encryptionKey: kms.IKey;
  readonly visibilityTimeout: Duration;

  constructor(scope: Construct, id: string, props: EncryptedQueueProps) {
    super(scope, id);
    const definition: QueueDefinition = QUEUES[props.queueId];
    this.definition = definition;
    this.encryptionKey = props.encryptionKey;
    const deadLetter = definition.deadLetter;
    if (deadLetter && !props.deadLetterQueue) {
      throw new Error(`queue ${definition.id} needs its dead-letter queue ${deadLetter.queue}`);
    }
    if (!deadLetter && props.deadLetterQueue) {
      throw new Error(`queue ${definition.id} has no deadLetter in its definition`);
    }
    if (deadLetter && props.deadLetterQueue && props.deadLetterQueue.definition.id !== deadLetter.queue) {
      throw new Error(`queue ${definition.id} must redrive to ${deadLetter.queue}`);
    }
    this.visibilityTimeout = Duration.seconds(visibilityTimeoutSeconds(props.queueId));
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.encryptionKey,
      ...(props.dataKeyReuse ? { dataKeyReuse: props.dataKeyReuse } : {}),
      enforceSSL: true,
      retentionPeriod: Duration.days(definition.retentionDays),
      visibilityTimeout: this.visibilityTimeout,
      ...(deadLetter && props.deadLetterQueue
        ? {
            deadLetterQueue: {
              queue: props.deadLetterQueue.queue,
              maxReceiveCount: deadLetter.maxReceiveCount,
            },
          }
        : {}),
    });
  }
}
