import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { mapConcurrently } from '../shared/concurrency';

/**
 * Handles the records of a DynamoDB stream batch concurrently (at most `concurrency` at a time) and reports the
 * earliest failed record (ReportBatchItemFailures), so the mapping retries from there; records after it that
 * succeeded are handled again, which the consumers' idempotent writes absorb. `onFailure` sees each failure.
 */
export const handleStreamBatch = async (
  records: readonly DynamoDBRecord[],
  concurrency: number,
  handle: (record: DynamoDBRecord) => Promise<void>,
  onFailure: (record: DynamoDBRecord, error: unknown) => void,
): Promise<DynamoDBBatchResponse> => {
  const succeeded = await mapConcurrently(records, concurrency, async (record) => {
    try {
      await handle(record);
      return true;
    } catch (error) {
      onFailure(record, error);
      return false;
    }
  });
  const earliest = succeeded.indexOf(false);
  if (earliest < 0) return { batchItemFailures: [] };
  return { batchItemFailures: [{ itemIdentifier: records[earliest]?.dynamodb?.SequenceNumber ?? '' }] };
};
