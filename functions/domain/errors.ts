/**
 * The one base of the coded errors of the domain and the use cases: what a caller caused or can act on. Its
 * `code` is a C6 error code from a closed union; the HTTP layer maps it to a status with one table
 * (`ERROR_STATUS`) and answers `{ ...details, error: code, error_description: description, trace_id }`. Any other
 * error stays a 500.
 */

/** The C6 codes a service error may carry. */
export type ServiceErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'request_in_progress'
  | 'quote_expired'
  | 'invalid_signature'
  | 'invalid_state'
  | 'personal_data_not_allowed'
  | 'currency_not_available'
  | 'price_not_available'
  | 'quantity_not_allowed';

export interface ServiceErrorOptions extends ErrorOptions {
  /** Members added to the error body. */
  readonly details?: Readonly<Record<string, unknown>> | undefined;
  /** The caller-facing text when it differs from the message. */
  readonly description?: string;
  /** `Retry-After` of the answer, when a retry makes sense. */
  readonly retryAfterSeconds?: number;
}

export class ServiceError extends Error {
  readonly description: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    options: ServiceErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.description = options.description ?? message;
    if (options.details !== undefined) this.details = options.details;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
