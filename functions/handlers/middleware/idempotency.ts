import { createHash } from 'node:crypto';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyUnknownError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { z } from 'zod';
import { FUNCTIONS } from '../../definitions';
import { HttpError } from './errors';
import type { HttpResult, Operation, OperationRequest } from './http';

/** How long a stored response answers a repeated key (C8: at least 24 h). */
export const IDEMPOTENCY_EXPIRES_AFTER_SECONDS = 24 * 60 * 60;

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1–255 printable ASCII characters, not starting or ending with a space. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E](?:[\x20-\x7E]{0,253}[\x21-\x7E])?$/;

/** Prefix of every record id in the idempotency table (stable across function renames and locally). */
const KEY_PREFIX = 'http';

export interface IdempotencyOptions {
  /** Client of the table that holds the records (DynamoDB Local in the local stack and the tests). */
  readonly dynamoDb: DynamoDBClient;
  /** Physical name of `TABLES.idempotency` (partition key `id`, TTL attribute `expiration`). */
  readonly tableName: string;
  /** @default IDEMPOTENCY_EXPIRES_AFTER_SECONDS (86 400, C8) */
  readonly expiresAfterSeconds?: number;
  /**
   * How long a request holds its key while it runs; a duplicate inside this window is answered 409. A record
   * left in progress by a crashed or timed-out invocation frees the key once it passes.
   * @default the timeout of the route's function (`FUNCTIONS[route.function].timeoutSeconds`)
   */
  readonly inProgressTimeoutSeconds?: number;
  /**
   * Encrypts the stored body (and decrypts it on a replay), for answers that carry a secret: the record then
   * holds ciphertext only.
   */
  readonly sealer?: ResponseSealer;
}

/** Encrypts and decrypts a stored response body (the data key: KMS in AWS, the local key locally). */
export interface ResponseSealer {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

/** What Powertools hashes: `scope` is the record's key, the other two fields are its payload validation. */
interface IdempotencyScope {
  readonly scope: string;
  readonly body_sha256: string;
  readonly path_parameters: { readonly [name: string]: string };
}

/** The response as stored: the body as its JSON text, so the replay is byte-identical. */
const StoredResponseSchema = z.object({
  status_code: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body_json: z.string().nullable(),
  /** The body's JSON text encrypted by the route's sealer (then `body_json` is null). */
  body_sealed: z.string().optional(),
});

type StoredResponse = z.infer<typeof StoredResponseSchema>;

/** A JSON value as Powertools hands it to (and takes it back from) a response hook. */
type JSONValue = Parameters<NonNullable<IdempotencyConfig['responseHook']>>[0];

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

const headerValue = (event: APIGatewayProxyEvent, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && typeof value === 'string') return value;
  }
  return undefined;
};

/**
 * Who is calling, as a digest: API Gateway's API key id, else the API key itself (the local gateway knows no
 * key ids), else the IAM principal, else the `Authorization` header (the local operator token). Secrets are
 * only ever hashed; the digest is hashed again into the record key.
 */
const callerOf = (event: APIGatewayProxyEvent): string => {
  const identity = event.requestContext?.identity;
  if (identity?.apiKeyId) return sha256Hex(`api-key-id\n${identity.apiKeyId}`);
  if (identity?.apiKey) return sha256Hex(`api-key\n${identity.apiKey}`);
  if (identity?.userArn) return sha256Hex(`iam\n${identity.userArn}`);
  const authorization = headerValue(event, 'authorization');
  if (authorization) return sha256Hex(`authorization\n${authorization}`);
  const apiKey = headerValue(event, 'x-api-key');
  if (apiKey) return sha256Hex(`api-key\n${apiKey}`);
  return sha256Hex('anonymous');
};

const bodyBytes = (event: APIGatewayProxyEvent): Buffer => {
  if (event.body === null || event.body === undefined) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
};

const scopeOf = (request: OperationRequest, key: string): IdempotencyScope => {
  const { event, route } = request;
  const pathParameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value !== undefined) pathParameters[name] = value;
  }
  return {
    scope: sha256Hex(`${route.method} ${route.path}\n${callerOf(event)}\n${key}`),
    body_sha256: sha256Hex(bodyBytes(event)),
    path_parameters: pathParameters,
  };
};

const toStored = (result: HttpResult): StoredResponse => ({
  status_code: result.statusCode,
  headers: { ...(result.headers ?? {}) },
  body_json: result.body === undefined ? null : JSON.stringify(result.body),
});

const fromStored = async (stored: StoredResponse, sealer?: ResponseSealer): Promise<HttpResult> => {
  const bodyJson =
    stored.body_sealed !== undefined
      ? await (sealer ?? refuseSealed).open(stored.body_sealed)
      : stored.body_json;
  return {
    statusCode: stored.status_code,
    headers: stored.headers,
    ...(bodyJson === null ? {} : { body: JSON.parse(bodyJson) as unknown }),
  };
};

const refuseSealed: ResponseSealer = {
  seal: async () => {
    throw new Error('no sealer');
  },
  open: async () => {
    throw new Error('the stored response is sealed and this route has no sealer');
  },
};

const sealStored = async (stored: StoredResponse, sealer?: ResponseSealer): Promise<StoredResponse> =>
  sealer && stored.body_json !== null
    ? { ...stored, body_json: null, body_sealed: await sealer.seal(stored.body_json) }
    : stored;

const parseStored = (value: unknown): StoredResponse => {
  const parsed = StoredResponseSchema.safeParse(value);
  if (!parsed.success) throw new Error('the stored idempotent response is malformed');
  return parsed.data;
};

/** Powertools calls this with a stored (completed) response instead of running the operation again. */
const markReplayed = (response: JSONValue): JSONValue => {
  const stored = parseStored(response);
  return { ...stored, headers: { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' } };
};

/**
 * A stand-in Lambda context for Powertools: operations do not see the invocation's context, so the
 * in-progress lease is the route function's whole timeout, an upper bound of the time the request has left.
 */
const leaseContext = (leaseMs: number): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'idempotent-operation',
  functionVersion: '$LATEST',
  invokedFunctionArn: '',
  memoryLimitInMB: '0',
  awsRequestId: '',
  logGroupName: '',
  logStreamName: '',
  getRemainingTimeInMillis: () => leaseMs,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

const toHttpError = (error: unknown): unknown => {
  if (error instanceof IdempotencyValidationError) {
    return new HttpError(
      'idempotency_key_reused',
      'this Idempotency-Key was already used with a different request (body or path)',
      { cause: error },
    );
  }
  if (error instanceof IdempotencyAlreadyInProgressError) {
    return new HttpError('request_in_progress', 'a request with this Idempotency-Key is still running', {
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  if (error instanceof IdempotencyUnknownError) {
    return new HttpError('unavailable', 'the idempotency store is unavailable; retry later', {
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  return error;
};

type Runner = (scope: IdempotencyScope, request: OperationRequest) => Promise<StoredResponse>;

/**
 * C8 for POST routes. With an `Idempotency-Key` header (1–255 printable ASCII, else 400 `invalid_request`),
 * scoped by route (method + resource) and caller: the first request runs `operation` and its result is
 * stored (Powertools idempotency, DynamoDB); the same key with the same body (and path parameters) answers
 * the stored response with `Idempotent-Replayed: true`; with another body 422 `idempotency_key_reused`;
 * while the first still runs 409 `request_in_progress` with `Retry-After: 1`. When the operation throws
 * (a refusal or a failure) nothing is stored, so the key can be retried. Without the header, or on other
 * methods, the operation just runs.
 */
export const idempotent = (operation: Operation, options: IdempotencyOptions): Operation => {
  const expiresAfterSeconds = options.expiresAfterSeconds ?? IDEMPOTENCY_EXPIRES_AFTER_SECONDS;
  const execute: Runner = async (_scope, request) =>
    sealStored(toStored(await operation(request)), options.sealer);
  // A persistence layer takes its configuration once, so each lease length gets its own layer and config.
  const runners = new Map<number, Runner>();
  const runnerFor = (leaseMs: number): Runner => {
    let runner = runners.get(leaseMs);
    if (!runner) {
      runner = makeIdempotent(execute, {
        persistenceStore: new DynamoDBPersistenceLayer({
          tableName: options.tableName,
          awsSdkV3Client: options.dynamoDb,
        }),
        keyPrefix: KEY_PREFIX,
        dataIndexArgument: 0,
        config: new IdempotencyConfig({
          eventKeyJmesPath: 'scope',
          payloadValidationJmesPath: '[body_sha256, path_parameters]',
          throwOnNoIdempotencyKey: true,
          expiresAfterSeconds,
          hashFunction: 'sha256',
          lambdaContext: leaseContext(leaseMs),
          responseHook: markReplayed,
        }),
      });
      runners.set(leaseMs, runner);
    }
    return runner;
  };

  return async (request) => {
    if (request.route.method !== 'POST') return operation(request);
    const key = headerValue(request.event, IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) return operation(request);
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new HttpError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    const leaseSeconds = options.inProgressTimeoutSeconds ?? FUNCTIONS[request.route.function].timeoutSeconds;
    let stored: StoredResponse;
    try {
      stored = await runnerFor(leaseSeconds * 1000)(scopeOf(request, key), request);
    } catch (error) {
      throw toHttpError(error);
    }
    return fromStored(parseStored(stored), options.sealer);
  };
};
