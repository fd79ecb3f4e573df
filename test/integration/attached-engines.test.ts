/**
 * The local stack on engines it did not start (`LOCAL_DYNAMODB_ENDPOINT`, `LOCAL_FAUXQS_ENDPOINT`): it creates
 * what is missing, keeps what is there, and leaves the engines running at stop, so a stack that ends (or is
 * killed) and starts again finds its tables, items and queued messages as a function finds AWS's services.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsClients, destroyAwsClients } from '../../functions/adapters/aws/clients';
import {
  type DynamoDbLocalProcess,
  isAlive,
  startDynamoDbLocalOnFreePort,
} from '../../functions/adapters/local/dynamodb-local';
import { type FauxqsServer, startFauxqsServer } from '../../functions/adapters/local/fauxqs';
import { freePort, localEngineClients } from '../../functions/adapters/local/local-aws';
import { startLocalStack } from '../../functions/composition/local/stack';

const credentials = { apiKey: 'key_attach_0123456789abcdef', adminToken: 'adm_attach_0123456789abcdef' };
let engineDir: string;
let dynamo: DynamoDbLocalProcess;
let fauxqs: FauxqsServer;
let clients: AwsClients;

beforeAll(async () => {
  engineDir = mkdtempSync(path.join(tmpdir(), 'pricing-engines-'));
  [dynamo, fauxqs] = await Promise.all([
    startDynamoDbLocalOnFreePort({ workDir: engineDir }),
    startFauxqsServer({}),
  ]);
  clients = localEngineClients({ dynamoDbEndpoint: dynamo.endpoint, sqsEndpoint: fauxqs.endpoint });
}, 60_000);

afterAll(async () => {
  if (clients) destroyAwsClients(clients);
  await fauxqs?.stop();
  await dynamo?.stop();
  rmSync(engineDir, { recursive: true, force: true });
});

describe('a local stack attached to running engines', () => {
  it('provisions an empty engine, leaves it running at stop, and a second stack finds what the first wrote', async () => {
    const engines = { dynamoDbEndpoint: dynamo.endpoint, sqsEndpoint: fauxqs.endpoint };
    // The keys live in the data directory: the second stack must sign and decrypt with the first one's.
    const dataDir = path.join(engineDir, 'stack-data');
    const first = await startLocalStack({ port: 0, ...credentials, logLevel: 'SILENT', engines, dataDir });
    const firstKeys = await (await fetch(`${first.url}/keys`)).json();
    expect(first.dynamoDbEndpoint).toBe(dynamo.endpoint);
    expect(first.sqsEndpoint).toBe(fauxqs.endpoint);
    expect(first.dynamoDbSupervisorPid).toBeUndefined();
    const tables = (await clients.dynamoDb.send(new ListTablesCommand({}))).TableNames ?? [];
    expect(tables).toEqual(expect.arrayContaining(Object.values(first.resources.tableNames)));
    const health = await fetch(`${first.url}/health`);
    expect(health.status).toBe(200);

    const { tableNames, queueUrls } = first.resources;
    const item = { mapping_id: 'attached-engines', shard_id: 'left-by-the-first-stack' };
    await clients.documents.send(
      new PutCommand({ TableName: tableNames.localStreamCheckpoints, Item: item }),
    );
    await first.stop();

    // Both engines still answer after the stack is gone.
    expect(isAlive(dynamo.pid)).toBe(true);
    const after = await clients.documents.send(
      new GetCommand({ TableName: tableNames.localStreamCheckpoints, Key: item, ConsistentRead: true }),
    );
    expect(after.Item).toEqual(item);
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrls.delivery }),
    );
    expect(attributes.Attributes).toBeDefined();

    const second = await startLocalStack({ port: 0, ...credentials, logLevel: 'SILENT', engines, dataDir });
    try {
      expect(second.resources.tableNames).toEqual(tableNames);
      expect(await (await fetch(`${second.url}/keys`)).json()).toEqual(firstKeys);
      expect((await fetch(`${second.url}/health`)).status).toBe(200);
      const kept = await clients.documents.send(
        new GetCommand({ TableName: tableNames.localStreamCheckpoints, Key: item, ConsistentRead: true }),
      );
      expect(kept.Item).toEqual(item);
    } finally {
      await second.stop();
    }
    expect(isAlive(dynamo.pid)).toBe(true);
  });

  it('refuses to attach without a data directory: the keys must outlive the stack as the data does', async () => {
    await expect(
      startLocalStack({
        port: 0,
        ...credentials,
        logLevel: 'SILENT',
        engines: { dynamoDbEndpoint: dynamo.endpoint, sqsEndpoint: fauxqs.endpoint },
      }),
    ).rejects.toThrow(/needs a data directory/);
  });

  it.each([
    ['DynamoDB Local', (closed: string) => ({ dynamoDbEndpoint: closed, sqsEndpoint: fauxqs.endpoint })],
    ['fauxqs', (closed: string) => ({ dynamoDbEndpoint: dynamo.endpoint, sqsEndpoint: closed })],
  ])('fails at once, naming %s, when its attached endpoint does not answer', async (name, engines) => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(
      startLocalStack({
        port: 0,
        ...credentials,
        logLevel: 'SILENT',
        dataDir: path.join(engineDir, 'refused'),
        engines: engines(closed),
      }),
    ).rejects.toThrow(new RegExp(`${name} at ${closed} did not answer`));
  });
});
