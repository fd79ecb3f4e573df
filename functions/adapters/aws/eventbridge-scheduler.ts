import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import type { QueueId } from '../../definitions';
import { assertScheduleName } from '../../ports/schedule-name';
import type { OneTimeSchedule, OneTimeScheduler } from '../../ports/scheduler';

export interface EventBridgeSchedulerConfig {
  readonly groupName: string;
  /** Role Scheduler assumes to send to the target queue (it may send to the delivery queue only). */
  readonly roleArn: string;
  /** The ARNs of the queues schedules may target (a function's retry schedules target the delivery queue). */
  readonly queueArns: Readonly<Partial<Record<QueueId, string>>>;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the next whole second so a schedule never fires early. */
export const atExpression = (at: Date): string => {
  const wholeSeconds = new Date(Math.ceil(at.getTime() / 1000) * 1000);
  return `at(${wholeSeconds.toISOString().slice(0, 19)})`;
};

/** Retries Scheduler makes when the target send fails: keep trying for a day (its maximum event age). */
const TARGET_RETRY_POLICY = { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 } as const;

/**
 * One-time schedules with EventBridge Scheduler: the target sends the body to an SQS queue at the time, and
 * the schedule deletes itself after completion. An existing name (ConflictException) reports `exists`.
 */
export class EventBridgeOneTimeScheduler implements OneTimeScheduler {
  constructor(
    private readonly client: SchedulerClient,
    private readonly config: EventBridgeSchedulerConfig,
  ) {}

  async scheduleOnce(schedule: OneTimeSchedule): Promise<'created' | 'exists'> {
    assertScheduleName(schedule.name);
    const target = this.config.queueArns[schedule.queue];
    if (!target) throw new Error(`no schedule target for queue ${schedule.queue}`);
    try {
      await this.client.send(
        new CreateScheduleCommand({
          Name: schedule.name,
          GroupName: this.config.groupName,
          ScheduleExpression: atExpression(schedule.at),
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          State: 'ENABLED',
          Target: {
            Arn: target,
            RoleArn: this.config.roleArn,
            Input: schedule.body,
            RetryPolicy: TARGET_RETRY_POLICY,
          },
        }),
      );
      return 'created';
    } catch (error) {
      if ((error as Error).name === 'ConflictException') return 'exists';
      throw error;
    }
  }

  async cancel(name: string): Promise<void> {
    assertScheduleName(name);
    try {
      await this.client.send(new DeleteScheduleCommand({ Name: name, GroupName: this.config.groupName }));
    } catch (error) {
      if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    }
  }
}
