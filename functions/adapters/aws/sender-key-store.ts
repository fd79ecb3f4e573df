import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { RequestCompletion } from '../../ports/idempotency';
import type { SenderKeyStore, StoredSenderKey } from '../../ports/webhooks';
import { conditionalFailure } from './dynamo-errors';
import { writeWithCompletion } from './idempotency-ledger';

/** The one key set: every key is an item of partition `webhook`, sorted by generation. */
const KEY_SET = 'webhook';

/** The webhook signing keys in DynamoDB (table `sender-keys`). */
export class DynamoSenderKeyStore implements SenderKeyStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async list(): Promise<StoredSenderKey[]> {
    const keys: StoredSenderKey[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'key_set = :set',
          ExpressionAttributeValues: { ':set': KEY_SET },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        const { key_set: _set, ...key } = item;
        keys.push(key as StoredSenderKey);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return keys;
  }

  async add(key: StoredSenderKey, completion?: RequestCompletion): Promise<boolean> {
    try {
      await writeWithCompletion(
        this.documents,
        {
          Put: {
            TableName: this.tableName,
            Item: { key_set: KEY_SET, ...key },
            ConditionExpression: 'attribute_not_exists(generation)',
          },
        },
        completion,
      );
      return true;
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return false;
      throw error;
    }
  }
}
