/**
 * The local stack's IAM for DynamoDB (adapters/local/iam-guard.ts) on DynamoDB Local: a function's call that its
 * declaration does not grant is refused before it leaves, as AWS refuses it; a granted one is answered by the
 * engine; calls made outside any function, and tables that are not the service's, are not checked.
 */
import {
  BatchGetItemCommand,
  DynamoDBClient,
  QueryCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { asFunction, enforceFunctionGrants } from '../../functions/adapters/local/iam-guard';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import type { ServiceTableId } from '../../functions/definitions';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
// A client of its own: the guard is middleware on it.
const client = new DynamoDBClient({
  endpoint: inject('dynamoDbEndpoint'),
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
});
let tables: { deliveries: string; events: string; replays: string };

beforeAll(async () => {
  const { tableNames } = await provisionIsolated(clients);
  tables = { deliveries: tableNames.deliveries, events: tableNames.events, replays: tableNames.replays };
  const ids = new Map<string, ServiceTableId>([
    [tables.deliveries, 'deliveries'],
    [tables.events, 'events'],
  ]);
  enforceFunctionGrants(client, (name) => ids.get(name));
});
afterAll(() => {
  client.destroy();
  destroyAwsClients(clients);
});

/** `answered` when DynamoDB Local answered, the refusal's message when the guard refused; anything else throws. */
const outcome = async (call: () => Promise<unknown>): Promise<string> => {
  try {
    await call();
    return 'answered';
  } catch (error) {
    if ((error as Error).name === 'AccessDeniedException') return (error as Error).message;
    throw error;
  }
};

const statusQuery = () =>
  new QueryCommand({
    TableName: tables.deliveries,
    IndexName: 'by-status-keys',
    KeyConditionExpression: '#s = :s',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':s': { S: 'pending#0' } },
  });

describe('the local IAM guard', () => {
  it('refuses a query of an index the function was not granted, and lets the granted one out', async () => {
    expect(await outcome(() => asFunction('deliver', () => client.send(statusQuery())))).toMatch(
      /pricing-local-deliver is not authorized to perform: dynamodb:Query on resource: table\/deliveries\/index\/by-status-keys/,
    );
    expect(await outcome(() => asFunction('webhooks', () => client.send(statusQuery())))).toBe('answered');
  });

  it('checks batch reads per table, and each item of a transaction by its own action', async () => {
    const batch = () =>
      new BatchGetItemCommand({
        RequestItems: { [tables.deliveries]: { Keys: [{ event_id: { S: 'e' }, endpoint_id: { S: 'p' } }] } },
      });
    expect(await outcome(() => asFunction('deliver', () => client.send(batch())))).toMatch(
      /dynamodb:BatchGetItem/,
    );
    expect(await outcome(() => asFunction('webhooks', () => client.send(batch())))).toBe('answered');
    const transaction = new TransactWriteItemsCommand({
      TransactItems: [
        { Delete: { TableName: tables.events, Key: { event_id: { S: 'e' } } } },
        {
          Update: {
            TableName: tables.deliveries,
            Key: { event_id: { S: 'e' }, endpoint_id: { S: 'p' } },
            UpdateExpression: 'SET x = :x',
            ExpressionAttributeValues: { ':x': { S: '1' } },
          },
        },
      ],
    });
    // The deliver function may update deliveries and put events (operational ones), but not delete events.
    expect(await outcome(() => asFunction('deliver', () => client.send(transaction)))).toMatch(
      /dynamodb:DeleteItem on resource: table\/events/,
    );
  });

  it('leaves calls outside any function, and tables that are not the service’s, unchecked', async () => {
    expect(await outcome(() => client.send(statusQuery()))).toBe('answered');
    const other = new QueryCommand({
      TableName: tables.replays,
      KeyConditionExpression: 'replay_id = :r',
      ExpressionAttributeValues: { ':r': { S: 'rpl_x' } },
    });
    expect(await outcome(() => asFunction('deliver', () => client.send(other)))).toBe('answered');
  });
});
