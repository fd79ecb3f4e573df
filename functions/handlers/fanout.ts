import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { type DeliveryMessage, outboxItemSchema } from '../schemas/envelope';
import { lazyHandler } from './lazy';

export type StreamHandler = (event: DynamoDBStreamEvent, context: unknown) => Promise<DynamoDBBatchResponse>;

/**
 * Outbox relay: each new event in the events table goes to the delivery queue, then the event is stamped
 * `fanned_out_at`. Records are handled in stream order; the first failure is reported (ReportBatchItemFailures)
 * so the mapping retries from there and later records keep their order.
 */
export const createFanoutHandler = (deps: ServiceDependencies): StreamHandler => {
  const logger = deps.createLogger('fanout');

  const relay = async (record: DynamoDBRecord): Promise<void> => {
    if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) return;
    const image = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>);
    const item = outboxItemSchema.parse(image);
    const message: DeliveryMessage = { event_id: item.event_id, type: item.type };
    await deps.queue.send('delivery', JSON.stringify(message));
    await deps.documents.send(
      new UpdateCommand({
        TableName: deps.tableNames.events,
        Key: { event_id: item.event_id },
        UpdateExpression: 'SET fanned_out_at = if_not_exists(fanned_out_at, :now)',
        ConditionExpression: 'attribute_exists(event_id)',
        ExpressionAttributeValues: { ':now': deps.clock.now().toISOString() },
      }),
    );
    logger.info('event relayed', { event_id: item.event_id, type: item.type, trace_id: item.trace_id });
  };

  return async (event) => {
    for (const record of event.Records) {
      try {
        await relay(record);
      } catch (error) {
        const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
        logger.error('relay failed', { sequence_number: sequenceNumber, error: error as Error });
        return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
      }
    }
    return { batchItemFailures: [] };
  };
};

export const handler = lazyHandler(() => createFanoutHandler(awsDependencies()));
