/**
 * The records of a table's DynamoDB stream as Lambda's event source mapping hands them to a function, read from
 * DynamoDB Local's stream (every shard, from the trim horizon) and in Lambda's JSON form: binary attributes as
 * base64, creation time in epoch seconds. What a bundle outside this process receives.
 */

import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { asLambdaJson } from '../../functions/adapters/local/bundle-host';
import { toLambdaRecord } from '../../functions/adapters/local/stream-poller';

export { asLambdaJson };

export const streamRecords = async (
  clients: { readonly dynamoDb: DynamoDBClient; readonly streams: DynamoDBStreamsClient },
  tableName: string,
): Promise<DynamoDBRecord[]> => {
  const table = await clients.dynamoDb.send(new DescribeTableCommand({ TableName: tableName }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${tableName} has no stream`);
  const stream = await clients.streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  const records: DynamoDBRecord[] = [];
  for (const shard of stream.StreamDescription?.Shards ?? []) {
    let iterator = (
      await clients.streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    // An open shard always has a next iterator: read until two pages in a row come back empty.
    let empty = 0;
    while (iterator && empty < 2) {
      const page = await clients.streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      const found = page.Records ?? [];
      records.push(...found.map((record) => asLambdaJson(toLambdaRecord(record, streamArn))));
      empty = found.length === 0 ? empty + 1 : 0;
      iterator = page.NextShardIterator;
    }
  }
  return records;
};
