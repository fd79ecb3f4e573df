/**
 * Data migrations that go with a staged index replacement (`retiredGlobalSecondaryIndexes` in the definitions):
 * the new index key set on items written before it. Each runs as a parallel scan in segments, page by page,
 * resumable from the last key of each segment; every write is conditional, so a rerun, a concurrent writer or an
 * item that expired meanwhile changes nothing twice.
 */
import { type DynamoDBDocumentClient, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { endpointShardKey } from '../../domain/webhooks/envelope';
import { conditionalFailure } from './dynamo-errors';

export type ScanKey = Record<string, unknown>;

/** Where each segment of a migration's scan stands: `undefined` not started, `null` finished. */
export type MigrationProgress = (ScanKey | null | undefined)[];

export interface MigrationTotals {
  readonly scanned: number;
  readonly updated: number;
}

export interface MigrationOptions {
  /** Parallel scan segments. @default 4 */
  readonly segments?: number;
  /** Items read per page of a segment. @default 500 */
  readonly pageSize?: number;
  /** Where a previous run stopped (`segments` entries); each finished segment is skipped. */
  readonly progress?: MigrationProgress;
  /** Called after every page with the whole progress, to be saved for a resumed run. */
  readonly onPage?: (progress: MigrationProgress, totals: MigrationTotals) => Promise<void> | void;
}

/**
 * Sets `endpoint_shard` (the key of the deliveries' endpoint index) on every delivery that has none: deliveries
 * written before the key existed (by a service older than the sharded endpoint index). A delivery gets the key it
 * would have got at creation.
 */
export const backfillEndpointShards = async (
  documents: DynamoDBDocumentClient,
  tableName: string,
  options: MigrationOptions = {},
): Promise<MigrationTotals> => {
  const segments = options.segments ?? 4;
  const pageSize = options.pageSize ?? 500;
  const progress: MigrationProgress = options.progress
    ? [...options.progress]
    : Array.from({ length: segments }, () => undefined);
  if (progress.length !== segments)
    throw new Error(`the saved progress has ${progress.length} segments, not ${segments}`);
  let scanned = 0;
  let updated = 0;
  // One segment failing stops the others at their next page, so the saved progress is where they all stopped.
  let stopped = false;
  const runSegment = async (segment: number) => {
    while (progress[segment] !== null && !stopped) {
      const start = progress[segment] ?? undefined;
      const page = await documents.send(
        new ScanCommand({
          TableName: tableName,
          Segment: segment,
          TotalSegments: segments,
          Limit: pageSize,
          FilterExpression: 'attribute_not_exists(endpoint_shard)',
          ProjectionExpression: 'event_id, endpoint_id',
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      scanned += page.ScannedCount ?? 0;
      for (const item of page.Items ?? []) {
        const eventId = String(item.event_id);
        const endpointId = String(item.endpoint_id);
        try {
          await documents.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { event_id: eventId, endpoint_id: endpointId },
              UpdateExpression: 'SET endpoint_shard = :key',
              ConditionExpression: 'attribute_exists(event_id) AND attribute_not_exists(endpoint_shard)',
              ExpressionAttributeValues: { ':key': endpointShardKey(endpointId, eventId) },
            }),
          );
          updated += 1;
        } catch (error) {
          if (conditionalFailure(error) !== 'condition') throw error;
        }
      }
      progress[segment] = page.LastEvaluatedKey ?? null;
      await options.onPage?.([...progress], { scanned, updated });
    }
  };
  const results = await Promise.allSettled(
    progress.map((_, segment) =>
      runSegment(segment).catch((error: unknown) => {
        stopped = true;
        throw error;
      }),
    ),
  );
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return { scanned, updated };
};

/**
 * The backfill of an index whose key older items may lack, by the index's name: run by the local stack when it
 * rebuilds a kept table in a new shape.
 */
export const INDEX_BACKFILLS: Readonly<
  Record<string, (documents: DynamoDBDocumentClient, tableName: string) => Promise<MigrationTotals>>
> = {
  'by-endpoint-keys': (documents, tableName) => backfillEndpointShards(documents, tableName),
};
