import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { deliveryMessageSchema, type OutboxItem, outboxItemSchema } from '../schemas/envelope';
import { lazyHandler } from './lazy';

export type QueueHandler = (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;

/** A message whose body can never be processed: it is reported failed so redrive moves it to the DLQ. */
export class UndeliverableMessageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UndeliverableMessageError';
  }
}

/**
 * Delivery queue consumer. Each message names an outbox event; the consumer loads the envelope as first
 * written and hands it on. Failures are reported per message (`batchItemFailures`), so only failed messages
 * come back, and after `maxReceiveCount` receives SQS moves them to the DLQ.
 */
export const createDeliverHandler = (
  deps: ServiceDependencies,
  deliverEnvelope?: (envelope: OutboxItem) => Promise<void>,
): QueueHandler => {
  const logger = deps.createLogger('deliver');
  const hand =
    deliverEnvelope ??
    (async (envelope: OutboxItem) => {
      logger.info('event ready for delivery', { event_id: envelope.event_id, type: envelope.type });
    });

  const handle = async (record: SQSRecord): Promise<void> => {
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch (error) {
      throw new UndeliverableMessageError('message body is not JSON', { cause: error });
    }
    const message = deliveryMessageSchema.parse(body);
    const stored = await deps.documents.send(
      new GetCommand({
        TableName: deps.tableNames.events,
        Key: { event_id: message.event_id },
        ConsistentRead: true,
      }),
    );
    if (!stored.Item) throw new UndeliverableMessageError(`event ${message.event_id} is not in the outbox`);
    await hand(outboxItemSchema.parse(stored.Item));
  };

  return async (event) => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        await handle(record);
      } catch (error) {
        logger.warn('delivery message failed', {
          message_id: record.messageId,
          receive_count: record.attributes.ApproximateReceiveCount,
          error: error as Error,
        });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
};

export const handler = lazyHandler(() => createDeliverHandler(awsDependencies()));
