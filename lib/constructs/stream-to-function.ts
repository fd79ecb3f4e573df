import { Duration, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as eventSources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StreamMappingDefinition } from '../../functions/definitions';
import type { EncryptedQueue } from './encrypted-queue';
import type { ServiceFunction } from './service-function';

export interface StreamToFunctionProps {
  /** The mapping's definition: batch size, window, starting position, bisect, retries, batch item failures. */
  readonly mapping: StreamMappingDefinition;
  /** Table whose stream is read; it must have a stream. */
  readonly table: dynamodb.ITable;
  /** The consumer. */
  readonly target: ServiceFunction;
  /** On-failure destination: metadata of batches that exhausted their retries goes here. */
  readonly onFailure: EncryptedQueue;
}

/**
 * A DynamoDB stream → Lambda event source mapping as its definition describes it, with an SQS on-failure
 * destination so no batch is silently dropped after `maxRetryAttempts`.
 */
export class StreamToFunction extends Construct {
  readonly eventSource: eventSources.DynamoEventSource;

  constructor(scope: Construct, id: string, props: StreamToFunctionProps) {
    super(scope, id);
    const { mapping, onFailure } = props;
    // The destination is handed to SqsDlq as a key-less reference so its grant stays exact (SendMessage on
    // the queue); the two KMS actions sending to the encrypted queue needs are granted here by name instead
    // of the kms:ReEncrypt*/kms:GenerateDataKey* wildcards the queue's own grant would add.
    const destination = sqs.Queue.fromQueueAttributes(this, 'OnFailureDestination', {
      queueArn: onFailure.queue.queueArn,
      queueUrl: onFailure.queue.queueUrl,
      queueName: onFailure.queue.queueName,
    });
    props.target.addToRolePolicy(['kms:GenerateDataKey', 'kms:Decrypt'], [onFailure.encryptionKey.keyArn]);
    this.eventSource = new eventSources.DynamoEventSource(props.table, {
      startingPosition: lambda.StartingPosition[mapping.startingPosition],
      batchSize: mapping.batchSize,
      maxBatchingWindow: Duration.seconds(mapping.maxBatchingWindowSeconds),
      bisectBatchOnError: mapping.bisectBatchOnError,
      retryAttempts: mapping.maxRetryAttempts,
      reportBatchItemFailures: mapping.reportBatchItemFailures,
      onFailure: new eventSources.SqsDlq(destination),
    });
    props.target.function.addEventSource(this.eventSource);
    Validations.of(onFailure.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        `${onFailure.definition.id} is itself a terminal queue: the on-failure destination of the ${mapping.id} ` +
        'stream mapping (SQS3 only recognises redrive targets). Nothing consumes it automatically; its depth alarms.',
    });
  }
}
