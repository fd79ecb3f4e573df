/** Error codes of the C6 error shape, with their HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  quote_expired: 409,
  conflict: 409,
  request_in_progress: 409,
  payload_too_large: 413,
  request_header_fields_too_large: 431,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  currency_not_available: 422,
  price_not_available: 422,
  quantity_not_allowed: 422,
  invalid_signature: 422,
  invalid_state: 422,
  personal_data_not_allowed: 422,
  rate_limited: 429,
  internal_error: 500,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface HttpErrorOptions {
  readonly retryAfterSeconds?: number;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/** An error that maps to one C6 response: `{ error, error_description, trace_id }` plus optional details. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly retryAfterSeconds?: number;
  readonly details?: Readonly<Record<string, unknown>>;

  constructor(
    readonly code: ErrorCode,
    readonly description: string,
    options: HttpErrorOptions = {},
  ) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.statusCode = ERROR_STATUS[code];
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    if (options.details !== undefined) this.details = options.details;
  }
}

export interface ErrorBody {
  readonly error: ErrorCode;
  readonly error_description: string;
  readonly trace_id: string;
  readonly [detail: string]: unknown;
}

export const errorBody = (error: HttpError, traceId: string): ErrorBody => ({
  ...(error.details ?? {}),
  error: error.code,
  error_description: error.description,
  trace_id: traceId,
});
