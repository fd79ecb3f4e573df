import { createHash, createHmac } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Principal } from '../../domain/access/principals';
import {
  type ExactlyOnce,
  type IdempotencyLedger,
  type LedgerEntry,
  MalformedLedgerRecordError,
  type RequestScope,
  RequestSupersededError,
  type ReservedIdPrefix,
  type StoredAnswer,
} from '../../ports/idempotency';
import { newId, ulidOf } from '../../shared/ids';
import { HttpError } from './errors';
import type { HttpResult, Operation, OperationRequest, RequestIdempotency } from './http';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1–255 printable ASCII characters, not starting or ending with a space. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E](?:[\x20-\x7E]{0,253}[\x21-\x7E])?$/;

/** Prefix of every record id in the idempotency table (stable across function renames and locally). */
const KEY_PREFIX = 'req';

/** Named points of an idempotent request, for the crash tests (`CRASH_AT=<operation>:<point>` locally). */
export type RequestCheckpoint = 'after-effect' | 'after-record' | (string & {});

export interface IdempotencyOptions {
  /** The idempotency table. */
  readonly ledger: IdempotencyLedger;
  /**
   * Encrypts the stored body (and decrypts it on a replay), for answers that carry a secret: the record then
   * holds ciphertext only.
   */
  readonly sealer?: ResponseSealer;
  /**
   * Told of each named point a request passes (`after-effect`: the write carrying the effect committed;
   * `after-record`: the answer is stored, not yet sent; others named by the use case). A test hook: the local
   * stack ends the process at the point `CRASH_AT` names.
   */
  readonly onCheckpoint?: (operation: string, point: RequestCheckpoint) => void;
}

/** Encrypts and decrypts a stored response body (the secrets key: KMS in AWS, the local key file locally). */
export interface ResponseSealer {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

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
const callerOf = (event: APIGatewayProxyEvent, principal: Principal | undefined): string => {
  // A caller key by its id (a rotation keeps it), an operator by the identity four-eyes counts.
  if (principal?.kind === 'caller') return sha256Hex(`caller-key\n${principal.keyId}`);
  if (principal?.kind === 'operator') return sha256Hex(`operator\n${principal.identity}`);
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

/** The record's id (route, caller, key) and what a repeat must match (the body's bytes and path parameters). */
const scopeOf = (request: OperationRequest, key: string): RequestScope => {
  const { event, route } = request;
  const pathParameters = Object.entries(event.pathParameters ?? {})
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    recordId: `${KEY_PREFIX}#${sha256Hex(`${route.method} ${route.path}\n${callerOf(event, request.principal)}\n${key}`)}`,
    validation: sha256Hex(`${sha256Hex(bodyBytes(event))}\n${JSON.stringify(pathParameters)}`),
  };
};

const toStored = async (result: HttpResult, sealer?: ResponseSealer): Promise<StoredAnswer> => {
  const bodyJson = result.body === undefined ? null : JSON.stringify(result.body);
  const headers = { ...(result.headers ?? {}) };
  if (sealer && bodyJson !== null) {
    return {
      status_code: result.statusCode,
      headers,
      body_json: null,
      body_sealed: await sealer.seal(bodyJson),
    };
  }
  return { status_code: result.statusCode, headers, body_json: bodyJson };
};

/** A stored answer as a replay sends it: the same status, headers and body, and `Idempotent-Replayed: true`. */
const replayOf = async (stored: StoredAnswer, sealer?: ResponseSealer): Promise<HttpResult> => {
  let bodyJson = stored.body_json;
  if (stored.body_sealed !== undefined) {
    if (!sealer) throw new Error('the stored answer is sealed and this route has no sealer');
    bodyJson = await sealer.open(stored.body_sealed);
  }
  return {
    statusCode: stored.status_code,
    headers: { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
    ...(bodyJson === null ? {} : { body: JSON.parse(bodyJson) as unknown }),
  };
};

/** A record that is not this request's, as an answer: the stored one, or the C8 refusal. */
const answerOf = async (entry: LedgerEntry | undefined, sealer?: ResponseSealer): Promise<HttpResult> => {
  if (entry?.state === 'completed') return replayOf(entry.answer, sealer);
  if (entry?.state === 'mismatch') {
    throw new HttpError(
      'idempotency_key_reused',
      'this Idempotency-Key was already used with a different request (body or path)',
    );
  }
  throw new HttpError('request_in_progress', 'a request with this Idempotency-Key is still running', {
    retryAfterSeconds: entry?.state === 'in_progress' ? entry.retryAfterSeconds : 1,
  });
};

/** A failure of the idempotency table as an answer: 503 (a malformed record is a defect: thrown, so 500). */
const unavailable = (error: unknown) => {
  if (error instanceof MalformedLedgerRecordError || error instanceof HttpError) return error;
  return new HttpError('unavailable', 'the idempotency store is unavailable; retry later', {
    retryAfterSeconds: 1,
    cause: error,
  });
};

/**
 * Ids a request reserves: ULIDs whose time is when the request first began and whose random part is an HMAC of
 * its record's seed, so a retry that takes a crashed request's key over derives the same ones.
 */
const reservedIds =
  (seed: string, startedAt: Date) =>
  (prefix: ReservedIdPrefix, n = 0): string => {
    const mac = createHmac('sha256', Buffer.from(seed, 'hex')).update(`${prefix}#${n}`).digest();
    return `${prefix}_${ulidOf(startedAt.getTime(), BigInt(`0x${mac.subarray(0, 10).toString('hex')}`))}`;
  };

/** The handle of a request without an `Idempotency-Key`: its effects are written on their own. */
const WITHOUT_KEY: ExactlyOnce<unknown> = {
  completion: async () => undefined,
  reservedId: (prefix) => newId(prefix),
  checkpoint: () => undefined,
};

/** The exactly-once handle of an operation's request (a plain one when the request has no key). */
export const exactlyOnce = <R>(
  request: OperationRequest,
  answer: (result: R) => HttpResult,
): ExactlyOnce<R> => request.idempotency?.once(answer) ?? (WITHOUT_KEY as ExactlyOnce<R>);

/**
 * Money-moving and partner-callback POSTs (C8): the `Idempotency-Key` header is required (400 without it), so
 * that a client's retry can never record the outcome twice.
 */
export const requireIdempotencyKey =
  (operation: Operation): Operation =>
  async (request) => {
    if (headerValue(request.event, IDEMPOTENCY_KEY_HEADER) === undefined) {
      throw new HttpError('invalid_request', 'this operation requires an Idempotency-Key header (C8)');
    }
    return operation(request);
  };

/**
 * C8 and C25 for POST routes. With an `Idempotency-Key` header (1–255 printable ASCII, else 400
 * `invalid_request`), scoped by route (method + resource) and caller, the request takes the key in the ledger:
 * - the same key with the same body and path parameters after the first completed: the stored answer with
 *   `Idempotent-Replayed: true`, without running again; with another body or path: 422 `idempotency_key_reused`;
 * - while the first holds its lease: 409 `request_in_progress` with `Retry-After`; after a holder's lease ran
 *   out (it crashed before its effect): the retry takes the key over and runs.
 * An operation with an effect hands the store its completion (`exactlyOnce(request, answer)`), and the store
 * writes the effect and the completed record in one transaction: a crash leaves both or neither, and of two
 * holders only the one whose token is still on the record can commit. An operation that completes no record
 * itself (its repetition has no effect, or it is effect-free by construction) is completed after it returns.
 * A refusal or failure before any commit gives the key back, so it can be retried.
 * Without the header, or on other methods, the operation just runs.
 */
export const idempotent = (operation: Operation, options: IdempotencyOptions): Operation => {
  const { ledger, sealer } = options;
  return async (request) => {
    if (request.route.method !== 'POST') return operation(request);
    const key = headerValue(request.event, IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) return operation(request);
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new HttpError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    const checkpoint = (point: RequestCheckpoint) => options.onCheckpoint?.(request.route.operation, point);
    const scope = scopeOf(request, key);
    let entry: LedgerEntry;
    try {
      entry = await ledger.begin(scope);
    } catch (error) {
      throw unavailable(error);
    }
    if (entry.state !== 'started') return answerOf(entry, sealer);
    const { token } = entry;
    const settled = async (): Promise<HttpResult> => {
      try {
        return await answerOf(await ledger.read(scope), sealer);
      } catch (error) {
        throw unavailable(error);
      }
    };

    /** The answer stored with the effect, once the store's transaction committed. */
    let committed: HttpResult | undefined;
    /** Whether the operation reserved ids: a multi-step effect may have begun under them. */
    let reservedUsed = false;
    const derive = reservedIds(entry.seed, entry.startedAt);
    const reserved = (prefix: ReservedIdPrefix, n?: number): string => {
      reservedUsed = true;
      return derive(prefix, n);
    };
    const idempotency: RequestIdempotency = {
      once: <R>(answer: (result: R) => HttpResult): ExactlyOnce<R> => ({
        completion: async (result) => {
          const http = answer(result);
          return ledger.completion(scope, token, await toStored(http, sealer), () => {
            committed = http;
            checkpoint('after-effect');
          });
        },
        reservedId: reserved,
        checkpoint,
      }),
    };

    let result: HttpResult;
    try {
      result = await operation({ ...request, idempotency });
    } catch (error) {
      // The effect and its answer are stored: that answer stands, as it will for every retry.
      if (committed) return committed;
      // A retry took the key over (this request's lease ran out) and wrote first: its answer is the answer.
      if (error instanceof RequestSupersededError) return settled();
      await ledger.release(scope, token, reservedUsed).catch(() => undefined);
      throw error;
    }
    if (committed) {
      checkpoint('after-record');
      return committed;
    }
    checkpoint('after-effect');
    try {
      await ledger.complete(scope, token, await toStored(result, sealer));
    } catch (error) {
      if (error instanceof RequestSupersededError) return settled();
      throw unavailable(error);
    }
    checkpoint('after-record');
    return result;
  };
};
