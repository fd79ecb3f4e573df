import { Duration, Names } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { type QueueMappingDefinition, VISIBILITY_TIMEOUT_FACTOR } from '../../functions/definitions';
import type { EncryptedQueue } from './encrypted-queue';
import type { ServiceFunction } from './service-function';

export interface QueueToFunctionProps {
  /** The mapping's definition: batch size, batching window, batch item failures. */
  readonly mapping: QueueMappingDefinition;
  /** The queue consumed; its visibility timeout must cover 6 × the consumer's timeout. */
  readonly source: EncryptedQueue;
  /** The consumer. */
  readonly target: ServiceFunction;
}

/**
 * An SQS → Lambda event source mapping as its definition describes it, reporting per-message failures so only
 * failed messages return to the queue (and, after `maxReceiveCount`, to its dead-letter queue). The consumer's
 * role gets exactly what the poller uses (`ServiceFunction.grantConsumeMessages`), not the wider set CDK's
 * `SqsEventSource` grants (ChangeMessageVisibility, GetQueueUrl, a key without `kms:ViaService`).
 */
export class QueueToFunction extends Construct {
  readonly eventSourceMapping: lambda.EventSourceMapping;

  constructor(scope: Construct, id: string, props: QueueToFunctionProps) {
    super(scope, id);
    const { mapping, source, target } = props;
    const minimumSeconds = VISIBILITY_TIMEOUT_FACTOR * target.definition.timeoutSeconds;
    if (source.visibilityTimeout.toSeconds() < minimumSeconds) {
      throw new Error(
        `queue ${source.definition.id}: visibility ${source.visibilityTimeout.toSeconds()} s is below ` +
          `${VISIBILITY_TIMEOUT_FACTOR} × ${target.definition.id} timeout (${minimumSeconds} s)`,
      );
    }
    // The same construct id as CDK's SqsEventSource gave it, so the deployed mapping is kept, not replaced.
    this.eventSourceMapping = target.function.addEventSourceMapping(
      `SqsEventSource:${Names.nodeUniqueId(source.queue.node)}`,
      {
        eventSourceArn: source.queue.queueArn,
        batchSize: mapping.batchSize,
        maxBatchingWindow: Duration.seconds(mapping.maxBatchingWindowSeconds),
        reportBatchItemFailures: mapping.reportBatchItemFailures,
        maxConcurrency: mapping.maxConcurrency,
      },
    );
    target.grantConsumeMessages(source);
  }
}
