/**
 * Serves a proxy-event handler (the reference receiver) over plain node:http, the way API Gateway would call
 * it: each request becomes an `APIGatewayProxyEvent` with the raw body bytes (always base64, so nothing is
 * re-encoded), the headers, the path, the resource template and its path parameters. The path the sender
 * signed (with the query exactly as sent) is handed to the receiver through `signedPathOf`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  BodyTooLargeError,
  listenOn,
  localProxyEvent,
  readBoundedBody,
  writeProxyResult,
} from '../../shared/proxy-http';
import { errorResult, MAX_BODY_BYTES } from './http';

export type ProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The raw request target (path and query as sent) of each event this server built. */
const rawTargets = new WeakMap<APIGatewayProxyEvent, string>();

/** The path with query the client sent, for events built by this server; undefined for any other event. */
export const rawTargetOf = (event: APIGatewayProxyEvent): string | undefined => rawTargets.get(event);

const TEMPLATES: readonly { readonly resource: string; readonly pattern: RegExp; readonly param?: string }[] =
  [
    { resource: '/webhooks/v1/{topic}', pattern: /^\/webhooks\/v1\/([^/]+)$/, param: 'topic' },
    { resource: '/webhooks/status/{event_id}', pattern: /^\/webhooks\/status\/([^/]+)$/, param: 'event_id' },
    { resource: '/webhooks/ack', pattern: /^\/webhooks\/ack$/ },
  ];

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** The resource template and path parameters of a path, as API Gateway would match them. */
export const matchResource = (
  pathname: string,
): { resource: string; pathParameters: Record<string, string> | null } => {
  for (const template of TEMPLATES) {
    const match = template.pattern.exec(pathname);
    if (match) {
      const value = match[1];
      return {
        resource: template.resource,
        pathParameters: template.param && value !== undefined ? { [template.param]: decoded(value) } : null,
      };
    }
  }
  return { resource: pathname, pathParameters: null };
};

/** Builds the REST (v1) proxy event for a request and its raw body. */
export const toProxyEvent = (request: IncomingMessage, body: Buffer): APIGatewayProxyEvent => {
  const target = request.url ?? '/';
  const url = new URL(target, 'http://localhost');
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  // rawHeaders keeps every value of a repeated header, in order, with the client's spelling of the name.
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] as string;
    const value = request.rawHeaders[i + 1] as string;
    const key = name.toLowerCase();
    multiValueHeaders[key] = [...(multiValueHeaders[key] ?? []), value];
    headers[key] = multiValueHeaders[key].join(',');
  }
  const event = localProxyEvent(request, {
    url,
    ...matchResource(url.pathname),
    headers,
    multiValueHeaders,
    body: body.length === 0 ? null : body.toString('base64'),
    isBase64Encoded: body.length > 0,
    apiKey: null,
  });
  rawTargets.set(event, target);
  return event;
};

export interface LocalServerOptions {
  readonly handler: ProxyHandler;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Bodies above this are answered 413 without reading the rest. @default 256 KiB */
  readonly maxBodyBytes?: number;
  readonly onError?: (error: unknown) => void;
}

export interface LocalServer {
  readonly server: Server;
  /** `http://<host>:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the HTTP server; resolves once it listens. */
export const serveProxyHandler = async (options: LocalServerOptions): Promise<LocalServer> => {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let body: Buffer;
    try {
      body = await readBoundedBody(request, maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      response.setHeader('Connection', 'close');
      writeProxyResult(
        response,
        errorResult('payload_too_large', `the body exceeds ${maxBodyBytes} bytes`, `trc_${randomUUID()}`),
      );
      return;
    }
    writeProxyResult(response, await options.handler(toProxyEvent(request, body)));
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.onError?.(error);
      if (response.headersSent) response.destroy();
      else
        writeProxyResult(
          response,
          errorResult('internal_error', 'an internal error occurred; retry later', `trc_${randomUUID()}`, {
            retryAfterSeconds: 1,
          }),
        );
    });
  });
  server.keepAliveTimeout = 5_000;
  const host = options.host ?? '127.0.0.1';
  await listenOn(server, options.port, host);
  const { port } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `http://${shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
