import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { SqsMessageQueue } from '../../functions/adapters/aws/sqs-queue';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { engineClients, eventually, provisionIsolated } from '../support/engines';

const clients = engineClients();
let resources: ProvisionedResources;
let queue: SqsMessageQueue;

beforeAll(async () => {
  resources = await provisionIsolated(clients);
  queue = new SqsMessageQueue(clients.sqs, (id) => resources.queueUrls[id]);
});
afterAll(() => destroyAwsClients(clients));

const receive = async (queueUrl: string) => {
  const result = await clients.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }),
  );
  return result.Messages?.[0];
};

describe('MessageQueue over SQS (fauxqs)', () => {
  it('sends a message to the queue named by its definition id', async () => {
    const { messageId } = await queue.send('deliveryDlq', '{"hello":"queue"}');
    const message = await eventually(() => receive(resources.queueUrls.deliveryDlq));
    expect(message.Body).toBe('{"hello":"queue"}');
    expect(message.MessageId).toBe(messageId);
  });

  it('keeps a delayed message invisible until its delay has passed', async () => {
    const sentAt = Date.now();
    await queue.send('eventsStreamFailures', 'delayed', { delaySeconds: 2 });
    expect(await receive(resources.queueUrls.eventsStreamFailures)).toBeUndefined();
    const message = await eventually(() => receive(resources.queueUrls.eventsStreamFailures));
    expect(message.Body).toBe('delayed');
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(2_000);
  });

  it('sends what is sent in one turn as batches of ten, each send resolving with its own message id', async () => {
    const batches: number[] = [];
    clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageBatchCommand')
          batches.push(((args.input as { Entries: unknown[] }).Entries ?? []).length);
        return next(args);
      },
      { step: 'initialize', name: 'countBatches' },
    );
    try {
      const bodies = Array.from({ length: 25 }, (_, index) => `batched-${index}`);
      const sent = await Promise.all(bodies.map((body) => queue.send('eventsStreamFailures', body)));
      expect(batches).toEqual([10, 10, 5]);
      expect(new Set(sent.map((one) => one.messageId)).size).toBe(25);
      const received = new Map<string, string>();
      await eventually(async () => {
        const result = await clients.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: resources.queueUrls.eventsStreamFailures,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
          }),
        );
        for (const message of result.Messages ?? [])
          received.set(message.MessageId ?? '', message.Body ?? '');
        return received.size >= 25 ? true : undefined;
      });
      expect(sent.map((one) => received.get(one.messageId))).toEqual(bodies);
    } finally {
      clients.sqs.middlewareStack.remove('countBatches');
    }
  });

  it.each([-1, 1.5, 901])(
    'refuses a delay of %s seconds (SQS allows whole seconds up to 900)',
    async (delay) => {
      await expect(queue.send('deliveryDlq', 'x', { delaySeconds: delay })).rejects.toThrow(RangeError);
    },
  );
});
