import { GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type QueueId, SCHEDULER } from '../../definitions';
import type { MessageQueue, QueueDepths, SendOptions } from '../../ports/queue';

/** The SQS adapter of the queue port; the same code talks to SQS in AWS and to fauxqs locally. */
export class SqsMessageQueue implements MessageQueue, QueueDepths {
  constructor(
    private readonly sqs: SQSClient,
    /** The URL of a queue by id (a function reaches only the queues it declares). */
    private readonly queueUrl: (queue: QueueId) => string,
  ) {}

  async send(queue: QueueId, body: string, options: SendOptions = {}): Promise<{ messageId: string }> {
    const delaySeconds = options.delaySeconds ?? 0;
    if (
      !Number.isInteger(delaySeconds) ||
      delaySeconds < 0 ||
      delaySeconds > SCHEDULER.maxQueueDelaySeconds
    ) {
      throw new RangeError(`delaySeconds must be an integer in 0..${SCHEDULER.maxQueueDelaySeconds}`);
    }
    const result = await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl(queue),
        MessageBody: body,
        ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
        ...(options.group !== undefined ? { MessageGroupId: options.group } : {}),
      }),
    );
    return { messageId: result.MessageId ?? '' };
  }

  async depth(queue: QueueId): Promise<number> {
    const result = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrl(queue),
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    const depth = Number(result.Attributes?.ApproximateNumberOfMessages);
    if (!Number.isInteger(depth) || depth < 0) throw new Error(`queue ${queue} reported no message count`);
    return depth;
  }
}
