import type { QueueId } from '../definitions';

export interface SendOptions {
  /** 0–900 seconds (SQS `DelaySeconds`); longer waits go through the scheduler port. */
  readonly delaySeconds?: number;
  /**
   * A fairness group (SQS `MessageGroupId` on a standard queue: SQS fair queues): a group with a backlog does
   * not delay the other groups' messages. Deliveries are grouped by endpoint.
   */
  readonly group?: string;
}

/** Sends messages to the service's queues, addressed by their definition id. */
export interface MessageQueue {
  send(queue: QueueId, body: string, options?: SendOptions): Promise<{ messageId: string }>;
}

/** How many messages wait in a queue: SQS `ApproximateNumberOfMessages` (visible, not in flight). */
export interface QueueDepths {
  depth(queue: QueueId): Promise<number>;
}
