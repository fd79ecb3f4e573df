/**
 * Applying each event's effect once (spec "Receiver processing order" steps 2–4, "Delivery guarantees" 1 and 3,
 * C15), with a DynamoDB table of seen marks (table.ts gives its shape).
 *
 * Delivery is at-least-once: the same event can arrive again (a lost 200, a retry racing a slow answer, a
 * replay). The store remembers every processed `event_id` for `dedupSeconds` (7 days by default, longer than
 * the sender's whole retry horizon, C14) and answers a repeat with `duplicate`, so the HTTP layer answers 200
 * without running the effect again.
 *
 * Two modes:
 * - {@link IdempotencyStore.processTransactional} — the effect is DynamoDB writes. The seen mark is written in
 *   the same transaction as the effect: both commit or neither does. **Exactly once**, also across crashes.
 * - {@link IdempotencyStore.processWithLock} — the effect is anything else (a call to another API, a message).
 *   A lock keeps concurrent deliveries apart; the mark is written after the effect. Exactly once unless the
 *   process dies between the effect and the mark: see that method for the precise guarantee.
 *
 * Typical HTTP mapping (C6): `processed` or `duplicate` → 200; {@link EventTooOldError} → 422 `event_too_old`;
 * {@link EventInProgressError} → 409 `request_in_progress` (or 503) with `Retry-After: retryAfterSeconds`;
 * anything else → 500 (the sender retries). Never answer 200 before the method has returned.
 *
 * Records (one item per event, key `event_id`): `status` (`processed`, `acknowledged`, `in_progress`),
 * `processed_at`, `handler_version`, `expires_at` (epoch seconds; DynamoDB's TTL attribute), and for a mode-2
 * lock `lock_token` and `locked_at`; `acknowledged_by` and `note` for a manual acknowledgement. A record whose
 * `expires_at` has passed counts as absent, even before DynamoDB's TTL deletes it (TTL deletion is lazy).
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { RECEIVER_TABLE } from './table';
import {
  MAX_EVENT_ID_LENGTH,
  parseTimestamp,
  type ReceivedEnvelope,
  TIMESTAMP_TOLERANCE_SECONDS,
} from './verify';

/** Default dedup memory, in seconds: 7 days, longer than the sender's retry horizon (≈ 5.9 days, C14). */
export const DEFAULT_DEDUP_SECONDS = 7 * 86_400;

/** Shortest dedup memory accepted, in seconds: 24 hours (spec "Limits": at least 24 to 72 hours). */
export const MIN_DEDUP_SECONDS = 86_400;

/** Default lifetime of a mode-2 lock, in seconds: how long a crashed delivery blocks the next one. */
export const DEFAULT_LOCK_SECONDS = 60;

/**
 * Extra seconds a seen mark is kept beyond the dedup memory. The sender's clock may run ahead of ours by up to
 * the signature window, so an event's `ts` can be up to that much later than our processing time; keeping the
 * mark this much longer means an event that passes the too-old check always finds its mark.
 */
export const CLOCK_SKEW_ALLOWANCE_SECONDS = TIMESTAMP_TOLERANCE_SECONDS;

/** TransactWriteItems takes at most 100 operations; one is the seen mark. */
export const MAX_HANDLER_ITEMS = 99;

/** Attempts of one call when transactions keep being cancelled by concurrent ones (`TransactionConflict`). */
const MAX_ATTEMPTS = 8;
const BACKOFF_BASE_MS = 20;
const BACKOFF_CAP_MS = 500;

/**
 * What the receiver knows about one event (spec "Receiver status record"; `GET /webhooks/status/<event_id>`).
 * `seen` is true once the event was processed or acknowledged and its memory has not expired. A delivery in
 * progress (mode 2) shows `seen: false` with `status: 'in_progress'`.
 */
export interface ReceiverStatus {
  readonly seen: boolean;
  /** When the effect committed (or the acknowledgement was recorded): ISO 8601 UTC with ms. */
  readonly processed_at?: string;
  /** The `handlerVersion` of the store that processed it. */
  readonly handler_version?: string;
  readonly status?: 'processed' | 'acknowledged' | 'in_progress';
  /** Who acknowledged it by hand (only for `acknowledged`). */
  readonly acknowledged_by?: string;
  readonly note?: string;
}

/**
 * The event's `ts` is older than the dedup memory (C15): its mark, if it ever had one, may be gone, so applying
 * it could apply it twice. Nothing was applied. Answer 422 `event_too_old` (the sender stops retrying); such an
 * event can only be handled by hand, then recorded with {@link IdempotencyStore.acknowledge}.
 */
export class EventTooOldError extends Error {
  constructor(
    readonly eventId: string,
    /** The event's `ts`. */
    readonly eventTs: string,
    /** The oldest `ts` the store accepts now. */
    readonly oldestAcceptedTs: string,
    options?: ErrorOptions,
  ) {
    super(`event ${eventId} is older than the dedup memory (ts ${eventTs} < ${oldestAcceptedTs})`, options);
    this.name = 'EventTooOldError';
  }
}

/**
 * Another delivery of the same event holds the mode-2 lock, or concurrent transactions kept cancelling this
 * one. Nothing was applied by this call. Answer 409 `request_in_progress` (or 503 `unavailable`) with
 * `Retry-After: retryAfterSeconds`; the sender retries later and then gets `duplicate` or runs it.
 */
export class EventInProgressError extends Error {
  constructor(
    readonly eventId: string,
    /** Seconds after which a retry can succeed (≥ 1): the rest of the lock's life, or 1 after conflicts. */
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(`event ${eventId} is being processed by another delivery`, options);
    this.name = 'EventInProgressError';
  }
}

/** The table, the client that reaches it, and how long the store remembers. */
export interface IdempotencyStoreOptions {
  /** A document client (`DynamoDBDocumentClient.from(new DynamoDBClient({...}))`), e.g. pointed at DynamoDB Local. */
  readonly documents: DynamoDBDocumentClient;
  /** The table, created with the shape of {@link RECEIVER_TABLE}. */
  readonly tableName: string;
  /** Your handler's version (a release tag, a commit): recorded with every mark and shown by the status route. */
  readonly handlerVersion: string;
  /** How long a processed event is remembered, in whole seconds, ≥ {@link MIN_DEDUP_SECONDS}. @default 7 days */
  readonly dedupSeconds?: number;
  /** The current time. @default () => new Date() */
  readonly clock?: () => Date;
}

/** The result of one delivery: `processed` (the effect ran in this call) or `duplicate` (it had run before). */
export type ProcessOutcome = { readonly kind: 'processed' | 'duplicate'; readonly status: ReceiverStatus };

/** One operation of a DynamoDB transaction, in document-client shape (an item of `TransactWriteCommand`). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

type RecordStatus = NonNullable<ReceiverStatus['status']>;

/** The stored item. */
interface ReceiverRecord {
  readonly event_id: string;
  readonly status: RecordStatus;
  readonly handler_version: string;
  /** Epoch seconds; the record counts while `expires_at ≥ now` (in whole seconds). */
  readonly expires_at: number;
  readonly processed_at?: string;
  readonly acknowledged_by?: string;
  readonly note?: string;
  readonly lock_token?: string;
  readonly locked_at?: string;
}

type Classified =
  | { readonly state: 'absent' }
  | { readonly state: 'seen'; readonly record: ReceiverRecord }
  | { readonly state: 'locked'; readonly record: ReceiverRecord };

/** The write succeeds only where nothing live is stored. `status` is a DynamoDB reserved word. */
const ABSENT_OR_EXPIRED = `attribute_not_exists(${RECEIVER_TABLE.partitionKey}) OR ${RECEIVER_TABLE.timeToLiveAttribute} < :now`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const backoffMs = (attempt: number) =>
  Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 10));

const errorName = (error: unknown): string | undefined =>
  error instanceof Error ? error.name : (error as { name?: string } | undefined)?.name;

const cancellationCodes = (error: unknown): readonly (string | undefined)[] | undefined => {
  if (errorName(error) !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons;
  return (reasons ?? []).map((reason) => reason.Code);
};

const checkEventId = (eventId: string): void => {
  if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_EVENT_ID_LENGTH) {
    throw new RangeError(`event_id must be 1..${MAX_EVENT_ID_LENGTH} characters`);
  }
};

/**
 * The seen marks of one receiver, in one DynamoDB table. Safe to share between concurrent requests and between
 * instances: every decision is a conditional write, never a read followed by an unconditional write.
 *
 * ```ts
 * const store = new IdempotencyStore({ documents, tableName: 'receiver-events', handlerVersion: '2026.11.3' });
 * const envelope = verifyWebhook({ ... });
 * const outcome = await store.processTransactional(envelope, async (event) => [
 *   { Update: { TableName: 'payouts', Key: { payout_id: event.data?.payout_id },
 *               UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'status' },
 *               ExpressionAttributeValues: { ':s': event.data?.status } } },
 * ]);
 * // outcome.kind is 'processed' or 'duplicate': answer 200 either way
 * ```
 */
export class IdempotencyStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #handlerVersion: string;
  readonly #dedupSeconds: number;
  readonly #clock: () => Date;

  /** Throws RangeError for a `dedupSeconds` below {@link MIN_DEDUP_SECONDS} or not an integer, or empty names. */
  constructor(options: IdempotencyStoreOptions) {
    const dedupSeconds = options.dedupSeconds ?? DEFAULT_DEDUP_SECONDS;
    if (!Number.isSafeInteger(dedupSeconds) || dedupSeconds < MIN_DEDUP_SECONDS) {
      throw new RangeError(`dedupSeconds must be an integer ≥ ${MIN_DEDUP_SECONDS}`);
    }
    if (options.tableName.length === 0) throw new RangeError('tableName must not be empty');
    if (options.handlerVersion.length === 0) throw new RangeError('handlerVersion must not be empty');
    this.#documents = options.documents;
    this.#tableName = options.tableName;
    this.#handlerVersion = options.handlerVersion;
    this.#dedupSeconds = dedupSeconds;
    this.#clock = options.clock ?? (() => new Date());
  }

  /**
   * Mode 1 — the effect is DynamoDB writes (spec step 3: re-check, run the handler, mark, commit in one
   * transaction).
   *
   * 1. An envelope whose `ts` is older than the dedup memory → {@link EventTooOldError}; nothing runs.
   * 2. The mark is read (strongly consistent). Seen → `duplicate`; the handler is not called.
   * 3. `handler(envelope)` returns the effect as TransactWriteItems operations (document-client shape, at most
   *    {@link MAX_HANDLER_ITEMS}, on any tables except this event's own mark). It must not perform side effects
   *    itself: it may be called more than once for one event (after a conflict), and only one call's items
   *    ever commit.
   * 4. Those items and the seen-mark Put (condition: no live mark) commit in one TransactWriteItems: effect and
   *    mark together or not at all. Cancelled because the mark exists (a concurrent delivery won) →
   *    `duplicate`. Cancelled by a concurrent transaction (`TransactionConflict`) → retried from step 2 with
   *    backoff, then {@link EventInProgressError}. Cancelled by one of the handler's own conditions → that
   *    `TransactionCanceledException` is thrown unchanged (nothing was applied; its `CancellationReasons`
   *    are indexed like the handler's items).
   *
   * A crash or a lost answer after the commit is safe: the next delivery finds the mark and is a duplicate.
   */
  async processTransactional(
    envelope: ReceivedEnvelope,
    handler: (envelope: ReceivedEnvelope) => Promise<readonly TransactItem[]>,
  ): Promise<ProcessOutcome> {
    this.#refuseTooOld(envelope);
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const existing = await this.#classify(envelope.event_id);
      if (existing.state === 'seen') return { kind: 'duplicate', status: statusOf(existing.record) };
      if (existing.state === 'locked') throw this.#inProgress(existing.record);

      const items = await handler(envelope);
      if (items.length > MAX_HANDLER_ITEMS) {
        throw new RangeError(`a handler may return at most ${MAX_HANDLER_ITEMS} transaction items`);
      }
      const now = this.#clock();
      const record = this.#seenRecord(envelope.event_id, 'processed', now);
      try {
        await this.#documents.send(
          new TransactWriteCommand({
            TransactItems: [
              ...items,
              {
                Put: {
                  TableName: this.#tableName,
                  Item: { ...record },
                  ConditionExpression: ABSENT_OR_EXPIRED,
                  ExpressionAttributeValues: { ':now': epochSeconds(now) },
                },
              },
            ],
          }),
        );
        return { kind: 'processed', status: statusOf(record) };
      } catch (error) {
        const codes = cancellationCodes(error);
        if (codes === undefined) throw error;
        lastError = error;
        const markCode = codes[items.length];
        // The mark exists (someone else processed it, or holds a lock): the re-read decides which.
        if (markCode === 'ConditionalCheckFailed') continue;
        // Cancelled only because other transactions touched the same items: nothing decided, try again.
        if (codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed')) {
          await sleep(backoffMs(attempt));
          continue;
        }
        // An emulator that names no reasons: re-read; a live mark makes it a duplicate, else try again.
        if (codes.length === 0) continue;
        throw error; // the handler's own condition failed (or another reason): nothing was applied
      }
    }
    throw new EventInProgressError(envelope.event_id, 1, { cause: lastError });
  }

  /**
   * Mode 2 — the effect is outside DynamoDB (an HTTP call, a message, a file).
   *
   * 1. An envelope whose `ts` is older than the dedup memory → {@link EventTooOldError}; nothing runs.
   * 2. A lock is taken with a conditional Put (`status: in_progress`, expiring after `lockSeconds`). Already
   *    seen → `duplicate`, the effect does not run. Locked by a live lock → {@link EventInProgressError} with
   *    the lock's remaining seconds as `retryAfterSeconds`.
   * 3. `effect(envelope)` runs. If it throws, the lock is released (not marked seen) and the error is rethrown:
   *    the next delivery runs the effect again.
   * 4. The seen mark replaces the lock; `processed` is returned only after it is written.
   *
   * Guarantees, precisely: at most one delivery runs the effect at a time while its lock lives. The effect
   * runs exactly once if either the effect is itself idempotent (e.g. a call carrying an `Idempotency-Key`
   * derived from `event_id`, which the service's own API honours) or the process does not die (and the mark
   * write does not fail) between the end of the effect and the mark. If it does die there, the lock stays
   * until it expires after `lockSeconds`; the next delivery after that runs the effect again: an
   * **at-least-once** effect. An effect that outlives `lockSeconds` can overlap a second run, so choose
   * `lockSeconds` longer than the effect's timeout. Prefer {@link processTransactional} when the effect can be
   * expressed as DynamoDB writes.
   *
   * `lockSeconds`: whole seconds, 1 to the dedup memory. @default {@link DEFAULT_LOCK_SECONDS}
   */
  async processWithLock(
    envelope: ReceivedEnvelope,
    effect: (envelope: ReceivedEnvelope) => Promise<void>,
    options?: { lockSeconds?: number },
  ): Promise<ProcessOutcome> {
    const lockSeconds = options?.lockSeconds ?? DEFAULT_LOCK_SECONDS;
    if (!Number.isSafeInteger(lockSeconds) || lockSeconds < 1 || lockSeconds > this.#dedupSeconds) {
      throw new RangeError(`lockSeconds must be an integer within 1..${this.#dedupSeconds}`);
    }
    this.#refuseTooOld(envelope);
    const eventId = envelope.event_id;
    const token = randomUUID();

    const taken = await this.#putUnlessLive(eventId, (now) => ({
      event_id: eventId,
      status: 'in_progress',
      handler_version: this.#handlerVersion,
      expires_at: Math.ceil(now.getTime() / 1000) + lockSeconds,
      lock_token: token,
      locked_at: now.toISOString(),
    }));
    if (taken.state === 'seen') return { kind: 'duplicate', status: statusOf(taken.record) };
    if (taken.state === 'locked') throw this.#inProgress(taken.record);

    try {
      await effect(envelope);
    } catch (error) {
      await this.#release(eventId, token);
      throw error;
    }

    const now = this.#clock();
    const record = this.#seenRecord(eventId, 'processed', now);
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: { ...record },
          // Replaces our lock, or a lock that outlived us (its holder's mark then finds ours): never a live mark.
          ConditionExpression: `${ABSENT_OR_EXPIRED} OR #status = :in_progress`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':now': epochSeconds(now), ':in_progress': 'in_progress' },
        }),
      );
    } catch (error) {
      if (errorName(error) !== 'ConditionalCheckFailedException') throw error;
      // Another delivery marked it while our lock had expired: the effect ran here too; keep their mark.
      const current = await this.#classify(eventId);
      return {
        kind: 'processed',
        status: current.state === 'absent' ? { seen: false } : statusOf(current.record),
      };
    }
    return { kind: 'processed', status: statusOf(record) };
  }

  /**
   * The processing status of an event (`GET /webhooks/status/<event_id>`): `{ seen: false }` when unknown or
   * expired, `{ seen: false, status: 'in_progress', … }` while a mode-2 delivery holds its lock, else the mark.
   */
  async status(eventId: string): Promise<ReceiverStatus> {
    checkEventId(eventId);
    const current = await this.#classify(eventId);
    return current.state === 'absent' ? { seen: false } : statusOf(current.record);
  }

  /**
   * Records that an event was handled by hand (`POST /webhooks/ack`, e.g. for a dead-lettered event) without
   * running any handler: it becomes seen with `status: 'acknowledged'`, so a later delivery or replay of it is a
   * `duplicate`. Idempotent: when the event is already seen (processed or acknowledged), nothing is written and
   * the existing status is returned. While a mode-2 delivery holds its lock → {@link EventInProgressError}.
   * `acknowledged_by` (1–256 characters) names the person or system; `note` (≤ 2000 characters) is optional.
   */
  async acknowledge(
    eventId: string,
    input: { note?: string; acknowledged_by: string },
  ): Promise<ReceiverStatus> {
    checkEventId(eventId);
    if (input.acknowledged_by.length === 0 || input.acknowledged_by.length > 256) {
      throw new RangeError('acknowledged_by must be 1..256 characters');
    }
    if (input.note !== undefined && input.note.length > 2000)
      throw new RangeError('note must be ≤ 2000 characters');
    let written: ReceiverRecord | undefined;
    const result = await this.#putUnlessLive(eventId, (now) => {
      written = {
        ...this.#seenRecord(eventId, 'acknowledged', now),
        acknowledged_by: input.acknowledged_by,
        ...(input.note !== undefined ? { note: input.note } : {}),
      };
      return written;
    });
    if (result.state === 'locked') throw this.#inProgress(result.record);
    if (result.state === 'seen') return statusOf(result.record);
    return statusOf(written as ReceiverRecord);
  }

  /** C15: refuse an event older than the memory, before anything else. */
  #refuseTooOld(envelope: ReceivedEnvelope): void {
    checkEventId(envelope.event_id);
    const ts = parseTimestamp(envelope.ts);
    if (ts === undefined) throw new RangeError('envelope ts must be ISO 8601 UTC with milliseconds');
    const oldest = this.#clock().getTime() - this.#dedupSeconds * 1000;
    if (ts < oldest) {
      throw new EventTooOldError(envelope.event_id, envelope.ts, new Date(oldest).toISOString());
    }
  }

  #seenRecord(eventId: string, status: 'processed' | 'acknowledged', now: Date): ReceiverRecord {
    return {
      event_id: eventId,
      status,
      processed_at: now.toISOString(),
      handler_version: this.#handlerVersion,
      expires_at: Math.ceil(now.getTime() / 1000) + this.#dedupSeconds + CLOCK_SKEW_ALLOWANCE_SECONDS,
    };
  }

  async #classify(eventId: string): Promise<Classified> {
    const { Item } = await this.#documents.send(
      new GetCommand({ TableName: this.#tableName, Key: { event_id: eventId }, ConsistentRead: true }),
    );
    const record = Item as ReceiverRecord | undefined;
    if (record === undefined || record.expires_at < epochSeconds(this.#clock())) return { state: 'absent' };
    return record.status === 'in_progress' ? { state: 'locked', record } : { state: 'seen', record };
  }

  /**
   * Writes `make(now)` unless a live record exists; returns `absent` when written, else what is there. A record
   * that expires between the failed write and the read is retried.
   */
  async #putUnlessLive(eventId: string, make: (now: Date) => ReceiverRecord): Promise<Classified> {
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const now = this.#clock();
      try {
        await this.#documents.send(
          new PutCommand({
            TableName: this.#tableName,
            Item: { ...make(now) },
            ConditionExpression: ABSENT_OR_EXPIRED,
            ExpressionAttributeValues: { ':now': epochSeconds(now) },
          }),
        );
        return { state: 'absent' };
      } catch (error) {
        if (errorName(error) !== 'ConditionalCheckFailedException') throw error;
        lastError = error;
      }
      const current = await this.#classify(eventId);
      if (current.state !== 'absent') return current;
    }
    throw new EventInProgressError(eventId, 1, { cause: lastError });
  }

  /** Deletes our lock (only ours). A failure is not reported: the lock then expires on its own. */
  async #release(eventId: string, token: string): Promise<void> {
    try {
      await this.#documents.send(
        new DeleteCommand({
          TableName: this.#tableName,
          Key: { event_id: eventId },
          ConditionExpression: 'lock_token = :token',
          ExpressionAttributeValues: { ':token': token },
        }),
      );
    } catch {
      // Not ours any more, or DynamoDB unreachable: the effect's own error is the one to report.
    }
  }

  #inProgress(record: ReceiverRecord): EventInProgressError {
    const remaining = record.expires_at - epochSeconds(this.#clock()) + 1;
    return new EventInProgressError(record.event_id, Math.max(1, remaining));
  }
}

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

const statusOf = (record: ReceiverRecord): ReceiverStatus => ({
  seen: record.status !== 'in_progress',
  status: record.status,
  handler_version: record.handler_version,
  ...(record.processed_at !== undefined ? { processed_at: record.processed_at } : {}),
  ...(record.acknowledged_by !== undefined ? { acknowledged_by: record.acknowledged_by } : {}),
  ...(record.note !== undefined ? { note: record.note } : {}),
});
