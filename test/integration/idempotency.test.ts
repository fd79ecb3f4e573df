import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import {
  DynamoIdempotencyLedger,
  type DynamoIdempotencyLedgerOptions,
} from '../../functions/adapters/aws/idempotency-ledger';
import { callerIdentity } from '../../functions/composition/local/gateway';
import type { RouteDefinition } from '../../functions/definitions';
import { HttpError } from '../../functions/handlers/middleware/errors';
import { createHttpApi, type Operation } from '../../functions/handlers/middleware/http';
import { idempotent } from '../../functions/handlers/middleware/idempotency';
import { createLogger } from '../../functions/shared/logger';
import { engineClients, provisionIsolated } from '../support/engines';
import { lambdaContext, type ProxyEventInput, proxyEvent, TEST_CALLER } from '../unit/support/lambda';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let tableName: string;

beforeEach(async () => {
  tableName = (await provisionIsolated(clients)).tableNames.idempotency;
});

const route = (method: RouteDefinition['method'], path: string, operation: string): RouteDefinition => ({
  method,
  path,
  function: 'checkout',
  operation,
  auth: 'api_key',
  summary: operation,
});

const ROUTES: readonly RouteDefinition[] = [
  route('POST', '/quotes', 'createQuote'),
  route('POST', '/quotes/{quote_id}/commit', 'commitQuote'),
  route('GET', '/quotes/{quote_id}', 'getQuote'),
];

const API_KEY = 'key_local_0123456789abcdef';

/** An operation that counts its runs and answers what `respond` says (or throws what it throws). */
const counted = (respond: (run: number) => Promise<Awaited<ReturnType<Operation>>>) => {
  const runs = { count: 0 };
  const operation: Operation = async () => {
    runs.count += 1;
    return respond(runs.count);
  };
  return { runs, operation };
};

const created = (run: number) =>
  Promise.resolve({
    statusCode: 201,
    body: { quote_id: `q_${run}`, total: '12.30', lines: [{ sku: 'sku-1', amount: '12.30' }], note: null },
    headers: { Location: `/quotes/q_${run}` },
  });

/** The checkout function with every route served by `operation`, made idempotent on the test's table. */
const apiWith = (
  operation: Operation,
  options: Partial<Omit<DynamoIdempotencyLedgerOptions, 'documents'>> = {},
) => {
  const wrapped = idempotent(operation, {
    ledger: new DynamoIdempotencyLedger({ documents: clients.documents, tableName, ...options }),
  });
  const handler = createHttpApi({
    functionId: 'checkout',
    logger: createLogger({ logLevel: 'SILENT' }),
    operations: { createQuote: wrapped, commitQuote: wrapped, getQuote: wrapped },
    routes: ROUTES,
  });
  return (input: Partial<ProxyEventInput> & { apiKey?: string | null }): Promise<APIGatewayProxyResult> => {
    const event: APIGatewayProxyEvent = proxyEvent({
      method: 'POST',
      resource: '/quotes',
      body: '{"lines":[{"sku":"sku-1","quantity":1}]}',
      ...input,
    });
    const apiKey = input.apiKey === undefined ? API_KEY : input.apiKey;
    event.requestContext.identity = callerIdentity({ sourceIp: '127.0.0.1', apiKey, userAgent: 'vitest' });
    return handler(event, lambdaContext());
  };
};

const withKey = (key: string, headers: Record<string, string> = {}) => ({
  headers: { 'Idempotency-Key': key, ...headers },
});

const storedItems = async (): Promise<Record<string, unknown>[]> => {
  const scan = await clients.dynamoDb.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return (scan.Items ?? []).map((item) => unmarshall(item));
};

const errorOf = (result: APIGatewayProxyResult): unknown =>
  (JSON.parse(result.body) as { error?: unknown }).error;

describe('idempotent(): C8 on DynamoDB Local', () => {
  it('runs the first request and stores its status, body and headers with a 24 h expiry', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = randomUUID();
    const before = Date.now() / 1000;
    const first = await call(withKey(key));
    expect(first.statusCode).toBe(201);
    expect(first.headers?.Location).toBe('/quotes/q_1');
    expect(first.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs.count).toBe(1);

    const items = await storedItems();
    expect(items).toHaveLength(1);
    const [item] = items;
    expect(item?.status).toBe('completed');
    expect(Number(item?.expiration)).toBeGreaterThanOrEqual(Math.floor(before + 86_400));
    expect(Number(item?.expiration)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000 + 86_400));
    // Neither the key nor the caller's API key is stored in the clear.
    const raw = JSON.stringify(items);
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(API_KEY);
  });

  it('replays the stored response byte for byte with Idempotent-Replayed: true, without running again', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = randomUUID();
    const first = await call(withKey(key));
    const second = await call(withKey(key));
    const third = await call(withKey(key));
    expect(runs.count).toBe(1);
    for (const replay of [second, third]) {
      expect(replay.statusCode).toBe(201);
      expect(replay.body).toBe(first.body);
      expect(replay.headers?.Location).toBe('/quotes/q_1');
      expect(replay.headers?.['Idempotent-Replayed']).toBe('true');
      expect(replay.headers?.['Content-Type']).toBe('application/json');
    }
  });

  it('replays an empty (no body) response as empty', async () => {
    const { runs, operation } = counted(async () => ({ statusCode: 204 }));
    const call = apiWith(operation);
    const key = randomUUID();
    await call(withKey(key));
    const replay = await call(withKey(key));
    expect(runs.count).toBe(1);
    expect(replay.statusCode).toBe(204);
    expect(replay.body).toBe('');
    expect(replay.headers?.['Idempotent-Replayed']).toBe('true');
  });

  it('answers 422 idempotency_key_reused for the same key with another body', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = randomUUID();
    await call(withKey(key));
    const other = await call({ ...withKey(key), body: '{"lines":[{"sku":"sku-1","quantity":2}]}' });
    expect(other.statusCode).toBe(422);
    expect(errorOf(other)).toBe('idempotency_key_reused');
    expect(runs.count).toBe(1);
    // The original body still replays.
    expect((await call(withKey(key))).headers?.['Idempotent-Replayed']).toBe('true');
  });

  it('answers 422 for the same key on the same route with other path parameters', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = randomUUID();
    const commit = (quoteId: string) =>
      call({
        ...withKey(key),
        resource: '/quotes/{quote_id}/commit',
        path: `/quotes/${quoteId}/commit`,
        pathParameters: { quote_id: quoteId },
        body: '{}',
      });
    expect((await commit('q_a')).statusCode).toBe(201);
    const other = await commit('q_b');
    expect(other.statusCode).toBe(422);
    expect(errorOf(other)).toBe('idempotency_key_reused');
    expect(runs.count).toBe(1);
  });

  it('answers 409 request_in_progress with Retry-After: 1 to a concurrent duplicate', async () => {
    const { runs, operation } = counted(async (run) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return created(run);
    });
    const call = apiWith(operation);
    const key = randomUUID();
    const [a, b] = await Promise.all([call(withKey(key)), call(withKey(key))]);
    const results = [a, b].sort((x, y) => x.statusCode - y.statusCode);
    expect(results.map((result) => result.statusCode)).toEqual([201, 409]);
    const refused = results[1];
    expect(refused && errorOf(refused)).toBe('request_in_progress');
    expect(refused?.headers?.['Retry-After']).toBe('1');
    expect(runs.count).toBe(1);
    // Once the first has finished, the duplicate gets its stored response.
    const later = await call(withKey(key));
    expect(later.statusCode).toBe(201);
    expect(later.headers?.['Idempotent-Replayed']).toBe('true');
    expect(runs.count).toBe(1);
  });

  it('while the first still runs: same body → 409, other body → 422 (the body is checked first)', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = (): void => undefined;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const { operation } = counted(async (run) => {
      entered();
      await gate;
      return created(run);
    });
    const call = apiWith(operation);
    const key = randomUUID();
    const first = call(withKey(key));
    await started;
    const sameBody = await call(withKey(key));
    const otherBody = await call({ ...withKey(key), body: '{"other":true}' });
    release();
    expect((await first).statusCode).toBe(201);
    expect(sameBody.statusCode).toBe(409);
    expect(otherBody.statusCode).toBe(422);
  });

  it('stores nothing when the operation refuses (4xx): a retry with the same key runs again', async () => {
    const { runs, operation } = counted(async (run) => {
      if (run === 1) throw new HttpError('invalid_request', 'lines must not be empty');
      return created(run);
    });
    const call = apiWith(operation);
    const key = randomUUID();
    const refused = await call(withKey(key));
    expect(refused.statusCode).toBe(400);
    expect(errorOf(refused)).toBe('invalid_request');
    expect(await storedItems()).toEqual([]);
    const retried = await call(withKey(key));
    expect(retried.statusCode).toBe(201);
    expect(retried.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs.count).toBe(2);
    expect(await storedItems()).toHaveLength(1);
  });

  it('stores nothing when the operation fails (5xx): a retry with the same key runs again', async () => {
    const { runs, operation } = counted(async (run) => {
      if (run === 1) throw new Error('downstream timeout');
      return created(run);
    });
    const call = apiWith(operation);
    const key = randomUUID();
    const failed = await call(withKey(key));
    expect(failed.statusCode).toBe(500);
    expect(await storedItems()).toEqual([]);
    expect((await call(withKey(key))).statusCode).toBe(201);
    expect(runs.count).toBe(2);
  });

  it('runs every time and stores nothing without an Idempotency-Key', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const a = await call({});
    const b = await call({});
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(b.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs.count).toBe(2);
    expect(await storedItems()).toEqual([]);
  });

  it('ignores the header on routes other than POST', async () => {
    const { runs, operation } = counted(async () => ({ statusCode: 200, body: { ok: true } }));
    const call = apiWith(operation);
    const key = randomUUID();
    const get = () =>
      call({
        ...withKey(key),
        method: 'GET',
        resource: '/quotes/{quote_id}',
        path: '/quotes/q_1',
        pathParameters: { quote_id: 'q_1' },
        body: null,
      });
    await get();
    await get();
    expect(runs.count).toBe(2);
    expect(await storedItems()).toEqual([]);
  });

  it('scopes the key by route: the same key on another POST route runs', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = randomUUID();
    const body = '{}';
    await call({ ...withKey(key), body });
    const commit = await call({
      ...withKey(key),
      body,
      resource: '/quotes/{quote_id}/commit',
      path: '/quotes/q_1/commit',
      pathParameters: { quote_id: 'q_1' },
    });
    expect(commit.statusCode).toBe(201);
    expect(commit.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs.count).toBe(2);
  });

  it('scopes the key by caller: the caller key (by id: a rotated secret keeps its records)', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = randomUUID();
    const caller = (keyId: string) => ({ ...TEST_CALLER, key_id: keyId });
    const asKeyA = await call({ ...withKey(key), authorizer: caller('ak_a'), apiKey: 'key_a_0123456789' });
    const asKeyB = await call({ ...withKey(key), authorizer: caller('ak_b'), apiKey: 'key_b_0123456789' });
    for (const result of [asKeyA, asKeyB]) {
      expect(result.statusCode).toBe(201);
      expect(result.headers?.['Idempotent-Replayed']).toBeUndefined();
    }
    expect(runs.count).toBe(2);
    // The same key after a rotation (another secret, the same key id) finds its answer.
    const again = await call({ ...withKey(key), authorizer: caller('ak_b'), apiKey: 'key_b_rotated_0123' });
    expect(again.headers?.['Idempotent-Replayed']).toBe('true');
    expect(runs.count).toBe(2);
    const raw = JSON.stringify(await storedItems());
    for (const secret of ['key_a_0123456789', 'key_b_0123456789', 'key_b_rotated_0123']) {
      expect(raw).not.toContain(secret);
    }
  });

  it.each([
    ['empty', ''],
    ['too long (256)', 'k'.repeat(256)],
    ['non-ASCII', 'clé-1'],
    ['a control character', 'key\u0007one'],
  ])('answers 400 invalid_request to a malformed key (%s) without running', async (_name, key) => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const result = await call(withKey(key));
    expect(result.statusCode).toBe(400);
    expect(errorOf(result)).toBe('invalid_request');
    expect(runs.count).toBe(0);
  });

  it('accepts a key of exactly 255 printable characters, in any header case', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation);
    const key = `${'k'.repeat(250)}-~ !{`;
    expect(key).toHaveLength(255);
    await call({ headers: { 'idempotency-key': key } });
    const replay = await call({ headers: { 'IDEMPOTENCY-KEY': key } });
    expect(replay.headers?.['Idempotent-Replayed']).toBe('true');
    expect(runs.count).toBe(1);
  });

  it('frees the key once expiresAfterSeconds has passed', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation, { expiresAfterSeconds: 1 });
    const key = randomUUID();
    await call(withKey(key));
    expect((await call(withKey(key))).headers?.['Idempotent-Replayed']).toBe('true');
    // The expiry is in whole seconds: it is at most 2 s away.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const after = await call(withKey(key));
    expect(after.statusCode).toBe(201);
    expect(after.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(runs.count).toBe(2);
  });

  it('frees a key left in progress (a crashed invocation) once the in-progress lease has passed', async () => {
    const { runs, operation } = counted(async (run) => {
      if (run === 1) await new Promise((resolve) => setTimeout(resolve, 2_500));
      return created(run);
    });
    const call = apiWith(operation, { leaseSeconds: 1 });
    const key = randomUUID();
    const stuck = call(withKey(key));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await call(withKey(key))).statusCode).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const retried = await call(withKey(key));
    expect(retried.statusCode).toBe(201);
    expect(runs.count).toBe(2);
    // The slow first holder can no longer complete the record: it answers what the retry stored.
    const late = await stuck;
    expect(JSON.parse(late.body)).toEqual(JSON.parse(retried.body));
    expect(late.headers?.['Idempotent-Replayed']).toBe('true');
  });

  it('answers 503 unavailable with Retry-After when the idempotency table cannot be reached', async () => {
    const { runs, operation } = counted(created);
    const call = apiWith(operation, { tableName: `missing-${randomUUID()}` });
    const result = await call(withKey(randomUUID()));
    expect(result.statusCode).toBe(503);
    expect(errorOf(result)).toBe('unavailable');
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(result.body).not.toMatch(/ResourceNotFound|missing-/);
    expect(runs.count).toBe(0);
  });
});
