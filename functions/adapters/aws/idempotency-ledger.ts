import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  type IdempotencyLedger,
  type LedgerEntry,
  MalformedLedgerRecordError,
  type RequestCompletion,
  type RequestScope,
  RequestSupersededError,
  type StoredAnswer,
} from '../../ports/idempotency';
import { CONFLICT, type RetryPolicy, retryOnConflict } from '../../shared/retry';
import { conditionalFailure } from './dynamo-errors';

/** How long a completed request's answer is kept (C8: at least 24 h). */
export const IDEMPOTENCY_EXPIRES_AFTER_SECONDS = 24 * 60 * 60;

/**
 * How long a request holds its key while it runs (`IDEMPOTENCY_LEASE_SECONDS`): a retry inside the lease is
 * answered 409, after it the retry takes the key over. Correctness does not depend on it (a request whose lease
 * ran out can no longer complete: its transaction is conditional on the lease token), only how long a retry waits
 * after a crash that left no effect.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 10;

const IN_PROGRESS = 'in_progress';
const COMPLETED = 'completed';

interface LedgerItem {
  readonly id: string;
  readonly status: typeof IN_PROGRESS | typeof COMPLETED;
  readonly token: string;
  readonly lease_until: number;
  readonly validation: string;
  readonly started_at: string;
  readonly seed: string;
  readonly answer_json?: string | null;
  readonly answer_gzip?: Uint8Array | null;
  readonly expiration: number;
}

export interface DynamoIdempotencyLedgerOptions {
  readonly documents: DynamoDBDocumentClient;
  /** Physical name of `TABLES.idempotency` (partition key `id`, TTL attribute `expiration`). */
  readonly tableName: string;
  /** @default IDEMPOTENCY_EXPIRES_AFTER_SECONDS */
  readonly expiresAfterSeconds?: number;
  /** @default IDEMPOTENCY_LEASE_SECONDS */
  readonly leaseSeconds?: number;
  /** Milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
}

/**
 * Answers above this size are stored gzip'd (`answer_gzip`): a change request's answer carries its diff, which
 * for a large import would not fit in a DynamoDB item (400 KB) as text, and compresses tenfold.
 */
const COMPRESS_ABOVE_BYTES = 32 * 1024;

/** The record's answer attributes: the JSON text, or its gzip when large. */
const answerAttributes = (
  answer: StoredAnswer,
): { answer_json: string | null; answer_gzip: Uint8Array | null } => {
  const json = JSON.stringify(answer);
  return Buffer.byteLength(json, 'utf8') > COMPRESS_ABOVE_BYTES
    ? { answer_json: null, answer_gzip: gzipSync(json) }
    : { answer_json: json, answer_gzip: null };
};

const answerOf = (item: LedgerItem): StoredAnswer => {
  if (item.answer_gzip) return parseAnswer(gunzipSync(item.answer_gzip).toString('utf8'));
  return parseAnswer(item.answer_json ?? undefined);
};

const parseAnswer = (json: string | undefined): StoredAnswer => {
  let value: unknown;
  try {
    value = json === undefined ? undefined : JSON.parse(json);
  } catch {
    throw new MalformedLedgerRecordError();
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as StoredAnswer).status_code !== 'number' ||
    typeof (value as StoredAnswer).headers !== 'object'
  ) {
    throw new MalformedLedgerRecordError();
  }
  return value as StoredAnswer;
};

/**
 * The idempotency ledger on DynamoDB. One item per (route, caller, key): taken with a conditional write, completed
 * either inside the store's own transaction (`completion`) or on its own (`complete`), released on failure. Every
 * write after the first is conditional on the holder's random `token`, so of two holders (a crashed one whose
 * lease ran out and its retry) only one can ever complete.
 */
export class DynamoIdempotencyLedger implements IdempotencyLedger {
  private readonly expiresAfterSeconds: number;
  private readonly leaseMs: number;
  private readonly now: () => number;

  constructor(private readonly options: DynamoIdempotencyLedgerOptions) {
    this.expiresAfterSeconds = options.expiresAfterSeconds ?? IDEMPOTENCY_EXPIRES_AFTER_SECONDS;
    this.leaseMs = (options.leaseSeconds ?? IDEMPOTENCY_LEASE_SECONDS) * 1000;
    this.now = options.now ?? Date.now;
  }

  private get table(): string {
    return this.options.tableName;
  }

  private expiration(nowMs: number): number {
    return Math.floor(nowMs / 1000) + this.expiresAfterSeconds;
  }

  /** What a record that is not (or no longer) ours says to a request with `scope`. */
  private entryOf(item: LedgerItem, scope: RequestScope): LedgerEntry {
    if (item.validation !== scope.validation) return { state: 'mismatch' };
    if (item.status === COMPLETED) return { state: 'completed', answer: answerOf(item) };
    // The holder usually finishes within a second; a crashed one's lease ends within `leaseSeconds`.
    return { state: 'in_progress', retryAfterSeconds: 1 };
  }

  async begin(scope: RequestScope): Promise<LedgerEntry> {
    const nowMs = this.now();
    const token = randomBytes(16).toString('hex');
    const fresh: LedgerItem = {
      id: scope.recordId,
      status: IN_PROGRESS,
      token,
      lease_until: nowMs + this.leaseMs,
      validation: scope.validation,
      started_at: new Date(nowMs).toISOString(),
      seed: randomBytes(16).toString('hex'),
      expiration: this.expiration(nowMs),
    };
    try {
      await this.options.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: fresh,
          // Absent, or past its lifetime but not yet removed by TTL: a new request.
          ConditionExpression: 'attribute_not_exists(id) OR expiration < :now_seconds',
          ExpressionAttributeValues: { ':now_seconds': Math.floor(nowMs / 1000) },
        }),
      );
      return { state: 'started', token, startedAt: new Date(nowMs), seed: fresh.seed };
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
    const existing = await this.item(scope.recordId);
    // Removed between the two calls (its lifetime ended): start again.
    if (!existing) return this.begin(scope);
    if (
      existing.validation !== scope.validation ||
      existing.status === COMPLETED ||
      existing.lease_until > nowMs
    ) {
      return this.entryOf(existing, scope);
    }
    // The holder's lease ran out (it crashed, or is too slow to still count): take the key over, keeping the ids
    // it reserved, so a multi-step effect it began is resumed rather than started again.
    try {
      await this.options.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id: scope.recordId },
          UpdateExpression: 'SET #token = :token, lease_until = :lease',
          ConditionExpression: '#status = :in_progress AND #token = :previous',
          ExpressionAttributeNames: { '#token': 'token', '#status': 'status' },
          ExpressionAttributeValues: {
            ':token': token,
            ':lease': nowMs + this.leaseMs,
            ':in_progress': IN_PROGRESS,
            ':previous': existing.token,
          },
        }),
      );
      return { state: 'started', token, startedAt: new Date(existing.started_at), seed: existing.seed };
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
      // Another retry took it over (or the holder completed) first: say what stands now.
      const now = await this.read(scope);
      return now ?? this.begin(scope);
    }
  }

  completion(
    scope: RequestScope,
    token: string,
    answer: StoredAnswer,
    onCommitted: () => void,
  ): RequestCompletion {
    const stored = answerAttributes(answer);
    return {
      update: {
        TableName: this.table,
        Key: { id: scope.recordId },
        UpdateExpression:
          'SET #status = :completed, answer_json = :answer_json, answer_gzip = :answer_gzip, expiration = :expiration',
        ConditionExpression: '#status = :in_progress AND #token = :token',
        ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
        ExpressionAttributeValues: {
          ':completed': COMPLETED,
          ':in_progress': IN_PROGRESS,
          ':token': token,
          ':answer_json': stored.answer_json,
          ':answer_gzip': stored.answer_gzip,
          ':expiration': this.expiration(this.now()),
        },
      },
      committed: onCommitted,
    };
  }

  async complete(scope: RequestScope, token: string, answer: StoredAnswer): Promise<void> {
    const { update } = this.completion(scope, token, answer, () => undefined);
    try {
      await this.options.documents.send(new UpdateCommand({ ...update }));
    } catch (error) {
      if (conditionalFailure(error) === 'condition') throw new RequestSupersededError();
      throw error;
    }
  }

  async release(scope: RequestScope, token: string, keepReservation = false): Promise<void> {
    const key = {
      TableName: this.table,
      Key: { id: scope.recordId },
      ConditionExpression: '#status = :in_progress AND #token = :token',
      ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
    };
    try {
      await this.options.documents.send(
        keepReservation
          ? new UpdateCommand({
              ...key,
              UpdateExpression: 'SET lease_until = :ended',
              ExpressionAttributeValues: { ':in_progress': IN_PROGRESS, ':token': token, ':ended': 0 },
            })
          : new DeleteCommand({
              ...key,
              ExpressionAttributeValues: { ':in_progress': IN_PROGRESS, ':token': token },
            }),
      );
    } catch (error) {
      // Completed, or taken over by a retry: it is not ours to give back.
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }

  async read(scope: RequestScope): Promise<LedgerEntry | undefined> {
    const item = await this.item(scope.recordId);
    const nowMs = this.now();
    if (!item || item.expiration < Math.floor(nowMs / 1000)) return undefined;
    return this.entryOf(item, scope);
  }

  private async item(recordId: string): Promise<LedgerItem | undefined> {
    const result = await this.options.documents.send(
      new GetCommand({ TableName: this.table, Key: { id: recordId }, ConsistentRead: true }),
    );
    return result.Item as LedgerItem | undefined;
  }
}

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Writes a store's effect — one transaction item, or several that must commit together — with the request's
 * completion when there is one: all in one `TransactWriteItems`, so the effect and the answer a retry gets are
 * one write. Without a completion a single item goes out as its own command (no transaction's double cost). A
 * transaction cancelled only by a concurrent one is retried here, for every store.
 * A refusal of the completion's condition (the key was taken over) is `RequestSupersededError`; any other
 * failure is thrown as the store would see it without a completion.
 */
export const writeWithCompletion = async (
  documents: DynamoDBDocumentClient,
  effect: TransactItem | readonly TransactItem[],
  completion: RequestCompletion | undefined,
): Promise<void> => {
  const items = Array.isArray(effect) ? [...effect] : [effect as TransactItem];
  const [only] = items;
  if (!completion && items.length === 1 && only) {
    await sendSingle(documents, only);
    return;
  }
  const transaction = completion ? [...items, { Update: { ...completion.update } }] : items;
  let lost: unknown;
  await retryOnConflict(
    TRANSACTION_RETRY,
    async () => {
      try {
        await documents.send(new TransactWriteCommand({ TransactItems: transaction }));
        return undefined;
      } catch (error) {
        const reasons = (error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons;
        if (
          completion &&
          (error as Error).name === 'TransactionCanceledException' &&
          reasons?.[items.length]?.Code === 'ConditionalCheckFailed'
        ) {
          throw new RequestSupersededError();
        }
        // Cancelled only because another transaction held an item: nothing was decided, so try again shortly
        // (a single write would have waited its turn instead).
        if (conditionalFailure(error) !== 'conflict') throw error;
        lost = error;
        return CONFLICT;
      }
    },
    () => lost as Error,
  );
  completion?.committed();
};

/** A transaction cancelled by a concurrent one (not by its conditions): 6 attempts, 10 ms doubling to 80 ms. */
const TRANSACTION_RETRY: RetryPolicy = { attempts: 6, baseMs: 10, capMs: 80 };

const sendSingle = async (documents: DynamoDBDocumentClient, item: TransactItem): Promise<void> => {
  if (item.Put) await documents.send(new PutCommand(item.Put));
  else if (item.Update) await documents.send(new UpdateCommand(item.Update));
  else if (item.Delete) await documents.send(new DeleteCommand(item.Delete));
  else await documents.send(new TransactWriteCommand({ TransactItems: [item] }));
};
