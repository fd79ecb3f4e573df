import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CheckoutRepository, StoredQuote, StoredReceipt } from '../../ports/checkout';

const isConditionFailure = (error: unknown): boolean => {
  const name = (error as Error).name;
  return name === 'ConditionalCheckFailedException' || name === 'TransactionCanceledException';
};

/** Quotes and receipts on DynamoDB; one quote → one receipt, enforced by a conditional transaction. */
export class DynamoCheckoutRepository implements CheckoutRepository {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tables: { readonly quotes: string; readonly receipts: string },
  ) {}

  async saveQuote(quote: StoredQuote): Promise<void> {
    await this.documents.send(
      new PutCommand({
        TableName: this.tables.quotes,
        Item: { ...quote },
        ConditionExpression: 'attribute_not_exists(quote_id)',
      }),
    );
  }

  async quote(quoteId: string): Promise<StoredQuote | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tables.quotes, Key: { quote_id: quoteId }, ConsistentRead: true }),
    );
    return result.Item as StoredQuote | undefined;
  }

  async commit(receipt: StoredReceipt): Promise<'committed' | 'exists'> {
    try {
      await this.documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tables.quotes,
                Key: { quote_id: receipt.quote_id },
                UpdateExpression: 'SET receipt_id = :receipt',
                ConditionExpression: 'attribute_exists(quote_id) AND attribute_not_exists(receipt_id)',
                ExpressionAttributeValues: { ':receipt': receipt.receipt_id },
              },
            },
            {
              Put: {
                TableName: this.tables.receipts,
                Item: { ...receipt },
                ConditionExpression: 'attribute_not_exists(receipt_id)',
              },
            },
          ],
        }),
      );
      return 'committed';
    } catch (error) {
      if (isConditionFailure(error)) return 'exists';
      throw error;
    }
  }

  async receipt(receiptId: string): Promise<StoredReceipt | undefined> {
    const result = await this.documents.send(
      new GetCommand({
        TableName: this.tables.receipts,
        Key: { receipt_id: receiptId },
        ConsistentRead: true,
      }),
    );
    return result.Item as StoredReceipt | undefined;
  }

  async updateRefunds(receipt: StoredReceipt, expectedRevision: number): Promise<'updated' | 'conflict'> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tables.receipts,
          Key: { receipt_id: receipt.receipt_id },
          UpdateExpression: 'SET refunds = :refunds, #status = :status, revision = :next',
          ConditionExpression: 'revision = :expected',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':refunds': receipt.refunds,
            ':status': receipt.status,
            ':next': receipt.revision,
            ':expected': expectedRevision,
          },
        }),
      );
      return 'updated';
    } catch (error) {
      if (isConditionFailure(error)) return 'conflict';
      throw error;
    }
  }
}
