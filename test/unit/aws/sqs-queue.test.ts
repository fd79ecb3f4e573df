/**
 * The SQS adapter's batching against a mocked SQS client (the engine test, test/integration/sqs-queue.test.ts,
 * proves the batches against fauxqs): SQS may refuse single entries of a batch, or the whole request, and each
 * send must fail or succeed on its own.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqsMessageQueue } from '../../../functions/adapters/aws/sqs-queue';

const sqs = mockClient(SQSClient);
// The stub is on the client class's prototype: undone after this file, for the files that share its worker.
afterAll(() => sqs.restore());
afterEach(() => sqs.reset());

const queue = () =>
  new SqsMessageQueue(new SQSClient({ region: 'eu-west-1' }), (id) => {
    if (id !== 'delivery') throw new Error(`queue ${id} is not declared`);
    return 'https://sqs.eu-west-1.amazonaws.com/123456789012/delivery';
  });

describe('SqsMessageQueue batching', () => {
  it('sends one request for a turn’s sends, with their delays and groups, and maps each answer back', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [
        { Id: '0', MessageId: 'm-0', MD5OfMessageBody: '' },
        { Id: '2', MessageId: 'm-2', MD5OfMessageBody: '' },
      ],
      Failed: [{ Id: '1', Code: 'InvalidMessageContents', SenderFault: true, Message: 'bad character' }],
    });
    const adapter = queue();
    const results = await Promise.allSettled([
      adapter.send('delivery', 'a', { group: 'ep_1' }),
      adapter.send('delivery', 'b', { delaySeconds: 5 }),
      adapter.send('delivery', 'c'),
    ]);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input.Entries).toEqual([
      { Id: '0', MessageBody: 'a', MessageGroupId: 'ep_1' },
      { Id: '1', MessageBody: 'b', DelaySeconds: 5 },
      { Id: '2', MessageBody: 'c' },
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: { messageId: 'm-0' } });
    expect(results[1]).toMatchObject({
      status: 'rejected',
      reason: { message: /InvalidMessageContents: bad character/ },
    });
    expect(results[2]).toEqual({ status: 'fulfilled', value: { messageId: 'm-2' } });
  });

  it('sends once more the entries SQS failed on its side, and only those', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: '0', MessageId: 'm-0', MD5OfMessageBody: '' }],
        Failed: [
          { Id: '1', Code: 'InternalError', SenderFault: false },
          { Id: '2', Code: 'InvalidMessageContents', SenderFault: true },
        ],
      })
      .resolvesOnce({ Successful: [{ Id: '0', MessageId: 'm-1', MD5OfMessageBody: '' }] });
    const adapter = queue();
    const results = await Promise.allSettled(['a', 'b', 'c'].map((body) => adapter.send('delivery', body)));
    expect(
      results.map((result) => (result.status === 'fulfilled' ? result.value.messageId : 'failed')),
    ).toEqual(['m-0', 'm-1', 'failed']);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input.Entries).toEqual([{ Id: '0', MessageBody: 'b' }]);
  });

  it('fails every send of a request SQS refused as a whole', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('throttled'));
    const adapter = queue();
    const results = await Promise.allSettled([adapter.send('delivery', 'a'), adapter.send('delivery', 'b')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });

  it('refuses a send to an undeclared queue or with a bad delay at once, without a request', async () => {
    const adapter = queue();
    await expect(adapter.send('deliveryDlq', 'a')).rejects.toThrow(/not declared/);
    await expect(adapter.send('delivery', 'a', { delaySeconds: 901 })).rejects.toThrow(RangeError);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });
});
