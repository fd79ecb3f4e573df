import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { webhookContext } from '../composition/webhooks';
import type { EndpointRecord } from '../ports/webhooks';
import { outboxItemSchema } from '../schemas/envelope';
import { fanOutEvent } from '../usecases/webhooks/fanout';
import { lazyHandler } from './lazy';
import { handleStreamBatch } from './stream-batch';

/** Records of one stream batch fanned out at once. */
const FANOUT_CONCURRENCY = 10;

export type StreamHandler = (event: DynamoDBStreamEvent, context: unknown) => Promise<DynamoDBBatchResponse>;

/**
 * Events stream consumer: each new outbox event becomes one delivery record and one queue message per
 * matching endpoint. Every failed record is reported (ReportBatchItemFailures), so the mapping retries
 * from there; a batch handed over again creates nothing twice.
 */
export const createFanoutHandler = (deps: ServiceDependencies): StreamHandler => {
  const logger = deps.createLogger('fanout');
  const ctx = webhookContext(deps, logger);

  const fanOut = async (
    record: DynamoDBRecord,
    endpoints: () => Promise<EndpointRecord[]>,
  ): Promise<void> => {
    if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) return;
    const image = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>);
    const item = outboxItemSchema.parse(image);
    const deliveries = await fanOutEvent(ctx, item, await endpoints());
    logger.info('event fanned out', {
      event_id: item.event_id,
      type: item.type,
      trace_id: item.trace_id,
      deliveries,
    });
  };

  return async (event) => {
    // The endpoints are read once per batch, when the first insert needs them.
    let loading: Promise<EndpointRecord[]> | undefined;
    const endpoints = () => {
      loading ??= ctx.endpoints.subscribers();
      return loading;
    };
    // Records are fanned out concurrently (delivery order is not guaranteed anyway, and fanning an event out
    // twice is a no-op).
    return handleStreamBatch(
      event,
      FANOUT_CONCURRENCY,
      (record) => fanOut(record, endpoints),
      (record, error) =>
        logger.error('fan-out failed', {
          sequence_number: record.dynamodb?.SequenceNumber ?? '',
          error: error as Error,
        }),
    );
  };
};

export const handler = lazyHandler(() => createFanoutHandler(awsDependencies('fanout')));
