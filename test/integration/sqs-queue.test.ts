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

  it.each([-1, 1.5, 901])(
    'refuses a delay of %s seconds (SQS allows whole seconds up to 900)',
    async (delay) => {
      await expect(queue.send('deliveryDlq', 'x', { delaySeconds: delay })).rejects.toThrow(RangeError);
    },
  );
});
