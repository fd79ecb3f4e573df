import {
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../functions/adapters/aws/clients';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import {
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  DEFAULT_DEDUP_SECONDS,
  DEFAULT_LOCK_SECONDS,
  EventInProgressError,
  EventTooOldError,
  IdempotencyStore,
  type IdempotencyStoreOptions,
  MIN_DEDUP_SECONDS,
  RECEIVER_TABLE,
  type ReceivedEnvelope,
  type TransactItem,
} from '../../functions/receiver';
import { engineClients, uniquePrefix } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

/** The receiver table, created the way a partner (or the CDK construct) would: RECEIVER_TABLE's shape. */
const createReceiverTable = async (dynamoDb: DynamoDBClient, tableName: string) => {
  await dynamoDb.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: RECEIVER_TABLE.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: RECEIVER_TABLE.partitionKey, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await dynamoDb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: RECEIVER_TABLE.timeToLiveAttribute, Enabled: true },
    }),
  );
};

/** A table for the domain effect: one counter item per event, `ADD n :1` in the same transaction. */
const createEffectsTable = async (dynamoDb: DynamoDBClient, tableName: string) => {
  await dynamoDb.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
};

// Near the real time: DynamoDB Local's TTL really deletes items whose expires_at has passed by the wall clock.
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000);
let now = T0;
const clock = () => now;
const advanceSeconds = (seconds: number) => {
  now = new Date(now.getTime() + seconds * 1000);
};

let receiverTable: string;
let effectsTable: string;
let sequence = 0;

beforeAll(async () => {
  const prefix = uniquePrefix();
  receiverTable = `${prefix}receiver-events`;
  effectsTable = `${prefix}receiver-effects`;
  await Promise.all([
    createReceiverTable(clients.dynamoDb, receiverTable),
    createEffectsTable(clients.dynamoDb, effectsTable),
  ]);
});

beforeEach(() => {
  now = T0;
});

const storeOf = (options: Partial<IdempotencyStoreOptions> = {}) =>
  new IdempotencyStore({
    documents: clients.documents,
    tableName: receiverTable,
    handlerVersion: 'handler-1.0.0',
    clock,
    ...options,
  });

/** A fresh event produced at `ts` (default: now). */
const eventAt = (ts: Date = now): ReceivedEnvelope => {
  sequence += 1;
  return {
    event_id: `evt_${Date.now().toString(36)}${sequence.toString().padStart(6, '0')}${Math.random().toString(36).slice(2, 8)}`,
    type: 'payout.processed',
    version: '2026-11-01',
    ts: ts.toISOString(),
    attempt: 1,
    data: { payout_id: 'po_1', status: 'paid' },
  };
};

/** The domain effect as transaction items, counting calls of the handler. */
const counting = () => {
  const calls = { count: 0 };
  const handler = async (envelope: ReceivedEnvelope): Promise<readonly TransactItem[]> => {
    calls.count += 1;
    return [
      {
        Update: {
          TableName: effectsTable,
          Key: { pk: `applied#${envelope.event_id}` },
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ];
  };
  return { calls, handler };
};

const appliedCount = async (eventId: string): Promise<number> => {
  const { Item } = await clients.documents.send(
    new GetCommand({ TableName: effectsTable, Key: { pk: `applied#${eventId}` }, ConsistentRead: true }),
  );
  return (Item?.n as number | undefined) ?? 0;
};

const rawRecord = async (eventId: string) =>
  (
    await clients.documents.send(
      new GetCommand({ TableName: receiverTable, Key: { event_id: eventId }, ConsistentRead: true }),
    )
  ).Item;

/** A document client whose TransactWriteItems commit and then "lose" the answer: the caller gets an error. */
const answerLosingClients = () => {
  const faulty = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
  });
  const lost = { count: 0 };
  faulty.dynamoDb.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'TransactWriteItemsCommand') {
        lost.count += 1;
        throw Object.assign(new Error('socket hang up after the commit'), { name: 'TimeoutError' });
      }
      return result;
    },
    { step: 'initialize', name: 'loseTransactAnswer' },
  );
  return { faulty, lost };
};

/**
 * A client that counts transactions and records their cancellation reasons. With `contenders`, no transaction is
 * sent before that many are waiting (or 2 s passed): none can commit before the others have read, so they race
 * whatever the machine's load (without it, a fast winner could commit before a second one was built).
 */
const observingClients = (contenders = 0) => {
  const observed = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
  });
  const codes: string[][] = [];
  const transactions = { count: 0 };
  const waiting: (() => void)[] = [];
  const gate = (): Promise<void> =>
    new Promise((resolve) => {
      waiting.push(resolve);
      if (waiting.length >= contenders) for (const release of waiting.splice(0)) release();
      else setTimeout(resolve, 2_000);
    });
  observed.dynamoDb.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        transactions.count += 1;
        if (contenders > 0) await gate();
      }
      try {
        return await next(args);
      } catch (error) {
        const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
        if (reasons) codes.push(reasons.map((reason) => reason.Code ?? '?'));
        throw error;
      }
    },
    { step: 'initialize', name: 'observe' },
  );
  return { observed, codes, transactions };
};

describe('the receiver table', () => {
  it('has the shape of RECEIVER_TABLE: key event_id, TTL on expires_at', async () => {
    expect(RECEIVER_TABLE).toEqual({ partitionKey: 'event_id', timeToLiveAttribute: 'expires_at' });
    const ttl = await clients.dynamoDb.send(new DescribeTimeToLiveCommand({ TableName: receiverTable }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('expires_at');
  });
});

describe('IdempotencyStore.processTransactional (mode 1) on DynamoDB Local', () => {
  it('processes once and records the mark with the effect', async () => {
    const store = storeOf();
    const { calls, handler } = counting();
    const event = eventAt();
    const outcome = await store.processTransactional(event, handler);
    expect(outcome).toEqual({
      kind: 'processed',
      status: {
        seen: true,
        status: 'processed',
        processed_at: T0.toISOString(),
        handler_version: 'handler-1.0.0',
      },
    });
    expect(await rawRecord(event.event_id)).toEqual({
      event_id: event.event_id,
      status: 'processed',
      processed_at: T0.toISOString(),
      handler_version: 'handler-1.0.0',
      expires_at: T0.getTime() / 1000 + DEFAULT_DEDUP_SECONDS + CLOCK_SKEW_ALLOWANCE_SECONDS,
    });
    expect(await store.processTransactional(event, handler)).toMatchObject({ kind: 'duplicate' });
    expect(calls.count).toBe(1);
    expect(await appliedCount(event.event_id)).toBe(1);
    expect(await store.status(event.event_id)).toEqual(outcome.status);
  });

  it('50 concurrent deliveries of one event: the effect is applied exactly once, 49 duplicates', async () => {
    const event = eventAt();
    const { handler } = counting();
    // Separate store instances, as separate function instances would be, on a client that sees the answers; no
    // transaction goes out before two are waiting, so at least two race.
    const { observed, codes, transactions } = observingClients(2);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () =>
        storeOf({ documents: observed.documents }).processTransactional({ ...event }, handler),
      ),
    ).finally(() => destroyAwsClients(observed));
    // Every transaction but the winner's was cancelled by the mark's condition (none by the effect).
    expect(transactions.count).toBeGreaterThan(1);
    expect(codes).toHaveLength(transactions.count - 1);
    for (const reasons of codes) expect(reasons).toEqual(['None', 'ConditionalCheckFailed']);
    expect(outcomes.filter((outcome) => outcome.kind === 'processed')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.kind === 'duplicate')).toHaveLength(49);
    expect(await appliedCount(event.event_id)).toBe(1);
    for (const outcome of outcomes) expect(outcome.status.seen).toBe(true);
  });

  it('a crash after the commit (the answer lost), then a retry: duplicate, no second effect', async () => {
    const { faulty, lost } = answerLosingClients();
    try {
      const event = eventAt();
      const { calls, handler } = counting();
      await expect(
        storeOf({ documents: faulty.documents }).processTransactional(event, handler),
      ).rejects.toThrow('socket hang up after the commit');
      expect(lost.count).toBe(1);
      // The transaction did commit: effect and mark together.
      expect(await appliedCount(event.event_id)).toBe(1);
      expect((await rawRecord(event.event_id))?.status).toBe('processed');

      const retry = await storeOf().processTransactional({ ...event, attempt: 2 }, handler);
      expect(retry.kind).toBe('duplicate');
      expect(calls.count).toBe(1);
      expect(await appliedCount(event.event_id)).toBe(1);
    } finally {
      destroyAwsClients(faulty);
    }
  });

  it('retries a transaction cancelled only by a concurrent one (TransactionConflict), then gives up', async () => {
    // DynamoDB Local serialises transactions, so the conflict is injected (a fault the emulator cannot produce).
    const conflicting = (times: number) => {
      const { observed, transactions } = observingClients();
      observed.dynamoDb.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'TransactWriteItemsCommand' && transactions.count <= times) {
            throw Object.assign(new Error('Transaction cancelled'), {
              name: 'TransactionCanceledException',
              CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
            });
          }
          return next(args);
        },
        { step: 'initialize', name: 'conflict', priority: 'low' },
      );
      return { observed, transactions };
    };

    const twice = conflicting(2);
    try {
      const event = eventAt();
      const { calls, handler } = counting();
      const outcome = await storeOf({ documents: twice.observed.documents }).processTransactional(
        event,
        handler,
      );
      expect(outcome.kind).toBe('processed');
      expect(twice.transactions.count).toBe(3);
      expect(calls.count).toBe(3); // the handler is asked again each time; one call's items committed
      expect(await appliedCount(event.event_id)).toBe(1);
    } finally {
      destroyAwsClients(twice.observed);
    }

    const always = conflicting(Number.POSITIVE_INFINITY);
    try {
      const event = eventAt();
      const refused = storeOf({ documents: always.observed.documents }).processTransactional(
        event,
        counting().handler,
      );
      await expect(refused).rejects.toBeInstanceOf(EventInProgressError);
      await expect(refused).rejects.toMatchObject({
        retryAfterSeconds: 1,
        cause: { name: 'TransactionCanceledException' },
      });
      expect(await appliedCount(event.event_id)).toBe(0);
      expect(await rawRecord(event.event_id)).toBeUndefined();
    } finally {
      destroyAwsClients(always.observed);
    }
  });

  it('recognises a duplicate 24 h later with the default 7-day memory', async () => {
    const store = storeOf();
    const { calls, handler } = counting();
    const event = eventAt();
    await store.processTransactional(event, handler);
    advanceSeconds(24 * 3600 + 1);
    expect(await store.processTransactional({ ...event, attempt: 9 }, handler)).toMatchObject({
      kind: 'duplicate',
      status: { seen: true, processed_at: T0.toISOString() },
    });
    advanceSeconds(5 * 86_400); // six days and a second
    expect((await store.processTransactional(event, handler)).kind).toBe('duplicate');
    expect(calls.count).toBe(1);
  });

  it('after the memory passes, an event whose ts is too old is refused and nothing is applied (C15)', async () => {
    const store = storeOf();
    const { calls, handler } = counting();
    const event = eventAt();
    await store.processTransactional(event, handler);
    advanceSeconds(DEFAULT_DEDUP_SECONDS + 1);
    const refused = store.processTransactional({ ...event, attempt: 14 }, handler);
    await expect(refused).rejects.toBeInstanceOf(EventTooOldError);
    await expect(refused).rejects.toMatchObject({ eventId: event.event_id, eventTs: event.ts });
    // Also for an event never seen: it is refused before anything is read or run.
    await expect(store.processTransactional(eventAt(T0), handler)).rejects.toBeInstanceOf(EventTooOldError);
    await expect(store.processWithLock(eventAt(T0), async () => undefined)).rejects.toBeInstanceOf(
      EventTooOldError,
    );
    expect(calls.count).toBe(1);
    expect(await appliedCount(event.event_id)).toBe(1);
  });

  it('keeps the mark past the memory by the clock-skew allowance, then counts it as absent before TTL deletes it', async () => {
    const store = storeOf({ dedupSeconds: MIN_DEDUP_SECONDS });
    const event = eventAt();
    await store.processTransactional(event, counting().handler);
    advanceSeconds(MIN_DEDUP_SECONDS + CLOCK_SKEW_ALLOWANCE_SECONDS);
    expect((await store.status(event.event_id)).seen).toBe(true);
    advanceSeconds(1);
    expect(await store.status(event.event_id)).toEqual({ seen: false });
    expect(await rawRecord(event.event_id)).toBeDefined(); // still stored: TTL deletion is lazy
    // The expired record is overwritten by a new processing (an event re-sent with a fresh ts).
    const { calls, handler } = counting();
    const again = await store.processTransactional({ ...event, ts: now.toISOString() }, handler);
    expect(again.kind).toBe('processed');
    expect(calls.count).toBe(1);
  });

  it('acknowledge, then a delivery: duplicate, the handler is not run', async () => {
    const store = storeOf();
    const event = eventAt();
    const acknowledged = await store.acknowledge(event.event_id, {
      acknowledged_by: 'ops@partner',
      note: 'DLQ #12',
    });
    expect(acknowledged).toEqual({
      seen: true,
      status: 'acknowledged',
      processed_at: T0.toISOString(),
      handler_version: 'handler-1.0.0',
      acknowledged_by: 'ops@partner',
      note: 'DLQ #12',
    });
    advanceSeconds(60);
    // Idempotent: the first acknowledgement stands.
    expect(await store.acknowledge(event.event_id, { acknowledged_by: 'someone-else' })).toEqual(
      acknowledged,
    );
    const { calls, handler } = counting();
    expect(await store.processTransactional(event, handler)).toEqual({
      kind: 'duplicate',
      status: acknowledged,
    });
    expect(await store.processWithLock(event, async () => undefined)).toEqual({
      kind: 'duplicate',
      status: acknowledged,
    });
    expect(calls.count).toBe(0);
    expect(await appliedCount(event.event_id)).toBe(0);
    expect(await store.status(event.event_id)).toEqual(acknowledged);
  });

  it('acknowledging an event already processed changes nothing', async () => {
    const store = storeOf();
    const event = eventAt();
    const processed = await store.processTransactional(event, counting().handler);
    expect(await store.acknowledge(event.event_id, { acknowledged_by: 'ops' })).toEqual(processed.status);
  });

  it("a handler's own failed condition cancels everything: thrown unchanged, nothing marked", async () => {
    const store = storeOf();
    const event = eventAt();
    const failing = async (): Promise<readonly TransactItem[]> => [
      {
        ConditionCheck: {
          TableName: effectsTable,
          Key: { pk: 'payout#missing' },
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
    ];
    await expect(store.processTransactional(event, failing)).rejects.toMatchObject({
      name: 'TransactionCanceledException',
    });
    expect(await store.status(event.event_id)).toEqual({ seen: false });
    expect(await rawRecord(event.event_id)).toBeUndefined();
  });

  it('refuses more transaction items than fit next to the mark', async () => {
    const event = eventAt();
    const tooMany = async () =>
      Array.from({ length: 100 }, (_, index) => ({
        Put: { TableName: effectsTable, Item: { pk: `x${index}` } },
      }));
    await expect(storeOf().processTransactional(event, tooMany)).rejects.toThrow(RangeError);
    expect(await rawRecord(event.event_id)).toBeUndefined();
  });

  it('an event with no effect (an empty list) is still marked', async () => {
    const store = storeOf();
    const event = eventAt();
    expect((await store.processTransactional(event, async () => [])).kind).toBe('processed');
    expect((await store.processTransactional(event, async () => [])).kind).toBe('duplicate');
  });

  it('validates its options', () => {
    expect(() => storeOf({ dedupSeconds: MIN_DEDUP_SECONDS - 1 })).toThrow(RangeError);
    expect(() => storeOf({ dedupSeconds: 86_400.5 })).toThrow(RangeError);
    expect(() => storeOf({ handlerVersion: '' })).toThrow(RangeError);
    expect(() => storeOf({ dedupSeconds: MIN_DEDUP_SECONDS })).not.toThrow();
  });
});

describe('IdempotencyStore.processWithLock (mode 2) on DynamoDB Local', () => {
  const deferred = () => {
    let release: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    return { promise, release };
  };

  it('lock contention: a second delivery while the first runs gets EventInProgressError', async () => {
    const store = storeOf();
    const event = eventAt();
    const gate = deferred();
    let runs = 0;
    const effect = async () => {
      runs += 1;
      await gate.promise;
    };
    const first = store.processWithLock(event, effect, { lockSeconds: 30 });
    await expect.poll(async () => (await store.status(event.event_id)).status).toBe('in_progress');
    expect(await store.status(event.event_id)).toEqual({
      seen: false,
      status: 'in_progress',
      handler_version: 'handler-1.0.0',
    });

    const second = store.processWithLock({ ...event, attempt: 2 }, effect, { lockSeconds: 30 });
    await expect(second).rejects.toBeInstanceOf(EventInProgressError);
    const error = (await second.catch((caught: unknown) => caught)) as EventInProgressError;
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(31);
    // Mode 1 on the same event respects the lock too; so does an acknowledgement.
    await expect(store.processTransactional(event, counting().handler)).rejects.toBeInstanceOf(
      EventInProgressError,
    );
    await expect(store.acknowledge(event.event_id, { acknowledged_by: 'ops' })).rejects.toBeInstanceOf(
      EventInProgressError,
    );

    gate.release();
    expect(await first).toMatchObject({ kind: 'processed', status: { seen: true, status: 'processed' } });
    expect(await store.processWithLock(event, effect)).toMatchObject({ kind: 'duplicate' });
    expect(runs).toBe(1);
    const record = await rawRecord(event.event_id);
    expect(record?.lock_token).toBeUndefined();
    expect(record?.status).toBe('processed');
  });

  it('concurrent deliveries: exactly one runs the effect, the others are in progress or duplicates', async () => {
    const event = eventAt();
    let runs = 0;
    const settled = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        storeOf().processWithLock({ ...event }, async () => {
          runs += 1;
        }),
      ),
    );
    expect(runs).toBe(1);
    const processed = settled.filter(
      (result) => result.status === 'fulfilled' && result.value.kind === 'processed',
    );
    expect(processed).toHaveLength(1);
    for (const result of settled) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(EventInProgressError);
      else if (result.value.kind === 'duplicate') expect(result.value.status.seen).toBe(true);
    }
  });

  it('a crash holding the lock: the next delivery is refused until the lock expires, then runs the effect again', async () => {
    const store = storeOf();
    const event = eventAt();
    const effects: string[] = [];
    // The process "dies" after the effect, before the mark: the promise never settles, the lock stays.
    void store.processWithLock(
      event,
      async () => {
        effects.push('first');
        await new Promise(() => undefined);
      },
      { lockSeconds: DEFAULT_LOCK_SECONDS },
    );
    await expect.poll(() => effects.length).toBe(1);

    advanceSeconds(DEFAULT_LOCK_SECONDS - 5);
    await expect(store.processWithLock(event, async () => undefined)).rejects.toMatchObject({
      name: 'EventInProgressError',
      retryAfterSeconds: expect.any(Number),
    });

    advanceSeconds(10); // past the lock's expiry
    const retried = await store.processWithLock({ ...event, attempt: 2 }, async () => {
      effects.push('retry');
    });
    expect(retried.kind).toBe('processed');
    // At-least-once effect, as documented: the crashed run's effect and the retry's.
    expect(effects).toEqual(['first', 'retry']);
    expect((await store.processWithLock(event, async () => undefined)).kind).toBe('duplicate');
  });

  it('an effect error releases the lock and marks nothing; the next delivery runs the effect', async () => {
    const store = storeOf();
    const event = eventAt();
    const failure = new Error('partner API said 503');
    await expect(
      store.processWithLock(event, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await rawRecord(event.event_id)).toBeUndefined();
    expect(await store.status(event.event_id)).toEqual({ seen: false });

    let runs = 0;
    expect(
      (
        await store.processWithLock(event, async () => {
          runs += 1;
        })
      ).kind,
    ).toBe('processed');
    expect(runs).toBe(1);
  });

  it('validates lockSeconds', async () => {
    const store = storeOf();
    await expect(store.processWithLock(eventAt(), async () => undefined, { lockSeconds: 0 })).rejects.toThrow(
      RangeError,
    );
    await expect(
      store.processWithLock(eventAt(), async () => undefined, { lockSeconds: DEFAULT_DEDUP_SECONDS + 1 }),
    ).rejects.toThrow(RangeError);
  });
});

describe('IdempotencyStore.status and acknowledge', () => {
  it('reports an unknown event as not seen', async () => {
    expect(await storeOf().status('evt_never_seen')).toEqual({ seen: false });
  });

  it('validates event ids and acknowledgement input', async () => {
    const store = storeOf();
    await expect(store.status('')).rejects.toThrow(RangeError);
    await expect(store.acknowledge('evt_x', { acknowledged_by: '' })).rejects.toThrow(RangeError);
    await expect(
      store.acknowledge('evt_x', { acknowledged_by: 'ops', note: 'n'.repeat(2001) }),
    ).rejects.toThrow(RangeError);
  });

  it('works through a document client that the kit did not configure', async () => {
    // A partner's own client (default marshalling options) must work too.
    const { DynamoDBDocumentClient: Documents } = await import('@aws-sdk/lib-dynamodb');
    const plain: DynamoDBDocumentClient = Documents.from(clients.dynamoDb);
    const store = storeOf({ documents: plain });
    const event = eventAt();
    expect((await store.processTransactional(event, counting().handler)).kind).toBe('processed');
    expect((await store.acknowledge(event.event_id, { acknowledged_by: 'ops' })).status).toBe('processed');
  });
});
