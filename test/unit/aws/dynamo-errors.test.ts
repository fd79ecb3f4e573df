import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { DynamoCheckoutRepository } from '../../../functions/adapters/aws/checkout-repository';
import { conditionalFailure } from '../../../functions/adapters/aws/dynamo-errors';
import type { StoredReceipt } from '../../../functions/ports/checkout';

const named = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, ...extra });
const cancelled = (...codes: string[]) =>
  named('TransactionCanceledException', { CancellationReasons: codes.map((Code) => ({ Code })) });

describe('conditionalFailure', () => {
  it.each([
    ['a failed condition on a single write', named('ConditionalCheckFailedException'), 'condition'],
    [
      'a transaction cancelled by a failed condition',
      cancelled('None', 'ConditionalCheckFailed'),
      'condition',
    ],
    ['a transaction cancelled by a concurrent one', cancelled('TransactionConflict', 'None'), 'conflict'],
    ['a transaction cancelled without reasons', cancelled(), 'condition'],
    ['a transaction cancelled by throttling', cancelled('ThrottlingError'), undefined],
    ['any other error', named('ProvisionedThroughputExceededException'), undefined],
  ])('classifies %s', (_label, error, expected) => {
    expect(conditionalFailure(error)).toBe(expected);
  });
});

describe('DynamoCheckoutRepository.commit under a transaction conflict', () => {
  const receipt: StoredReceipt = {
    receipt_id: 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
    quote_id: 'q_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
    receipt: {},
    status: 'issued',
    refunds: [],
    revision: 0,
  };
  const repository = () => {
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
    return {
      documents,
      mock: mockClient(documents),
      repository: new DynamoCheckoutRepository(documents, { quotes: 'q', receipts: 'r' }),
    };
  };

  it('retries the transaction, then commits', async () => {
    const { mock, repository: repo } = repository();
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});
    expect(await repo.commit(receipt)).toBe('committed');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('reports another receipt when the condition fails', async () => {
    const { mock, repository: repo } = repository();
    mock.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    expect(await repo.commit(receipt)).toBe('exists');
  });

  it('gives up after a bounded number of conflicts, and throws other errors', async () => {
    const { mock, repository: repo } = repository();
    mock.on(TransactWriteCommand).rejects(cancelled('TransactionConflict'));
    await expect(repo.commit(receipt)).rejects.toThrow('TransactionCanceledException');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(6);
  });
});
