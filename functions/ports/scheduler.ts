import type { QueueId } from '../definitions';

export interface OneTimeSchedule {
  /** Unique name; scheduling the same name again is a no-op that reports `exists`. */
  readonly name: string;
  /** When the message is sent. Second precision (EventBridge Scheduler's `at()` expression). */
  readonly at: Date;
  readonly queue: QueueId;
  readonly body: string;
}

/**
 * One-time schedules that send a message to a queue at a time: EventBridge Scheduler in AWS (deleted after
 * completion), a DynamoDB-backed twin locally. Delivery is at-least-once.
 */
export interface OneTimeScheduler {
  scheduleOnce(schedule: OneTimeSchedule): Promise<'created' | 'exists'>;
  /** Removes a pending schedule; unknown names are ignored. */
  cancel(name: string): Promise<void>;
}
