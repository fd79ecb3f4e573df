import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type QueueId, SCHEDULER } from '../../definitions';
import type { MessageQueue, QueueDepths, SendOptions } from '../../ports/queue';

/** Most entries of one `SendMessageBatch` (SQS's limit; its 256 KiB total is checked per batch below). */
const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;

interface PendingSend {
  readonly entry: SendMessageBatchRequestEntry;
  readonly bytes: number;
  readonly resolve: (sent: { messageId: string }) => void;
  readonly reject: (error: Error) => void;
}

/**
 * The SQS adapter of the queue port; the same code talks to SQS in AWS and to fauxqs locally. Sends made in the
 * same turn of the event loop (a fan-out's deliveries, a batch's next attempts) go out together as
 * `SendMessageBatch` requests of up to 10 messages — one request instead of ten — and each send still resolves
 * with its own message id or fails on its own (a batch entry SQS refused, or the whole request).
 */
export class SqsMessageQueue implements MessageQueue, QueueDepths {
  private readonly pending = new Map<QueueId, PendingSend[]>();
  private scheduled = false;

  constructor(
    private readonly sqs: SQSClient,
    /** The URL of a queue by id (a function reaches only the queues it declares). */
    private readonly queueUrl: (queue: QueueId) => string,
  ) {}

  send(queue: QueueId, body: string, options: SendOptions = {}): Promise<{ messageId: string }> {
    const delaySeconds = options.delaySeconds ?? 0;
    if (
      !Number.isInteger(delaySeconds) ||
      delaySeconds < 0 ||
      delaySeconds > SCHEDULER.maxQueueDelaySeconds
    ) {
      return Promise.reject(
        new RangeError(`delaySeconds must be an integer in 0..${SCHEDULER.maxQueueDelaySeconds}`),
      );
    }
    // A queue this function does not declare fails the send at once, not its batch.
    try {
      this.queueUrl(queue);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const list = this.pending.get(queue) ?? [];
      list.push({
        entry: {
          Id: String(list.length),
          MessageBody: body,
          ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
          ...(options.group !== undefined ? { MessageGroupId: options.group } : {}),
        },
        bytes: Buffer.byteLength(body),
        resolve,
        reject,
      });
      this.pending.set(queue, list);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends what was queued in this turn: per queue, batches of at most 10 messages and 256 KiB. */
  private flush(): void {
    this.scheduled = false;
    const queued = [...this.pending.entries()];
    this.pending.clear();
    for (const [queue, sends] of queued) {
      let batch: PendingSend[] = [];
      let bytes = 0;
      for (const send of sends) {
        if (
          batch.length === MAX_BATCH_ENTRIES ||
          (batch.length > 0 && bytes + send.bytes > MAX_BATCH_BYTES)
        ) {
          void this.sendBatch(queue, batch);
          batch = [];
          bytes = 0;
        }
        batch.push(send);
        bytes += send.bytes;
      }
      if (batch.length > 0) void this.sendBatch(queue, batch);
    }
  }

  /**
   * One `SendMessageBatch`; entries SQS failed on its side (`SenderFault: false`, what a single send's SDK retries
   * would have covered) are sent once more in a batch of their own.
   */
  private async sendBatch(queue: QueueId, batch: readonly PendingSend[], retry = true): Promise<void> {
    const entries = batch.map((send, index) => ({ ...send.entry, Id: String(index) }));
    try {
      const result = await this.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: this.queueUrl(queue), Entries: entries }),
      );
      const sent = new Map((result.Successful ?? []).map((entry) => [entry.Id, entry.MessageId ?? '']));
      const failed = new Map((result.Failed ?? []).map((entry) => [entry.Id, entry]));
      const again: PendingSend[] = [];
      batch.forEach((send, index) => {
        const id = String(index);
        const messageId = sent.get(id);
        const failure = failed.get(id);
        if (messageId !== undefined) send.resolve({ messageId });
        else if (retry && failure?.SenderFault === false) again.push(send);
        else {
          send.reject(
            new Error(
              `SQS refused the message (${failure?.Code ?? 'no answer for it'}${failure?.Message ? `: ${failure.Message}` : ''})`,
            ),
          );
        }
      });
      if (again.length > 0) await this.sendBatch(queue, again, false);
    } catch (error) {
      for (const send of batch) send.reject(error as Error);
    }
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
