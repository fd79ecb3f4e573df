import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import {
  type FunctionId,
  MAX_REQUEST_BODY_BYTES,
  ROUTES,
  type RouteDefinition,
  routeKey,
} from '../../definitions';
import type { AwsOperatorRole, Principal } from '../../domain/access/principals';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { ServiceMetrics } from '../../ports/metrics';
import { newId } from '../../shared/ids';
import { toHttpError } from './domain-errors';
import { errorBody, HttpError } from './errors';
import { authorizeRoute } from './principal';

/** What an operation returns; the middleware turns it into an API Gateway proxy result. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface OperationRequest {
  readonly event: APIGatewayProxyEvent;
  readonly route: RouteDefinition;
  readonly traceId: string;
  /**
   * Who is calling, checked against the route's scopes or roles before the operation runs (undefined on
   * `none` and `partner` routes).
   */
  readonly principal?: Principal;
  /** Set by the idempotency layer on a POST with an `Idempotency-Key` (C8, C25). */
  readonly idempotency?: RequestIdempotency;
}

/** What the idempotency layer gives the operation of a request that carries a key. */
export interface RequestIdempotency {
  /** The exactly-once handle of this request, whose stored answer is `answer(result)`. */
  once<R>(answer: (result: R) => HttpResult): ExactlyOnce<R>;
}

export type Operation = (request: OperationRequest) => Promise<HttpResult>;

export type HttpHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const TRACE_ID_PATTERN = /^[A-Za-z0-9_.:-]{8,128}$/;

const headerValue = (event: APIGatewayProxyEvent, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && typeof value === 'string') return value;
  }
  return undefined;
};

/**
 * The trace id of a request: the caller's `X-Trace-Id` when well formed, else the root of API Gateway's
 * `X-Amzn-Trace-Id`, else a fresh `trc_` id. It is on every log line and every response.
 */
export const traceIdOf = (event: APIGatewayProxyEvent): string => {
  const given = headerValue(event, 'x-trace-id');
  if (given && TRACE_ID_PATTERN.test(given)) return given;
  const amazon = headerValue(event, 'x-amzn-trace-id')?.match(/Root=([A-Za-z0-9-]+)/)?.[1];
  if (amazon) return amazon;
  return newId('trc');
};

const jsonResult = (
  statusCode: number,
  body: unknown,
  traceId: string,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult => ({
  statusCode,
  headers: {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
    ...headers,
    'X-Trace-Id': traceId,
  },
  body: body === undefined ? '' : JSON.stringify(body),
});

/**
 * What an error log line may carry (C6: no stack traces, SDK or driver messages, or secrets in logs): the
 * error's class and, for AWS SDK errors, the service's error code and HTTP status.
 */
export const causeOf = (error: unknown): Record<string, string | number> => {
  if (!(error instanceof Error)) return { error_type: typeof error };
  const details: Record<string, string | number> = { error_type: error.name };
  const metadata = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  if (metadata?.httpStatusCode !== undefined) details.error_http_status = metadata.httpStatusCode;
  if (error.cause instanceof Error) details.cause_type = error.cause.name;
  return details;
};

/** Any thrown error becomes a C6 body; unexpected ones are logged and answered 500 with no internals. */
export const errorResult = (thrown: unknown, traceId: string, logger: Logger): APIGatewayProxyResult => {
  const error = toHttpError(thrown) ?? thrown;
  if (error instanceof HttpError) {
    if (error.statusCode >= 500)
      logger.error('request failed', { error_code: error.code, ...causeOf(error) });
    else logger.info('request refused', { error_code: error.code, status: error.statusCode });
    const headers: Record<string, string> =
      error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) };
    return jsonResult(error.statusCode, errorBody(error, traceId), traceId, headers);
  }
  logger.error('unhandled error', causeOf(error));
  const internal = new HttpError('internal_error', 'an internal error occurred; retry later', {
    retryAfterSeconds: 1,
  });
  return jsonResult(internal.statusCode, errorBody(internal, traceId), traceId, { 'Retry-After': '1' });
};

/** The size of the request body as the client sent it (API Gateway base64-encodes binary bodies). */
const bodyBytes = (event: APIGatewayProxyEvent): number =>
  event.body ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : 0;

/** Trace ids per in-flight event (a Lambda instance serves one event at a time; this stays correct anyway). */
type TraceIds = WeakMap<APIGatewayProxyEvent, string>;

const traceMiddleware = (
  logger: Logger,
  traceIds: TraceIds,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  before: (request) => {
    const traceId = traceIdOf(request.event);
    traceIds.set(request.event, traceId);
    logger.appendKeys({ trace_id: traceId });
  },
  onError: (request) => {
    request.response = errorResult(request.error, traceIds.get(request.event) ?? newId('trc'), logger);
  },
});

/**
 * Measures each request for the objectives: the operation's duration (from before the dispatch to the answer,
 * errors included) and the status answered, then flushes the invocation's metrics. It runs outside the trace
 * middleware, so on an error it sees the C6 answer that middleware made. In-memory work only.
 */
const servedMiddleware = (
  metrics: ServiceMetrics,
  now: () => number,
  operationOf: (event: APIGatewayProxyEvent) => string | undefined,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => {
  const started = new WeakMap<APIGatewayProxyEvent, number>();
  const served = (request: { event: APIGatewayProxyEvent; response?: APIGatewayProxyResult | null }) => {
    const start = started.get(request.event);
    const operation = operationOf(request.event);
    try {
      if (start !== undefined && operation !== undefined) {
        metrics.requestServed(operation, {
          durationMs: now() - start,
          statusCode: request.response?.statusCode ?? 500,
        });
      }
    } catch {
      // A measurement never changes the answer.
    }
    metrics.flush();
  };
  return {
    before: (request) => {
      started.set(request.event, now());
    },
    after: served,
    onError: served,
  };
};

export interface HttpApiOptions {
  readonly functionId: FunctionId;
  readonly logger: Logger;
  readonly operations: Readonly<Record<string, Operation>>;
  readonly routes?: readonly RouteDefinition[];
  /** Where each request's duration and status go (the objectives); unmeasured without it. */
  readonly metrics?: ServiceMetrics;
  /** Milliseconds of a monotonic clock, for durations. @default performance.now */
  readonly now?: () => number;
  /** The IAM roles of operators (AWS; `OPERATOR_ROLES`): how an admin request's IAM principal is read. */
  readonly operatorRoles?: readonly AwsOperatorRole[];
}

/**
 * One Lambda handler for a route group: middy with the Powertools logging context, a trace id on every log
 * line and response, dispatch on `<method> <resource>` through the shared route table, and C6 errors.
 */
export const createHttpApi = (options: HttpApiOptions): HttpHandler => {
  const routes = (options.routes ?? ROUTES).filter((route) => route.function === options.functionId);
  const byKey = new Map(routes.map((route) => [routeKey(route.method, route.path), route]));
  for (const route of routes) {
    if (!options.operations[route.operation]) {
      throw new Error(`no operation implements ${route.method} ${route.path} (${route.operation})`);
    }
  }
  const traceIds: TraceIds = new WeakMap();

  const dispatch = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const traceId = traceIds.get(event) ?? newId('trc');
    const route = byKey.get(routeKey(event.httpMethod, event.resource));
    if (!route) throw new HttpError('not_found', `no route for ${event.httpMethod} ${event.path}`);
    const operation = options.operations[route.operation];
    if (!operation) throw new HttpError('not_found', `no route for ${event.httpMethod} ${event.path}`);
    if (bodyBytes(event) > MAX_REQUEST_BODY_BYTES) {
      throw new HttpError('payload_too_large', `the body exceeds ${MAX_REQUEST_BODY_BYTES} bytes`);
    }
    const principal = authorizeRoute(route, event, options.operatorRoles ?? []);
    const result = await operation({ event, route, traceId, ...(principal ? { principal } : {}) });
    return jsonResult(result.statusCode, result.body, traceId, result.headers);
  };

  const api = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>().use(
    injectLambdaContext(options.logger, { resetKeys: true }),
  );
  if (options.metrics) {
    const now = options.now ?? (() => performance.now());
    api.use(
      servedMiddleware(
        options.metrics,
        now,
        (event) => byKey.get(routeKey(event.httpMethod, event.resource))?.operation,
      ),
    );
  }
  return api.use(traceMiddleware(options.logger, traceIds)).handler(dispatch);
};
