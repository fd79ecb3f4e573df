/**
 * Exactly-once POSTs (C8, C25). A request with an `Idempotency-Key` holds a record in the idempotency table while
 * it runs; its effect and the completed record (the answer a retry gets) are written by the store in one
 * transaction, so a crash leaves either both or neither.
 */

/** An answer as the idempotency record keeps it: the body as JSON text (or sealed), so a replay is exact. */
export interface StoredAnswer {
  readonly status_code: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body_json: string | null;
  /** The body's JSON text encrypted with the data key (then `body_json` is null): answers carrying a secret. */
  readonly body_sealed?: string;
}

/**
 * The write that completes a request: an `Update` of its idempotency record for a DynamoDB `TransactWriteItems`
 * (the lib-dynamodb shape), conditional on the record still being this request's (in progress, its lease token).
 * A store that is given one writes it in the same transaction as its effect.
 */
export interface RequestCompletion {
  readonly update: {
    readonly TableName: string;
    readonly Key: Readonly<Record<string, string>>;
    readonly UpdateExpression: string;
    readonly ConditionExpression: string;
    readonly ExpressionAttributeNames: Readonly<Record<string, string>>;
    readonly ExpressionAttributeValues: Readonly<Record<string, unknown>>;
  };
  /** The store calls this once the transaction that carried the completion committed. */
  committed(): void;
}

/**
 * Thrown by a store when the transaction carrying a completion was refused because the record is no longer this
 * request's: its lease ran out and a retry took the key over. Nothing of this request was written.
 */
export class RequestSupersededError extends Error {
  constructor() {
    super('the idempotency record was taken over by a retry of this request');
    this.name = 'RequestSupersededError';
  }
}

/** A stored idempotency record that cannot be read back: a defect, answered 500, never half-replayed. */
export class MalformedLedgerRecordError extends Error {
  constructor() {
    super('the stored idempotent answer is malformed');
    this.name = 'MalformedLedgerRecordError';
  }
}

/** What a use case with an effect is given by the idempotency layer. */
export interface ExactlyOnce<R> {
  /**
   * The completion of this request with `result` as its answer, for the store to write with the effect; undefined
   * when the request carries no `Idempotency-Key`.
   */
  completion(result: R): Promise<RequestCompletion | undefined>;
  /**
   * An id reserved for this request (the `n`th of `prefix`): a retry that takes over a crashed request's key gets
   * the same ids, so a multi-step effect resumes instead of starting a second one. Without a key, a fresh id.
   */
  reservedId(prefix: ReservedIdPrefix, n?: number): string;
  /** A named point of the operation (the crash tests end the process at one). */
  checkpoint(point: string): void;
}

export type ReservedIdPrefix = 'rpl' | 'evt' | 'ep' | 'cr' | 'rfd';

/** The idempotency record of one request: where it stands. */
export type LedgerEntry =
  | { readonly state: 'started'; readonly token: string; readonly startedAt: Date; readonly seed: string }
  | { readonly state: 'completed'; readonly answer: StoredAnswer }
  | { readonly state: 'in_progress'; readonly retryAfterSeconds: number }
  | { readonly state: 'mismatch' };

export interface RequestScope {
  /** The record's id: a digest of the route, the caller and the key. */
  readonly recordId: string;
  /** A digest of the body and path parameters: the same key with another request is refused. */
  readonly validation: string;
}

/** The idempotency table. */
export interface IdempotencyLedger {
  /**
   * Takes the key for this request: `started` (a new record, or one whose holder's lease ran out: its reserved ids
   * are kept), `completed` (the stored answer), `in_progress` (another holder's lease is live) or `mismatch` (the
   * key was used with another request).
   */
  begin(scope: RequestScope): Promise<LedgerEntry>;
  /** The completion of a started request with its answer, for a store's transaction. */
  completion(
    scope: RequestScope,
    token: string,
    answer: StoredAnswer,
    onCommitted: () => void,
  ): RequestCompletion;
  /** Completes a started request on its own (routes whose effect needs no atomic record). */
  complete(scope: RequestScope, token: string, answer: StoredAnswer): Promise<void>;
  /**
   * Gives the key back after a refusal or a failure (only while it is still this request's). With
   * `keepReservation` (the request reserved ids and may have begun a multi-step effect under them) the record
   * stays with its seed and only its lease ends, so a retry takes it over at once and resumes under the same ids.
   */
  release(scope: RequestScope, token: string, keepReservation?: boolean): Promise<void>;
  /** The record as it stands (after a takeover). */
  read(scope: RequestScope): Promise<LedgerEntry | undefined>;
}
