import { timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type FunctionPool, FunctionTimeoutError } from '../../adapters/local/function-pool';
import {
  CATALOG_RATE_LIMIT,
  type FunctionId,
  MAX_REQUEST_BODY_BYTES,
  matchRoute,
  type RateLimit,
  ROUTES,
  type RouteDefinition,
} from '../../definitions';
import type { OperatorRole } from '../../domain/access/principals';
import type { AuthorizerHandler } from '../../handlers/authorizer';
import { type ErrorCode, errorBody, HttpError } from '../../handlers/middleware/errors';
import { operatorContext } from '../../handlers/middleware/principal';
import type { Clock } from '../../ports/clock';
import { systemClock } from '../../shared/clock';
import { newId } from '../../shared/ids';
import {
  BodyTooLargeError,
  listenOn,
  localProxyEvent,
  readBoundedBody,
  writeProxyResult,
} from '../../shared/proxy-http';

/** Largest request body accepted (C22); the functions check it too. */
export const MAX_BODY_BYTES = MAX_REQUEST_BODY_BYTES;

/** The `requestContext.identity` of a proxy event (tests build events with it). */
export { callerIdentity } from '../../shared/proxy-http';

export type HttpFunctionPool = FunctionPool<APIGatewayProxyEvent, APIGatewayProxyResult>;

export interface GatewayOptions {
  readonly host: string;
  readonly port: number;
  readonly functions: Readonly<Partial<Record<FunctionId, HttpFunctionPool>>>;
  /**
   * The caller-key authorizer (C26): the same handler as the REQUEST authorizer in AWS. Its context becomes the
   * event's `requestContext.authorizer`, as API Gateway passes it on.
   */
  readonly authorizer: AuthorizerHandler;
  /**
   * Every operator with its bearer token and roles, standing in for IAM SigV4 locally (C27). The operator's
   * identity and roles go into `requestContext.authorizer` (`principal: "operator"`), its name also into
   * `requestContext.identity.userArn`, where API Gateway puts the IAM principal.
   */
  readonly admins: readonly GatewayOperator[];
  readonly routes?: readonly RouteDefinition[];
  readonly onError?: (error: unknown) => void;
  /** Per-API-key limit on `api_key` routes, the usage plan's throttle in AWS. @default CATALOG_RATE_LIMIT */
  readonly rateLimit?: RateLimit;
  /** Time for the rate limiter's token buckets. @default systemClock */
  readonly clock?: Clock;
  /**
   * The built web pages (`lib/web-build.ts`): `/console/` and `/portal/` are served from here with these headers, as
   * CloudFront serves them in AWS.
   */
  readonly web?: { readonly dir: string; readonly headers: Readonly<Record<string, string>> };
}

const WEB_PATH = /^\/(console|portal)(\/(index\.html|app\.js|app\.css)?)?$/;
const WEB_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** A page or asset of the web apps, or undefined when the path is not one. */
const serveWeb = async (
  web: NonNullable<GatewayOptions['web']>,
  method: string,
  pathname: string,
  response: ServerResponse,
): Promise<boolean> => {
  const match = WEB_PATH.exec(pathname);
  if (!match) return false;
  const [, app, slash, file] = match;
  if (method !== 'GET' && method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD', ...web.headers }).end();
    return true;
  }
  if (!slash) {
    response.writeHead(301, { Location: `/${app}/`, ...web.headers }).end();
    return true;
  }
  const name = file ?? 'index.html';
  let body: Buffer;
  try {
    body = await readFile(path.join(web.dir, app ?? '', name));
  } catch {
    response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...web.headers }).end('not built');
    return true;
  }
  response
    .writeHead(200, {
      'Content-Type': WEB_TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream',
      'Content-Length': String(body.length),
      'Cache-Control': 'no-cache',
      ...web.headers,
    })
    .end(method === 'HEAD' ? undefined : body);
  return true;
};

export interface GatewayOperator {
  readonly name: string;
  readonly token: string;
  readonly roles: readonly OperatorRole[];
  readonly machine?: boolean;
}

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

export type TakeResult =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/** Buckets idle long enough to be full again are forgotten once this many callers have one. */
const MAX_TRACKED_BUCKETS = 10_000;

/**
 * The local twin of a usage plan's throttle: one token bucket per API key, holding up to `burst` tokens and
 * refilled continuously at `requestsPerSecond`. Each request takes one token; with none left it is refused
 * with the whole seconds (at least 1) until a token is back.
 */
export class TokenBuckets {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly clock: Clock = systemClock,
  ) {
    if (!(limit.requestsPerSecond > 0) || !(limit.burst >= 1)) {
      throw new Error('a rate limit needs requestsPerSecond > 0 and burst >= 1');
    }
  }

  take(key: string): TakeResult {
    const nowMs = this.clock.now().getTime();
    const bucket = this.#refilled(key, nowMs);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    const waitSeconds = (1 - bucket.tokens) / this.limit.requestsPerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitSeconds)) };
  }

  #refilled(key: string, nowMs: number): Bucket {
    const existing = this.#buckets.get(key);
    if (existing) {
      const elapsedSeconds = Math.max(0, nowMs - existing.updatedAtMs) / 1000;
      existing.tokens = Math.min(
        this.limit.burst,
        existing.tokens + elapsedSeconds * this.limit.requestsPerSecond,
      );
      existing.updatedAtMs = nowMs;
      return existing;
    }
    if (this.#buckets.size >= MAX_TRACKED_BUCKETS) this.#forgetFull(nowMs);
    const bucket: Bucket = { tokens: this.limit.burst, updatedAtMs: nowMs };
    this.#buckets.set(key, bucket);
    return bucket;
  }

  #forgetFull(nowMs: number): void {
    for (const [key, bucket] of this.#buckets) {
      const elapsedSeconds = Math.max(0, nowMs - bucket.updatedAtMs) / 1000;
      if (bucket.tokens + elapsedSeconds * this.limit.requestsPerSecond >= this.limit.burst) {
        this.#buckets.delete(key);
      }
    }
  }
}

const sameSecret = (given: string | undefined, expected: string): boolean => {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/*
 * Names come from the client: they are collected in Maps and turned into objects with Object.fromEntries, so a
 * name such as `__proto__` or `constructor` is an ordinary own property (refused by the strict schemas), never
 * an inherited one.
 */
const singleHeaders = (request: IncomingMessage): Record<string, string> =>
  Object.fromEntries(
    Object.entries(request.headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value]),
  );

const multiHeaders = (request: IncomingMessage): Record<string, string[]> =>
  Object.fromEntries(
    Object.entries(request.headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value : [value]]),
  );

const isTextual = (contentType: string | undefined): boolean =>
  !contentType || /json|text|xml|x-www-form-urlencoded/i.test(contentType);

/** Builds the REST API (v1) Lambda proxy event API Gateway would send for this request. */
export const toProxyEvent = (
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  route: RouteDefinition,
  pathParameters: Record<string, string>,
): APIGatewayProxyEvent => {
  const headers = singleHeaders(request);
  const textual = isTextual(headers['content-type']);
  return localProxyEvent(request, {
    url,
    resource: route.path,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    headers,
    multiValueHeaders: multiHeaders(request),
    body: body.length === 0 ? null : textual ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !textual,
    apiKey: headers['x-api-key'] ?? null,
  });
};

const refusal = (
  code: ErrorCode,
  description: string,
  traceId: string,
  extra: Record<string, string> = {},
) => {
  const error = new HttpError(code, description);
  return {
    statusCode: error.statusCode,
    headers: { 'Content-Type': 'application/json', 'X-Trace-Id': traceId, ...extra },
    body: JSON.stringify(errorBody(error, traceId)),
  } satisfies APIGatewayProxyResult;
};

const firstHeader = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

type Authorized =
  | { readonly refused: APIGatewayProxyResult }
  | { readonly context?: Record<string, string>; readonly operator?: string; readonly throttleKey?: string };

/** The REQUEST authorizer event API Gateway would send the caller-key authorizer for this request. */
const authorizerEvent = (
  request: IncomingMessage,
  url: URL,
  route: RouteDefinition,
  pathParameters: Record<string, string>,
) => ({
  type: 'REQUEST' as const,
  methodArn: `arn:aws:execute-api:local:000000000000:local/local/${route.method}${route.path}`,
  resource: route.path,
  path: url.pathname,
  httpMethod: route.method,
  headers: singleHeaders(request),
  multiValueHeaders: multiHeaders(request),
  pathParameters,
  queryStringParameters: Object.fromEntries(url.searchParams),
  multiValueQueryStringParameters: null,
  stageVariables: null,
  requestContext: null as never,
});

/**
 * API Gateway's checks before the integration runs: the caller-key authorizer on `api_key` routes, the operator
 * token on `admin` routes. Returns the refusal, or what the integration learns of the principal.
 */
const authorize = async (
  match: { readonly route: RouteDefinition; readonly pathParameters: Record<string, string> },
  request: IncomingMessage,
  url: URL,
  options: GatewayOptions,
  traceId: string,
): Promise<Authorized> => {
  const { route } = match;
  // Partner routes authenticate in the function (the partner key of an endpoint), as in AWS.
  if (route.auth === 'none' || route.auth === 'partner') return {};
  if (route.auth === 'api_key') {
    if (firstHeader(request, 'x-api-key') === undefined)
      return { refused: refusal('unauthorized', 'a valid API key is required in x-api-key', traceId) };
    try {
      const answer = await options.authorizer(authorizerEvent(request, url, route, match.pathParameters));
      const context = Object.fromEntries(
        Object.entries(answer.context ?? {}).map(([name, value]) => [name, String(value)]),
      );
      return { context, throttleKey: answer.principalId };
    } catch {
      return { refused: refusal('unauthorized', 'a valid API key is required in x-api-key', traceId) };
    }
  }
  const authorization = request.headers.authorization ?? '';
  const bearer = authorization.match(/^Bearer\s+(.+)$/i)?.[1];
  // Compare with every token (no early exit), so timing does not tell which identity was close.
  const matched = options.admins.filter((admin) => sameSecret(bearer, admin.token));
  const operator = matched[0];
  if (operator) {
    return {
      operator: operator.name,
      context: operatorContext({
        kind: 'operator',
        identity: operator.name,
        roles: operator.roles,
        machine: operator.machine === true,
      }),
    };
  }
  if (bearer === undefined && firstHeader(request, 'x-api-key') !== undefined) {
    // A valid caller key is known but not enough (403); anything else is no credential at all (401).
    const known = await options
      .authorizer(authorizerEvent(request, url, route, match.pathParameters))
      .then(() => true)
      .catch(() => false);
    if (known) {
      return {
        refused: refusal(
          'forbidden',
          'this route needs operator credentials, not a catalog API key',
          traceId,
        ),
      };
    }
  }
  return {
    refused: refusal('unauthorized', 'operator credentials are required', traceId, {
      'WWW-Authenticate': 'Bearer realm="admin"',
    }),
  };
};

/**
 * The local API gateway: matches each request against the same route table as the CDK API, applies the same
 * authentication rule, turns it into an API Gateway proxy event and invokes the route's function handler.
 */
export const startGateway = async (options: GatewayOptions): Promise<{ server: Server; url: string }> => {
  const routes = options.routes ?? ROUTES;
  const buckets = new TokenBuckets(options.rateLimit ?? CATALOG_RATE_LIMIT, options.clock ?? systemClock);

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const traceId = newId('trc');
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://localhost');
    } catch {
      return writeProxyResult(
        response,
        refusal('invalid_request', 'the request target is not a valid URL', traceId),
      );
    }
    if (options.web && (await serveWeb(options.web, request.method ?? 'GET', url.pathname, response))) {
      request.resume();
      return;
    }
    const { match, pathExists } = matchRoute(request.method ?? 'GET', url.pathname, routes);
    if (!match) {
      request.resume();
      if (!pathExists)
        return writeProxyResult(response, refusal('not_found', `no route for ${url.pathname}`, traceId));
      const allowed = routes.filter((route) => matchRoute(route.method, url.pathname, [route]).match);
      return writeProxyResult(
        response,
        refusal('method_not_allowed', `${request.method} is not allowed on ${url.pathname}`, traceId, {
          Allow: [...new Set(allowed.map((route) => route.method))].join(', '),
        }),
      );
    }
    const authorized = await authorize(match, request, url, options, traceId);
    if ('refused' in authorized) {
      request.resume();
      return writeProxyResult(response, authorized.refused);
    }
    if (match.route.auth === 'api_key') {
      // The usage plan's throttle is per key (a rotated key keeps its bucket).
      const taken = buckets.take(authorized.throttleKey ?? '');
      if (!taken.allowed) {
        request.resume();
        return writeProxyResult(
          response,
          refusal('rate_limited', 'too many requests for this API key; slow down and retry later', traceId, {
            'Retry-After': String(taken.retryAfterSeconds),
          }),
        );
      }
    }
    let body: Buffer;
    try {
      body = await readBoundedBody(request, MAX_BODY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        response.setHeader('Connection', 'close');
        return writeProxyResult(
          response,
          refusal('payload_too_large', `the body exceeds ${MAX_BODY_BYTES} bytes`, traceId),
        );
      }
      throw error;
    }
    const pool = options.functions[match.route.function];
    if (!pool)
      return writeProxyResult(response, refusal('not_found', `no function serves ${url.pathname}`, traceId));
    const event = toProxyEvent(request, url, body, match.route, match.pathParameters);
    if (authorized.operator) event.requestContext.identity.userArn = authorized.operator;
    if (authorized.context) {
      event.requestContext.authorizer = { ...authorized.context, principalId: authorized.throttleKey ?? '' };
    }
    try {
      writeProxyResult(response, await pool.invoke(event));
    } catch (error) {
      // API Gateway answers an integration timeout with 504 and a failed integration with 502.
      options.onError?.(error);
      const timedOut = error instanceof FunctionTimeoutError;
      writeProxyResult(
        response,
        refusal(
          timedOut ? 'gateway_timeout' : 'bad_gateway',
          timedOut ? 'the function did not answer in time' : 'the function failed',
          traceId,
          { 'Retry-After': '1' },
        ),
      );
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.onError?.(error);
      if (!response.headersSent) {
        writeProxyResult(
          response,
          refusal('internal_error', 'an internal error occurred; retry later', newId('trc')),
        );
      } else {
        response.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  // Requests Node's parser refuses (a request line or headers over its limit, malformed HTTP) still get a C6
  // answer: 431 for oversized headers or URL, 400 otherwise.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const traceId = newId('trc');
    const oversized = error.code === 'HPE_HEADER_OVERFLOW';
    const refused = oversized
      ? refusal('request_header_fields_too_large', 'the request line and headers are too large', traceId)
      : refusal('invalid_request', 'the request is not valid HTTP', traceId);
    const status = oversized ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const headers = Object.entries(refused.headers ?? {})
      .map(([name, value]) => `${name}: ${String(value)}`)
      .join('\r\n');
    socket.end(
      `HTTP/1.1 ${status}\r\n${headers}\r\nContent-Length: ${Buffer.byteLength(refused.body)}\r\n` +
        `Connection: close\r\n\r\n${refused.body}`,
    );
  });
  await listenOn(server, options.port, options.host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const displayHost = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  return { server, url: `http://${displayHost}:${port}` };
};
