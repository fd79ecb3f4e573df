/**
 * node:http requests as API Gateway (REST, v1) proxy events, and proxy results written back: the plumbing the
 * local API gateway (functions/composition/local/gateway.ts) and the reference receiver's local server
 * (functions/receiver/reference/local-server.ts) share. Depends on nothing but node and the aws-lambda types,
 * so the receiver kit can carry it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/** The body went over the limit given to readBoundedBody. */
export class BodyTooLargeError extends Error {}

/** The whole body of a request; rejects with BodyTooLargeError (and drops the rest) once it exceeds `limit`. */
export const readBoundedBody = (request: IncomingMessage, limit: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > limit) {
        refused = true;
        reject(new BodyTooLargeError());
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

/** Writes a proxy result as the HTTP answer: its status, headers (multi-value ones too) and decoded body. */
export const writeProxyResult = (response: ServerResponse, result: APIGatewayProxyResult): void => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {}))
    headers[name] = values.map(String);
  const body = result.isBase64Encoded
    ? Buffer.from(result.body, 'base64')
    : Buffer.from(result.body ?? '', 'utf8');
  response.writeHead(result.statusCode, { ...headers, 'Content-Length': String(body.length) });
  response.end(body);
};

/** The `requestContext.identity` of a proxy event: what API Gateway knows of an API-key or anonymous caller. */
export const callerIdentity = (caller: {
  readonly sourceIp: string;
  readonly apiKey: string | null;
  readonly userAgent: string | null;
}): APIGatewayProxyEvent['requestContext']['identity'] => ({
  accessKey: null,
  accountId: null,
  apiKey: caller.apiKey,
  apiKeyId: null,
  caller: null,
  clientCert: null,
  cognitoAuthenticationProvider: null,
  cognitoAuthenticationType: null,
  cognitoIdentityId: null,
  cognitoIdentityPoolId: null,
  principalOrgId: null,
  sourceIp: caller.sourceIp,
  user: null,
  userAgent: caller.userAgent,
  userArn: null,
});

/**
 * The query of a URL as a proxy event carries it: each name with its last value, and with all its values in
 * order; both null without a query. Names are collected in a Map and turned into objects with
 * Object.fromEntries, so a name such as `__proto__` is an ordinary own property, never an inherited one.
 */
export const queryParametersOf = (
  url: URL,
): { single: Record<string, string> | null; multi: Record<string, string[]> | null } => {
  const multi = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) multi.set(name, [...(multi.get(name) ?? []), value]);
  if (multi.size === 0) return { single: null, multi: null };
  return {
    single: Object.fromEntries([...multi].map(([name, values]) => [name, values.at(-1) ?? ''])),
    multi: Object.fromEntries(multi),
  };
};

/** What a proxy event says of a request beyond its method, path, query and connection. */
export interface ProxyEventParts {
  readonly url: URL;
  /** The resource template (`/webhooks/v1/{topic}`), the path itself when none matches. */
  readonly resource: string;
  readonly pathParameters: Record<string, string> | null;
  readonly headers: Record<string, string>;
  readonly multiValueHeaders: Record<string, string[]>;
  readonly body: string | null;
  readonly isBase64Encoded: boolean;
  /** The caller's API key as API Gateway saw it; null for an anonymous caller. */
  readonly apiKey: string | null;
}

/** The REST (v1) proxy event of a request served locally (stage `local`, a fresh request id). */
export const localProxyEvent = (request: IncomingMessage, parts: ProxyEventParts): APIGatewayProxyEvent => {
  const { url, resource, headers } = parts;
  const query = queryParametersOf(url);
  const method = (request.method ?? 'GET').toUpperCase();
  return {
    resource,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders: parts.multiValueHeaders,
    queryStringParameters: query.single,
    multiValueQueryStringParameters: query.multi,
    pathParameters: parts.pathParameters,
    stageVariables: null,
    body: parts.body,
    isBase64Encoded: parts.isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: method,
      identity: callerIdentity({
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        apiKey: parts.apiKey,
        userAgent: headers['user-agent'] ?? null,
      }),
      path: url.pathname,
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
    },
  };
};

/** Listens on `host:port`; resolves once listening, rejects when the server cannot listen (port in use). */
export const listenOn = (server: Server, port: number, host: string): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
