import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ItemBatches, itemBatchesOf } from '../../../functions/adapters/aws/item-batches';

type Item = Record<string, unknown>;

interface Sent {
  readonly command: string;
  readonly input: Record<string, unknown>;
}

/**
 * A document client that records the commands it is sent and answers from `tables` (items by table and by
 * `JSON.stringify` of their key), each answer a turn of the event loop later unless `hold` keeps it pending.
 */
const fakeClient = (tables: Record<string, Record<string, Item>> = {}) => {
  const sent: Sent[] = [];
  const held: (() => void)[] = [];
  const state = { hold: false, fail: false, unprocessed: 0 };
  /** Key attributes in name order, whatever order they were given in. */
  const idOf = (key: Item): string => JSON.stringify(Object.fromEntries(Object.entries(key).sort()));
  const find = (table: string, key: Item): Item | undefined => tables[table]?.[idOf(key)];
  const answer = (input: Record<string, unknown>, command: string): unknown => {
    if (state.fail) throw new Error('unavailable');
    switch (command) {
      case 'GetCommand': {
        const item = find(String(input.TableName), input.Key as Item);
        return item ? { Item: item } : {};
      }
      case 'BatchGetCommand': {
        const requested = input.RequestItems as Record<string, { Keys: Item[] }>;
        const responses: Record<string, Item[]> = {};
        const unprocessed: Record<string, { Keys: Item[] }> = {};
        for (const [table, { Keys }] of Object.entries(requested)) {
          // The first `unprocessed` keys are left for a later round.
          const leftOver = Keys.slice(0, state.unprocessed);
          state.unprocessed -= leftOver.length;
          if (leftOver.length > 0) unprocessed[table] = { Keys: leftOver };
          responses[table] = Keys.slice(leftOver.length).flatMap((key): Item[] => {
            const item = find(table, key);
            return item ? [item] : [];
          });
        }
        return { Responses: responses, UnprocessedKeys: unprocessed };
      }
      case 'BatchWriteCommand': {
        const requested = input.RequestItems as Record<string, { PutRequest: { Item: Item } }[]>;
        const unprocessed: typeof requested = {};
        for (const [table, requests] of Object.entries(requested)) {
          const leftOver = requests.slice(0, state.unprocessed);
          state.unprocessed -= leftOver.length;
          if (leftOver.length > 0) unprocessed[table] = leftOver;
        }
        return { UnprocessedItems: unprocessed };
      }
      default:
        return {};
    }
  };
  const client = {
    send: (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      sent.push({ command: name, input: command.input });
      return new Promise((resolve, reject) => {
        const settle = () => {
          try {
            resolve(answer(command.input, name));
          } catch (error) {
            reject(error);
          }
        };
        if (state.hold) held.push(settle);
        else setImmediate(settle);
      });
    },
  };
  return {
    documents: client as unknown as DynamoDBDocumentClient,
    sent,
    state,
    release: () => {
      for (const settle of held.splice(0)) settle();
    },
  };
};

const POINTER = { pk: 'pointer', sk: 'current' };

describe('ItemBatches', () => {
  it('sends a read alone as GetItem, consistent when asked, and a write alone as PutItem', async () => {
    const fake = fakeClient({ catalog: { [JSON.stringify(POINTER)]: { ...POINTER, revision: 3 } } });
    const batches = new ItemBatches(fake.documents);
    expect(await batches.get('catalog', POINTER, { consistent: true })).toEqual({ ...POINTER, revision: 3 });
    expect(await batches.get('cache', { key: 'absent' })).toBeUndefined();
    await batches.put('cache', { key: 'a' }, { key: 'a', entry: '{}' });
    expect(fake.sent).toEqual([
      { command: 'GetCommand', input: { TableName: 'catalog', Key: POINTER, ConsistentRead: true } },
      { command: 'GetCommand', input: { TableName: 'cache', Key: { key: 'absent' } } },
      { command: 'PutCommand', input: { TableName: 'cache', Item: { key: 'a', entry: '{}' } } },
    ]);
  });

  it('sends the reads of one turn in one BatchGetItem across tables, each key once', async () => {
    const fake = fakeClient({
      catalog: { [JSON.stringify(POINTER)]: { ...POINTER, revision: 3 } },
      cache: { [JSON.stringify({ key: 'a' })]: { key: 'a', entry: 'A' } },
    });
    const batches = new ItemBatches(fake.documents);
    const reads = await Promise.all([
      batches.get('cache', { key: 'a' }),
      batches.get('catalog', POINTER, { consistent: true }),
      batches.get('cache', { key: 'b' }),
      batches.get('catalog', { sk: 'current', pk: 'pointer' }, { consistent: true }),
      batches.get('cache', { key: 'a' }),
    ]);
    expect(reads).toEqual([
      { key: 'a', entry: 'A' },
      { ...POINTER, revision: 3 },
      undefined,
      { ...POINTER, revision: 3 },
      { key: 'a', entry: 'A' },
    ]);
    expect(fake.sent).toEqual([
      {
        command: 'BatchGetCommand',
        input: {
          RequestItems: {
            cache: { Keys: [{ key: 'a' }, { key: 'b' }] },
            catalog: { Keys: [POINTER], ConsistentRead: true },
          },
        },
      },
    ]);
  });

  it('never lets a read join a call already sent: one read call and one write call in flight at a time', async () => {
    const fake = fakeClient();
    const batches = new ItemBatches(fake.documents);
    fake.state.hold = true;
    const first = batches.get('catalog', POINTER, { consistent: true });
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.sent.map((call) => call.command)).toEqual(['GetCommand']);
    // Asked for while the first read is in flight: the reads wait for the next read call, the write goes.
    const second = batches.get('catalog', POINTER, { consistent: true });
    const written = batches.put('cache', { key: 'a' }, { key: 'a' });
    const third = batches.get('cache', { key: 'b' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.sent.map((call) => call.command)).toEqual(['GetCommand', 'PutCommand']);
    fake.state.hold = false;
    fake.release();
    await Promise.all([first, second, written, third]);
    expect(fake.sent.map((call) => call.command)).toEqual(['GetCommand', 'PutCommand', 'BatchGetCommand']);
    expect(fake.sent[2]?.input).toEqual({
      RequestItems: { catalog: { Keys: [POINTER], ConsistentRead: true }, cache: { Keys: [{ key: 'b' }] } },
    });
  });

  it('retries unprocessed keys and items', async () => {
    const fake = fakeClient({ cache: { [JSON.stringify({ key: 'a' })]: { key: 'a' } } });
    const batches = new ItemBatches(fake.documents);
    fake.state.unprocessed = 1;
    expect(
      await Promise.all([batches.get('cache', { key: 'a' }), batches.get('cache', { key: 'b' })]),
    ).toEqual([{ key: 'a' }, undefined]);
    fake.state.unprocessed = 2;
    await Promise.all(['a', 'b', 'c'].map((key) => batches.put('cache', { key }, { key })));
    expect(fake.sent.map((call) => call.command)).toEqual([
      'BatchGetCommand',
      'BatchGetCommand',
      'BatchWriteCommand',
      'BatchWriteCommand',
    ]);
    expect(fake.sent[1]?.input).toEqual({ RequestItems: { cache: { Keys: [{ key: 'a' }] } } });
    expect(fake.sent[3]?.input).toEqual({
      RequestItems: {
        cache: [{ PutRequest: { Item: { key: 'a' } } }, { PutRequest: { Item: { key: 'b' } } }],
      },
    });
  });

  it('writes a key once per call, the last item asked for, and at most 25 items a call', async () => {
    const fake = fakeClient();
    const batches = new ItemBatches(fake.documents);
    await Promise.all([
      batches.put('cache', { key: 'a' }, { key: 'a', version: 1 }),
      batches.put('cache', { key: 'a' }, { key: 'a', version: 2 }),
      ...Array.from({ length: 30 }, (_, index) =>
        batches.put('cache', { key: `k${index}` }, { key: `k${index}` }),
      ),
    ]);
    const sizes = fake.sent.map(
      (call) => (call.input.RequestItems as Record<string, unknown[]> | undefined)?.cache?.length ?? 1,
    );
    expect(sizes).toEqual([25, 6]);
    const first = fake.sent[0]?.input.RequestItems as Record<string, unknown[]> | undefined;
    expect(first?.cache?.[0]).toEqual({
      PutRequest: { Item: { key: 'a', version: 2 } },
    });
  });

  it('fails every call of a failed batch, and goes on with the next', async () => {
    const fake = fakeClient();
    const batches = new ItemBatches(fake.documents);
    fake.state.fail = true;
    const failed = await Promise.allSettled([
      batches.get('cache', { key: 'a' }),
      batches.get('cache', { key: 'b' }),
    ]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    fake.state.fail = false;
    expect(await batches.get('cache', { key: 'a' })).toBeUndefined();
  });

  it('is one per client, shared by every adapter built on it', () => {
    const fake = fakeClient();
    expect(itemBatchesOf(fake.documents)).toBe(itemBatchesOf(fake.documents));
    expect(itemBatchesOf(fakeClient().documents)).not.toBe(itemBatchesOf(fake.documents));
  });
});
