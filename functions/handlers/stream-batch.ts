import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { limitConcurrency } from '../shared/concurrency';

/**
 * Handles the records of a DynamoDB stream batch with Powertools batch processing, at most `concurrency` records
 * at a time, and answers a partial batch response (ReportBatchItemFailures) naming every failed record: the
 * mapping resumes from the lowest sequence number among them, so records after it that succeeded are handled
 * again, which the consumers' idempotent writes absorb. A batch that fails whole is a partial response too (no
 * throw): the mapping retries it the same way. `onFailure` sees each failure.
 */
export const handleStreamBatch = async (
  event: DynamoDBStreamEvent,
  concurrency: number,
  handle: (record: DynamoDBRecord) => Promise<void>,
  onFailure: (record: DynamoDBRecord, error: unknown) => void,
): Promise<DynamoDBBatchResponse> => {
  const handleRecord = limitConcurrency(concurrency, async (record: DynamoDBRecord) => {
    try {
      await handle(record);
    } catch (error) {
      onFailure(record, error);
      throw error;
    }
  });
  // A processor per invocation: the local stack runs invocations of one handler concurrently.
  return processPartialResponse(event, handleRecord, new BatchProcessor(EventType.DynamoDBStreams), {
    throwOnFullBatchFailure: false,
  });
};
