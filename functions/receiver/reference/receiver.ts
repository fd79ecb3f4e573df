/**
 * The reference webhook receiver: a partner's three endpoints (spec "Endpoints a receiver serves") as one
 * API Gateway (REST, v1) proxy handler, built on the receiver kit.
 *
 * - `POST /webhooks/v1/{topic}` — the spec's processing order, exactly:
 *   1. verify the signature (timestamp window, constant-time HMAC over the raw bytes, X-Event-Id); any failure
 *      is 401 `unauthorized` with one generic description (C6), the reason goes to the log only;
 *   2. an `event_id` already processed (or acknowledged) is answered 200 without repeating the effect;
 *   3. otherwise the effect's writes and the seen mark commit in **one** DynamoDB transaction;
 *   4. 200 only after that commit. An event whose `ts` is older than the dedup memory is 422 `event_too_old`
 *      and nothing is applied (C15); a body over 256 KiB is 413.
 * - `GET /webhooks/status/{event_id}` — `{ event_id, seen, processed_at?, handler_version?, status? }`.
 * - `POST /webhooks/ack` `{ event_id, note?, acknowledged_by }` — records a manual handling (a dead-lettered
 *   event dealt with by hand), so a later delivery of it applies nothing.
 *
 * Every error is `{ error, error_description, trace_id }` with `X-Trace-Id`, `Content-Type: application/json`
 * and `Retry-After` where a retry makes sense (409, 429, 5xx). Whatever a request holds, the answer is a 4xx
 * or a 2xx; only the receiver's own failures (its store unreachable, its configuration broken) give 5xx, which
 * the sender retries.
 */

import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod';
import type { JwksCache } from '../jwks';
import {
  EventInProgressError,
  EventTooOldError,
  type IdempotencyStore,
  type ReceiverStatus,
} from '../process-once';
import { kidOf, type ReceivedEnvelope, verifyWebhook, WebhookVerificationError } from '../verify';
import { countingEffect, type EffectHandler, EffectRejectedError } from './effect';
import {
  causeOf,
  errorResult,
  headersOf,
  isTransient,
  jsonConsoleLogger,
  jsonResult,
  MAX_BODY_BYTES,
  type ReceiverLogger,
  rawBodyOf,
  traceIdOf,
} from './http';
import { type SecretsSource, secretsOf } from './secrets';

/** The one description of every refused signature, whatever check failed (C6: no hint which). */
export const UNAUTHORIZED_DESCRIPTION = 'the request could not be authenticated';

/** Seconds to wait after a transient failure of the store. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The part of the kit's idempotency store the receiver uses (tests wrap it to inject faults). */
export type ReceiverStore = Pick<IdempotencyStore, 'processTransactional' | 'status' | 'acknowledge'>;

export interface ReferenceReceiverOptions {
  readonly store: ReceiverStore;
  /** Signing secrets (`whsec_…`), or a loader called per request (cache it: see `cachedSecrets`). */
  readonly secrets: SecretsSource;
  /** Recorded by the store with each processed event; also on the receiver's log lines. */
  readonly handlerVersion: string;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /**
   * The domain effect. @default countingEffect({ tableName }) — needs `tableName`.
   */
  readonly handler?: EffectHandler;
  /** The receiver table, for the default effect. */
  readonly tableName?: string;
  /** @default jsonConsoleLogger (JSON lines on stdout/stderr) */
  readonly logger?: ReceiverLogger;
  /** Signature time window in seconds, 1–300. @default 300 */
  readonly toleranceSeconds?: number;
  /**
   * The path (with query) the sender signed, for a request. @default {@link signedPathOf}: API Gateway's
   * `requestContext.path` (the stage or custom-domain base path included, as the sender sent it), else `path`,
   * plus the query string rebuilt from the parsed parameters.
   */
  readonly signedPath?: (event: APIGatewayProxyEvent) => string;
  /** @default 256 KiB */
  readonly maxBodyBytes?: number;
  /**
   * The sender's JWKS (`<API>/webhooks/jwks.json`), for endpoints signed with Ed25519 (C33): the public keys are
   * fetched and cached by a {@link JwksCache} and a `v1a` signature is checked with the key it names.
   */
  readonly jwks?: JwksCache;
  /** This endpoint's id (`ep_…`), required with `jwks`: a delivery signed with the shared key must name it. */
  readonly endpointId?: string;
}

export type ReferenceReceiver = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** RFC 3986 percent-encoding. */
const encode = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The path the sender signed. API Gateway REST APIs do not pass the raw query string, only its parsed
 * parameters, so a query is rebuilt (percent-encoded, in the order given): register an endpoint URL without a
 * query string when the receiver runs behind API Gateway.
 */
export const signedPathOf = (event: APIGatewayProxyEvent): string => {
  const contextPath = event.requestContext?.path;
  const path = typeof contextPath === 'string' && contextPath.length > 0 ? contextPath : event.path;
  const query: string[] = [];
  const multi = event.multiValueQueryStringParameters ?? {};
  const single = event.queryStringParameters ?? {};
  for (const [name, values] of Object.entries(multi)) {
    for (const value of values ?? []) query.push(`${encode(name)}=${encode(value)}`);
  }
  if (query.length === 0) {
    for (const [name, value] of Object.entries(single)) {
      if (value !== undefined) query.push(`${encode(name)}=${encode(value)}`);
    }
  }
  return query.length > 0 ? `${path}?${query.join('&')}` : path;
};

const TOPIC = /^[A-Za-z0-9_-]{1,64}$/;
/** Event ids the status and ack routes accept: the kit's own prefixes (`effects#`, `applied#`) are not ids. */
const EVENT_ID = /^[A-Za-z0-9_.:-]{1,256}$/;

type Route =
  | { readonly kind: 'deliver'; readonly topic: string }
  | { readonly kind: 'status'; readonly eventId: string }
  | { readonly kind: 'ack' }
  | { readonly kind: 'wrong_method'; readonly allow: string }
  | { readonly kind: 'unknown' };

const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};

/** The route of a request: by API Gateway's resource template when it is one of ours, else by the path. */
const routeOf = (event: APIGatewayProxyEvent): Route => {
  const method = (event.httpMethod ?? '').toUpperCase();
  let target: { kind: 'deliver' | 'status' | 'ack'; param?: string | undefined } | undefined;
  switch (event.resource) {
    case '/webhooks/v1/{topic}':
      target = { kind: 'deliver', param: event.pathParameters?.topic };
      break;
    case '/webhooks/status/{event_id}':
      target = { kind: 'status', param: event.pathParameters?.event_id };
      break;
    case '/webhooks/ack':
      target = { kind: 'ack' };
      break;
    default: {
      const path = event.path ?? '';
      const deliver = /(?:^|\/)webhooks\/v1\/([^/]+)\/?$/.exec(path);
      const status = /(?:^|\/)webhooks\/status\/([^/]+)\/?$/.exec(path);
      if (deliver?.[1] !== undefined) target = { kind: 'deliver', param: decoded(deliver[1]) };
      else if (status?.[1] !== undefined) target = { kind: 'status', param: decoded(status[1]) };
      else if (/(?:^|\/)webhooks\/ack\/?$/.test(path)) target = { kind: 'ack' };
    }
  }
  if (!target) return { kind: 'unknown' };
  const wanted = target.kind === 'status' ? 'GET' : 'POST';
  if (method !== wanted) return { kind: 'wrong_method', allow: wanted };
  if (target.kind === 'ack') return { kind: 'ack' };
  const param = target.param ?? '';
  if (target.kind === 'deliver')
    return TOPIC.test(param) ? { kind: 'deliver', topic: param } : { kind: 'unknown' };
  return EVENT_ID.test(param) ? { kind: 'status', eventId: param } : { kind: 'unknown' };
};

/** The body of `POST /webhooks/ack`. */
export const ackRequestSchema = z
  .object({
    event_id: z.string().regex(EVENT_ID, 'an event id: 1–256 letters, digits, _ . : -'),
    note: z.string().max(2000).optional(),
    acknowledged_by: z.string().trim().min(1).max(256),
  })
  .strict();

export type AckRequest = z.infer<typeof ackRequestSchema>;

/** The status record as the status and ack routes show it. */
export const statusBody = (eventId: string, status: ReceiverStatus): Record<string, unknown> => ({
  event_id: eventId,
  seen: status.seen,
  ...(status.processed_at === undefined ? {} : { processed_at: status.processed_at }),
  ...(status.handler_version === undefined ? {} : { handler_version: status.handler_version }),
  ...(status.status === undefined ? {} : { status: status.status }),
  ...(status.acknowledged_by === undefined ? {} : { acknowledged_by: status.acknowledged_by }),
  ...(status.note === undefined ? {} : { note: status.note }),
});

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The reference receiver. Every answer is built here; nothing a request carries can make it throw (the
 * outermost guard turns an unexpected error into 500 `internal_error` with `Retry-After`, and logs its class).
 */
export const createReferenceReceiver = (options: ReferenceReceiverOptions): ReferenceReceiver => {
  const clock = options.clock ?? (() => new Date());
  const logger = options.logger ?? jsonConsoleLogger;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const signedPath = options.signedPath ?? signedPathOf;
  let handler = options.handler;
  if (handler === undefined) {
    if (options.tableName === undefined) {
      throw new Error(
        'createReferenceReceiver needs a handler, or a tableName for the default counting effect',
      );
    }
    handler = countingEffect({ tableName: options.tableName, clock });
  }
  const effect = handler;

  /** Store failures after verification: 503 (transient) or 500 (anything else), both retried by the sender. */
  const storeFailure = (
    error: unknown,
    traceId: string,
    context: Record<string, unknown>,
  ): APIGatewayProxyResult => {
    if (isTransient(error)) {
      logger.warn('receiver store unavailable', { ...context, ...causeOf(error), trace_id: traceId });
      return errorResult('unavailable', 'the receiver is busy; retry later', traceId, {
        retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
      });
    }
    logger.error('receiver failed', { ...context, ...causeOf(error), trace_id: traceId });
    return errorResult('internal_error', 'an internal error occurred; retry later', traceId, {
      retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
    });
  };

  const deliver = async (
    event: APIGatewayProxyEvent,
    topic: string,
    traceId: string,
  ): Promise<APIGatewayProxyResult> => {
    const body = rawBodyOf(event, maxBodyBytes);
    if (body.kind === 'too_large') {
      logger.info('webhook refused', { reason: 'payload_too_large', topic, trace_id: traceId });
      return errorResult('payload_too_large', `the body exceeds ${maxBodyBytes} bytes`, traceId);
    }
    let secrets: readonly string[];
    try {
      secrets = await secretsOf(options.secrets);
    } catch (error) {
      logger.error('signing secrets unavailable', { ...causeOf(error), trace_id: traceId });
      return errorResult('unavailable', 'the receiver is not ready; retry later', traceId, {
        retryAfterSeconds: 30,
      });
    }

    // 1. Verify. Nothing is read from the body before this passes.
    let envelope: ReceivedEnvelope;
    try {
      const headers = headersOf(event);
      const publicKeys = options.jwks ? await options.jwks.keysFor(kidOf(headers)) : undefined;
      envelope = verifyWebhook({
        body: body.bytes,
        method: event.httpMethod,
        path: signedPath(event),
        headers,
        secrets,
        ...(publicKeys ? { publicKeys } : {}),
        ...(options.endpointId ? { endpointId: options.endpointId } : {}),
        now: clock(),
        ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
      });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        // The reason is for the partner's own logs; the answer never says which check failed.
        logger.warn('webhook refused', { reason: error.code, topic, trace_id: traceId });
        return errorResult('unauthorized', UNAUTHORIZED_DESCRIPTION, traceId);
      }
      // A secret that is not whsec_ + 32 bytes, or a bad tolerance: the receiver's configuration, not the request.
      logger.error('receiver misconfigured', { ...causeOf(error), trace_id: traceId });
      return errorResult('internal_error', 'the receiver is misconfigured; retry later', traceId, {
        retryAfterSeconds: 60,
      });
    }

    const context = { event_id: envelope.event_id, type: envelope.type, attempt: envelope.attempt, topic };
    // 2–4. Duplicate → 200; otherwise effect + seen mark in one transaction, answered after the commit.
    try {
      const result = await options.store.processTransactional(envelope, (received) =>
        effect(received, { topic }),
      );
      logger.info(result.kind === 'processed' ? 'webhook processed' : 'webhook duplicate', {
        ...context,
        handler_version: options.handlerVersion,
        trace_id: traceId,
      });
      return jsonResult(
        200,
        {
          event_id: envelope.event_id,
          status: result.kind,
          ...(result.status.processed_at === undefined ? {} : { processed_at: result.status.processed_at }),
        },
        traceId,
      );
    } catch (error) {
      if (error instanceof EventTooOldError) {
        logger.info('webhook refused', { ...context, reason: 'event_too_old', trace_id: traceId });
        return errorResult(
          'event_too_old',
          "the event is older than the receiver's dedup memory; it was not applied",
          traceId,
        );
      }
      if (error instanceof EventInProgressError) {
        return errorResult('request_in_progress', 'this event is being processed; retry later', traceId, {
          retryAfterSeconds: error.retryAfterSeconds,
        });
      }
      if (error instanceof EffectRejectedError) {
        logger.info('webhook refused', { ...context, reason: error.code, trace_id: traceId });
        return errorResult(error.code, error.description, traceId);
      }
      return storeFailure(error, traceId, context);
    }
  };

  const status = async (eventId: string, traceId: string): Promise<APIGatewayProxyResult> => {
    try {
      return jsonResult(200, statusBody(eventId, await options.store.status(eventId)), traceId);
    } catch (error) {
      return storeFailure(error, traceId, { event_id: eventId });
    }
  };

  const acknowledge = async (
    event: APIGatewayProxyEvent,
    traceId: string,
  ): Promise<APIGatewayProxyResult> => {
    const body = rawBodyOf(event, maxBodyBytes);
    if (body.kind === 'too_large') {
      return errorResult('payload_too_large', `the body exceeds ${maxBodyBytes} bytes`, traceId);
    }
    let json: unknown;
    try {
      json = JSON.parse(strictUtf8.decode(body.bytes));
    } catch {
      return errorResult('invalid_request', 'the body must be a JSON object', traceId);
    }
    const parsed = ackRequestSchema.safeParse(json);
    if (!parsed.success) {
      const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(body)'))];
      return errorResult('invalid_request', `invalid or missing fields: ${fields.join(', ')}`, traceId);
    }
    const request = parsed.data;
    try {
      const recorded = await options.store.acknowledge(request.event_id, {
        acknowledged_by: request.acknowledged_by,
        ...(request.note === undefined ? {} : { note: request.note }),
      });
      logger.info('webhook acknowledged', {
        event_id: request.event_id,
        status: recorded.status,
        trace_id: traceId,
      });
      return jsonResult(200, statusBody(request.event_id, recorded), traceId);
    } catch (error) {
      if (error instanceof EventInProgressError) {
        return errorResult('request_in_progress', 'this event is being processed; retry later', traceId, {
          retryAfterSeconds: error.retryAfterSeconds,
        });
      }
      return storeFailure(error, traceId, { event_id: request.event_id });
    }
  };

  return async (event) => {
    let traceId = 'trc_unknown';
    try {
      traceId = traceIdOf(event);
      const route = routeOf(event);
      switch (route.kind) {
        case 'deliver':
          return await deliver(event, route.topic, traceId);
        case 'status':
          return await status(route.eventId, traceId);
        case 'ack':
          return await acknowledge(event, traceId);
        case 'wrong_method':
          return errorResult('method_not_allowed', `use ${route.allow} on this path`, traceId, {
            headers: { Allow: route.allow },
          });
        default:
          return errorResult('not_found', 'no such route', traceId);
      }
    } catch (error) {
      logger.error('unhandled error', { ...causeOf(error), trace_id: traceId });
      return errorResult('internal_error', 'an internal error occurred; retry later', traceId, {
        retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
      });
    }
  };
};
