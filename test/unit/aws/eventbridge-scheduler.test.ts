import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  type DeleteScheduleCommandInput,
  ResourceNotFoundException,
  SchedulerClient,
  ThrottlingException,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  atExpression,
  EventBridgeOneTimeScheduler,
  type EventBridgeSchedulerConfig,
} from '../../../functions/adapters/aws/eventbridge-scheduler';
import { InvalidScheduleNameError } from '../../../functions/ports/schedule-name';
import { type SchedulerUnderTest, schedulerContract } from '../../support/scheduler-contract';

const metadata = { $metadata: {} };

const config: EventBridgeSchedulerConfig = {
  groupName: 'deliveries',
  roleArn: 'arn:aws:iam::123456789012:role/pricing-scheduler',
  queueArns: {
    delivery: 'arn:aws:sqs:eu-west-1:123456789012:pricing-delivery',
    deliveryDlq: 'arn:aws:sqs:eu-west-1:123456789012:pricing-delivery-dlq',
    eventsStreamFailures: 'arn:aws:sqs:eu-west-1:123456789012:pricing-events-stream-failures',
    receiptsStreamFailures: 'arn:aws:sqs:eu-west-1:123456789012:pricing-receipts-stream-failures',
  },
};

const restores: (() => void)[] = [];

afterEach(() => {
  for (const restore of restores.splice(0)) restore();
});

/**
 * A stateful fake of EventBridge Scheduler behind `aws-sdk-client-mock`: CreateSchedule stores by (group, name)
 * and refuses a duplicate with ConflictException; DeleteSchedule removes or throws ResourceNotFoundException.
 */
const fakeScheduler = () => {
  const client = new SchedulerClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake-secret' },
  });
  const mock = mockClient(client);
  restores.push(() => mock.restore());
  const schedules = new Map<string, CreateScheduleCommandInput>();
  const keyOf = (group: string | undefined, name: string | undefined) =>
    `${group ?? 'default'}/${name ?? ''}`;
  mock.on(CreateScheduleCommand).callsFake((input: CreateScheduleCommandInput) => {
    const key = keyOf(input.GroupName, input.Name);
    if (schedules.has(key)) {
      throw new ConflictException({
        message: `Schedule ${input.Name} already exists.`,
        Message: `Schedule ${input.Name} already exists.`,
        $metadata: {},
      });
    }
    schedules.set(key, input);
    return { ...metadata, ScheduleArn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/${key}` };
  });
  mock.on(DeleteScheduleCommand).callsFake((input: DeleteScheduleCommandInput) => {
    const key = keyOf(input.GroupName, input.Name);
    if (!schedules.delete(key)) {
      throw new ResourceNotFoundException({
        message: `Schedule ${input.Name} does not exist.`,
        Message: `Schedule ${input.Name} does not exist.`,
        $metadata: {},
      });
    }
    return metadata;
  });
  const pending = async (): Promise<ReadonlySet<string>> =>
    new Set([...schedules.values()].map((schedule) => schedule.Name ?? ''));
  return { client, mock, schedules, pending };
};

schedulerContract('EventBridge Scheduler (mocked client)', async (): Promise<SchedulerUnderTest> => {
  const fake = fakeScheduler();
  return { scheduler: new EventBridgeOneTimeScheduler(fake.client, config), pending: fake.pending };
});

describe('atExpression', () => {
  it('formats a whole second in UTC', () => {
    expect(atExpression(new Date('2026-11-22T10:00:01.000Z'))).toBe('at(2026-11-22T10:00:01)');
  });

  it('rounds milliseconds up to the next second so a schedule never fires early', () => {
    expect(atExpression(new Date('2026-11-22T10:00:00.001Z'))).toBe('at(2026-11-22T10:00:01)');
    expect(atExpression(new Date('2026-11-22T10:00:00.999Z'))).toBe('at(2026-11-22T10:00:01)');
  });

  it('rolls over minutes, days and years when rounding up', () => {
    expect(atExpression(new Date('2026-12-31T23:59:59.500Z'))).toBe('at(2027-01-01T00:00:00)');
  });
});

describe('EventBridgeOneTimeScheduler: request', () => {
  it('creates a one-time UTC schedule that targets the queue with the role, and deletes itself after', async () => {
    const fake = fakeScheduler();
    const scheduler = new EventBridgeOneTimeScheduler(fake.client, config);
    await scheduler.scheduleOnce({
      name: 'retry-evt_1-ep_1-9',
      at: new Date('2026-11-22T10:00:00.250Z'),
      queue: 'delivery',
      body: '{"event_id":"evt_1"}',
    });
    const [call] = fake.mock.commandCalls(CreateScheduleCommand);
    expect(call?.args[0].input).toMatchObject({
      Name: 'retry-evt_1-ep_1-9',
      GroupName: 'deliveries',
      ScheduleExpression: 'at(2026-11-22T10:00:01)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      State: 'ENABLED',
      Target: {
        Arn: config.queueArns.delivery,
        RoleArn: config.roleArn,
        Input: '{"event_id":"evt_1"}',
      },
    });
  });

  it("targets the schedule's own queue", async () => {
    const fake = fakeScheduler();
    const scheduler = new EventBridgeOneTimeScheduler(fake.client, config);
    await scheduler.scheduleOnce({ name: 'to-dlq', at: new Date(), queue: 'deliveryDlq', body: '{}' });
    expect(fake.mock.commandCalls(CreateScheduleCommand)[0]?.args[0].input.Target?.Arn).toBe(
      config.queueArns.deliveryDlq,
    );
  });

  it('gives the target a retry policy within Scheduler limits', async () => {
    const fake = fakeScheduler();
    await new EventBridgeOneTimeScheduler(fake.client, config).scheduleOnce({
      name: 'retry-policy',
      at: new Date(),
      queue: 'delivery',
      body: '{}',
    });
    const policy = fake.mock.commandCalls(CreateScheduleCommand)[0]?.args[0].input.Target?.RetryPolicy;
    expect(policy?.MaximumEventAgeInSeconds).toBeGreaterThanOrEqual(60);
    expect(policy?.MaximumEventAgeInSeconds).toBeLessThanOrEqual(86_400);
    expect(policy?.MaximumRetryAttempts).toBeGreaterThanOrEqual(0);
    expect(policy?.MaximumRetryAttempts).toBeLessThanOrEqual(185);
  });

  it('deletes by name in the group', async () => {
    const fake = fakeScheduler();
    const scheduler = new EventBridgeOneTimeScheduler(fake.client, config);
    await scheduler.scheduleOnce({ name: 'gone', at: new Date(), queue: 'delivery', body: '{}' });
    await scheduler.cancel('gone');
    expect(fake.mock.commandCalls(DeleteScheduleCommand)[0]?.args[0].input).toEqual({
      Name: 'gone',
      GroupName: 'deliveries',
    });
  });

  it('refuses an invalid name on cancel without calling Scheduler', async () => {
    const fake = fakeScheduler();
    await expect(new EventBridgeOneTimeScheduler(fake.client, config).cancel('bad name')).rejects.toThrow(
      InvalidScheduleNameError,
    );
    expect(fake.mock.calls()).toHaveLength(0);
  });
});

describe('EventBridgeOneTimeScheduler: errors', () => {
  it('propagates any other error from CreateSchedule', async () => {
    const fake = fakeScheduler();
    const throttled = new ThrottlingException({
      message: 'Rate exceeded',
      Message: 'Rate exceeded',
      $metadata: {},
    });
    fake.mock.on(CreateScheduleCommand).rejects(throttled);
    await expect(
      new EventBridgeOneTimeScheduler(fake.client, config).scheduleOnce({
        name: 'throttled',
        at: new Date(),
        queue: 'delivery',
        body: '{}',
      }),
    ).rejects.toBe(throttled);
  });

  it('propagates any other error from DeleteSchedule', async () => {
    const fake = fakeScheduler();
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    fake.mock.on(DeleteScheduleCommand).rejects(denied);
    await expect(new EventBridgeOneTimeScheduler(fake.client, config).cancel('some-name')).rejects.toBe(
      denied,
    );
  });
});
