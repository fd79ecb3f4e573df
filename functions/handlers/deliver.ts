import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { webhookContext } from '../composition/webhooks';
import type { AttemptRecord } from '../ports/webhooks';
import { type DeliveryMessage, deliveryMessageSchema } from '../schemas/envelope';
import { deliveryAttemptOutcome } from '../usecases/objectives/delivery-outcome';
import { type BatchReads, batchReads, DeliveryBusyError, deliverAttempt } from '../usecases/webhooks/deliver';
import { recordAttemptStats } from '../usecases/webhooks/stats';
import { lazyHandler } from './lazy';
import { causeOf } from './middleware/http';

/** The HTTP attempts of one batch, for the endpoints' stats. */
type SentAttempts = { endpointId: string; attempt: AttemptRecord }[];

export type QueueHandler = (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;

/** A message whose body can never be processed: it is reported failed so redrive moves it to the DLQ. */
export class UndeliverableMessageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UndeliverableMessageError';
  }
}

const parseMessage = (record: SQSRecord): DeliveryMessage => {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch (error) {
    throw new UndeliverableMessageError('message body is not JSON', { cause: error });
  }
  const parsed = deliveryMessageSchema.safeParse(body);
  if (!parsed.success) throw new UndeliverableMessageError('message body is not a delivery message');
  return parsed.data;
};

/**
 * Delivery queue consumer: each message is one attempt of one (event, endpoint) delivery, signed and POSTed
 * (C13, C14). Powertools batch processing runs the messages of a batch concurrently (each attempt has its own
 * timeout) and reports a failure per message (`batchItemFailures`), so only that message comes back; after
 * `maxReceiveCount` receives SQS moves it to the DLQ. Outcomes are logged with ids, status and reason only: never a secret, a
 * signature or a payload.
 */
export const createDeliverHandler = (deps: ServiceDependencies): QueueHandler => {
  const logger = deps.createLogger('deliver');
  const ctx = webhookContext(deps, logger);
  const metrics = deps.metrics.recorder('deliver');

  /** The attempt's part in the delivery objectives; a failure to measure never fails the delivery. */
  const measure = async (message: DeliveryMessage, attempt: AttemptRecord): Promise<void> => {
    try {
      metrics.deliveryAttempted(await deliveryAttemptOutcome(deps.webhooks.deliveries, message, attempt));
    } catch (error) {
      logger.warn('delivery attempt not measured', causeOf(error));
    }
  };

  const handle = async (record: SQSRecord, sent: SentAttempts, reads: BatchReads): Promise<void> => {
    const message = parseMessage(record);
    const result = await deliverAttempt(ctx, message, reads);
    if (result.kind === 'attempted' && result.sent)
      sent.push({ endpointId: message.endpoint_id, attempt: result.attempt });
    if (result.kind === 'skipped') {
      logger.info('delivery message skipped', { ...message, reason: result.reason });
      return;
    }
    if (result.kind === 'deferred') {
      logger.info('delivery deferred', {
        event_id: message.event_id,
        endpoint_id: message.endpoint_id,
        attempt: message.attempt,
        reason: result.reason,
        delay_seconds: result.delaySeconds,
      });
      return;
    }
    logger.info('delivery attempt', {
      event_id: message.event_id,
      endpoint_id: message.endpoint_id,
      attempt: message.attempt,
      outcome: result.decision.kind,
      ...(result.attempt.http_status !== undefined ? { http_status: result.attempt.http_status } : {}),
      ...(result.attempt.error !== undefined ? { error_kind: result.attempt.error } : {}),
      ...(result.attempt.reason !== undefined ? { reason: result.attempt.reason } : {}),
      duration_ms: result.attempt.duration_ms,
    });
    await measure(message, result.attempt);
  };

  /** One record: its failure is logged here (a busy delivery is expected: info) and reported by the processor. */
  const handleRecord = async (record: SQSRecord, sent: SentAttempts, reads: BatchReads): Promise<void> => {
    try {
      await handle(record, sent, reads);
    } catch (error) {
      (error instanceof DeliveryBusyError ? logger.info : logger.warn).call(
        logger,
        'delivery message failed',
        {
          message_id: record.messageId,
          receive_count: record.attributes.ApproximateReceiveCount,
          error: error as Error,
        },
      );
      throw error;
    }
  };

  return async (event) => {
    // A processor per invocation: outside Lambda its state lives on the instance, and the local stack runs
    // invocations of one handler concurrently.
    const sent: SentAttempts = [];
    // The batch's messages read each endpoint once.
    const reads = batchReads(ctx);
    const response = await processPartialResponse(
      event,
      (record: SQSRecord) => handleRecord(record, sent, reads),
      new BatchProcessor(EventType.SQS),
      {
        // Every message failing is still a partial response: each comes back on its own, none is retried early.
        throwOnFullBatchFailure: false,
      },
    );
    await recordAttemptStats(ctx, sent);
    metrics.flush();
    return response;
  };
};

export const handler = lazyHandler(() => createDeliverHandler(awsDependencies('deliver')));
