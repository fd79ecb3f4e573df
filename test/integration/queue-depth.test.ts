import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { SqsMessageQueue } from '../../functions/adapters/aws/sqs-queue';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
let resources: ProvisionedResources;
let queue: SqsMessageQueue;

beforeAll(async () => {
  resources = await provisionIsolated(clients);
  queue = new SqsMessageQueue(clients.sqs, (id) => resources.queueUrls[id]);
});
afterAll(() => destroyAwsClients(clients));

describe('SqsMessageQueue.depth (fauxqs)', () => {
  it('counts the messages waiting in a queue, not those in flight', async () => {
    expect(await queue.depth('deliveryDlq')).toBe(0);
    for (let index = 0; index < 3; index += 1) await queue.send('deliveryDlq', JSON.stringify({ index }));
    expect(await queue.depth('deliveryDlq')).toBe(3);
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: resources.queueUrls.deliveryDlq,
        MaxNumberOfMessages: 1,
        VisibilityTimeout: 60,
      }),
    );
    expect(received.Messages).toHaveLength(1);
    expect(await queue.depth('deliveryDlq')).toBe(2);
    // Other queues are counted apart.
    expect(await queue.depth('delivery')).toBe(0);
  });
});
