import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { SqsMessageQueue } from '../../functions/adapters/aws/sqs-queue';
import { LocalOneTimeScheduler, ScheduleDispatcher } from '../../functions/adapters/local/scheduler';
import { systemClock } from '../../functions/shared/clock';
import { engineClients, eventually, provisionIsolated, silentLogger } from '../support/engines';
import { schedulerContract } from '../support/scheduler-contract';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const setUp = async () => {
  const resources = await provisionIsolated(clients);
  const scheduler = new LocalOneTimeScheduler(
    clients.documents,
    resources.tableNames.localSchedules,
    systemClock,
  );
  const pending = async () => {
    const items = await clients.documents.send(
      new ScanCommand({ TableName: resources.tableNames.localSchedules }),
    );
    return new Set((items.Items ?? []).map((item) => String(item.name)));
  };
  return { resources, scheduler, pending };
};

schedulerContract('local (DynamoDB Local + fauxqs)', setUp);

describe('local scheduler dispatch', () => {
  it('sends a scheduled message to its queue at its time, not before, and forgets the schedule', async () => {
    const { resources, scheduler, pending } = await setUp();
    const queue = new SqsMessageQueue(clients.sqs, (id) => resources.queueUrls[id]);
    const dispatcher = new ScheduleDispatcher(scheduler, queue, silentLogger, 50);
    const at = new Date(Date.now() + 1_500);
    await scheduler.scheduleOnce({ name: 'arrives', at, queue: 'delivery', body: '{"hello":"later"}' });
    dispatcher.start();
    try {
      const received = await eventually(async () => {
        const result = await clients.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: resources.queueUrls.delivery, WaitTimeSeconds: 1 }),
        );
        const message = result.Messages?.[0];
        return message ? { body: message.Body, at: Date.now() } : undefined;
      });
      expect(received.body).toBe('{"hello":"later"}');
      expect(received.at).toBeGreaterThanOrEqual(at.getTime());
      // The schedule is deleted right after the send.
      await eventually(async () => ((await pending()).has('arrives') ? undefined : true));
    } finally {
      await dispatcher.stop();
    }
  });
});
