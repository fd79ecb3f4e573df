import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  DynamoDBServiceException,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoIdempotencyLedger } from '../../../functions/adapters/aws/idempotency-ledger';
import type { RouteDefinition } from '../../../functions/definitions';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import { createHttpApi, type Operation } from '../../../functions/handlers/middleware/http';
import { idempotent } from '../../../functions/handlers/middleware/idempotency';
import { createLogger } from '../../../functions/shared/logger';
import { lambdaContext, type ProxyEventInput, proxyEvent } from '../support/lambda';

/**
 * Behaviour the table implements is tested against DynamoDB Local (test/integration/idempotency.test.ts).
 * Here: what never reaches the table, and faults DynamoDB Local cannot produce on demand.
 */

const client = new DynamoDBClient({
  region: 'eu-west-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});
const documents = DynamoDBDocumentClient.from(client);
const dynamo = mockClient(documents);
afterEach(() => dynamo.reset());

const routes: readonly RouteDefinition[] = [
  {
    method: 'POST',
    path: '/quotes',
    function: 'checkout',
    operation: 'create',
    auth: 'api_key',
    summary: 'create',
  },
  {
    method: 'GET',
    path: '/quotes',
    function: 'checkout',
    operation: 'list',
    auth: 'api_key',
    summary: 'list',
  },
];

const setup = (respond: Operation) => {
  const runs = { count: 0 };
  const wrapped = idempotent(
    async (request) => {
      runs.count += 1;
      return respond(request);
    },
    {
      ledger: new DynamoIdempotencyLedger({
        documents,
        tableName: 'idempotency',
      }),
    },
  );
  const handler = createHttpApi({
    functionId: 'checkout',
    logger: createLogger({ logLevel: 'SILENT' }),
    operations: { create: wrapped, list: wrapped },
    routes,
  });
  const call = (input: Partial<ProxyEventInput> = {}): Promise<APIGatewayProxyResult> =>
    handler(proxyEvent({ method: 'POST', resource: '/quotes', body: '{"a":1}', ...input }), lambdaContext());
  return { runs, call };
};

const ok: Operation = async () => ({ statusCode: 201, body: { quote_id: 'q_1' } });
const errorOf = (result: APIGatewayProxyResult): unknown =>
  (JSON.parse(result.body) as { error?: unknown }).error;
const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

const serviceError = (name: string, status: number) =>
  new DynamoDBServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });

describe('idempotent(): requests that never reach the table', () => {
  it('runs the operation without the header', async () => {
    const { runs, call } = setup(ok);
    expect((await call()).statusCode).toBe(201);
    expect((await call()).statusCode).toBe(201);
    expect(runs.count).toBe(2);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('runs the operation on other methods even with the header', async () => {
    const { runs, call } = setup(ok);
    await call({ ...withKey('k-1'), method: 'GET', body: null });
    expect(runs.count).toBe(1);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'x'.repeat(256)],
    ['leading space', ' key'],
    ['non-ASCII', 'ключ'],
    ['DEL character', 'key\u007f'],
  ])('refuses a malformed key (%s) with 400 invalid_request', async (_name, key) => {
    const { runs, call } = setup(ok);
    const result = await call(withKey(key));
    expect(result.statusCode).toBe(400);
    expect(errorOf(result)).toBe('invalid_request');
    expect(runs.count).toBe(0);
    expect(dynamo.calls()).toHaveLength(0);
  });
});

describe('idempotent(): table faults', () => {
  it('answers 503 unavailable (no SDK text) when storing the in-progress record fails, without running', async () => {
    dynamo.on(PutCommand).rejects(serviceError('ProvisionedThroughputExceededException', 400));
    const { runs, call } = setup(ok);
    const result = await call(withKey('k-1'));
    expect(result.statusCode).toBe(503);
    expect(errorOf(result)).toBe('unavailable');
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(result.body).not.toMatch(/Throughput|Exception/);
    expect(runs.count).toBe(0);
  });

  it('answers 503 when the response cannot be stored after the operation ran', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(UpdateCommand).rejects(serviceError('InternalServerError', 500));
    const { runs, call } = setup(ok);
    const result = await call(withKey('k-1'));
    expect(result.statusCode).toBe(503);
    expect(runs.count).toBe(1);
  });

  it('passes a refusal through even when the in-progress record cannot be given back', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(DeleteCommand).rejects(serviceError('InternalServerError', 500));
    const { call } = setup(async () => {
      throw new HttpError('invalid_request', 'bad basket');
    });
    const result = await call(withKey('k-1'));
    // The key stays held until its lease ends; the caller learns what was wrong with the request.
    expect(result.statusCode).toBe(400);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(1);
  });

  it('deletes the in-progress record (only while it is this request’s) and passes the refusal through', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(DeleteCommand).resolves({});
    const { call } = setup(async () => {
      throw new HttpError('invalid_request', 'bad basket');
    });
    const result = await call(withKey('k-1'));
    expect(result.statusCode).toBe(400);
    const deleted = dynamo.commandCalls(DeleteCommand)[0]?.args[0].input;
    expect(deleted?.ConditionExpression).toBe('#status = :in_progress AND #token = :token');
    expect(deleted?.ExpressionAttributeValues?.[':token']).toEqual(
      dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item?.token,
    );
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('writes a 10 s in-progress lease (IDEMPOTENCY_LEASE_SECONDS), a token and the 24 h expiry', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(UpdateCommand).resolves({});
    const { call } = setup(ok);
    const before = Date.now();
    await call(withKey('k-1'));
    const item = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item;
    const lease = Number(item?.lease_until);
    expect(lease).toBeGreaterThanOrEqual(before + 10_000);
    expect(lease).toBeLessThanOrEqual(Date.now() + 10_000);
    expect(Number(item?.expiration)).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 86_400);
    expect(item?.token).toMatch(/^[0-9a-f]{32}$/);
    expect(item?.id).toMatch(/^req#[0-9a-f]{64}$/);
    expect(item?.id).not.toContain('k-1');
    const completed = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(completed?.ConditionExpression).toBe('#status = :in_progress AND #token = :token');
  });

  it('replays the stored answer read back after the conditional write found the record', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(UpdateCommand).resolves({});
    const { call } = setup(ok);
    await call(withKey('k-1'));
    const stored = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    const written = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item;
    dynamo.reset();
    dynamo.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'exists', $metadata: {} }));
    dynamo.on(GetCommand).resolves({
      Item: {
        ...written,
        status: 'completed',
        answer_json: stored?.ExpressionAttributeValues?.[':answer_json'],
      },
    });
    const replay = await call(withKey('k-1'));
    expect(replay.statusCode).toBe(201);
    expect(replay.headers?.['Idempotent-Replayed']).toBe('true');
    expect(JSON.parse(replay.body)).toEqual({ quote_id: 'q_1' });
  });

  it('answers 500 (never a half-made response) when a stored record is malformed', async () => {
    dynamo.on(PutCommand).resolves({});
    dynamo.on(UpdateCommand).resolves({});
    const { runs, call } = setup(ok);
    await call(withKey('k-1'));
    const written = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item;
    dynamo.reset();
    dynamo.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'exists', $metadata: {} }));
    dynamo.on(GetCommand).resolves({
      Item: {
        ...written,
        status: 'completed',
        answer_json: JSON.stringify({ unexpected: true }),
      },
    });
    const result = await call(withKey('k-1'));
    expect(result.statusCode).toBe(500);
    expect(errorOf(result)).toBe('internal_error');
    expect(runs.count).toBe(1);
  });
});
