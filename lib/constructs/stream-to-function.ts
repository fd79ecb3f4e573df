import { Duration, Names, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { StreamMappingDefinition } from '../../functions/definitions';
import type { EncryptedQueue } from './encrypted-queue';
import type { ServiceFunction } from './service-function';

export interface StreamToFunctionProps {
  /** The mapping's definition: batch size, window, starting position, bisect, retries, batch item failures. */
  readonly mapping: StreamMappingDefinition;
  /** Table whose stream is read; it must have a stream. */
  readonly table: dynamodb.ITable;
  /** The customer key the table (and so its stream) is encrypted with. */
  readonly tableKey: kms.IKey;
  /** The consumer. */
  readonly target: ServiceFunction;
  /** On-failure destination: metadata of batches that exhausted their retries goes here. */
  readonly onFailure: EncryptedQueue;
}

/** An SQS on-failure destination that grants nothing itself: the consumer's grants are named by the caller. */
class QueueDestination implements lambda.IEventSourceDlq {
  constructor(private readonly queueArn: string) {}

  bind(): lambda.DlqDestinationConfig {
    return { destination: this.queueArn };
  }
}

/**
 * A DynamoDB stream → Lambda event source mapping as its definition describes it, with an SQS on-failure
 * destination so no batch is silently dropped after `maxRetryAttempts`. The consumer's role gets exactly what
 * the poller uses: the stream actions (`ServiceFunction.grantStreamRead`) and SendMessage on the destination with
 * the two KMS actions it needs through SQS only (`grantSendMessages`).
 */
export class StreamToFunction extends Construct {
  readonly eventSourceMapping: lambda.EventSourceMapping;

  constructor(scope: Construct, id: string, props: StreamToFunctionProps) {
    super(scope, id);
    const { mapping, onFailure, table, target } = props;
    if (!table.tableStreamArn)
      throw new Error(`mapping ${mapping.id}: table ${table.node.path} has no stream`);
    // The same construct id as CDK's DynamoEventSource gave it, so the deployed mapping (and its position in
    // the stream) is kept, not replaced.
    this.eventSourceMapping = target.function.addEventSourceMapping(
      `DynamoDBEventSource:${Names.nodeUniqueId(table.node)}`,
      {
        eventSourceArn: table.tableStreamArn,
        startingPosition: lambda.StartingPosition[mapping.startingPosition],
        batchSize: mapping.batchSize,
        maxBatchingWindow: Duration.seconds(mapping.maxBatchingWindowSeconds),
        bisectBatchOnError: mapping.bisectBatchOnError,
        retryAttempts: mapping.maxRetryAttempts,
        reportBatchItemFailures: mapping.reportBatchItemFailures,
        onFailure: new QueueDestination(onFailure.queue.queueArn),
        ...(mapping.eventNames
          ? {
              filters: [
                lambda.FilterCriteria.filter({ eventName: lambda.FilterRule.or(...mapping.eventNames) }),
              ],
            }
          : {}),
      },
    );
    target.grantStreamRead(table, props.tableKey);
    target.grantSendMessages(onFailure);
    Validations.of(onFailure.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        `${onFailure.definition.id} is itself a terminal queue: the on-failure destination of the ${mapping.id} ` +
        'stream mapping (SQS3 only recognises redrive targets). Nothing consumes it automatically; its depth alarms.',
    });
  }
}
