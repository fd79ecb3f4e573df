import { Duration } from 'aws-cdk-lib';
import * as eventSources from 'aws-cdk-lib/aws-lambda-event-sources';
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
 * failed messages return to the queue (and, after `maxReceiveCount`, to its dead-letter queue).
 */
export class QueueToFunction extends Construct {
  readonly eventSource: eventSources.SqsEventSource;

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
    this.eventSource = new eventSources.SqsEventSource(source.queue, {
      batchSize: mapping.batchSize,
      maxBatchingWindow: Duration.seconds(mapping.maxBatchingWindowSeconds),
      reportBatchItemFailures: mapping.reportBatchItemFailures,
      maxConcurrency: mapping.maxConcurrency,
    });
    target.function.addEventSource(this.eventSource);
  }
}
