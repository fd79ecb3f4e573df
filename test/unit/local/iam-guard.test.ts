/**
 * The local stack's IAM for DynamoDB (adapters/local/iam-guard.ts): a function's call that its declaration does
 * not grant is refused before it leaves, as AWS refuses it; a granted one goes out; calls made outside any
 * function are not checked.
 */
import {
  BatchGetItemCommand,
  DynamoDBClient,
  QueryCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { asFunction, enforceFunctionGrants } from '../../../functions/adapters/local/iam-guard';
import type { ServiceTableId } from '../../../functions/definitions';

// Nothing listens on port 9: a call the guard lets through fails on the network instead.
const client = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:9',
  credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  maxAttempts: 1,
});
const NAMES: Record<string, ServiceTableId> = { 'local-deliveries': 'deliveries', 'local-events': 'events' };
enforceFunctionGrants(client, (name) => NAMES[name]);
afterAll(() => client.destroy());

const outcome = async (call: () => Promise<unknown>): Promise<string> => {
  try {
    await call();
    return 'sent';
  } catch (error) {
    return (error as Error).name === 'AccessDeniedException' ? (error as Error).message : 'sent';
  }
};

const statusQuery = new QueryCommand({
  TableName: 'local-deliveries',
  IndexName: 'by-status-keys',
  KeyConditionExpression: '#s = :s',
  ExpressionAttributeNames: { '#s': 'status' },
  ExpressionAttributeValues: { ':s': { S: 'pending#0' } },
});

describe('the local IAM guard', () => {
  it('refuses a query of an index the function was not granted, and lets the granted one out', async () => {
    expect(await outcome(() => asFunction('deliver', () => client.send(statusQuery)))).toMatch(
      /pricing-local-deliver is not authorized to perform: dynamodb:Query on resource: table\/deliveries\/index\/by-status-keys/,
    );
    expect(await outcome(() => asFunction('webhooks', () => client.send(statusQuery)))).toBe('sent');
  });

  it('checks batch reads per table, and each item of a transaction by its own action', async () => {
    const batch = new BatchGetItemCommand({
      RequestItems: { 'local-deliveries': { Keys: [{ event_id: { S: 'e' }, endpoint_id: { S: 'p' } }] } },
    });
    expect(await outcome(() => asFunction('deliver', () => client.send(batch)))).toMatch(
      /dynamodb:BatchGetItem/,
    );
    expect(await outcome(() => asFunction('webhooks', () => client.send(batch)))).toBe('sent');
    const transaction = new TransactWriteItemsCommand({
      TransactItems: [
        { Delete: { TableName: 'local-events', Key: { event_id: { S: 'e' } } } },
        {
          Update: {
            TableName: 'local-deliveries',
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
    expect(await outcome(() => client.send(statusQuery))).toBe('sent');
    const other = new QueryCommand({
      TableName: 'local-schedules',
      KeyConditionExpression: 'pk = :p',
      ExpressionAttributeValues: { ':p': { S: 'x' } },
    });
    expect(await outcome(() => asFunction('deliver', () => client.send(other)))).toBe('sent');
  });
});
