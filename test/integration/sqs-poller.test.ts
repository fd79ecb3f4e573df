import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { ensureQueue } from '../../functions/adapters/local/bootstrap';
import { SqsPoller } from '../../functions/adapters/local/sqs-poller';
import { EVENT_SOURCE_MAPPINGS } from '../../functions/definitions';
import { engineClients, eventually, silentLogger, uniquePrefix } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

describe('local SQS event source mapping', () => {
  it('redelivers only the failed message of a batch and moves it to the DLQ after maxReceiveCount', async () => {
    const prefix = uniquePrefix();
    const maxReceiveCount = 2;
    const dlq = await ensureQueue(clients.sqs, `${prefix}work-dlq`, {});
    // A short visibility timeout stands in for 6 × the function timeout, so redelivery comes in a second.
    const work = await ensureQueue(clients.sqs, `${prefix}work`, {
      VisibilityTimeout: '1',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount }),
    });
    for (const body of ['good-1', 'bad', 'good-2']) {
      await clients.sqs.send(new SendMessageCommand({ QueueUrl: work.url, MessageBody: body }));
    }
    const handled: { body: string; receiveCount: string }[] = [];
    const poller = new SqsPoller({
      mapping: EVENT_SOURCE_MAPPINGS.deliveryToDeliver,
      sqs: clients.sqs,
      queueUrl: work.url,
      queueArn: work.arn,
      logger: silentLogger,
      concurrency: 1,
      invoke: async (event) => {
        for (const record of event.Records) {
          handled.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
        }
        return {
          batchItemFailures: event.Records.filter((record) => record.body === 'bad').map((record) => ({
            itemIdentifier: record.messageId,
          })),
        };
      },
    });
    poller.start();
    try {
      const dead = await eventually(
        async () => {
          const received = await clients.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: dlq.url, WaitTimeSeconds: 1 }),
          );
          return received.Messages?.[0]?.Body;
        },
        { timeoutMs: 20_000 },
      );
      expect(dead).toBe('bad');
    } finally {
      await poller.stop();
    }
    expect(handled.filter((entry) => entry.body === 'good-1')).toHaveLength(1);
    expect(handled.filter((entry) => entry.body === 'good-2')).toHaveLength(1);
    expect(handled.filter((entry) => entry.body === 'bad').map((entry) => entry.receiveCount)).toEqual([
      '1',
      '2',
    ]);
  });

  it('a thrown error fails the whole batch: every message comes back', async () => {
    const prefix = uniquePrefix();
    const work = await ensureQueue(clients.sqs, `${prefix}throws`, { VisibilityTimeout: '1' });
    for (const body of ['m1', 'm2']) {
      await clients.sqs.send(new SendMessageCommand({ QueueUrl: work.url, MessageBody: body }));
    }
    const receives: string[] = [];
    let calls = 0;
    const poller = new SqsPoller({
      mapping: EVENT_SOURCE_MAPPINGS.deliveryToDeliver,
      sqs: clients.sqs,
      queueUrl: work.url,
      queueArn: work.arn,
      logger: silentLogger,
      concurrency: 1,
      invoke: async (event) => {
        calls += 1;
        receives.push(...event.Records.map((record) => record.body));
        if (calls === 1) throw new Error('function crashed');
        return { batchItemFailures: [] };
      },
    });
    poller.start();
    try {
      await eventually(
        async () => (receives.filter((body) => body === 'm2').length >= 2 ? true : undefined),
        {
          timeoutMs: 20_000,
        },
      );
    } finally {
      await poller.stop();
    }
    expect(receives.filter((body) => body === 'm1').length).toBeGreaterThanOrEqual(2);
  });
});
