import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type QueueId, TABLES } from '../../definitions';
import type { Clock } from '../../ports/clock';
import type { MessageQueue } from '../../ports/queue';
import { assertScheduleName } from '../../ports/schedule-name';
import type { OneTimeSchedule, OneTimeScheduler } from '../../ports/scheduler';
import { conditionalFailure } from '../aws/dynamo-errors';
import type { StreamPollerLogger } from './stream-poller';

/** All schedules share one index partition; the sort key orders them by due time. */
const INDEX_PARTITION = 'due';
const DUE_INDEX = TABLES.localSchedules.globalSecondaryIndexes[0].name;

/**
 * The local twin of EventBridge Scheduler one-time schedules: each schedule is an item in DynamoDB Local (so a
 * restart loses none); a dispatcher sends due ones to their queue and then deletes them (at-least-once, like
 * Scheduler: a crash between the two sends the message again).
 */
export class LocalOneTimeScheduler implements OneTimeScheduler {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock,
  ) {}

  async scheduleOnce(schedule: OneTimeSchedule): Promise<'created' | 'exists'> {
    assertScheduleName(schedule.name);
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            name: schedule.name,
            due_partition: INDEX_PARTITION,
            due_at: schedule.at.toISOString(),
            queue: schedule.queue,
            body: schedule.body,
            created_at: this.clock.now().toISOString(),
          },
          ConditionExpression: 'attribute_not_exists(#name)',
          ExpressionAttributeNames: { '#name': 'name' },
        }),
      );
      return 'created';
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return 'exists';
      throw error;
    }
  }

  async cancel(name: string): Promise<void> {
    assertScheduleName(name);
    await this.documents.send(new DeleteCommand({ TableName: this.tableName, Key: { name } }));
  }

  /** Sends every schedule due at `now` and removes it; returns how many were sent. */
  async dispatchDue(queue: MessageQueue, limit = 100): Promise<number> {
    const due = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: DUE_INDEX,
        KeyConditionExpression: 'due_partition = :partition AND due_at <= :now',
        ExpressionAttributeValues: { ':partition': INDEX_PARTITION, ':now': this.clock.now().toISOString() },
        Limit: limit,
      }),
    );
    let sent = 0;
    for (const item of due.Items ?? []) {
      await queue.send(item.queue as QueueId, String(item.body));
      try {
        await this.documents.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { name: item.name },
            ConditionExpression: 'due_at = :due',
            ExpressionAttributeValues: { ':due': item.due_at },
          }),
        );
      } catch (error) {
        if (conditionalFailure(error) !== 'condition') throw error;
      }
      sent += 1;
    }
    return sent;
  }
}

/** Runs `dispatchDue` on an interval until stopped. */
export class ScheduleDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastError: string | undefined;

  constructor(
    private readonly scheduler: LocalOneTimeScheduler,
    private readonly queue: MessageQueue,
    private readonly logger: StreamPollerLogger,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    if (this.timer || this.stopped) return;
    const tick = async () => {
      try {
        let sent: number;
        do {
          sent = await this.scheduler.dispatchDue(this.queue);
        } while (sent > 0 && !this.stopped);
        this.lastError = undefined;
      } catch (error) {
        const message = (error as Error).message;
        if (message !== this.lastError) this.logger.error('schedule dispatch failed', { error: message });
        this.lastError = message;
      }
    };
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = tick().finally(() => {
        this.running = undefined;
      });
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  get healthy(): boolean {
    return this.timer !== undefined && this.lastError === undefined;
  }
}
