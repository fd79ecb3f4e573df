import type { APIGatewayProxyEvent } from 'aws-lambda';
import { dpopChallenge, dpopRefusalDescription } from '../../domain/webhooks/dpop';
import type { CatalogRepository } from '../../ports/catalog';
import type { DpopProofVerifier, DpopReplayCache, EndpointRecord } from '../../ports/webhooks';
import { buildAsyncApi } from '../../schemas/asyncapi';
import { CHANGELOG } from '../../schemas/changelog';
import { eventTypesCatalog } from '../../schemas/event-types';
import {
  catalogSnapshotQuerySchema,
  confirmEventSchema,
  createEndpointSchema,
  endpointPathSchema,
  endpointStatsQuerySchema,
  eventPathSchema,
  listEndpointsQuerySchema,
  listEventsQuerySchema,
  partnerDeliveriesQuerySchema,
  partnerEventsQuerySchema,
  partnerReplayRequestSchema,
  partnerRotationSchema,
  publishEventSchema,
  recoverRequestSchema,
  replayPathSchema,
  replayRequestSchema,
  rotateSigningKeySchema,
  rotationSchema,
  testEventRequestSchema,
  updateEndpointSchema,
} from '../../schemas/webhooks';
import type { CatalogReader } from '../../usecases/catalog/reader';
import {
  ConfirmationConflictError,
  ConfirmationKeyReusedError,
  ConfirmationNotFoundError,
  confirmEvent,
  DpopRefusedError,
  type PartnerRequest,
  requireDpop,
} from '../../usecases/webhooks/confirmations';
import type { WebhookContext } from '../../usecases/webhooks/context';
import {
  type CreatedEndpoint,
  createEndpoint,
  deleteEndpoint,
  endpointView,
  getEndpoint,
  listEndpoints,
  type RotatedEndpoint,
  type RotatedPartnerKey,
  rotatePartnerKey,
  rotateSecret,
  updateEndpoint,
} from '../../usecases/webhooks/endpoints';
import {
  NO_VERSIONS,
  type PublishedEvent,
  publishEvent,
  sendTestEvent,
  type TestEventSent,
  type VersionsInForce,
} from '../../usecases/webhooks/events';
import { expungeEvent, listEvents, showEvent } from '../../usecases/webhooks/history';
import {
  authenticatePartner,
  catalogSnapshot,
  partnerDeliveries,
  partnerDelivery,
  partnerEvents,
  partnerReplay,
  partnerReplayProgress,
} from '../../usecases/webhooks/partner';
import {
  type RecoveryAccepted,
  type ReplayAccepted,
  recoverEndpoint,
  replayDeliveries,
  replayProgress,
} from '../../usecases/webhooks/replay';
import { type RotatedKey, rotateSenderKey, senderJwks } from '../../usecases/webhooks/sender-keys';
import { endpointStatsOf } from '../../usecases/webhooks/stats';
import { errorBody, HttpError } from '../middleware/errors';
import type { HttpResult, Operation } from '../middleware/http';
import {
  exactlyOnce,
  IDEMPOTENCY_KEY_HEADER,
  type IdempotencyOptions,
  idempotent,
  requireIdempotencyKey,
} from '../middleware/idempotency';
import { operatorOf } from '../middleware/principal';
import { parseJsonBody, parseWith } from '../middleware/validation';
import { documentOperation } from './openapi';

const pathOf = (event: { pathParameters: Record<string, string | undefined> | null }) =>
  event.pathParameters ?? {};

const endpointCreated = (created: CreatedEndpoint): HttpResult => ({
  statusCode: 201,
  headers: { Location: `/webhooks/endpoints/${created.endpoint_id}` },
  body: created,
});

export const createEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event } = request;
    const body = parseJsonBody(createEndpointSchema, event.body, event.isBase64Encoded);
    return endpointCreated(await createEndpoint(ctx, body, exactlyOnce(request, endpointCreated)));
  };

export const listEndpointsOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const query = parseWith(listEndpointsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listEndpoints(ctx, query.limit ?? 50, query.cursor) };
  };

export const getEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await getEndpoint(ctx, endpoint_id) };
  };

/** `GET …/stats?window=1h|24h|7d`: success rate, latency and counts by status class. */
export const endpointStatsOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const query = parseWith(endpointStatsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await endpointStatsOf(ctx, endpoint_id, query.window) };
  };

export const updateEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const body = parseJsonBody(updateEndpointSchema, event.body, event.isBase64Encoded);
    return { statusCode: 200, body: await updateEndpoint(ctx, endpoint_id, body) };
  };

export const deleteEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    await deleteEndpoint(ctx, endpoint_id);
    return { statusCode: 204 };
  };

const rotated = (endpoint: RotatedEndpoint): HttpResult => ({ statusCode: 200, body: endpoint });

/** `POST …/rotate-secret` with an optional `{ "overlap_hours" }` (0: an emergency, the old secret stops now). */
export const rotateSecretOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event } = request;
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const body = parseJsonBody(rotationSchema, event.body || '{}', event.isBase64Encoded);
    return rotated(await rotateSecret(ctx, endpoint_id, exactlyOnce(request, rotated), body.overlap_hours));
  };

const partnerKeyRotated = (endpoint: RotatedPartnerKey): HttpResult => ({ statusCode: 200, body: endpoint });

/** `POST …/rotate-partner-key`: a new partner key; the old one works `overlap_hours` (default 24, 0: stops now). */
export const rotatePartnerKeyOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event } = request;
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const body = parseJsonBody(rotationSchema, event.body || '{}', event.isBase64Encoded);
    return partnerKeyRotated(
      await rotatePartnerKey(
        ctx,
        endpoint_id,
        body.overlap_hours ?? ctx.settings.previousSecretHours,
        exactlyOnce(request, partnerKeyRotated),
      ),
    );
  };

/** 202 for a new event; 200 for a repeat of a producer's `event_id` (C25). */
const eventAccepted = ({ item, created }: PublishedEvent): HttpResult => ({
  statusCode: created ? 202 : 200,
  headers: { Location: `/webhooks/events/${item.event_id}` },
  body: { event_id: item.event_id },
});

/** `POST /webhooks/events`: 202, delivery follows through the outbox. */
export const publishEventOperation =
  (ctx: WebhookContext, versionsInForce: () => Promise<VersionsInForce>): Operation =>
  async (request) => {
    const { event, traceId } = request;
    const body = parseJsonBody(publishEventSchema, event.body, event.isBase64Encoded);
    const versions = await versionsInForce().catch(() => NO_VERSIONS);
    return eventAccepted(
      await publishEvent(
        ctx,
        body,
        traceId,
        versions,
        exactlyOnce(request, eventAccepted),
        operatorOf(request.principal).identity,
      ),
    );
  };

const testEventSent = (sent: TestEventSent): HttpResult => ({
  statusCode: 202,
  headers: { Location: `/webhooks/events/${sent.event_id}` },
  body: sent,
});

/** `POST …/test {"type"}`: the type's example, sent to this endpoint only (202; its history at `Location`). */
export const testEventOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event, traceId } = request;
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const body = parseJsonBody(testEventRequestSchema, event.body, event.isBase64Encoded);
    return testEventSent(
      await sendTestEvent(
        ctx,
        endpoint_id,
        body.type,
        traceId,
        exactlyOnce(request, testEventSent),
        operatorOf(request.principal).identity,
      ),
    );
  };

/** `POST /webhooks/events/{event_id}/expunge`: the body removed, the history kept. */
export const expungeEventOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event, principal }) => {
    const { event_id } = parseWith(eventPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await expungeEvent(ctx, event_id, operatorOf(principal).identity) };
  };

export const listEventsOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const query = parseWith(listEventsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listEvents(ctx, query) };
  };

export const showEventOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { event_id } = parseWith(eventPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await showEvent(ctx, event_id) };
  };

const replayAccepted = (accepted: ReplayAccepted): HttpResult => ({
  statusCode: 202,
  headers: { Location: `/webhooks/replays/${accepted.replay_id}` },
  body: accepted,
});

export const replayOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event } = request;
    const body = parseJsonBody(replayRequestSchema, event.body, event.isBase64Encoded);
    return replayAccepted(await replayDeliveries(ctx, body, exactlyOnce(request, replayAccepted)));
  };

const recoveryAccepted = (accepted: RecoveryAccepted): HttpResult => ({
  statusCode: 202,
  headers: { Location: `/webhooks/replays/${accepted.recovery_id}` },
  body: accepted,
});

/** `POST …/recover {"since","until"}`: what the endpoint missed, delivered again (202; progress at `Location`). */
export const recoverEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event } = request;
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const body = parseJsonBody(recoverRequestSchema, event.body, event.isBase64Encoded);
    return recoveryAccepted(
      await recoverEndpoint(ctx, endpoint_id, body, exactlyOnce(request, recoveryAccepted)),
    );
  };

export const showReplayOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { replay_id } = parseWith(replayPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await replayProgress(ctx, replay_id) };
  };

/**
 * A partner route (partner key): the key's endpoint is authenticated first, and the operation runs for it — the
 * operators' use cases, always for the key's own endpoint, never one a request names.
 */
const forPartner =
  (
    ctx: WebhookContext,
    run: (request: Parameters<Operation>[0], endpoint: EndpointRecord) => Promise<HttpResult>,
  ): Operation =>
  async (request) =>
    run(request, await authenticatePartner(ctx, headerOf(request.event, 'authorization')));

const queryOf = (event: APIGatewayProxyEvent) => event.queryStringParameters ?? {};

/** `GET /partner/events` (resync). */
export const partnerEventsOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async ({ event }, endpoint) => ({
    statusCode: 200,
    body: await partnerEvents(ctx, endpoint, parseWith(partnerEventsQuerySchema, queryOf(event), 'query')),
  }));

/** `GET /partner/endpoint`. */
export const partnerEndpointOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async (_request, endpoint) => ({ statusCode: 200, body: endpointView(endpoint) }));

/** `GET /partner/endpoint/stats?window=`. */
export const partnerEndpointStatsOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async ({ event }, endpoint) => {
    const query = parseWith(endpointStatsQuerySchema, queryOf(event), 'query');
    return { statusCode: 200, body: await endpointStatsOf(ctx, endpoint.endpoint_id, query.window) };
  });

/** `POST /partner/endpoint/rotate-secret {"overlap_hours"?}`: the new secret, once; always with an overlap. */
export const partnerRotateSecretOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async (request, endpoint) => {
    const body = parseJsonBody(
      partnerRotationSchema,
      request.event.body || '{}',
      request.event.isBase64Encoded,
    );
    return rotated(
      await rotateSecret(ctx, endpoint.endpoint_id, exactlyOnce(request, rotated), body.overlap_hours),
    );
  });

/** `POST /partner/endpoint/test {"type"}`. */
export const partnerTestEventOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async (request, endpoint) => {
    const body = parseJsonBody(testEventRequestSchema, request.event.body, request.event.isBase64Encoded);
    return testEventSent(
      await sendTestEvent(
        ctx,
        endpoint.endpoint_id,
        body.type,
        request.traceId,
        exactlyOnce(request, testEventSent),
        `partner:${endpoint.endpoint_id}`,
      ),
    );
  });

/** `GET /partner/deliveries?status=&from=&to=`. */
export const partnerDeliveriesOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async ({ event }, endpoint) => ({
    statusCode: 200,
    body: await partnerDeliveries(
      ctx,
      endpoint,
      parseWith(partnerDeliveriesQuerySchema, queryOf(event), 'query'),
    ),
  }));

/** `GET /partner/deliveries/{event_id}`. */
export const partnerDeliveryOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async ({ event }, endpoint) => {
    const { event_id } = parseWith(eventPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await partnerDelivery(ctx, endpoint, event_id) };
  });

/** `POST /partner/replay`: its own deliveries only (the endpoint is the key's). */
export const partnerReplayOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async (request, endpoint) => {
    const body = parseJsonBody(partnerReplayRequestSchema, request.event.body, request.event.isBase64Encoded);
    return replayAccepted(await partnerReplay(ctx, endpoint, body, exactlyOnce(request, replayAccepted)));
  });

/** `POST /partner/recover {"since","until"}`. */
export const partnerRecoverOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async (request, endpoint) => {
    const body = parseJsonBody(recoverRequestSchema, request.event.body, request.event.isBase64Encoded);
    return recoveryAccepted(
      await recoverEndpoint(ctx, endpoint.endpoint_id, body, exactlyOnce(request, recoveryAccepted)),
    );
  });

/** `GET /partner/replays/{replay_id}`. */
export const partnerReplayProgressOperation = (ctx: WebhookContext): Operation =>
  forPartner(ctx, async ({ event }, endpoint) => {
    const { replay_id } = parseWith(replayPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await partnerReplayProgress(ctx, endpoint, replay_id) };
  });

/** `GET /catalog/snapshot?as_of=` (partner key). */
export const catalogSnapshotOperation = (
  ctx: WebhookContext,
  reader: CatalogReader,
  repository: CatalogRepository,
): Operation =>
  forPartner(ctx, async ({ event }, endpoint) => {
    const query = parseWith(catalogSnapshotQuerySchema, queryOf(event), 'query');
    return {
      statusCode: 200,
      body: await catalogSnapshot(reader, repository, new Date(query.as_of), {
        tenant: endpoint.tenant,
        now: ctx.clock.now(),
      }),
    };
  });

/** Every value of a header, case-insensitively: all of `multiValueHeaders`, else the single `headers` value. */
const headerValues = (event: APIGatewayProxyEvent, name: string): string[] => {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, list] of Object.entries(event.multiValueHeaders ?? {}))
    if (key.toLowerCase() === wanted && list) values.push(...list);
  if (values.length > 0) return values;
  for (const [key, value] of Object.entries(event.headers ?? {}))
    if (key.toLowerCase() === wanted && value !== undefined) values.push(value);
  return values;
};

const headerOf = (event: APIGatewayProxyEvent, name: string): string | undefined =>
  headerValues(event, name)[0];

/**
 * What a DPoP proof is bound to, from the API Gateway proxy event. The target URI is
 * `<scheme>://<Host header><path>`: the scheme is `X-Forwarded-Proto` (API Gateway sets `https`), else `https`;
 * the path is `requestContext.path`, the path the client sent (with the stage prefix on the `execute-api` host,
 * with the base path on a custom domain), else the resource path `event.path`.
 */
const partnerRequestOf = (event: APIGatewayProxyEvent, authorization: string): PartnerRequest => {
  const forwarded = headerOf(event, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return {
    method: event.httpMethod,
    scheme: forwarded === 'http' ? 'http' : 'https',
    host: headerOf(event, 'host') ?? '',
    path: event.requestContext?.path || event.path,
    dpopProofs: headerValues(event, 'dpop'),
    partnerKey: authorization.replace(/^Bearer\s+/, ''),
  };
};

export interface ConfirmEventDependencies {
  readonly dpop: DpopProofVerifier;
  readonly dpopReplays: DpopReplayCache;
  /** The idempotency table (C8); the key is required on this operation. */
  readonly idempotency: IdempotencyOptions;
  /** Told of each refused DPoP proof (the refusal is answered, not thrown, so it is logged here). */
  readonly onDpopRefused?: (fields: { readonly endpoint_id: string; readonly refusal: string }) => void;
}

/** 401 with `WWW-Authenticate: DPoP error="invalid_dpop_proof", …` (RFC 9449 §7.1) in the C6 shape. */
const dpopRefusal = (refused: DpopRefusedError, traceId: string): HttpResult => ({
  statusCode: 401,
  headers: { 'WWW-Authenticate': dpopChallenge(refused.refusal, refused.algorithms) },
  body: errorBody(new HttpError('unauthorized', dpopRefusalDescription(refused.refusal)), traceId),
});

const confirmationError = (error: unknown): unknown => {
  if (error instanceof ConfirmationNotFoundError) return new HttpError('not_found', error.message);
  if (error instanceof ConfirmationConflictError)
    return new HttpError('conflict', error.message, { details: { confirmation: error.confirmation } });
  if (error instanceof ConfirmationKeyReusedError)
    return new HttpError('idempotency_key_reused', error.message);
  return error;
};

/**
 * `POST /partner/confirmations` (partner key). In order: the partner key (401), the endpoint's DPoP proof when
 * it registered a key (401 with `WWW-Authenticate`), a required `Idempotency-Key` (400), then C8 around the
 * body's validation and the once-only write. Authentication comes before the idempotency layer, so a stored
 * answer is only ever replayed to a request that passed it, and a refused request stores nothing.
 */
export const confirmEventOperation = (ctx: WebhookContext, deps: ConfirmEventDependencies): Operation => {
  const authenticated = new WeakMap<APIGatewayProxyEvent, EndpointRecord>();
  const confirm = idempotent(async ({ event }) => {
    const endpoint = authenticated.get(event);
    if (!endpoint) throw new Error('confirmEvent ran without an authenticated partner');
    const body = parseJsonBody(confirmEventSchema, event.body, event.isBase64Encoded);
    const key = headerOf(event, IDEMPOTENCY_KEY_HEADER) ?? '';
    try {
      return { statusCode: 201, body: await confirmEvent(ctx, endpoint, body, key) };
    } catch (error) {
      throw confirmationError(error);
    }
  }, deps.idempotency);
  const dpopContext = {
    clock: ctx.clock,
    get settings() {
      return ctx.settings;
    },
    dpop: deps.dpop,
    dpopReplays: deps.dpopReplays,
  };
  return async (request) => {
    const { event, traceId } = request;
    const authorization = headerOf(event, 'authorization') ?? '';
    const endpoint = await authenticatePartner(ctx, authorization);
    try {
      await requireDpop(dpopContext, endpoint, partnerRequestOf(event, authorization));
    } catch (error) {
      if (!(error instanceof DpopRefusedError)) throw error;
      deps.onDpopRefused?.({ endpoint_id: endpoint.endpoint_id, refusal: error.refusal });
      return dpopRefusal(error, traceId);
    }
    authenticated.set(event, endpoint);
    return requireIdempotencyKey(confirm)(request);
  };
};

/** `GET /changelog` (C24). */
const keyRotated = (key: RotatedKey): HttpResult => ({ statusCode: 201, body: key });

/** `POST /webhooks/signing-keys/rotate` (C33): the next Ed25519 signing key. */
export const rotateSigningKeyOperation =
  (ctx: WebhookContext): Operation =>
  async (request) => {
    const { event } = request;
    const body = parseJsonBody(rotateSigningKeySchema, event.body || '{}', event.isBase64Encoded);
    return keyRotated(
      await rotateSenderKey(
        ctx,
        {
          ...(body.activate_in_seconds !== undefined ? { activateInSeconds: body.activate_in_seconds } : {}),
          ...(body.retire_previous !== undefined ? { retirePrevious: body.retire_previous } : {}),
        },
        exactlyOnce(request, keyRotated),
      ),
    );
  };

/** `GET /webhooks/jwks.json` (C33): the webhook signing keys' public halves, read per request (a small query). */
export const webhookJwksOperation =
  (ctx: Pick<WebhookContext, 'clock' | 'senderKeys'>): Operation =>
  async () => ({
    statusCode: 200,
    // Short: a rotation publishes the next key a day before it signs, and receivers refetch on an unknown kid.
    headers: { 'Cache-Control': 'public, max-age=300' },
    body: await senderJwks(ctx),
  });

/** `GET /webhooks/event-types` (C33), from the catalog. */
export const eventTypesOperation = (): Operation => documentOperation(eventTypesCatalog);

/** `GET /asyncapi.json` (C33): the document `docs/asyncapi.json` holds. */
export const asyncApiOperation = (): Operation => documentOperation(buildAsyncApi);

export const changelogOperation = (): Operation => documentOperation(() => CHANGELOG);
