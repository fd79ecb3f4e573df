import type { Logger } from '@aws-lambda-powertools/logger';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { StreamMappingDefinition } from '../../definitions';
import type { Clock } from '../../ports/clock';

export type StreamBatchHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

/** The slice of the Powertools logger the local twins use. */
export type StreamPollerLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

export interface StreamPollerOptions {
  readonly mapping: StreamMappingDefinition;
  readonly streamArn: string;
  readonly streams: DynamoDBStreamsClient;
  /** Checkpoints (last processed sequence number per shard) live in DynamoDB, so a restart resumes. */
  readonly documents: DynamoDBDocumentClient;
  readonly checkpointTable: string;
  readonly invoke: StreamBatchHandler;
  /** Sends the on-failure record (AWS's `DDBStreamBatchInfo` shape) to the mapping's destination queue. */
  readonly sendToOnFailure: (body: string) => Promise<void>;
  readonly clock: Clock;
  readonly logger: StreamPollerLogger;
  /** Wait between polls of an idle shard. Default 200 ms. */
  readonly pollIntervalMs?: number;
  /**
   * How long a listing of the stream's shards is reused before it is asked for again (a shard that ends
   * always triggers a new listing, since its child is where the records go next). Default 10 s.
   */
  readonly shardListTtlMs?: number;
  /** Wait before retrying a failed batch. Default 100 ms × 2^retry, capped at 2 s. */
  readonly retryDelayMs?: (retry: number) => number;
}

interface PendingBatch {
  records: StreamRecord[];
  retries: number;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** A stream record as Lambda hands it to a function (creation time in epoch seconds, source ARN set). */
export const toLambdaRecord = (record: StreamRecord, streamArn: string): DynamoDBRecord => {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(record.dynamodb as NonNullable<DynamoDBRecord['dynamodb']>),
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
    },
  } as DynamoDBRecord;
};

const sequenceOf = (record: StreamRecord): string => record.dynamodb?.SequenceNumber ?? '';

/**
 * The local twin of Lambda's DynamoDB Streams event source mapping, configured from the same mapping
 * definition as the CDK one. Per shard, records are handed to the function in order, in batches of up to
 * `batchSize`; the checkpoint advances only past records the function accepted.
 *
 * Failure handling follows the AWS mapping: a partial batch response (`batchItemFailures`) checkpoints the
 * records before the first failed sequence number and retries from it; with `bisectBatchOnError` the records
 * still to do (all of them after a function error) are split in two first (a split is not a retry), so a
 * poison record ends up alone; a batch of one that keeps failing is retried, and after `maxRetryAttempts`
 * retries its metadata goes to the on-failure destination and the shard moves on.
 */
export class StreamPoller {
  private readonly controller = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly finishedShards = new Set<string>();
  /**
   * Open iterators per shard, reused between polls (re-created from the checkpoint after an error), with the
   * position reached and the one last written as the checkpoint.
   */
  private readonly iterators = new Map<string, { iterator: string; sequence?: string; persisted?: string }>();
  private lastError: string | undefined;
  private lastPollAt = 0;
  /** The last listing of the stream's shards and when it was taken; cleared when a shard ends or a poll fails. */
  private shardList: { shards: Shard[]; at: number } | undefined;

  constructor(private readonly options: StreamPollerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }

  /** Healthy while the loop runs and its last poll did not fail. */
  get healthy(): boolean {
    return this.loop !== undefined && !this.controller.signal.aborted && this.lastError === undefined;
  }

  get lastPolledAt(): number {
    return this.lastPollAt;
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  private async run(): Promise<void> {
    const interval = this.options.pollIntervalMs ?? 200;
    while (!this.signal.aborted) {
      try {
        const shards = await this.currentShards();
        let progressed = false;
        for (const shard of this.readyShards(shards)) {
          progressed = (await this.drainShard(shard)) || progressed;
          if (this.signal.aborted) break;
        }
        this.lastError = undefined;
        this.lastPollAt = Date.now();
        if (!progressed) await sleep(interval, this.signal);
      } catch (error) {
        if (this.signal.aborted) break;
        this.iterators.clear();
        this.shardList = undefined;
        const message = (error as Error).message;
        if (message !== this.lastError) {
          this.options.logger.error('stream poll failed', {
            mapping: this.options.mapping.id,
            error: message,
          });
        }
        this.lastError = message;
        await sleep(Math.max(interval, 500), this.signal);
      }
    }
  }

  /**
   * The stream's shards, listed again only when the listing is older than the TTL or a shard has ended
   * since: an idle stack otherwise spends a `DescribeStream` per poll for a list that rarely changes.
   */
  private async currentShards(): Promise<Shard[]> {
    const ttl = this.options.shardListTtlMs ?? 10_000;
    const now = Date.now();
    if (this.shardList && now - this.shardList.at < ttl) return this.shardList.shards;
    const shards = await this.listShards();
    // A stream with no shard yet gets one with its first write: ask again on the next poll.
    this.shardList = shards.length > 0 ? { shards, at: now } : undefined;
    return shards;
  }

  private async listShards(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const page = await this.options.streams.send(
        new DescribeStreamCommand({
          StreamArn: this.options.streamArn,
          ...(exclusiveStartShardId ? { ExclusiveStartShardId: exclusiveStartShardId } : {}),
        }),
      );
      shards.push(...(page.StreamDescription?.Shards ?? []));
      exclusiveStartShardId = page.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    return shards;
  }

  /** Parents before children: a child shard is read only once its parent (if still listed) is finished. */
  private readyShards(shards: Shard[]): Shard[] {
    const listed = new Set(shards.map((shard) => shard.ShardId));
    return shards.filter((shard) => {
      if (!shard.ShardId || this.finishedShards.has(shard.ShardId)) return false;
      const parent = shard.ParentShardId;
      return !parent || !listed.has(parent) || this.finishedShards.has(parent);
    });
  }

  /** A shard read to its end: its children become ready, so the next poll lists the shards again. */
  private finishShard(shardId: string): void {
    this.finishedShards.add(shardId);
    this.shardList = undefined;
  }

  private async readCheckpoint(shardId: string): Promise<{ sequence?: string; closed?: boolean }> {
    const stored = await this.options.documents.send(
      new GetCommand({
        TableName: this.options.checkpointTable,
        Key: { mapping_id: this.options.mapping.id, shard_id: shardId },
        ConsistentRead: true,
      }),
    );
    return {
      ...(stored.Item?.sequence_number ? { sequence: String(stored.Item.sequence_number) } : {}),
      ...(stored.Item?.closed ? { closed: true } : {}),
    };
  }

  private async writeCheckpoint(
    shardId: string,
    sequence: string | undefined,
    closed = false,
  ): Promise<void> {
    await this.options.documents.send(
      new PutCommand({
        TableName: this.options.checkpointTable,
        Item: {
          mapping_id: this.options.mapping.id,
          shard_id: shardId,
          ...(sequence ? { sequence_number: sequence } : {}),
          closed,
          updated_at: this.options.clock.now().toISOString(),
        },
      }),
    );
  }

  private async iteratorFor(shardId: string, checkpoint: string | undefined): Promise<string | undefined> {
    const result = await this.options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.options.streamArn,
        ShardId: shardId,
        ...(checkpoint
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: checkpoint }
          : { ShardIteratorType: this.options.mapping.startingPosition }),
      }),
    );
    return result.ShardIterator;
  }

  private getRecords(iterator: string) {
    return this.options.streams.send(
      new GetRecordsCommand({ ShardIterator: iterator, Limit: this.options.mapping.batchSize }),
    );
  }

  /** Reads and handles every available record of one shard; returns whether any record was handled. */
  private async drainShard(shard: Shard): Promise<boolean> {
    const shardId = shard.ShardId as string;
    let sequence: string | undefined;
    let persisted: string | undefined;
    let iterator: string | undefined;
    const open = this.iterators.get(shardId);
    if (open) {
      ({ iterator, sequence, persisted } = open);
    } else {
      const checkpoint = await this.readCheckpoint(shardId);
      if (checkpoint.closed) {
        this.finishShard(shardId);
        return false;
      }
      sequence = checkpoint.sequence;
      persisted = sequence;
      iterator = await this.iteratorFor(shardId, sequence);
    }
    this.iterators.delete(shardId);
    let handled = false;
    while (iterator && !this.signal.aborted) {
      let page: Awaited<ReturnType<typeof this.getRecords>>;
      try {
        page = await this.getRecords(iterator);
      } catch (error) {
        // DynamoDB Local answers a TRIM_HORIZON iterator taken on a shard that was still empty with
        // TrimmedDataAccessException once records arrive. Nothing was handled from this shard yet (no
        // checkpoint), so a fresh iterator from the start of the shard loses nothing: take one on the next poll.
        if ((error as Error).name === 'TrimmedDataAccessException' && sequence === undefined) return handled;
        throw error;
      }
      const records = page.Records ?? [];
      iterator = page.NextShardIterator;
      if (records.length === 0) {
        if (!iterator) {
          await this.writeCheckpoint(shardId, sequence, true);
          this.finishShard(shardId);
        } else {
          // Caught up: the position moved past filtered records is written now, once, not per page.
          if (sequence !== undefined && sequence !== persisted) {
            await this.writeCheckpoint(shardId, sequence);
            persisted = sequence;
          }
          this.iterators.set(shardId, {
            iterator,
            ...(sequence ? { sequence } : {}),
            ...(persisted ? { persisted } : {}),
          });
        }
        return handled;
      }
      // Records the mapping's filter drops are never handed over; the position moves past them (as Lambda's
      // does). It is written with the next batch's checkpoint or when the shard is caught up: a restart in between
      // reads them again and drops them again.
      const passing = records.filter((record) => this.passes(record));
      const last = sequenceOf(records.at(-1) as StreamRecord);
      if (passing.length === 0) {
        sequence = last;
        handled = true;
        continue;
      }
      const completed = await this.handleBatch(shardId, passing, (done) => {
        sequence = done;
        persisted = done;
      });
      if (completed && passing.at(-1) !== records.at(-1)) sequence = last;
      handled = true;
      if (!completed) return handled;
    }
    return handled;
  }

  /** Handles one batch read from the shard; returns false only when stopped before finishing it. */
  private async handleBatch(
    shardId: string,
    records: StreamRecord[],
    advanced: (sequence: string) => void,
  ): Promise<boolean> {
    const { mapping } = this.options;
    const pending: PendingBatch[] = [{ records, retries: 0 }];
    const checkpoint = async (sequence: string) => {
      await this.writeCheckpoint(shardId, sequence);
      advanced(sequence);
    };
    while (pending.length > 0) {
      if (this.signal.aborted) return false;
      const batch = pending[0] as PendingBatch;
      const outcome = await this.invoke(batch.records);
      if (outcome.failedIndex === undefined) {
        await checkpoint(sequenceOf(batch.records.at(-1) as StreamRecord));
        pending.shift();
        continue;
      }
      if (outcome.failedIndex > 0) {
        await checkpoint(sequenceOf(batch.records[outcome.failedIndex - 1] as StreamRecord));
        batch.records = batch.records.slice(outcome.failedIndex);
      }
      if (mapping.bisectBatchOnError && batch.records.length > 1) {
        const middle = Math.ceil(batch.records.length / 2);
        pending.splice(
          0,
          1,
          { records: batch.records.slice(0, middle), retries: batch.retries },
          { records: batch.records.slice(middle), retries: batch.retries },
        );
      } else {
        batch.retries += 1;
        if (batch.retries > mapping.maxRetryAttempts) {
          await this.sendToOnFailure(shardId, batch.records, batch.retries);
          await checkpoint(sequenceOf(batch.records.at(-1) as StreamRecord));
          pending.shift();
          continue;
        }
      }
      const retryDelay = this.options.retryDelayMs ?? ((retry) => Math.min(2_000, 100 * 2 ** retry));
      await sleep(retryDelay(batch.retries), this.signal);
    }
    return true;
  }

  /** Whether a record passes the mapping's event filter (`eventNames`), as Lambda's event filtering decides. */
  private passes(record: StreamRecord): boolean {
    const names = this.options.mapping.eventNames;
    return !names || names.includes(record.eventName as (typeof names)[number]);
  }

  private async invoke(records: StreamRecord[]): Promise<{ failedIndex?: number; functionError: boolean }> {
    const event: DynamoDBStreamEvent = {
      Records: records.map((record) => toLambdaRecord(record, this.options.streamArn)),
    };
    try {
      const response = await this.options.invoke(event);
      const failures = response?.batchItemFailures ?? [];
      if (!this.options.mapping.reportBatchItemFailures || failures.length === 0)
        return { functionError: false };
      const indexes = failures.map((failure) =>
        records.findIndex((record) => sequenceOf(record) === failure.itemIdentifier),
      );
      // An identifier that is empty or unknown fails the whole batch, as Lambda does.
      const failedIndex = indexes.some((index) => index < 0) ? 0 : Math.min(...indexes);
      return { failedIndex, functionError: false };
    } catch (error) {
      this.options.logger.warn('stream batch failed', {
        mapping: this.options.mapping.id,
        size: records.length,
        error: (error as Error).message,
      });
      return { failedIndex: 0, functionError: true };
    }
  }

  private async sendToOnFailure(shardId: string, records: StreamRecord[], attempts: number): Promise<void> {
    const first = records[0]?.dynamodb;
    const last = records.at(-1)?.dynamodb;
    const payload = {
      requestContext: {
        requestId: crypto.randomUUID(),
        functionArn: `arn:aws:lambda:local:000000000000:function:pricing-local-${this.options.mapping.function}`,
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: attempts,
      },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      timestamp: this.options.clock.now().toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: first?.SequenceNumber,
        endSequenceNumber: last?.SequenceNumber,
        approximateArrivalOfFirstRecord: first?.ApproximateCreationDateTime?.toISOString(),
        approximateArrivalOfLastRecord: last?.ApproximateCreationDateTime?.toISOString(),
        batchSize: records.length,
        streamArn: this.options.streamArn,
      },
    };
    await this.options.sendToOnFailure(JSON.stringify(payload));
    this.options.logger.error('stream batch sent to on-failure destination', {
      mapping: this.options.mapping.id,
      shard_id: shardId,
      start_sequence_number: first?.SequenceNumber,
      end_sequence_number: last?.SequenceNumber,
    });
  }
}
