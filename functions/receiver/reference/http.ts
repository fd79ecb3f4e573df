/**
 * The receiver's HTTP plumbing: C6 error answers, trace ids, headers and raw bodies of API Gateway (REST, v1)
 * proxy events. Self-contained on purpose: a partner copying the reference receiver needs nothing from the
 * service's own handlers.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/** Largest request body accepted, in bytes (ARCHITECTURE C22); a bigger one is answered 413. */
export const MAX_BODY_BYTES = 256 * 1024;

/** The C6 error codes this receiver answers with, and their HTTP status. */
export const RECEIVER_ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  request_in_progress: 409,
  payload_too_large: 413,
  event_too_old: 422,
  invalid_state: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ReceiverErrorCode = keyof typeof RECEIVER_ERROR_STATUS;

/** Logging as the receiver does it: a message and a few safe fields (never a header value, secret or body). */
export interface ReceiverLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const line =
  (level: string, write: (text: string) => void) =>
  (message: string, fields: Record<string, unknown> = {}): void =>
    write(JSON.stringify({ level, message, ...fields, timestamp: new Date().toISOString() }));

/** One JSON object per line on stdout/stderr: what Lambda ships to CloudWatch Logs as is. */
export const jsonConsoleLogger: ReceiverLogger = {
  info: line('INFO', (text) => console.log(text)),
  warn: line('WARN', (text) => console.warn(text)),
  error: line('ERROR', (text) => console.error(text)),
};

const TRACE_ID = /^[A-Za-z0-9_.:-]{8,128}$/;

/** A header of a proxy event, name in any case (API Gateway keeps the sender's spelling). */
export const headerOf = (event: APIGatewayProxyEvent, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && typeof value === 'string') return value;
  }
  return undefined;
};

/**
 * The headers of a proxy event with every value of a repeated header (`multiValueHeaders` when API Gateway
 * gives them), for the verifier: a repeated `X-Signature` must not be silently cut to one value.
 */
export const headersOf = (event: APIGatewayProxyEvent): Record<string, string | readonly string[]> => {
  const headers: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (typeof value === 'string') headers[name] = value;
  }
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (Array.isArray(values) && values.length > 0) headers[name] = values.map(String);
  }
  return headers;
};

/** The caller's `X-Trace-Id` when well formed, else API Gateway's request id, else a fresh `trc_` id. */
export const traceIdOf = (event: APIGatewayProxyEvent): string => {
  const given = headerOf(event, 'x-trace-id');
  if (given !== undefined && TRACE_ID.test(given)) return given;
  const requestId = event.requestContext?.requestId;
  if (typeof requestId === 'string' && TRACE_ID.test(requestId)) return requestId;
  return `trc_${randomUUID().replaceAll('-', '')}`;
};

/** The raw request body: base64 decoded when API Gateway encoded it, else the UTF-8 bytes of the text. */
export type RawBody = { readonly kind: 'ok'; readonly bytes: Buffer } | { readonly kind: 'too_large' };

export const rawBodyOf = (event: APIGatewayProxyEvent, maxBytes = MAX_BODY_BYTES): RawBody => {
  const body = event.body ?? '';
  if (event.isBase64Encoded) {
    // Four base64 characters carry three bytes: refuse what is certainly too big before decoding it.
    if (body.length > Math.ceil(maxBytes / 3) * 4 + 4) return { kind: 'too_large' };
    const bytes = Buffer.from(body, 'base64');
    return bytes.length > maxBytes ? { kind: 'too_large' } : { kind: 'ok', bytes };
  }
  if (body.length > maxBytes) return { kind: 'too_large' };
  const bytes = Buffer.from(body, 'utf8');
  return bytes.length > maxBytes ? { kind: 'too_large' } : { kind: 'ok', bytes };
};

const BASE_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } as const;

/** A JSON answer with the trace id in `X-Trace-Id`. */
export const jsonResult = (
  statusCode: number,
  body: unknown,
  traceId: string,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult => ({
  statusCode,
  headers: { ...BASE_HEADERS, ...headers, 'X-Trace-Id': traceId },
  body: JSON.stringify(body),
});

export interface ErrorResultOptions {
  readonly retryAfterSeconds?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A C6 error answer: `{ error, error_description, trace_id }`, `Retry-After` when a retry makes sense. */
export const errorResult = (
  code: ReceiverErrorCode,
  description: string,
  traceId: string,
  options: ErrorResultOptions = {},
): APIGatewayProxyResult =>
  jsonResult(
    RECEIVER_ERROR_STATUS[code],
    { error: code, error_description: description, trace_id: traceId },
    traceId,
    {
      ...(options.headers ?? {}),
      ...(options.retryAfterSeconds === undefined
        ? {}
        : { 'Retry-After': String(options.retryAfterSeconds) }),
    },
  );

/** What a log line may say about an error: its class and, for AWS SDK errors, the HTTP status (C6). */
export const causeOf = (error: unknown): Record<string, string | number> => {
  if (!(error instanceof Error)) return { error_type: typeof error };
  const details: Record<string, string | number> = { error_type: error.name };
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status !== undefined) details.error_http_status = status;
  if (error.cause instanceof Error) details.cause_type = error.cause.name;
  return details;
};

/** DynamoDB answers that say "not now": the request may succeed if retried a little later. */
const TRANSIENT_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TransactionConflictException',
  'TransactionInProgressException',
  'TransactionCanceledException',
  'LimitExceededException',
  'TimeoutError',
]);

/** Whether an error is a transient failure of the store (answered 503 with Retry-After, not 500). */
export const isTransient = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  if (TRANSIENT_ERRORS.has(error.name)) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'EPIPE';
};
