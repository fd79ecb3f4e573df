/** Builders shared by the reference receiver's unit and integration tests: proxy events and signed deliveries. */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { generateSecret, secretBytes } from '../../../functions/domain/webhooks/secret';
import { signatureHeader } from '../../../functions/domain/webhooks/signature';
import { callerIdentity } from '../../../functions/shared/proxy-http';

export const newSecret = (): string => generateSecret((size) => randomBytes(size));

export const newEventId = (): string => `evt_${randomBytes(13).toString('hex').toUpperCase()}`;

export const ROUTE_TEMPLATES = {
  deliver: '/webhooks/v1/{topic}',
  status: '/webhooks/status/{event_id}',
  ack: '/webhooks/ack',
} as const;

export interface ProxyEventInput {
  readonly method: string;
  readonly path: string;
  readonly resource?: string;
  readonly pathParameters?: Record<string, string> | null;
  readonly headers?: Record<string, string>;
  readonly multiValueHeaders?: Record<string, string[]>;
  readonly body?: Buffer | string | null;
  /** Send the body base64-encoded (as API Gateway does with binary media types). @default true */
  readonly base64?: boolean;
  /** API Gateway's `requestContext.path` (stage included). @default path */
  readonly contextPath?: string;
  readonly query?: Record<string, string[]>;
}

/** A REST (v1) proxy event as API Gateway builds it. */
export const proxyEvent = (input: ProxyEventInput): APIGatewayProxyEvent => {
  const raw = input.body === undefined || input.body === null ? undefined : Buffer.from(input.body);
  const base64 = input.base64 ?? true;
  const query = input.query ?? {};
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: input.resource ?? input.path,
    path: input.path,
    httpMethod: input.method,
    headers: input.headers ?? {},
    multiValueHeaders: input.multiValueHeaders ?? {},
    queryStringParameters: hasQuery
      ? Object.fromEntries(Object.entries(query).map(([name, values]) => [name, values.at(-1) ?? '']))
      : null,
    multiValueQueryStringParameters: hasQuery ? query : null,
    pathParameters: input.pathParameters ?? null,
    stageVariables: null,
    body: raw === undefined ? null : base64 ? raw.toString('base64') : raw.toString('utf8'),
    isBase64Encoded: raw !== undefined && base64,
    requestContext: {
      accountId: '123456789012',
      apiId: 'test',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: input.method,
      identity: callerIdentity({ sourceIp: '203.0.113.7', apiKey: null, userAgent: 'test' }),
      path: input.contextPath ?? input.path,
      stage: 'live',
      requestId: `req-${randomBytes(8).toString('hex')}`,
      requestTimeEpoch: 0,
      resourceId: 'test',
      resourcePath: input.resource ?? input.path,
    },
  };
};

export interface EnvelopeInput {
  readonly event_id?: string;
  readonly type?: string;
  readonly ts: string;
  readonly attempt?: number;
  readonly data?: Record<string, unknown>;
}

export const envelopeOf = (input: EnvelopeInput): Record<string, unknown> => ({
  event_id: input.event_id ?? newEventId(),
  type: input.type ?? 'catalog.PriceListUpdated',
  version: '2026-11-01',
  ts: input.ts,
  attempt: input.attempt ?? 1,
  producer: 'catalog',
  trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
  pricelist_version: 42,
  fx_version: 'fx_2026-11-01T11:45:00Z',
  tax_rule_version: 7,
  data: input.data ?? { version: 42, effective_from: input.ts, changed: ['sku_123'] },
});

export interface DeliveryInput {
  readonly envelope: Record<string, unknown>;
  /** Secrets the sender signs with (rotation: several). */
  readonly secrets: readonly string[];
  /** X-Timestamp. */
  readonly timestamp: string;
  /** @default 'catalog' */
  readonly topic?: string;
  /** The raw body; @default JSON.stringify(envelope) */
  readonly body?: Buffer | string;
  /** Overrides X-Event-Id (e.g. to mismatch). @default envelope.event_id */
  readonly eventIdHeader?: string;
  readonly traceId?: string;
  /** Signed path (API Gateway's requestContext.path). @default `/webhooks/v1/<topic>` */
  readonly signedPath?: string;
  /** Tamper after signing: replace the body sent. */
  readonly sentBody?: Buffer | string;
}

/** Headers and body of a signed delivery, as the sender sends them. */
export const signedRequest = (input: DeliveryInput) => {
  const topic = input.topic ?? 'catalog';
  const path = input.signedPath ?? `/webhooks/v1/${topic}`;
  const body = Buffer.from(input.body ?? JSON.stringify(input.envelope));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'pricing-webhooks/1.0',
    'X-Webhook-Producer': 'catalog',
    'X-Attempt': String(input.envelope.attempt ?? 1),
    'X-Event-Id': input.eventIdHeader ?? String(input.envelope.event_id),
    'X-Timestamp': input.timestamp,
    'X-Signature': signatureHeader({
      secrets: input.secrets.map(secretBytes),
      timestamp: input.timestamp,
      method: 'POST',
      path,
      body,
    }),
    ...(input.traceId ? { 'X-Trace-Id': input.traceId } : {}),
  };
  return { path, topic, headers, body: input.sentBody === undefined ? body : Buffer.from(input.sentBody) };
};

/** A signed delivery as the proxy event API Gateway hands the function. */
export const deliveryEvent = (input: DeliveryInput): APIGatewayProxyEvent => {
  const request = signedRequest(input);
  return proxyEvent({
    method: 'POST',
    path: `/webhooks/v1/${request.topic}`,
    contextPath: request.path,
    resource: ROUTE_TEMPLATES.deliver,
    pathParameters: { topic: request.topic },
    headers: request.headers,
    body: request.body,
  });
};

export const statusEvent = (eventId: string): APIGatewayProxyEvent =>
  proxyEvent({
    method: 'GET',
    path: `/webhooks/status/${encodeURIComponent(eventId)}`,
    resource: ROUTE_TEMPLATES.status,
    pathParameters: { event_id: eventId },
  });

export const ackEvent = (body: unknown, options: { raw?: string } = {}): APIGatewayProxyEvent =>
  proxyEvent({
    method: 'POST',
    path: '/webhooks/ack',
    resource: ROUTE_TEMPLATES.ack,
    headers: { 'Content-Type': 'application/json' },
    body: options.raw ?? JSON.stringify(body),
  });

export const silentLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A logger that keeps what it was told, for asserting on reasons. */
export const recordingLogger = () => {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      lines.push({ level, message, fields });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
};

export const parsed = (result: { body: string }): Record<string, unknown> =>
  JSON.parse(result.body) as Record<string, unknown>;
