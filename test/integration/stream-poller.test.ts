import { randomUUID } from 'node:crypto';
import { DescribeStreamCommand, type DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { AwsClients } from '../../functions/adapters/aws/clients';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { type StreamBatchHandler, StreamPoller } from '../../functions/adapters/local/stream-poller';
import { EVENT_SOURCE_MAPPINGS, type StreamMappingDefinition } from '../../functions/definitions';
import { systemClock } from '../../functions/shared/clock';
import { engineClients, eventually, provisionIsolated, silentLogger } from '../support/engines';

const clients: AwsClients = engineClients();
let resources: ProvisionedResources;
const pollers: StreamPoller[] = [];

/** The events mapping as deployed, with a small batch and few retries so failures resolve quickly. */
const mapping: StreamMappingDefinition = {
  ...EVENT_SOURCE_MAPPINGS.eventsToFanout,
  batchSize: 8,
  maxRetryAttempts: 2,
};

const keyOf = (record: DynamoDBStreamEvent['Records'][number]): string =>
  record.dynamodb?.Keys?.event_id?.S ?? '<none>';

/** Counts the shard listings a poller asks for. */
let listings = 0;
const countingStreams = {
  send: (command: Parameters<DynamoDBStreamsClient['send']>[0]) => {
    if (command instanceof DescribeStreamCommand) listings += 1;
    return clients.streams.send(command);
  },
} as DynamoDBStreamsClient;

const startPoller = (invoke: StreamBatchHandler, overrides: Partial<StreamMappingDefinition> = {}) => {
  const poller = new StreamPoller({
    mapping: { ...mapping, ...overrides },
    streamArn: resources.streamArns.events as string,
    streams: countingStreams,
    documents: clients.documents,
    checkpointTable: resources.tableNames.localStreamCheckpoints,
    invoke,
    sendToOnFailure: async (body) => {
      await clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: resources.queueUrls.eventsStreamFailures,
          MessageBody: body,
        }),
      );
    },
    clock: systemClock,
    logger: silentLogger,
    pollIntervalMs: 50,
    retryDelayMs: () => 10,
  });
  poller.start();
  pollers.push(poller);
  return poller;
};

const putEvents = async (keys: string[]) => {
  for (const key of keys) {
    await clients.documents.send(
      new PutCommand({
        TableName: resources.tableNames.events,
        Item: { event_id: key, n: keys.indexOf(key), rev: randomUUID() },
      }),
    );
  }
};

beforeEach(async () => {
  await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
  resources = await provisionIsolated(clients);
  listings = 0;
});

afterAll(async () => {
  await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
  destroyAwsClients(clients);
});

describe('local DynamoDB Streams event source mapping', () => {
  it('hands records to the function in shard order, in batches of at most batchSize', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    await putEvents(keys);
    const seen: string[] = [];
    const sizes: number[] = [];
    startPoller(async (event) => {
      sizes.push(event.Records.length);
      seen.push(...event.Records.map(keyOf));
      return { batchItemFailures: [] };
    });
    await eventually(async () => (seen.length >= keys.length ? true : undefined));
    expect(seen).toEqual(keys);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(mapping.batchSize);
  });

  it('retries a failing batch, bisects it, and hands the poison record to the on-failure queue', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `p${i}`);
    await putEvents(keys);
    const batches: string[][] = [];
    const accepted: string[] = [];
    startPoller(async (event) => {
      const batch = event.Records.map(keyOf);
      batches.push(batch);
      if (batch.includes('p5')) throw new Error('poison record');
      accepted.push(...batch);
      return { batchItemFailures: [] };
    });
    const failure = await eventually(async () => {
      const received = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: resources.queueUrls.eventsStreamFailures, WaitTimeSeconds: 1 }),
      );
      return received.Messages?.[0]?.Body;
    });
    const info = JSON.parse(failure).DDBStreamBatchInfo;
    expect(info.batchSize).toBe(1);
    expect(info.startSequenceNumber).toBe(info.endSequenceNumber);
    // The whole batch failed first, then halves: bisection isolated the poison record.
    expect(batches[0]).toEqual(keys);
    expect(batches).toContainEqual(['p4', 'p5', 'p6', 'p7']);
    expect(batches.filter((batch) => batch.length === 1 && batch[0] === 'p5')).toHaveLength(
      mapping.maxRetryAttempts + 1,
    );
    await eventually(async () => (accepted.includes('p7') ? true : undefined));
    expect([...accepted].sort()).toEqual(keys.filter((key) => key !== 'p5'));
  });

  it.each([
    { bisectBatchOnError: false, retried: [['a2', 'a3']] },
    { bisectBatchOnError: true, retried: [['a2'], ['a3']] },
  ])(
    'a partial batch response checkpoints before the failed record and retries from it (bisect: $bisectBatchOnError)',
    async ({ bisectBatchOnError, retried }) => {
      const keys = ['a0', 'a1', 'a2', 'a3'];
      await putEvents(keys);
      const batches: string[][] = [];
      let failedOnce = false;
      startPoller(
        async (event) => {
          const batch = event.Records.map(keyOf);
          batches.push(batch);
          const failing = event.Records.find((record) => keyOf(record) === 'a2');
          if (failing && !failedOnce) {
            failedOnce = true;
            return { batchItemFailures: [{ itemIdentifier: failing.dynamodb?.SequenceNumber ?? '' }] };
          }
          return { batchItemFailures: [] };
        },
        { bisectBatchOnError },
      );
      await eventually(async () =>
        batches.flat().filter((key) => key === 'a3').length >= 2 ? true : undefined,
      );
      expect(batches).toEqual([keys, ...retried]);
    },
  );

  it('resumes after a restart from its checkpoint: records already handled are not handed over again', async () => {
    await putEvents(['r0', 'r1', 'r2']);
    const first: string[] = [];
    const poller = startPoller(async (event) => {
      first.push(...event.Records.map(keyOf));
      return { batchItemFailures: [] };
    });
    await eventually(async () => (first.length >= 3 ? true : undefined));
    await poller.stop();
    await putEvents(['r3', 'r4']);
    const second: string[] = [];
    startPoller(async (event) => {
      second.push(...event.Records.map(keyOf));
      return { batchItemFailures: [] };
    });
    await eventually(async () => (second.length >= 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(first).toEqual(['r0', 'r1', 'r2']);
    expect(second).toEqual(['r3', 'r4']);
  });

  it('lists the shards once while idle (not on every poll), and still sees the first write to an empty stream', async () => {
    const seen: string[] = [];
    startPoller(async (event) => {
      seen.push(...event.Records.map(keyOf));
      return { batchItemFailures: [] };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await putEvents(['e0']);
    await eventually(async () => (seen.length >= 1 ? true : undefined));
    const afterFirst = listings;
    // Twenty idle polls at 50 ms reuse the listing (its TTL is 10 s).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(listings).toBe(afterFirst);
    await putEvents(['e1']);
    await eventually(async () => (seen.length >= 2 ? true : undefined));
    expect(seen).toEqual(['e0', 'e1']);
  });

  it('hands over only the kinds of record the mapping filters for, and moves its position past the others', async () => {
    await putEvents(['f0', 'f1']);
    // Updates of both (MODIFY records), then a new one.
    await putEvents(['f0', 'f1']);
    await putEvents(['f2']);
    const seen: string[] = [];
    const names: string[] = [];
    const poller = startPoller(
      async (event) => {
        seen.push(...event.Records.map(keyOf));
        names.push(...event.Records.map((record) => record.eventName ?? ''));
        return { batchItemFailures: [] };
      },
      { eventNames: ['INSERT'] },
    );
    await eventually(async () => (seen.length >= 3 ? true : undefined));
    await poller.stop();
    expect(seen).toEqual(['f0', 'f1', 'f2']);
    expect(new Set(names)).toEqual(new Set(['INSERT']));
    // Only modifications after the checkpoint: a restarted poller hands nothing over and moves past them.
    await putEvents(['f2']);
    const again: string[] = [];
    startPoller(
      async (event) => {
        again.push(...event.Records.map(keyOf));
        return { batchItemFailures: [] };
      },
      { eventNames: ['INSERT'] },
    );
    await putEvents(['f3']);
    await eventually(async () => (again.length >= 1 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(again).toEqual(['f3']);
  });
});
