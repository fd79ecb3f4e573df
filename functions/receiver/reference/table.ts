import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECEIVER_TABLE } from '../table';

/** The document client the receiver uses: plain JS values, `undefined` attributes dropped. */
export const receiverDocuments = (dynamoDb: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(dynamoDb, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });

/**
 * Creates the receiver table when it does not exist (partition key `event_id`, on-demand, TTL `expires_at`),
 * as the CDK construct does in AWS. For local runs and tests; returns whether it created it.
 */
export const ensureReceiverTable = async (dynamoDb: DynamoDBClient, tableName: string): Promise<boolean> => {
  try {
    await dynamoDb.send(new DescribeTableCommand({ TableName: tableName }));
    return false;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  try {
    await dynamoDb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: RECEIVER_TABLE.partitionKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: RECEIVER_TABLE.partitionKey, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (error instanceof ResourceInUseException) return false;
    throw error;
  }
  await dynamoDb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: RECEIVER_TABLE.timeToLiveAttribute, Enabled: true },
    }),
  );
  return true;
};
