import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { QueueMappingDefinition } from '../../definitions';
import type { StreamPollerLogger } from './stream-poller';

export type QueueBatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface SqsPollerOptions {
  readonly mapping: QueueMappingDefinition;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly invoke: QueueBatchHandler;
  readonly logger: StreamPollerLogger;
  /** Parallel poll loops, like Lambda's pollers. Default 2. */
  readonly concurrency?: number;
  /** Long-poll wait per ReceiveMessage call. Default 1 s (keeps `stop()` prompt). */
  readonly waitTimeSeconds?: number;
}

const toLambdaRecord = (message: Message, queueArn: string): SQSRecord => ({
  messageId: message.MessageId ?? '',
  receiptHandle: message.ReceiptHandle ?? '',
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: message.Attributes?.SentTimestamp ?? '',
    SenderId: message.Attributes?.SenderId ?? 'local',
    ApproximateFirstReceiveTimestamp: message.Attributes?.ApproximateFirstReceiveTimestamp ?? '',
  },
  messageAttributes: Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      },
    ]),
  ) as SQSRecord['messageAttributes'],
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: queueArn,
  awsRegion: queueArn.split(':')[3] ?? 'local',
});

/**
 * The local twin of Lambda's SQS event source mapping: long-polls the queue, hands batches to the function,
 * deletes what succeeded and leaves the rest. A failed message becomes visible again after the queue's
 * visibility timeout, and SQS's redrive policy moves it to the DLQ after `maxReceiveCount` receives, as in
 * AWS. With `reportBatchItemFailures`, only the listed messages fail; a thrown error fails the whole batch.
 */
export class SqsPoller {
  private readonly controller = new AbortController();
  private loops: Promise<void>[] = [];
  private lastError: string | undefined;

  constructor(private readonly options: SqsPollerOptions) {}

  start(): void {
    if (this.loops.length > 0) return;
    const concurrency = this.options.concurrency ?? 2;
    this.loops = Array.from({ length: concurrency }, () => this.run());
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await Promise.all(this.loops);
  }

  get healthy(): boolean {
    return this.loops.length > 0 && !this.controller.signal.aborted && this.lastError === undefined;
  }

  private async run(): Promise<void> {
    const { mapping, sqs, queueUrl } = this.options;
    while (!this.controller.signal.aborted) {
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: Math.min(10, mapping.batchSize),
            WaitTimeSeconds: this.options.waitTimeSeconds ?? 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: this.controller.signal },
        );
        this.lastError = undefined;
        const messages = received.Messages ?? [];
        if (messages.length > 0) await this.handle(messages);
      } catch (error) {
        if (this.controller.signal.aborted) break;
        const message = (error as Error).message;
        if (message !== this.lastError)
          this.options.logger.error('queue poll failed', { mapping: mapping.id, error: message });
        this.lastError = message;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  private async handle(messages: Message[]): Promise<void> {
    const { mapping } = this.options;
    const event: SQSEvent = {
      Records: messages.map((message) => toLambdaRecord(message, this.options.queueArn)),
    };
    let failed: Set<string>;
    try {
      const response = await this.options.invoke(event);
      const identifiers = mapping.reportBatchItemFailures
        ? (response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier)
        : [];
      const known = new Set(messages.map((message) => message.MessageId));
      // An identifier Lambda cannot match fails the whole batch.
      failed = identifiers.some((id) => !known.has(id))
        ? new Set(known as Set<string>)
        : new Set(identifiers);
    } catch (error) {
      this.options.logger.warn('queue batch failed', {
        mapping: mapping.id,
        error: (error as Error).message,
      });
      failed = new Set(messages.map((message) => message.MessageId ?? ''));
    }
    const succeeded = messages.filter((message) => !failed.has(message.MessageId ?? ''));
    if (succeeded.length === 0) return;
    await this.options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.options.queueUrl,
        Entries: succeeded.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle ?? '',
        })),
      }),
    );
  }
}
