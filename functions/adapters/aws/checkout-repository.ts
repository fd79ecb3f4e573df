import { type DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type {
  CheckoutRepository,
  ReceiptItemSource,
  ReceiptItemsPage,
  StoredQuote,
  StoredReceipt,
} from '../../ports/checkout';
import type { RequestCompletion } from '../../ports/idempotency';
import { keyCursor } from '../../shared/cursor';
import { conditionalFailure } from './dynamo-errors';
import { writeWithCompletion } from './idempotency-ledger';

/*
 * Quote payloads, receipts and refunds are immutable documents that are only ever read whole: they are stored as
 * JSON text, not as nested DynamoDB maps, which keeps marshalling cheap on both sides and the bytes exact.
 */
type QuoteItem = Omit<StoredQuote, 'payload'> & { readonly payload_json: string };
type ReceiptItem = Omit<StoredReceipt, 'receipt' | 'refunds'> & {
  readonly receipt_json: string;
  readonly refunds_json: string;
};

const toQuoteItem = ({ payload, ...rest }: StoredQuote): QuoteItem => ({
  ...rest,
  payload_json: JSON.stringify(payload),
});
const fromQuoteItem = ({ payload_json, ...rest }: QuoteItem): StoredQuote => ({
  ...rest,
  payload: JSON.parse(payload_json),
});
const toReceiptItem = ({ receipt, refunds, ...rest }: StoredReceipt): ReceiptItem => ({
  ...rest,
  receipt_json: JSON.stringify(receipt),
  refunds_json: JSON.stringify(refunds),
});
const fromReceiptItem = ({ receipt_json, refunds_json, ...rest }: ReceiptItem): StoredReceipt => ({
  ...rest,
  receipt: JSON.parse(receipt_json),
  refunds: JSON.parse(refunds_json),
});

/** The backfill's cursor: the receipts scan's `LastEvaluatedKey`. */
const receiptsScan = keyCursor('receipts', { receipt_id: 'string' });

/** The receipts table scanned page by page (the finance export's backfill). */
export class DynamoReceiptItemSource implements ReceiptItemSource {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async page(cursor: string | undefined, limit: number): Promise<ReceiptItemsPage> {
    const start = receiptsScan.decode(cursor);
    const result = await this.documents.send(
      new ScanCommand({
        TableName: this.table,
        Limit: limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const next = receiptsScan.encode(result.LastEvaluatedKey);
    return {
      items: result.Items ?? [],
      ...(next ? { cursor: next } : {}),
    };
  }
}

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
        Item: toQuoteItem(quote),
        ConditionExpression: 'attribute_not_exists(quote_id)',
      }),
    );
  }

  async quote(quoteId: string): Promise<StoredQuote | undefined> {
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tables.quotes, Key: { quote_id: quoteId }, ConsistentRead: true }),
    );
    return result.Item ? fromQuoteItem(result.Item as QuoteItem) : undefined;
  }

  async commit(receipt: StoredReceipt, completion?: RequestCompletion): Promise<'committed' | 'exists'> {
    try {
      // A transaction cancelled by a concurrent one is retried by `writeWithCompletion`.
      await writeWithCompletion(
        this.documents,
        [
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
              Item: toReceiptItem(receipt),
              ConditionExpression: 'attribute_not_exists(receipt_id)',
            },
          },
        ],
        completion,
      );
      return 'committed';
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return 'exists';
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
    return result.Item ? fromReceiptItem(result.Item as ReceiptItem) : undefined;
  }

  async updateRefunds(
    receipt: StoredReceipt,
    expectedRevision: number,
    completion?: RequestCompletion,
  ): Promise<'updated' | 'conflict'> {
    try {
      await writeWithCompletion(
        this.documents,
        {
          Update: {
            TableName: this.tables.receipts,
            Key: { receipt_id: receipt.receipt_id },
            UpdateExpression: 'SET refunds_json = :refunds, #status = :status, revision = :next',
            ConditionExpression: 'revision = :expected',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':refunds': JSON.stringify(receipt.refunds),
              ':status': receipt.status,
              ':next': receipt.revision,
              ':expected': expectedRevision,
            },
          },
        },
        completion,
      );
      return 'updated';
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return 'conflict';
      throw error;
    }
  }
}
